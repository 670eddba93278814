"""`CREATE FLOW f AS AUTO CDC INTO t FROM STREAM(src) KEYS (...) SEQUENCE BY ...`: one more source of change events
for an AUTO CDC table, as Databricks' flows feed one target from several sources.

The target is declared first: `CREATE STREAMING TABLE t (columns)` (no query: its flows fill it) or a table made by
`CREATE STREAMING TABLE t FLOW AUTO CDC ...`; a table that others append to (its own query, INSERT flows) is refused,
as an INSERT flow into an AUTO CDC table is (executor/flows.py `checked_target`). Every AUTO CDC writer of a table
names the same keys and SCD type, for SCD type 2 the same tracked columns and IGNORE NULL UPDATES (refused at the
flow's KEYS or AUTO CDC clause otherwise, dialect/streaming/cdc.py `check_agrees`),
and keeps the table's columns: the events of all of them are ranked together, per key the highest sequence wins
whichever flow brought it, through the state they share (engine/streams/cdc_flows.py). Like an INSERT flow, the flow
is a stream of its own (its checkpoint, its stream id as the txn app id of its commits: exactly once on its own),
resumed at boot, dropped by DROP FLOW (its rows and their ranks stay); the table's TBLPROPERTIES (the tombstone
threshold) hold for it. Policy: the target's ownership and the source's reads (policy/rules.py `create_auto_cdc`).
"""

from __future__ import annotations

from dataclasses import replace

from sluicegate.catalog.store import TableEntry
from sluicegate.dialect import statements as st
from sluicegate.dialect.streaming.cdc import END_AT, START_AT, analyze_cdc, check_agrees, check_cdc_source
from sluicegate.dialect.streaming.errors import RewrittenSourceError
from sluicegate.dialect.streaming.plan import CdcSpec, StreamingPlan
from sluicegate.dialect.streaming.rules import auto_cdc_reading_hint
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import spark_errors
from sluicegate.executor.flows import (
    FlowTargetError,
    checked_target,
    flow_name,
    refuse_existing_flow,
    start_flow,
    table_columns,
)
from sluicegate.executor.output import no_result
from sluicegate.executor.spark_databases import ensure_spark_database
from sluicegate.executor.stream_plans import (
    StreamReaders,
    qualified,
    stream_readers,
    streams_of,
    table_kind,
)


def agree_with_writers(ctx: StatementContext, sql: str, spec: CdcSpec, database: str, name: str,
                       flow: str | None) -> None:
    """The AUTO CDC statement `sql` (the flow `flow`'s, or the table's own when None) names the keys and SCD type of
    every other AUTO CDC writer of the table."""
    writers: list[tuple[str, str]] = []
    own = ctx.store.get_stream(database, name)
    if own is not None and flow is not None:
        writers.append((f"the table `{name}`'s own AUTO CDC flow", own.plan_json))
    writers += [(f"the flow `{entry.stream.flow}`", entry.stream.plan_json)
                for entry in ctx.store.list_flows(database, name) if entry.stream.flow != flow]
    for label, plan_json in writers:
        other = StreamingPlan.from_json(plan_json).cdc
        if other is not None:
            check_agrees(sql, spec, other, label)


def refuse_stream_readers(ctx: StatementContext, target: st.TableName, database: str, name: str,
                          action: str = "add an AUTO CDC flow into") -> None:
    """A table declared with columns is append-only until its first AUTO CDC flow: streams created before then
    read it with STREAM(...) and would fail on the flow's first commit that updates or deletes (as Databricks'
    streaming reads of a table with updates fail), so the flow is refused at CREATE, naming them, as a new
    reader of an AUTO CDC table is (dialect/streaming/rules.py `check_sources_append_only`). Readers of other users
    the caller may not read are counted, not named (executor/stream_plans.py `stream_readers`). `action`: what is
    refused, for CREATE OR REFRESH turning an append streaming table into a FLOW AUTO CDC one, which the same
    readers would fail on (executor/streaming_tables.py)."""
    readers = stream_readers(ctx, database, name)
    if not readers:
        return
    line, column = ctx.position_of(target)
    shown = f"`{database}`.`{name}`"
    raise RewrittenSourceError(
        f"Cannot {action} {shown}: {_named(readers)} stream{'s' if len(readers) == 1 else ''} "
        f"from it with STREAM({shown}), and an AUTO CDC table's commits update and delete rows by key, so "
        f"{'that stream' if len(readers) == 1 else 'those streams'} would see changes it cannot apply.",
        line=line, column=column,
        hint=f"drop the readers and create them again reading {shown} another way: "
             + auto_cdc_reading_hint(shown)
             + (" (the owners of the streams you cannot see, or an admin, can drop those)" if readers.hidden else ""))


