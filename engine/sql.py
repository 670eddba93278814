"""Batch SQL in one client session: run a statement tagged with its operation's job group, so cancel reaches it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa

from sluicegate.engine.driver_results import driver_batches
from sluicegate.engine.results import (
    TEXT,
    ArrowBatchStream,
    ResultColumn,
    WireTypes,
    arrow_schema,
    collect_single_partition,
    conform,
    result_columns,
    typed_arrow_schema,
    wire_dataframe,
)
from sluicegate.engine.sessions import sql_dataframe
from sluicegate.storage.spark_errors import from_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class BatchSource(Protocol):
    """Arrow batches of one result, from its start; `close()` releases what produces them."""

    def __iter__(self) -> Iterator[pa.RecordBatch]: ...

    def close(self) -> None: ...


class ListBatchSource:
    """A result already in memory (metadata listings, command output)."""

    def __init__(self, batches: Iterable[pa.RecordBatch]) -> None:
        self._batches = list(batches)

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return iter(self._batches)

    def close(self) -> None:
        self._batches = []


@dataclass
class StatementResult:
    """What a statement produced: its columns and a way to (re)open its batches from the first row."""

    columns: list[ResultColumn]
    open_batches: Callable[[], BatchSource]
    # A query's batches with some types kept as Spark's Arrow types (see WireTypes); None for a result in memory.
    open_typed: Callable[[WireTypes], tuple[pa.Schema, BatchSource]] | None = None
    # Rows a DML statement inserted, updated or deleted (Databricks clients' `numModifiedRows`, their rowcount).
    modified_rows: int | None = None
    # What the result keeps until its reader is done with it (a query's holds on the Delta versions it reads, whose
    # files are read only as batches are fetched); `close()` runs it once.
    on_close: Callable[[], None] | None = None
    # Whether the batches are a kept answer of an earlier run (engine/result_cache.py): no Spark job computed them.
    from_result_cache: bool = False

    def close(self) -> None:
        """The reader is done with the result (the operation closed, or never opened it): release what it kept."""
        on_close, self.on_close = self.on_close, None
        if on_close is not None:
            on_close()

    def open(self, types: WireTypes = TEXT) -> tuple[pa.Schema, BatchSource]:
        """The schema and batches from the first row, `types` kept natively where the result can; a result already
        in memory (commands, listings) comes in its text wire form whatever `types` asks."""
        if types != TEXT and self.open_typed is not None:
            return self.open_typed(types)
        return arrow_schema(self.columns), self.open_batches()


def run_sql(
    spark: SparkSession, sql: str, job_group: str, *, include_stack_trace: bool = False,
    check: Callable[[DataFrame], None] | None = None, original: str | None = None,
    to_original: Callable[[int], int] | None = None,
) -> StatementResult:
    """Analyse (and, for commands, run) `sql`. Queries run later, partition by partition, as batches are read;
    `check` sees the analysed DataFrame before that (the policy's last word on a query).

    Raises RuntimeQueryError with Spark's error class, SQLSTATE and the statement position (in `original`, the
    text as typed, through `to_original`, when `sql` is a rewrite of it).
    """
    spark.sparkContext.setJobGroup(job_group, sql[:200], interruptOnCancel=True)
    try:
        df = sql_dataframe(spark, sql)
    except Exception as exc:
        raise from_spark(exc, sql, include_stack_trace=include_stack_trace, original=original,
                         to_original=to_original) from exc
    if check is not None:
        check(df)
    return stream_dataframe(spark, df, sql, job_group, include_stack_trace=include_stack_trace)


def stream_dataframe(
    spark: SparkSession, df: DataFrame, sql: str, job_group: str, *, include_stack_trace: bool = False
) -> StatementResult:
    """The result of an analysed DataFrame (from `spark.sql` or a bound warehouse query), streamed as Arrow batches
    partition by partition when read. `sql` is the statement, for error positions and the job description."""
    context = spark.sparkContext
    try:
        columns = result_columns(df)
        if not columns:
            return StatementResult(columns, lambda: ListBatchSource(()))
        wire = wire_dataframe(df, columns)
        schema = arrow_schema(columns)
    except Exception as exc:
        raise from_spark(exc, sql, include_stack_trace=include_stack_trace) from exc

    def open_wire(wire_df: DataFrame, wire_schema: pa.Schema) -> BatchSource:
        context.setJobGroup(job_group, sql[:200], interruptOnCancel=True)
        try:
            in_driver = driver_batches(wire_df)
            if in_driver is not None:
                return ListBatchSource(conform(batch, wire_schema) for batch in in_driver)
            arrow_rdd = wire_df._jdf.toArrowBatchRdd()
            if arrow_rdd.getNumPartitions() <= 1:
                return ListBatchSource(collect_single_partition(wire_df, wire_schema))
            return _TranslatingSource(ArrowBatchStream(spark, arrow_rdd, wire_schema), sql, include_stack_trace)
        except Exception as exc:
            raise from_spark(exc, sql, include_stack_trace=include_stack_trace) from exc

    def open_typed(types: WireTypes) -> tuple[pa.Schema, BatchSource]:
        try:
            typed = wire_dataframe(df, columns, types)
            typed_schema = typed_arrow_schema(typed)
        except Exception as exc:
            raise from_spark(exc, sql, include_stack_trace=include_stack_trace) from exc
        return typed_schema, open_wire(typed, typed_schema)

    return StatementResult(columns, lambda: open_wire(wire, schema), open_typed)


class _TranslatingSource:
    """Errors raised while Spark computes later partitions get the same translation as those at analysis."""

    def __init__(self, inner: ArrowBatchStream, sql: str, include_stack_trace: bool) -> None:
        self._inner = inner
        self._sql = sql
        self._include_stack_trace = include_stack_trace

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        try:
            yield from self._inner
        except Exception as exc:
            raise from_spark(exc, self._sql, include_stack_trace=self._include_stack_trace) from exc

    def close(self) -> None:
        self._inner.close()


def cancel_job_group(spark: SparkSession, job_group: str) -> None:
    """Cancel the group's running jobs and any it starts later: a cancel that lands between analysis and the first
    job (or between two partitions of a result) must still stop the statement. Spark appends the reason to "Job n
    cancelled ", so it reads "Job n cancelled by the client"."""
    spark.sparkContext._jsc.sc().cancelJobGroupAndFutureJobs(job_group, "by the client")
