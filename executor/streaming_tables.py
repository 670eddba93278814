"""Streaming-table statements: CREATE [OR REFRESH] STREAMING TABLE starts a checked, persisted stream; DROP stops it
and removes its table and checkpoint; SHOW and DESCRIBE report status and progress; EXPLAIN renders the plan. As an
object kind (executor/kinds.py) it answers DROP TABLE, DROP DATABASE CASCADE, REFRESH and ALTER SCHEDULE.

CREATE persists before it starts (the empty Delta table with the table's schema, engine/declared_schema.py: the
result's, with the column list's NOT NULL and comments; the catalog row, the stream row), then starts the query; if
Spark refuses to start it, everything persisted is undone and the error is Spark's. Then, as on Databricks, it waits
for the stream's first update (`_first_update`): the statement returns once what the sources held is in the table,
or fails with the stream's error when that update fails (the table stays, its stream FAILED).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sluicegate.catalog.clock import display_time
from sluicegate.catalog.errors import SchemaNotFoundError, TableAlreadyExistsError
from sluicegate.catalog.store import StreamEntry, TableEntry, pattern_matcher
from sluicegate.dialect import statements as st
from sluicegate.dialect.parse import parse
from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.dialect.streaming.cdc import analyze_cdc, check_cdc_source, describe_cdc
from sluicegate.dialect.streaming.expectations import found_expectations, needs_quarantine, position_in, quarantine_name
from sluicegate.dialect.streaming.explain import explain
from sluicegate.dialect.streaming.kafka import redact_sql
from sluicegate.dialect.streaming.plan import StreamingPlan
from sluicegate.engine.sql import StatementResult
from sluicegate.engine.streams import faults, refresh, reset
from sluicegate.engine.streams.expectations import TOTALS, InvalidExpectationError, quarantine_schema, with_conditions
from sluicegate.engine.streams.kafka_lag import kafka_rows
from sluicegate.engine.streams.manager import RUNNING, STARTING, new_stream_id
from sluicegate.engine.streams.protocols import Streams
from sluicegate.executor.cdc_flows import agree_with_writers, create_auto_cdc_flow, refuse_stream_readers
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import NotATableError, UnresolvedColumnError, spark_errors
from sluicegate.executor.flows import (
    drop_flows_of,
    flow_only_rows,
    flow_only_show_rows,
    flow_rows,
    refuse_full_refresh_with_flows,
)
from sluicegate.executor.lookups import not_found, to_drop_as
from sluicegate.executor.object_kinds import refuse_schedule
from sluicegate.executor.output import no_result, rows_result
from sluicegate.executor.schedule_rows import change_schedule, refresh_rows, schedule_json, with_session_zone
from sluicegate.executor.spark_databases import ensure_spark_database
from sluicegate.executor.stream_plans import qualified, readable_error, streams_of, table_kind
from sluicegate.storage import locations
from sluicegate.storage.delta.write import commit_files
from sluicegate.storage.spark_errors import RuntimeQueryError

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from sluicegate.engine.streams.runner import BuiltStream

log = logging.getLogger(__name__)


def explain_streaming_table(_ctx: StatementContext, statement: st.ExplainStreamingTable) -> StatementResult:
    """One row per line, as Spark's EXPLAIN answers in a single `plan` column split by line for a shell."""
    return rows_result([("plan", "string")], [(line,) for line in explain(statement.plan).splitlines()])


def _build(ctx: StatementContext, streams: Streams, plan: StreamingPlan, sql: str | None = None) -> BuiltStream:
    """The stream's query analysed over its sources, and judged by the policy before it ever runs. With `sql` (the
    statement, an AUTO CDC one), its keys, sequence and columns are checked against the source's columns."""
    with spark_errors(ctx.include_stack_trace):
        built = streams.build(plan)
    try:
        if plan.cdc is not None and sql is not None:
            check_cdc_source(sql, {f.name: f.dataType.simpleString() for f in built.result.schema.fields})
        ctx.policy.check_query(built.result, ctx.principal)
        if plan.expectations:  # conditions Spark evaluates are judged as the query is
            ctx.policy.check_query(with_conditions(built.result, plan.expectations), ctx.principal)
    except BaseException:
        built.release()
        database = (plan.database or ctx.current_database).lower()
        if ctx.store.get_table(database, plan.name.lower()) is None:
            streams.drop(database, plan.name)  # no stream yet: forgets the session it was built in
        raise
    return built


