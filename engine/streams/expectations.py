"""Evaluating a table's expectations over a micro-batch (or any result DataFrame: materialized views reuse it).

A row passes an expectation when its condition is TRUE; FALSE and NULL fail it (a DROP ROW keeps out what Spark's
`filter` would). All conditions are evaluated in one pass. Without a FAIL UPDATE the counts ride on the table's
write as observed metrics (no second scan; in a throwaway session, storage/observations.py says why); DROP ROW
projects the batch once with one boolean column per expectation and caches it, so the quarantine's rows come from
the cache. A FAIL UPDATE needs the verdict before anything commits: the flagged batch is cached, counted in one
aggregation and then split. Update mode brings the changed groups to the driver anyway: there the flags come along
and are counted in Arrow.

The counts are per batch in the shape of Databricks' event log (`details:flow_progress:data_quality`), and add up
per stream in `QualityTotals` for DESCRIBE STREAMING TABLE.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.names import quote_identifier
from sluicegate.dialect.streaming.plan import ExpectationSpec
from sluicegate.storage.spark_errors import RuntimeQueryError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import StructType

FAILED_COLUMN = "_failed_expectations"   # the quarantine table's extra columns, after the row's own
BATCH_COLUMN = "_batch_id"
TIME_COLUMN = "_quarantined_at"
QUARANTINE_COLUMNS = (FAILED_COLUMN, BATCH_COLUMN, TIME_COLUMN)
_FLAG = "__sg_expect_{}"
_KEEP = "__sg_keep"
_RECORD_LIMIT = 1000


class ExpectationViolationError(RuntimeQueryError):
    """A FAIL UPDATE expectation failed: the micro-batch committed nothing. Databricks' error condition is
    EXPECTATION_VIOLATION (SQLSTATE 22000, "Flow '<flowName>' failed to meet the expectation"); the subclass names
    the action, and the message reads as Databricks' with the one offending record."""

    error_class = "EXPECTATION_VIOLATION.FAIL_UPDATE"
    sqlstate = "22000"


