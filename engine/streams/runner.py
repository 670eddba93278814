"""One stream: a checked plan turned into a running Structured Streaming query writing through the Delta sink.

Each stream runs in a Spark session of its own (its temp views and SQL conf stay out of every client's session), on
the shared Spark context; the manager keeps that session across the stream's restarts. Its sources and static
tables are registered as the temp views the plan's query_sql names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from sluicegate.catalog.names import quote_identifier, quote_qualified
from sluicegate.dialect.streaming.cdc import END_AT, START_AT, kept_columns
from sluicegate.dialect.streaming.expectations import needs_quarantine, quarantine_name
from sluicegate.dialect.streaming.plan import StreamingPlan, skips_change_commits
from sluicegate.engine.declared_schema import declared_schema
from sluicegate.engine.streams.cdc_flows import CdcShare
from sluicegate.engine.streams.cdc_scd2 import Scd2Sink
from sluicegate.engine.streams.cdc_sink import Scd1Sink, tombstone_seconds
from sluicegate.engine.streams.errors import RAISED_IN_BATCH, StreamDefinitionError
from sluicegate.engine.streams.expectations import BatchChecks, check_against
from sluicegate.engine.streams.sink import BatchWritten, DeltaSink
from sluicegate.engine.streams.sources import TableLocations, capped_python_source, source_dataframe, static_dataframe

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery
    from pyspark.sql.types import DataType, StructType

STOP_TIMEOUT_MS = 15_000


@dataclass(frozen=True)
class StreamTarget:
    """Where a stream writes and remembers: its id (the Delta txn app id), table and checkpoint."""

    stream_id: str
    location: str
    checkpoint: str
    query_name: str
    quarantine: str | None = None    # the quarantine table's folder; None: beside the table, when the plan has one
    cdc_share: CdcShare | None = None   # an AUTO CDC writer of a table with flows: the state it shares, the others


def _shaped(result: DataFrame, plan: StreamingPlan) -> DataFrame:
    """With a column list in CREATE, the table has those columns: matched by name, cast to the declared types."""
    if not plan.columns:
        return result
    from pyspark.sql.functions import col

    produced = {name.lower(): name for name in result.columns}
    declared = {column.name.lower() for column in plan.columns}
    missing = [c.name for c in plan.columns if c.name.lower() not in produced]
    extra = [name for name in result.columns if name.lower() not in declared]
    rescued = {s.rescued_data.lower() for s in plan.sources if s.rescued_data}
    if extra and not missing and all(name.lower() in rescued for name in extra):
        raise StreamDefinitionError(
            f"The column list of `{plan.name}` does not declare {', '.join(f'`{n}`' for n in extra)}, which "
            "read_files adds for records it cannot parse or cast.",
            hint=f"declare {extra[0]} STRING in the column list to keep such records, or select the columns you want "
                 "instead of *")
    if missing or extra:
        problems = []
        if missing:
            problems.append(f"declares {', '.join(f'`{n}`' for n in missing)}, which the query does not produce")
        if extra:
            problems.append(f"does not declare {', '.join(f'`{n}`' for n in extra)}, which the query produces")
        raise StreamDefinitionError(
            f"The column list of `{plan.name}` {' and '.join(problems)}.",
            hint="name the query's columns with AS to match the column list, or leave the list out",
        )
    return result.select(*[col(quote_identifier(produced[c.name.lower()])).cast(c.type).alias(c.name)
                           for c in plan.columns])


@dataclass
class BuiltStream:
    session: SparkSession
    result: DataFrame
    cached: list[DataFrame]
    static_versions: dict[tuple[str, str], int]   # (database, table) -> the version the stream joins with
    schema: StructType                # the table's: the result's, with the column list's NOT NULL and comments
    checkpoint: str | None = None     # the checkpoint its capped Python sources read a run's start from

    def release(self) -> None:
        for frame in self.cached:
            frame.unpersist()


def sources_checkpoint(plan: StreamingPlan, checkpoint: str, available_now: bool) -> str | None:
    """The checkpoint a run's sources are given: only capped Python sources read it, and a scheduled pass is one
    batch (Spark 4.1 runs a Python source's available-now trigger as a single batch, which reads all there is, as
    Spark ignores read limits for a single-batch trigger), so it gets none."""
    if available_now or not any(capped_python_source(source) for source in plan.sources):
        return None
    return checkpoint


def build(session: SparkSession, plan: StreamingPlan, tables: TableLocations,
          checkpoint: str | None = None) -> BuiltStream:
    """The result as a streaming DataFrame in the stream's own session (nothing runs yet): its schema is the
    table's, and Spark's analysis errors surface here. `checkpoint`: see `sources_checkpoint`."""
    session.conf.set("spark.sql.streaming.stopTimeout", str(STOP_TIMEOUT_MS))
    reader = ".".join(quote_identifier(part) for part in (plan.database, plan.name) if part)
    for source in plan.sources:
        source_dataframe(session, source, tables, reader, skips_change_commits(plan.properties), checkpoint) \
            .createOrReplaceTempView(source.view_name)
    cached: list[DataFrame] = []
    versions: dict[tuple[str, str], int] = {}
    try:
        for static in plan.static_tables:
            # cached: the small side of a stream-static join is read and broadcast for every micro-batch otherwise
            frame, version = static_dataframe(session, static, tables)
            frame = frame.cache()
            frame.createOrReplaceTempView(static.view_name)
            cached.append(frame)
            versions[(static.database or "", static.table)] = version
        result = session.sql(plan.query_sql)
        if plan.cdc is None:
            result = _shaped(result, plan)
        check_against(result, plan.expectations)   # an AUTO CDC table's: over its change events
    except BaseException:
        for frame in cached:
            frame.unpersist()
        raise
    table = (cdc_table_schema(result.schema, plan, _sequence_type(result, plan)) if plan.cdc is not None
             else result.schema)
    return BuiltStream(session, result, cached, versions, declared_schema(plan.columns, table), checkpoint)


def cdc_table_schema(events: StructType, plan: StreamingPlan, sequence: DataType | None = None) -> StructType:
    """An AUTO CDC table's schema: the events' columns it keeps, cast to the column list's types when it has one;
    SCD type 2 adds `__START_AT` and `__END_AT` of the SEQUENCE BY type (`sequence`), or as the column list
    declares them (a column list may leave them out: they are added at its end)."""
    from pyspark.sql.types import StructField, StructType, _parse_datatype_string

    assert plan.cdc is not None
    kept = kept_columns(events.fieldNames(), plan.cdc)
    versions = (START_AT, END_AT) if plan.cdc.scd_type == 2 else ()
    clashing = [name for name in kept if name.lower() in {v.lower() for v in versions}]
    if clashing:
        raise StreamDefinitionError(
            f"The AUTO CDC events of `{plan.name}` have a column `{clashing[0]}`, which an SCD type 2 table holds "
            "itself (the start and end of each version).",
            hint=f"leave it out with COLUMNS * EXCEPT ({clashing[0]}), or rename it in the source")
    added = [StructField(name, sequence, True) for name in versions] if sequence is not None else []
    if not plan.columns:
        return StructType([events[name] for name in kept] + added)
    declared = {column.name.lower() for column in plan.columns}
    extra = [name for name in kept if name.lower() not in declared]
    missing = [c.name for c in plan.columns
               if c.name.lower() not in {name.lower() for name in (*kept, *versions)}]
    if extra or missing:
        problems = ([f"keeps {', '.join(f'`{n}`' for n in extra)}, which the column list does not declare"]
                    if extra else []) + ([f"declares {', '.join(f'`{n}`' for n in missing)}, which the events "
                                          "do not have"] if missing else [])
        raise StreamDefinitionError(
            f"The column list of `{plan.name}` does not match the AUTO CDC events: it {' and '.join(problems)}.",
            hint="declare the columns the table keeps, or choose them with COLUMNS a, b or COLUMNS * EXCEPT (...)")
    fields = [StructField(c.name, _parse_datatype_string(c.type), True) for c in plan.columns]
    return StructType(fields + [field for field in added if field.name.lower() not in declared])


def _sequence_type(result: DataFrame, plan: StreamingPlan) -> DataType | None:
    """The type of an SCD type 2 table's `__START_AT` and `__END_AT`: SEQUENCE BY's over the events (None: SCD 1)."""
    from pyspark.sql import functions as F

    if plan.cdc is None or plan.cdc.scd_type != 2:
        return None
    return result.select(F.expr(plan.cdc.sequence_sql)).schema.fields[0].dataType


def start(result: DataFrame, plan: StreamingPlan, target: StreamTarget, trigger_seconds: float,
          keys: tuple[str, ...], on_batch: Callable[[BatchWritten], None] | None = None,
          available_now: bool = False, before_batch: Callable[[], object] | None = None) -> StreamingQuery:
    """`available_now`: one pass of a scheduled table (everything available now, in micro-batches, then the query
    ends); otherwise a continuous query triggered every `trigger_seconds`. Same sink, same checkpoint either way.
    `before_batch`: the sink's first step in each batch (the checkpoint's upload to an object store)."""
    quarantine = target.quarantine
    if quarantine is None and needs_quarantine(plan.expectations, plan.properties):
        from sluicegate.storage.locations import sibling_table_folder

        quarantine = str(sibling_table_folder(target.location, quarantine_name(plan.name)))
    checks = BatchChecks(plan.expectations, f"{plan.database}.{plan.name}" if plan.database else plan.name)
    if plan.cdc is not None:
        return _start_cdc(result, plan, replace(target, quarantine=quarantine), trigger_seconds, on_batch,
                          available_now, before_batch, checks)
    sink = DeltaSink(target.location, target.stream_id, plan.output_mode, keys, on_batch, checks, quarantine,
                     before_batch, table=quote_qualified(*(part for part in (plan.database, plan.name) if part)))
    writer = (result.writeStream.foreachBatch(sink).outputMode(plan.output_mode)
              .option("checkpointLocation", target.checkpoint).queryName(target.query_name))
    RAISED_IN_BATCH.take(target.stream_id)   # an error of an earlier run of this stream explains nothing now
    if available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{round(trigger_seconds * 1000)} milliseconds")
    return writer.start()


def _start_cdc(result: DataFrame, plan: StreamingPlan, target: StreamTarget, trigger_seconds: float,
               on_batch: Callable[[BatchWritten], None] | None, available_now: bool,
               before_batch: Callable[[], object] | None, checks: BatchChecks) -> StreamingQuery:
    """An AUTO CDC stream: the raw events go to the CDC sink, which judges them by the expectations and applies them
    by key (engine/streams/cdc_sink.py)."""
    assert plan.cdc is not None
    columns = kept_columns(result.columns, plan.cdc)
    types = {column.name.lower(): column.type for column in plan.columns}
    sink = (Scd2Sink if plan.cdc.scd_type == 2 else Scd1Sink)(
        target.location, target.stream_id, plan.cdc, columns, types, on_batch, before_batch,
        tombstone_seconds(plan.properties), share=target.cdc_share, checks=checks, quarantine=target.quarantine)
    writer = (result.writeStream.foreachBatch(sink).outputMode("append")
              .option("checkpointLocation", target.checkpoint).queryName(target.query_name))
    RAISED_IN_BATCH.take(target.stream_id)
    if available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{round(trigger_seconds * 1000)} milliseconds")
    return writer.start()


def merge_keys(plan: StreamingPlan, columns: list[str]) -> tuple[str, ...]:
    """The columns an update-mode batch is merged on. A deduplication without stated keys is keyed by every column;
    a global aggregate has none (its single row is replaced)."""
    if plan.output_mode != "update":
        return ()
    if not plan.keys:
        return () if plan.aggregation == "global" else tuple(columns)
    by_name = {name.lower(): name for name in columns}
    return tuple(by_name.get(key.lower(), key) for key in plan.keys)