def create_auto_cdc(ctx: StatementContext, statement: st.CreateAutoCdc) -> StatementResult:
    """`CREATE [OR REFRESH] STREAMING TABLE t ... FLOW AUTO CDC ...`: a streaming table whose stream applies change
    events by key (SCD type 1 and 2, engine/streams/cdc_sink.py and cdc_scd2.py), its expectations judging the events
    first; `CREATE FLOW f AS AUTO CDC INTO t ...` adds a source to such a table (executor/cdc_flows.py), of SCD type
    1 or 2, with APPLY AS TRUNCATE as the table's own (SCD type 1 only, refused otherwise by the dialect)."""
    spec = statement.plan.cdc
    assert spec is not None
    if statement.flow is not None:
        return create_auto_cdc_flow(ctx, statement)
    agree_with_writers(ctx, statement.sql, spec, *ctx.qualify(statement.table), flow=None)  # its flows', if any
    return create_streaming_table(ctx, st.CreateStreamingTable(statement.plan, statement.sql, None, statement.table))


def create_streaming_table(ctx: StatementContext, statement: st.CreateStreamingTable) -> StatementResult:
    streams = streams_of(ctx)
    # again, now that the catalog can say how sources change
    plan = (analyze_cdc(statement.sql, table_kind=table_kind(ctx)) if statement.plan.cdc is not None
            else analyze(statement.sql, table_kind(ctx)))
    table_name = statement.table or st.TableName(plan.database, plan.name)  # as written, with its offset
    database, _ = ctx.checked(table_name, "streaming table")
    if ctx.store.get_database(database) is None:
        line, column = ctx.position_of(table_name)
        raise SchemaNotFoundError(f"The schema `{database}` cannot be found.", line=line, column=column,
                                  hint="CREATE DATABASE it first (SHOW DATABASES lists them)")
    with streams.lifecycle(database, plan.name.lower()):  # a concurrent CREATE or DROP of the name waits its turn
        try:
            started = _create_or_refresh(ctx, streams, statement, plan, database, table_name)
        except InvalidExpectationError as exc:
            raise _located(exc, statement.sql) from None
    if started:   # outside the lock: a DROP meanwhile ends the wait with the stream
        _first_update(ctx, streams, database, plan.name.lower())
    return no_result()


CREATE_WAITS = "spark.sluicegate.streams.createWaitsForFirstUpdate"   # a session's own choice (policy/settings.py)


def _first_update(ctx: StatementContext, streams: Streams, database: str, name: str) -> None:
    """As on Databricks, CREATE [OR REFRESH] returns once the stream's first update has processed what its sources
    held (streams.first_update), or fails with the stream's error once it is FAILED (the table stays); unless
    `[streams] create_waits_for_first_update = false` or the session's CREATE_WAITS says not to wait. Bounded by
    `[streams] first_update_timeout`: then it returns with the stream at work, and says so."""
    chosen = ctx.spark.conf.get(CREATE_WAITS, None)
    if not (streams.settings.create_waits if chosen is None else chosen.strip().lower() == "true"):
        return
    timeout = streams.settings.first_update_timeout
    if streams.first_update(database, name, ctx.cancelled, timeout) == "TIMED_OUT":
        note = (f"the first update of `{database}`.`{name}` took longer than streams.first_update_timeout "
                f"({timeout:g} s): the statement returns while the stream goes on (DESCRIBE STREAMING TABLE shows "
                "its progress)")
        ctx.notice(f"WARNING: {note}")
        log.warning("%s", note)


def _located(error: InvalidExpectationError, sql: str) -> InvalidExpectationError:
    """Point a Spark-side expectation error at the column (or the condition) in the statement."""
    if error.line is not None:
        return error
    for found in found_expectations(parse(sql)):
        if found.name.lower() != error.expectation.lower():
            continue
        wanted = (error.column_name or "").lower()
        node = next((c for c in found.node.this.find_all(exp.Column) if c.parts[0].name.lower() == wanted),
                    found.node.this)
        error.line, error.column = position_in(sql, node)
        break
    return error