class InvalidExpectationError(RuntimeQueryError):
    """An expectation that does not analyse over the table's result (a column it names is not there, not a
    boolean). `expectation` and `column_name` say where, so CREATE can point at it in the statement."""

    error_class = "INVALID_EXPECTATION"
    sqlstate = "42000"

    def __init__(self, message: str, *, expectation: str, column_name: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.expectation = expectation
        self.column_name = column_name


def _condition(spec: ExpectationSpec) -> Column:
    from pyspark.sql import functions as F

    return F.coalesce(F.expr(spec.expression_sql), F.lit(False))


def with_conditions(result: DataFrame, specs: Sequence[ExpectationSpec]) -> DataFrame:
    """The result with every condition as a column (nothing runs): what the policy judges, as it judges the query,
    before an expectation ever reaches a batch."""
    from pyspark.sql import functions as F

    return result.select("*", *[F.expr(spec.expression_sql).alias(_FLAG.format(i)) for i, spec in enumerate(specs)])


def check_against(result: DataFrame, specs: Sequence[ExpectationSpec]) -> None:
    """Analyse every expectation over the result's columns (nothing runs): a missing column is named, a condition
    that is not a boolean is refused, and any other analysis error of Spark's carries the expectation's name."""
    from pyspark.errors import AnalysisException, ParseException
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    from sluicegate.dialect.parse import parse
    from sluicegate.dialect.streaming.expectations import found_expectations, unknown_columns

    columns = {name.lower() for name in result.columns}
    for spec in specs:
        tree = parse(f"CREATE TABLE t (CONSTRAINT {quote_identifier(spec.name)} EXPECT ({spec.expression_sql}))")
        for found in found_expectations(tree):
            missing = unknown_columns(found, columns)
            if missing:
                name = missing[0].parts[0].name
                raise InvalidExpectationError(
                    f"The expectation `{spec.name}` reads the column `{name}`, which the table's result does not "
                    f"have (its columns: {', '.join(result.columns)}).", error_class="UNRESOLVED_COLUMN.EXPECTATION",
                    sqlstate="42703", expectation=spec.name, column_name=name,
                    hint="name a column of the query's result (as its SELECT list names it)")
        try:
            kind = result.select(F.expr(spec.expression_sql).alias("c")).schema["c"].dataType
        except (AnalysisException, ParseException) as exc:  # Spark's class and SQLSTATE pass through
            raise InvalidExpectationError(
                f"The expectation `{spec.name}` does not analyse over the table's result: "
                f"{str(exc).splitlines()[0]}", expectation=spec.name,
                error_class=exc.getCondition() or None, sqlstate=exc.getSqlState() or None,
                hint="write a condition over the query's result columns") from exc
        if not isinstance(kind, BooleanType):
            raise InvalidExpectationError(
                f"The expectation `{spec.name}` is of type {kind.simpleString()}, not a boolean condition.",
                error_class="INVALID_EXPECTATION.NOT_BOOLEAN", sqlstate="42K09", expectation=spec.name,
                hint="write a condition, such as `amount > 0` or `id IS NOT NULL`")


@dataclass
class Counts:
    """One batch's verdict: rows seen, failures per expectation (in spec order), rows kept out of the table."""

    rows: int
    failed: list[int]
    dropped: int


@dataclass(frozen=True)
class BatchChecks:
    """A table's expectations, ready to evaluate over its result batches. `dataset` is the table's name as the
    event log shows it."""

    specs: tuple[ExpectationSpec, ...]
    dataset: str

    @property
    def drops(self) -> bool:
        return any(spec.action == "drop" for spec in self.specs)

    @property
    def fails(self) -> bool:
        return any(spec.action == "fail" for spec in self.specs)

    @property
    def warn_only(self) -> bool:
        return not (self.drops or self.fails)

    def _indexes(self, action: str) -> list[int]:
        return [i for i, spec in enumerate(self.specs) if spec.action == action]

    # -- one projection ------------------------------------------------------------------------------------------

    def flagged(self, batch: DataFrame) -> DataFrame:
        """The batch with one boolean per expectation and whether the row is kept in the table."""
        from pyspark.sql import functions as F

        flags = [_condition(spec).alias(_FLAG.format(i)) for i, spec in enumerate(self.specs)]
        keep = F.lit(True)
        for i in self._indexes("drop"):
            keep = keep & F.col(_FLAG.format(i))
        return batch.select("*", *flags).withColumn(_KEEP, keep)

    def failed_names(self, row: dict[str, Any]) -> list[str]:
        """The expectations a flagged row (as a dict) failed."""
        return [spec.name for i, spec in enumerate(self.specs) if not row.get(_FLAG.format(i))]

    def count_columns(self) -> list[Column]:
        """Aggregates over a flagged batch: rows, failures per expectation, rows kept out."""
        from pyspark.sql import functions as F

        failed = [F.sum(F.when(~F.col(_FLAG.format(i)), 1).otherwise(0)).alias(f"f{i}")
                  for i in range(len(self.specs))]
        return [F.count(F.lit(1)).alias("rows"), *failed,
                F.sum(F.when(~F.col(_KEEP), 1).otherwise(0)).alias("dropped")]

    def observed_columns(self) -> list[Column]:
        """The same counts as `count_columns`, straight over an unflagged batch (observed during the write)."""
        from pyspark.sql import functions as F

        failed = [F.sum(F.when(~_condition(spec), 1).otherwise(0)).alias(f"f{i}")
                  for i, spec in enumerate(self.specs)]
        return [F.count(F.lit(1)).alias("rows"), *failed, F.lit(0).alias("dropped")]

    def counts_from(self, row: dict[str, Any]) -> Counts:
        return Counts(int(row.get("rows") or 0), [int(row.get(f"f{i}") or 0) for i in range(len(self.specs))],
                      int(row.get("dropped") or 0))

    def arrow_counts(self, rows: pa.Table) -> Counts:
        import pyarrow.compute as pc

        failed = [rows.num_rows - int(pc.sum(pc.cast(rows.column(_FLAG.format(i)), "int64")).as_py() or 0)
                  for i in range(len(self.specs))]
        kept = int(pc.sum(pc.cast(rows.column(_KEEP), "int64")).as_py() or 0)
        return Counts(rows.num_rows, failed, rows.num_rows - kept)

    # -- verdicts ------------------------------------------------------------------------------------------------

    def violated(self, counts: Counts) -> list[str]:
        """The FAIL UPDATE expectations some row failed."""
        return [self.specs[i].name for i in self._indexes("fail") if counts.failed[i]]

    def violation(self, violated: list[str], record: dict[str, Any] | None) -> ExpectationViolationError:
        shown = json.dumps(record, default=str, sort_keys=False) if record is not None else "{}"
        if len(shown) > _RECORD_LIMIT:
            shown = shown[:_RECORD_LIMIT] + " ..."
        names = ", ".join(violated)
        return ExpectationViolationError(
            f"[EXPECTATION_VIOLATION.FAIL_UPDATE] Flow '{self.dataset}' failed to meet the expectation. Violated "
            f"expectations: '{names}'. Output record: '{shown}'. The micro-batch committed nothing.",
            hint=f"fix the input, or change the expectation (ON VIOLATION DROP ROW keeps such rows in the "
                 f"quarantine table) with CREATE OR REFRESH STREAMING TABLE {self.dataset}")

    def offending_record(self, flagged: DataFrame, violated: list[str]) -> dict[str, Any] | None:
        from pyspark.sql import functions as F

        names = set(violated)
        fails = [~F.col(_FLAG.format(i)) for i, spec in enumerate(self.specs) if spec.name in names]
        condition = fails[0]
        for other in fails[1:]:
            condition = condition | other
        rows = flagged.filter(condition).select(*self.row_columns(flagged)).limit(1).collect()
        return rows[0].asDict(recursive=True) if rows else None

    def quality(self, counts: Counts) -> dict[str, Any]:
        """Databricks' `data_quality` of one flow_progress event."""
        return {"dropped_records": counts.dropped,
                "expectations": [{"name": spec.name, "dataset": self.dataset,
                                  "passed_records": counts.rows - counts.failed[i],
                                  "failed_records": counts.failed[i]} for i, spec in enumerate(self.specs)]}

    # -- what goes where -----------------------------------------------------------------------------------------

    @staticmethod
    def row_columns(flagged: DataFrame) -> list[str]:
        return [quote_identifier(c) for c in flagged.columns if not (c.startswith("__sg_expect_") or c == _KEEP)]

    def kept(self, flagged: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        return flagged.filter(F.col(_KEEP)).select(*self.row_columns(flagged))

    def quarantined(self, flagged: DataFrame, batch_id: int, at: dt.datetime) -> DataFrame:
        """The rows a DROP ROW expectation kept out, with the names of all the expectations they failed, the batch
        and the time."""
        from pyspark.sql import functions as F

        named = F.array(*[F.when(~F.col(_FLAG.format(i)), F.lit(spec.name)) for i, spec in enumerate(self.specs)])
        return flagged.filter(~F.col(_KEEP)).select(
            *self.row_columns(flagged), F.filter(named, lambda name: name.isNotNull()).alias(FAILED_COLUMN),
            F.lit(batch_id).cast("bigint").alias(BATCH_COLUMN),
            F.lit(at).cast("timestamp").alias(TIME_COLUMN))

    @staticmethod
    def keep_column() -> str:
        return _KEEP



def quarantine_schema(result: StructType) -> StructType:
    """The quarantine table's columns: the result's, then the expectations failed, the batch id and the time."""
    from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType, TimestampType

    clash = [f.name for f in result.fields if f.name.lower() in QUARANTINE_COLUMNS]
    if clash:
        raise InvalidExpectationError(
            f"The result has a column `{clash[0]}`, which the quarantine table of its DROP ROW expectations uses "
            "for its own.", expectation="", error_class="INVALID_EXPECTATION.QUARANTINE_COLUMN", sqlstate="42711",
            hint="rename that column with AS, or set TBLPROPERTIES ('sluicegate.quarantine' = 'false')")
    return StructType([*result.fields, StructField(FAILED_COLUMN, ArrayType(StringType(), True), True),
                       StructField(BATCH_COLUMN, LongType(), True), StructField(TIME_COLUMN, TimestampType(), True)])


@dataclass
class _Total:
    action: str
    passed: int = 0
    failed: int = 0


@dataclass
class QualityTotals:
    """Counts per stream since the gateway started, for DESCRIBE STREAMING TABLE (the event log keeps each
    batch's)."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _by_stream: dict[str, dict[str, _Total]] = field(default_factory=dict)

    def add(self, stream_id: str, specs: Sequence[ExpectationSpec], quality: dict[str, Any]) -> None:
        actions = {spec.name: spec.action for spec in specs}
        with self._lock:
            totals = self._by_stream.setdefault(stream_id, {})
            for item in quality.get("expectations", []):
                total = totals.setdefault(item["name"], _Total(actions.get(item["name"], "warn")))
                total.passed += item["passed_records"]
                total.failed += item["failed_records"]

    def lines(self, stream_id: str, specs: Sequence[ExpectationSpec]) -> list[tuple[str, str]]:
        """One (name, text) per expectation of `specs`, in their order."""
        labels = {"warn": "warn", "drop": "ON VIOLATION DROP ROW", "fail": "ON VIOLATION FAIL UPDATE"}
        with self._lock:
            totals = dict(self._by_stream.get(stream_id, {}))
        out = []
        for spec in specs:
            total = totals.get(spec.name, _Total(spec.action))
            text = (f"EXPECT ({spec.expression_sql}) {labels[spec.action]}: passed {total.passed}, "
                    f"failed {total.failed} (since the gateway started)")
            out.append((spec.name, text))
        return out


TOTALS = QualityTotals()