def _named(readers: StreamReaders) -> str:
    """The readers the caller may see by name, then how many others there are ("and 2 streams you cannot see")."""
    names = ", ".join(readers.shown)
    if not readers.hidden:
        return names
    others = f"{readers.hidden} stream{'' if readers.hidden == 1 else 's'} you cannot see"
    return f"{names} and {others}" if names else others


def check_version_columns(ctx: StatementContext, target: st.TableName, spec: CdcSpec, table: TableEntry) -> None:
    """An SCD type 2 flow writes each version's start and end into the table's `__START_AT` and `__END_AT`: a table
    declared without them is refused at CREATE FLOW rather than failing the flow's first batch."""
    if spec.scd_type != 2:
        return
    declared = {column.name.lower() for column in table_columns(table)}
    missing = [column for column in (START_AT, END_AT) if column.lower() not in declared]
    if missing:
        line, column = ctx.position_of(target)
        raise FlowTargetError(f"`{table.database}`.`{table.name}` has no column {' nor '.join(missing)}, where an "
                              "SCD type 2 flow writes the start and end of each version", line=line, column=column,
                              hint=f"declare the table with {START_AT} and {END_AT} of the SEQUENCE BY type (CREATE "
                                   f"STREAMING TABLE t (..., {START_AT} BIGINT, {END_AT} BIGINT)), or store the "
                                   "flow as SCD TYPE 1")


def create_auto_cdc_flow(ctx: StatementContext, statement: st.CreateAutoCdc) -> StatementResult:
    assert statement.flow is not None
    streams = streams_of(ctx)
    database, name = ctx.qualify(statement.table)
    flow = flow_name(ctx, statement.flow, database, name)
    with streams.lifecycle(database, name):
        table = checked_target(ctx, statement.table, database, name, cdc=True)
        refuse_existing_flow(ctx, statement.flow, database, flow)
        refuse_stream_readers(ctx, statement.table, database, name)
        plan = analyze_cdc(statement.sql, table_kind=table_kind(ctx))   # now that the catalog says how sources change
        assert plan.cdc is not None
        agree_with_writers(ctx, statement.sql, plan.cdc, database, name, flow)
        check_version_columns(ctx, statement.table, plan.cdc, table)
        ensure_spark_database(ctx, database)
        # the table's columns (each event's kept columns cast to them) and properties (the tombstone threshold)
        plan = replace(qualified(ctx, plan, None), columns=table_columns(table),
                       properties=dict(table.properties or {}))
        with spark_errors(ctx.include_stack_trace):
            try:
                # the events as the source has them first: a key or sequence it lacks is named at its position
                probe = streams.build(replace(plan, columns=()), flow=flow)
                events = {f.name: f.dataType.simpleString() for f in probe.result.schema.fields}
                probe.release()
                check_cdc_source(statement.sql, events)
                built = streams.build(plan, flow=flow)
            except Exception:
                streams.drop(database, name, flow=flow)   # forgets the session it was built in
                raise
        try:
            ctx.policy.check_query(built.result, ctx.principal)
        except BaseException:
            built.release()
            streams.drop(database, name, flow=flow)
            raise
        start_flow(ctx, streams, plan, built, flow, statement.comment)
    return no_result()