def _create_or_refresh(ctx: StatementContext, streams: Streams, statement: st.CreateStreamingTable,
                       plan: StreamingPlan, database: str, table_name: st.TableName) -> bool:
    """Whether a stream was started (an existing table with IF NOT EXISTS: none)."""
    existing = ctx.store.get_table(database, plan.name.lower())
    if existing is not None:
        if plan.if_not_exists:
            return False
        if not plan.or_refresh or existing.kind != "STREAMING_TABLE":
            line, column = ctx.position_of(table_name)
            what = "a streaming table" if existing.kind == "STREAMING_TABLE" else existing.kind.lower()
            raise TableAlreadyExistsError(
                f"Cannot create streaming table `{database}`.`{plan.name.lower()}` because {what} of that name "
                "already exists.", line=line, column=column,
                hint="use CREATE OR REFRESH STREAMING TABLE to change its definition" if existing.kind ==
                "STREAMING_TABLE" else "choose another name, or drop the existing object first")
    if existing is not None and plan.cdc is not None and table_kind(ctx)(database, existing.name) != "auto_cdc":
        # an append streaming table becoming an AUTO CDC one: its STREAM(...) readers would fail on its first update
        refuse_stream_readers(ctx, table_name, database, existing.name, action="make an AUTO CDC table of")
    statement = replace(statement, schedule=with_session_zone(ctx, statement.schedule))  # before anything is built
    ensure_spark_database(ctx, database)
    stored = ctx.store.get_stream(database, plan.name.lower()) if existing is not None else None
    plan = qualified(ctx, plan, StreamingPlan.from_json(stored.plan_json) if stored is not None else None)
    built = _build(ctx, streams, plan, statement.sql)
    try:
        plan = _partitioned(ctx, plan, built.result.schema, table_name)
    except BaseException:
        built.release()
        raise
    if existing is not None:
        # the statement's schedule replaces the stored one (none: continuous), as Databricks' CREATE OR REFRESH
        ctx.store.update_table(database, existing.name, schedule=schedule_json(ctx, statement.schedule))
        _refresh(ctx, streams, existing, stored, plan, built, statement.sql, table=table_name)
        return True
    try:
        with locations.new_table_folder(ctx.warehouse, database, plan.name, "streaming table") as folder, \
                _quarantine_for(ctx, plan, database, built):
            # an error from here on removes the folders made here (and only them), once the steps below are undone
            _create_stream(ctx, streams, statement, plan, database, str(folder), built)
    except BaseException:
        built.release()
        streams.drop(database, plan.name)  # forgets the session it was built in
        raise
    return True


def _create_stream(ctx: StatementContext, streams: Streams, statement: st.CreateStreamingTable,
                   plan: StreamingPlan, database: str, location: str, built: BuiltStream) -> None:
    """Persist, then start: the empty Delta table, the catalog row, the stream row, the query. A failure to start
    undoes the rows; the caller removes the folder."""
    reset.empty_table(location, built.schema, plan, replace_existing=False)
    ctx.store.create_table(replace(_table_entry(ctx, plan, location, built.schema, statement.sql),
                                   schedule=schedule_json(ctx, statement.schedule)))  # before the stream starts
    stream_id = new_stream_id()
    with spark_errors(ctx.include_stack_trace):
        try:
            entry = ctx.store.put_stream(StreamEntry(database, plan.name, stream_id, plan.to_json(),
                                                     streams.checkpoint_for(stream_id), STARTING, RUNNING))
            ctx.store.record_event(database, plan.name, "CREATED", f"created by {ctx.user}",
                                   origin={"user_name": ctx.user})
            streams.start(entry, built)
        except Exception:
            streams.drop(database, plan.name)
            ctx.store.drop_table(database, plan.name)
            raise


QUARANTINE_OF = "sluicegate.quarantine_of"


@contextmanager
def _quarantine_for(ctx: StatementContext, plan: StreamingPlan, database: str, built: BuiltStream) -> Iterator[None]:
    """The quarantine table of a plan with DROP ROW expectations, created (empty, a plain Delta table owned by the
    statement's user) unless it exists; if the block raises, what was made here is removed."""
    name = quarantine_name(plan.name.lower())
    if not needs_quarantine(plan.expectations, plan.properties) or _own_quarantine(ctx, database, plan.name):
        yield
        return
    if ctx.store.get_table(database, name) is not None:
        raise TableAlreadyExistsError(
            f"Cannot create the quarantine table `{database}`.`{name}` for the DROP ROW expectations of "
            f"`{plan.name.lower()}`: a table of that name already exists.",
            hint="drop or rename that table, or set TBLPROPERTIES ('sluicegate.quarantine' = 'false') to only count "
                 "dropped rows")
    schema = quarantine_schema(built.result.schema)
    with locations.new_table_folder(ctx.warehouse, database, name) as folder:
        commit_files(str(folder), [], _arrow(schema), "append", create=True, name=name,
                     description=f"rows kept out of {database}.{plan.name.lower()} by its DROP ROW expectations")
        ctx.store.create_table(TableEntry(
            database=database, name=name, kind="TABLE", location=str(folder), schema_json=schema.json(),
            definition=None, properties={QUARANTINE_OF: f"{database}.{plan.name.lower()}"},
            comment=f"Rows kept out of {database}.{plan.name.lower()} by its DROP ROW expectations", owner=ctx.user))
        try:
            yield
        except BaseException:
            ctx.store.drop_table(database, name)
            raise


def _own_quarantine(ctx: StatementContext, database: str, table: str) -> TableEntry | None:
    """The quarantine table of `table`, if there is one (a table of that name made for another purpose is not)."""
    entry = ctx.store.get_table(database, quarantine_name(table.lower()))
    if entry is None or (entry.properties or {}).get(QUARANTINE_OF) != f"{database}.{table.lower()}":
        return None
    return entry


def _table_entry(ctx: StatementContext, plan: StreamingPlan, location: str, schema: StructType,
                 sql: str) -> TableEntry:
    return TableEntry(database=plan.database or "", name=plan.name, kind="STREAMING_TABLE", location=location,
                      schema_json=schema.json(), definition=sql.strip().rstrip(";"), properties=dict(plan.properties),
                      comment=plan.comment, owner=ctx.user, partition_by=plan.partition_by)


def _refresh(ctx: StatementContext, streams: Streams, existing: TableEntry, stored: StreamEntry | None,
             plan: StreamingPlan, built: BuiltStream, sql: str,
             forced: refresh.RefreshDecision | None = None, table: st.TableName | None = None) -> StatementResult:
    """`table`: the name as the statement wrote it (CREATE OR REFRESH), for positions; None for REFRESH ... FULL."""
    database, name = existing.database, existing.name
    same_schema = existing.schema_json == built.schema.json()
    decision = forced or (refresh.decide(StreamingPlan.from_json(stored.plan_json), plan, same_schema)
                          if stored is not None else refresh.RefreshDecision(refresh.FULL, "the table had no stream"))
    quarantine = _own_quarantine(ctx, database, name)
    if quarantine is None and needs_quarantine(plan.expectations, plan.properties):
        with _quarantine_for(ctx, plan, database, built):
            pass  # a refresh that adds a DROP ROW expectation: its quarantine table, before the stream stops
    table_changes = {"schema_json": built.schema.json(), "definition": sql.strip().rstrip(";"),
                     "properties": dict(plan.properties), "comment": plan.comment,
                     "partition_by": plan.partition_by}
    if decision.kind == refresh.FULL or stored is None:
        refuse_full_refresh_with_flows(ctx, existing, *ctx.position_of(table or st.TableName(database, name)))
        entry = _reset(ctx, streams, existing, stored, plan, built, table_changes)
        if quarantine is not None:
            # its rows came from the input processed again now: emptied after the table, so that a crash between
            # the two leaves rows quarantined twice rather than none
            _empty_quarantine(ctx, quarantine, built)
    else:
        streams.stop(database, name, desired=None)
        entry = ctx.store.put_stream(StreamEntry(database, name, stored.stream_id, plan.to_json(), stored.checkpoint,
                                                 STARTING, RUNNING), **table_changes)
    ctx.store.record_event(database, name, f"REFRESH_{decision.kind.upper()}", decision.reason)
    with spark_errors(ctx.include_stack_trace):
        try:
            streams.start(entry, built)
        except Exception as exc:
            # the new definition is stored: failed, with its error, and retried like any failing stream
            streams.record_failure((database, name), entry.stream_id, getattr(exc, "message", None) or str(exc))
            raise
    return no_result()


def _arrow(schema: StructType) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema)


def _empty_quarantine(ctx: StatementContext, quarantine: TableEntry, built: BuiltStream) -> None:
    schema = quarantine_schema(built.result.schema)
    location = locations.existing_table_folder(ctx.warehouse, quarantine.location)
    commit_files(str(location), [], _arrow(schema), "overwrite", create=True, name=quarantine.name,
                 description=quarantine.comment)
    ctx.store.update_table(quarantine.database, quarantine.name, schema_json=schema.json())


def _reset(ctx: StatementContext, streams: Streams, existing: TableEntry, stored: StreamEntry | None,
           plan: StreamingPlan, built: BuiltStream, table_changes: dict[str, Any]) -> StreamEntry:
    """A full refresh, safe at every step against a kill of the process (each step ends at a crash point a crash
    test arms; engine/streams/faults.py):
    1. stop the old query; its row and checkpoint stay, so a crash now resumes the old stream as it was;
    2. one catalog transaction switches the table's definition and the stream row to a new stream id and a new,
       empty checkpoint: from here a boot starts the new stream;
    3. remove the old checkpoint (only now: a row naming the old id must never lose its checkpoint, or Spark would
       start at batch 0 and the sink would skip batches whose ids the old txn already holds);
    4. empty the table in one commit carrying txn(new stream id, -1) (engine/streams/reset.py). If a crash
       comes before it, the new stream's start sees no txn of its id and empties the table then; after it, the txn
       says it is done. Either way the table holds the new query's result over all input, once.
    A crash between 2 and 3 leaves the old checkpoint folder behind (no row names it; nothing reads it)."""
    database, name = existing.database, existing.name
    location = locations.existing_table_folder(ctx.warehouse, existing.location)
    streams.stop(database, name, desired=None)
    faults.crash_point("full_refresh.after_stop")
    stream_id = new_stream_id()
    entry = ctx.store.put_stream(StreamEntry(database, name, stream_id, plan.to_json(),
                                             streams.checkpoint_for(stream_id), STARTING, RUNNING,
                                             last_refresh_status=reset.RESET_PENDING), **table_changes)
    faults.crash_point("full_refresh.after_row")
    if stored is not None:
        streams.remove_checkpoint(database, name, stored.checkpoint)
    faults.crash_point("full_refresh.after_checkpoint")
    reset.empty_for_stream(str(location), built.schema, plan, stream_id, always=True)
    faults.crash_point("full_refresh.after_empty")
    return entry


def refresh_streaming_table(ctx: StatementContext, entry: TableEntry, statement: st.Refresh) -> StatementResult:
    """`REFRESH [STREAMING] TABLE t [FULL] [SYNC | ASYNC]`. Without FULL, SYNC (the default) returns once the stream
    has processed the input there when the statement started (a scheduled table runs one available-now pass; a
    failed stream starts again with a fresh set of attempts). FULL empties the table in one Delta commit (history
    and time travel stay), starts a new checkpoint with the current definition and processes all input again,
    unless the table says `'pipelines.reset.allowed' = 'false'`. ASYNC returns at once."""
    database, name = entry.database, entry.name
    line, column = ctx.position_of(statement.table)
    if statement.kind == "MATERIALIZED VIEW":
        raise NotATableError(f"`{database}`.`{name}` is a streaming table, not a materialized view.",
                             error_class="EXPECT_MATERIALIZED_VIEW", line=line, column=column,
                             hint="write REFRESH STREAMING TABLE")
    streams = streams_of(ctx)
    if statement.full:
        refuse_full_refresh_with_flows(ctx, entry, line, column)
        if (entry.properties or {}).get("pipelines.reset.allowed", "true").strip().lower() == "false":
            raise RefreshNotAllowedError(
                f"`{database}`.`{name}` sets 'pipelines.reset.allowed' = 'false': a full refresh would empty it",
                line=line, column=column,
                hint="ALTER TABLE ... SET TBLPROPERTIES ('pipelines.reset.allowed' = 'true') first, or REFRESH "
                     "without FULL")
        with streams.lifecycle(database, name):
            _full_refresh(ctx, streams, entry)   # a scheduled table's first pass starts with the new stream
        if not statement.asynchronous:
            streams.catch_up(database, name, ctx.cancelled, None)
        return no_result()
    flows = [f.stream.flow for f in ctx.store.list_flows(database, name)]
    own = [None] if ctx.store.get_stream(database, name) is not None or not flows else []
    for flow in own + flows:      # the table's own stream, then each flow into it
        with spark_errors(ctx.include_stack_trace):
            pending = streams.refresh(database, name, flow=flow)  # a scheduled table: one pass; a failed stream:
        if not statement.asynchronous:                            # started again
            streams.catch_up(database, name, ctx.cancelled, pending, flow=flow)
    return no_result()


def _partitioned(ctx: StatementContext, plan: StreamingPlan, schema: Any, table: st.TableName) -> StreamingPlan:
    """The plan with its partition columns spelt as the query's result spells them (Delta's partition columns
    are the schema's names); a name the result lacks, or a column of a nested type, is refused at the table."""
    if not plan.partition_by:
        return plan
    fields = {field.name.lower(): field for field in schema.fields}
    names = []
    for wanted in plan.partition_by:
        field = fields.get(wanted.lower())
        line, column = ctx.position_of(table)
        if field is None:
            raise UnresolvedColumnError(
                f"The partition column `{wanted}` is not a column of the streaming table `{plan.name}`; its query "
                f"produces {', '.join(f'`{name}`' for name in schema.fieldNames())}.",
                error_class="COLUMN_NOT_DEFINED_IN_TABLE", line=line, column=column,
                hint="partition by a column the query selects")
        if field.dataType.typeName() in ("array", "map", "struct", "variant"):
            raise UnresolvedColumnError(
                f"The partition column `{field.name}` has the type {field.dataType.simpleString()}, which cannot "
                "partition a table.", error_class="INVALID_PARTITION_COLUMN_DATA_TYPE", sqlstate="0A000",
                line=line, column=column, hint="partition by a column of an atomic type (a date, a string, ...)")
        names.append(field.name)
    return replace(plan, partition_by=tuple(names))


def _full_refresh(ctx: StatementContext, streams: Streams, entry: TableEntry) -> None:
    stored = ctx.store.get_stream(entry.database, entry.name)
    if stored is None:
        raise not_found(ctx, st.TableName(entry.database, entry.name))
    ensure_spark_database(ctx, entry.database)
    plan = StreamingPlan.from_json(stored.plan_json)
    built = _build(ctx, streams, plan)
    _refresh(ctx, streams, entry, stored, plan, built, entry.definition or "",
             forced=refresh.RefreshDecision(refresh.FULL, "REFRESH STREAMING TABLE ... FULL"))


class RefreshNotAllowedError(RuntimeQueryError):
    error_class = "FULL_REFRESH_NOT_ALLOWED"
    sqlstate = "42000"


def drop_streaming_table(ctx: StatementContext, statement: st.DropStreamingTable) -> StatementResult:
    database, name = ctx.qualify(statement.table)
    if to_drop_as(ctx, statement.table, statement.if_exists, "STREAMING_TABLE", "EXPECT_STREAMING_TABLE") is None:
        return no_result()
    drop_stream_and_table(ctx, database, name)
    return no_result()


def drop_stream_and_table(ctx: StatementContext, database: str, name: str) -> None:
    """Stop the stream, remove its checkpoint, the catalog rows and the table's files (DROP [STREAMING] TABLE)."""
    if ctx.streams is None:
        _drop_table_and_files(ctx, database, name)
        return
    with ctx.streams.lifecycle(database, name):
        drop_flows_of(ctx, database, name)
        ctx.streams.drop(database, name)
        _drop_table_and_files(ctx, database, name)


def _drop_table_and_files(ctx: StatementContext, database: str, name: str) -> None:
    quarantine = _own_quarantine(ctx, database, name)
    dropped = ctx.store.drop_table(database, name)
    locations.drop_table_folder(ctx.warehouse, dropped.location)
    if quarantine is not None:  # the quarantine table goes with its streaming table
        ctx.store.drop_table(database, quarantine.name)
        locations.drop_table_folder(ctx.warehouse, quarantine.location)


class StreamingTables:
    """STREAMING_TABLE as an object kind (executor/object_kinds.py): its own stream and its flows' run under the
    stream manager, which every step below goes through under the table's lifecycle lock."""

    def drop(self, ctx: StatementContext, entry: TableEntry) -> None:
        drop_stream_and_table(ctx, entry.database, entry.name)

    def before_database_drop(self, ctx: StatementContext, entry: TableEntry) -> None:
        """CASCADE drops streaming tables as DROP TABLE does: each stream, and each flow's, stops and its checkpoint
        goes first (a stream left running would write into a removed folder, and fail the gateway's shutdown on a
        table it cannot find); the catalog's cascade removes the rows, and the caller the folders."""
        if ctx.streams is None:
            return
        with ctx.streams.lifecycle(entry.database, entry.name):
            drop_flows_of(ctx, entry.database, entry.name)   # the flows into it too: each is a stream of its own
            ctx.streams.drop(entry.database, entry.name)

    def refresh(self, ctx: StatementContext, entry: TableEntry, statement: st.Refresh) -> StatementResult:
        return refresh_streaming_table(ctx, entry, statement)

    def schedule(self, ctx: StatementContext, entry: TableEntry, statement: st.AlterSchedule) -> StatementResult:
        """The row is written under the stream's lifecycle lock, then the stream manager switches the stream
        between continuous and scheduled."""
        if statement.kind == "MATERIALIZED VIEW":
            return refuse_schedule(ctx, entry, statement)
        streams = streams_of(ctx)
        line, column = ctx.position_of(statement.table)
        with streams.lifecycle(entry.database, entry.name):
            change_schedule(ctx, statement, entry.database, entry.name, line, column,
                            "none, the stream runs continuously")
        streams.reschedule(entry.database, entry.name)  # outside the lock: the manager takes it itself
        return no_result()


STREAMING_TABLES = StreamingTables()


def show_streaming_tables(ctx: StatementContext, statement: st.ShowStreamingTables) -> StatementResult:
    database = (statement.database or ctx.current_database).lower()
    matcher = pattern_matcher(statement.pattern)
    rows = []
    for entry in ctx.store.list_streams():
        if entry.desired_state == "MATERIALIZED_VIEW":
            continue  # a materialized view's refresh row (executor/materialized_views/refresh.py), not a stream
        if entry.flow is not None or entry.database != database or (matcher is not None and
                                                                     not matcher.match(entry.name)):
            continue  # flows: SHOW FLOWS
        plan = StreamingPlan.from_json(entry.plan_json)
        rows.append((entry.database, entry.name, entry.status, plan.output_mode, entry.last_batch_id,
                     display_time(entry.last_batch_at), entry.rows_per_second,
                     readable_error(ctx, entry.database, entry.name, entry.last_error), entry.failures))
    rows = sorted(rows + flow_only_show_rows(ctx, database, matcher), key=lambda row: row[1])
    columns = [("namespace", "string"), ("tableName", "string"), ("status", "string"), ("outputMode", "string"),
               ("lastBatchId", "bigint"), ("lastBatchAt", "string"), ("rowsPerSecond", "double"),
               ("lastError", "string"), ("failures", "int")]
    return rows_result(columns, rows)


def _lag(progress: dict[str, Any]) -> str | None:
    sources = progress.get("sources") or []
    if not sources:
        return None
    behind = [s.get("description", "source") for s in sources
              if s.get("latestOffset") is not None and s.get("latestOffset") != s.get("endOffset")]
    return "caught up" if not behind else f"behind on {', '.join(behind)}"


def describe_streaming_table(ctx: StatementContext, statement: st.DescribeStreamingTable) -> StatementResult:
    database, name = ctx.qualify(statement.table)
    table = ctx.store.get_table(database, name)
    if table is None:
        raise not_found(ctx, statement.table)
    status = streams_of(ctx).status(database, name)
    if table.kind == "STREAMING_TABLE" and status is None:   # a table its flows fill, without a query of its own
        info_rows = flow_only_rows(ctx, table) + flow_rows(ctx, database, name)
        info_rows += [("Event", f"{display_time(at)} {kind}: {message}")
                      for at, kind, message in ctx.store.events(database, name, 5)]
        return rows_result([("info_name", "string"), ("info_value", "string")],
                           [(key, None if value is None else str(value)) for key, value in info_rows])
    if table.kind != "STREAMING_TABLE" or status is None:
        line, column = ctx.position_of(statement.table)
        raise NotATableError(f"`{database}`.`{name}` is not a streaming table.", error_class="EXPECT_STREAMING_TABLE",
                             line=line, column=column, hint="DESCRIBE TABLE describes tables and views")
    entry, plan, progress = status.entry, status.plan, status.last_progress
    trigger = plan.trigger_seconds if plan.trigger_seconds is not None else ctx.streams.settings.trigger_seconds \
        if ctx.streams is not None else None
    info: list[tuple[str, Any]] = [
        ("Table", f"{database}.{name}"),
        ("Status", entry.status + ("" if status.active or entry.status != RUNNING else " (not active here)")),
        ("Desired state", entry.desired_state),
        ("Output mode", f"{plan.output_mode} ({plan.mode_reason})"),
        ("Keys", ", ".join(plan.keys) or None),
        ("Trigger interval", f"{trigger:g} seconds" if trigger is not None else None),
    ]
    if plan.cdc is not None:
        info += [("Auto CDC", describe_cdc(plan.cdc))]
    info += [("Source", op.text) for op in plan.operators if op.kind == "stream"]
    info += [("Static table", f"{s.database}.{s.table}") for s in plan.static_tables]
    info += [
        ("Operators", "; ".join(op.text for op in plan.operators if op.kind != "stream")),
        ("State", plan.state),
        ("Stream id", entry.stream_id),
        ("Query id", entry.query_id),
        ("Last batch id", entry.last_batch_id),
        ("Last batch at", display_time(entry.last_batch_at)),
        ("Rows per second", entry.rows_per_second),
        ("Lag", _lag(progress)),
        *kafka_rows(plan, entry.checkpoint),
        ("Watermark", (progress.get("eventTime") or {}).get("watermark")),
        ("Late rows dropped", status.late_rows_dropped),
        ("Failures in a row", entry.failures),
        ("Last error", entry.last_error),
        ("Checkpoint", entry.checkpoint),
        ("Location", table.location),
        ("Definition", redact_sql(table.definition)),   # no Kafka credentials
    ]
    info += refresh_rows(table, entry)   # the refresh facts once, in Databricks' names (dbt-databricks reads them)
    info += [(f"Expectation {spec_name}", text) for spec_name, text in TOTALS.lines(entry.stream_id, plan.expectations)]
    if needs_quarantine(plan.expectations, plan.properties):
        info.append(("Quarantine table", f"{database}.{quarantine_name(name)}"))
    info += flow_rows(ctx, database, name)
    info += [("Event", f"{display_time(at)} {kind}: {message}")
             for at, kind, message in ctx.store.events(database, name, 5)]
    return rows_result([("info_name", "string"), ("info_value", "string")],
                       [(key, None if value is None else str(value)) for key, value in info])


HANDLERS = {
    st.ExplainStreamingTable: explain_streaming_table,
    st.CreateStreamingTable: create_streaming_table,
    st.CreateAutoCdc: create_auto_cdc,
    st.DropStreamingTable: drop_streaming_table,
    st.ShowStreamingTables: show_streaming_tables,
    st.DescribeStreamingTable: describe_streaming_table,
}
