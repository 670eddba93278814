"""Flows: several append streams into one streaming table (Spark 4.1's pipeline SQL).

`CREATE STREAMING TABLE t (columns)` without a query makes an empty Delta table with the declared schema and no stream
of its own; `CREATE FLOW f AS INSERT INTO t BY NAME <streaming query>` adds a stream that appends the query's rows to
t, matched by name (the table's column list decides: a column the table lacks is refused, a nullable column the query
lacks is NULL); `DROP FLOW f` stops it and removes its checkpoint, keeping the rows it wrote. Each flow is a stream of
its own under the one supervisor (its key is (database, table, flow)), with its own checkpoint and its own stream id,
which is the Delta `txn` app id of its batches: every flow is exactly once on its own, whatever the others do (their
commits are blind appends, which delta-rs retries on top of each other). A streaming table with its own query may
also receive flows when its query appends.

Flows have a namespace of their own per database (a flow may share a table's name, except its target's: in Spark's
pipelines that name is the table's own, default flow). Adding or dropping a flow needs ownership of the target table
(as Databricks asks for ownership of the pipeline), plus SELECT on every table the flow reads and the allowed folders
for its files (policy/statements.py).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.clock import display_time
from sluicegate.catalog.errors import (
    FlowAlreadyExistsError,
    FlowNotFoundError,
    SchemaNotFoundError,
    TableAlreadyExistsError,
)
from sluicegate.catalog.names import check_name
from sluicegate.catalog.store import StreamEntry, TableEntry, pattern_matcher
from sluicegate.dialect import statements as st
from sluicegate.dialect.columns import ColumnSpec
from sluicegate.dialect.positions import line_column
from sluicegate.dialect.streaming.analyze import analyze_flow
from sluicegate.dialect.streaming.cdc import describe_cdc
from sluicegate.dialect.streaming.kafka import redact_sql
from sluicegate.dialect.streaming.plan import StreamingPlan
from sluicegate.dialect.trees import query_offset
from sluicegate.engine.sql import StatementResult
from sluicegate.engine.streams.manager import RUNNING, STARTING, new_stream_id
from sluicegate.engine.streams.protocols import Streams
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import NotATableError, spark_errors
from sluicegate.executor.lookups import not_found
from sluicegate.executor.output import no_result, rows_result
from sluicegate.executor.spark_databases import ensure_spark_database
from sluicegate.executor.stream_plans import qualified, readable_error, streams_of, table_kind
from sluicegate.storage import locations
from sluicegate.storage.delta.tables import delta_configuration
from sluicegate.storage.delta.write import commit_files
from sluicegate.storage.spark_errors import RuntimeQueryError

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from sluicegate.engine.streams.runner import BuiltStream


class FlowColumnsError(RuntimeQueryError):
    """The flow's query and its table's columns do not match by name (Spark's INSERT ... BY NAME classes)."""

    error_class = "INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_COLUMNS"
    sqlstate = "KD000"


class FlowTargetError(RuntimeQueryError):
    error_class = "INVALID_FLOW_TARGET"
    sqlstate = "42809"


def _schema(ctx: StatementContext, columns: tuple[ColumnSpec, ...]) -> StructType:
    """The declared columns as Spark's schema (Spark parses the type names: the same types a query would give)."""
    from pyspark.sql.types import StructField, StructType

    fields = []
    for column in columns:
        data_type = ctx.spark.createDataFrame([], f"`x` {column.type}").schema.fields[0].dataType
        metadata = {"comment": column.comment} if column.comment else {}
        fields.append(StructField(column.name, data_type, column.nullable, metadata))
    return StructType(fields)


def create_streaming_table_schema(ctx: StatementContext, statement: st.CreateStreamingTableSchema) -> StatementResult:
    """The table flows write into: empty, with the declared columns, and no stream of its own."""
    from pyspark.sql.pandas.types import to_arrow_schema

    database, name = ctx.checked(statement.table, "streaming table")
    if ctx.store.get_database(database) is None:
        line, column = ctx.position_of(statement.table)
        raise SchemaNotFoundError(f"The schema `{database}` cannot be found.", line=line, column=column,
                                  hint="CREATE DATABASE it first (SHOW DATABASES lists them)")
    streams = streams_of(ctx)
    schema = _schema(ctx, statement.columns)
    with streams.lifecycle(database, name):
        existing = ctx.store.get_table(database, name)
        if existing is not None:
            if statement.if_not_exists:
                return no_result()
            line, column = ctx.position_of(statement.table)
            raise TableAlreadyExistsError(
                f"Cannot create streaming table `{database}`.`{name}` because a {existing.kind.lower()} of that name "
                "already exists.", line=line, column=column, hint="choose another name, or drop it first")
        ensure_spark_database(ctx, database)
        with locations.new_table_folder(ctx.warehouse, database, name, "streaming table") as folder:
            commit_files(str(folder), [], to_arrow_schema(schema), "append", create=True, name=name,
                         description=statement.comment, configuration=delta_configuration(statement.properties),
                         partition_by=statement.partition_by)
            ctx.store.create_table(TableEntry(
                database=database, name=name, kind="STREAMING_TABLE", location=str(folder), schema_json=schema.json(),
                definition=statement.sql.strip().rstrip(";"), properties=dict(statement.properties),
                comment=statement.comment, owner=ctx.user, partition_by=statement.partition_by))
        ctx.store.record_event(database, name, "CREATED", f"created by {ctx.user}, without a query: its flows "
                                                          "fill it", origin={"user_name": ctx.user})
    return no_result()


def _query_position(ctx: StatementContext) -> tuple[int | None, int | None]:
    """Where the flow's query starts (after INSERT INTO t [BY NAME]): column errors point at it."""
    offset = query_offset(ctx.sql)
    return line_column(ctx.sql, offset)


def table_columns(table: TableEntry) -> tuple[ColumnSpec, ...]:
    fields = json.loads(table.schema_json or '{"fields": []}')["fields"]
    return tuple(ColumnSpec(f["name"], _type_sql(f["type"]), bool(f.get("nullable", True))) for f in fields)


def _type_sql(data_type: Any) -> str:
    from pyspark.sql.types import _parse_datatype_json_value

    return _parse_datatype_json_value(data_type).simpleString()


def matched_by_name(ctx: StatementContext, plan: StreamingPlan, produced: list[str],
                    table: TableEntry) -> StreamingPlan:
    """The flow's plan writing the table's columns, in the table's order and types: a column the query produces
    that the table lacks is an error, a nullable column it lacks is NULL, a NOT NULL one it lacks an error."""
    columns = table_columns(table)
    declared = {c.name.lower() for c in columns}
    have = {name.lower() for name in produced}
    extra = [name for name in produced if name.lower() not in declared]
    missing = [c for c in columns if c.name.lower() not in have]
    line, column = _query_position(ctx)
    qualified = f"`{table.database}`.`{table.name}`"
    if extra:
        rescued = any(name.lower() == "_rescued_data" for name in extra)
        raise FlowColumnsError(
            f"Cannot write to {qualified}: the flow's query produces {', '.join(f'`{n}`' for n in extra)}, which "
            "the table does not have.", line=line, column=column,
            hint="select only the table's columns (DESCRIBE TABLE lists them)" + (
                "; read_files adds `_rescued_data` (what it could not parse): declare `_rescued_data STRING` in "
                "the table to keep it, or select the columns by name" if rescued else ""))
    required = [c.name for c in missing if not c.nullable]
    if required:
        raise FlowColumnsError(
            f"Cannot write to {qualified}: the flow's query does not produce {', '.join(f'`{n}`' for n in required)}"
            ", which the table declares NOT NULL.", error_class="INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_FIND_DATA",
            line=line, column=column, hint="produce the column with AS, by the table's name for it")
    query_sql = plan.query_sql
    if missing:
        nulls = ", ".join(f"CAST(NULL AS {c.type}) AS `{c.name}`" for c in missing)
        query_sql = f"SELECT *, {nulls} FROM ({plan.query_sql}) AS __sg_flow"
    return replace(plan, columns=columns, query_sql=query_sql)


def checked_target(ctx: StatementContext, table_name: st.TableName, database: str, name: str,
                   cdc: bool = False) -> TableEntry:
    """The flow's target: a continuous streaming table written the flow's way, appended to (`cdc` False) or kept by
    AUTO CDC (`cdc` True: its own stream, if it has one, and its other flows are AUTO CDC too)."""
    line, column = ctx.position_of(table_name)
    table = ctx.store.get_table(database, name)
    if table is None:
        raise not_found(ctx, table_name)
    if table.kind != "STREAMING_TABLE":
        raise NotATableError(f"`{database}`.`{name}` is a {table.kind.lower()}, not a streaming table: flows "
                             "write into streaming tables.", error_class="EXPECT_STREAMING_TABLE", line=line,
                             column=column, hint="CREATE STREAMING TABLE t (columns) for the flows to insert into")
    if table.schedule:
        raise FlowTargetError(f"`{database}`.`{name}` has a refresh schedule; flows run continuously and write only "
                              "into a continuous streaming table", line=line, column=column,
                              hint="ALTER STREAMING TABLE ... DROP SCHEDULE first, or write into another table")
    own = ctx.store.get_stream(database, name)
    own_plan = StreamingPlan.from_json(own.plan_json) if own is not None else None
    if own_plan is not None and (own_plan.cdc is not None) != cdc:
        what = ("AUTO CDC flow, which applies changes by key; an INSERT flow cannot append to it" if not cdc else
                f"query in {own_plan.output_mode} mode; an AUTO CDC flow applies changes by key only to a table "
                "kept that way")
        raise FlowTargetError(f"`{database}`.`{name}` is kept by its own {what}", line=line, column=column,
                              hint="write the flow into a streaming table declared with columns and no query"
                              + ("" if not cdc else ", or into a table created with FLOW AUTO CDC"))
    if own_plan is not None and own_plan.output_mode != "append":
        raise FlowTargetError(f"`{database}`.`{name}` is kept by its own query in {own_plan.output_mode} mode; a "
                              "flow can only append to a table whose rows are appended", line=line, column=column,
                              hint="write the flow into a streaming table declared with columns and no query")
    other = next((f.stream.flow for f in ctx.store.list_flows(database, name)
                  if (StreamingPlan.from_json(f.stream.plan_json).cdc is not None) != cdc), None)
    if other is not None:
        what = (f"AUTO CDC flow `{other}`; an INSERT flow cannot append to a table kept by key" if not cdc else
                f"INSERT flow `{other}`; an AUTO CDC flow cannot apply changes by key to a table others append to")
        raise FlowTargetError(f"`{database}`.`{name}` is written by the {what}", line=line, column=column,
                              hint="write the flow into a table of its own kind, or DROP FLOW the other first")
    return table


def flow_name(ctx: StatementContext, flow_table: st.TableName, database: str, name: str) -> str:
    """The new flow's name, checked: a valid name, in its table's database, not the table's own flow's."""
    flow_line, flow_column = ctx.position_of(flow_table)
    flow_database, flow = ctx.qualify(flow_table)
    check_name(flow, "flow", line=flow_line, column=flow_column)
    if flow_database != database:
        raise FlowTargetError(f"the flow `{flow_database}`.`{flow}` and its table `{database}`.`{name}` are in "
                              "different databases", line=flow_line, column=flow_column,
                              hint="create the flow in its table's database")
    if flow == name:
        raise FlowAlreadyExistsError(f"`{flow}` is the name of its table's own flow", line=flow_line,
                                     column=flow_column, hint="give the flow a name of its own")
    return flow


def refuse_existing_flow(ctx: StatementContext, flow_table: st.TableName, database: str, flow: str) -> None:
    if ctx.store.find_flow(database, flow) is not None:
        line, column = ctx.position_of(flow_table)
        raise FlowAlreadyExistsError(f"Cannot create flow `{database}`.`{flow}` because it already exists.",
                                     line=line, column=column, hint="choose another name, or DROP FLOW it first")


def start_flow(ctx: StatementContext, streams: Streams, plan: StreamingPlan, built: BuiltStream, flow: str,
               comment: str | None) -> None:
    """Persist, then start (the caller holds the table's lifecycle): the flow's row, its CREATED event, its stream;
    a failure to start removes the row again."""
    database, name = (plan.database or "").lower(), plan.name.lower()
    stream_id = new_stream_id()
    entry = StreamEntry(database, name, stream_id, plan.to_json(), streams.checkpoint_for(stream_id), STARTING,
                        RUNNING, flow=flow)
    with spark_errors(ctx.include_stack_trace):
        try:
            entry = ctx.store.create_flow(entry, comment, ctx.user)
            ctx.store.record_event(database, name, "CREATED", f"flow {flow} created by {ctx.user}", flow=flow,
                                   origin={"user_name": ctx.user})
            streams.start(entry, built)
        except Exception:
            built.release()
            streams.drop(database, name, flow=flow)
            ctx.store.drop_flow(database, flow)
            raise


def create_flow(ctx: StatementContext, statement: st.CreateFlow) -> StatementResult:
    streams = streams_of(ctx)
    database, name = ctx.qualify(statement.table)
    flow = flow_name(ctx, statement.flow, database, name)
    with streams.lifecycle(database, name):
        table = checked_target(ctx, statement.table, database, name)
        refuse_existing_flow(ctx, statement.flow, database, flow)
        plan = analyze_flow(statement.sql, table_kind(ctx))   # now that the catalog can say how sources change
        ensure_spark_database(ctx, database)
        plan = qualified(ctx, plan, None)
        plan, built = _build_flow(ctx, streams, plan, flow, table)   # the plan as stored: matched by name
        start_flow(ctx, streams, plan, built, flow, statement.comment)
    return no_result()


def _build_flow(ctx: StatementContext, streams: Streams, plan: StreamingPlan, flow: str,
                table: TableEntry) -> tuple[StreamingPlan, BuiltStream]:
    """The flow's query analysed by Spark, matched by name to the table's columns (the plan to store: a restart
    builds the same shape), and judged by the policy."""
    with spark_errors(ctx.include_stack_trace):
        try:
            probe = streams.build(plan, flow=flow)
            produced = list(probe.result.columns)
            probe.release()
            plan_by_name = matched_by_name(ctx, plan, produced, table)
            built = streams.build(plan_by_name, flow=flow)
        except Exception:
            streams.drop(table.database, table.name, flow=flow)   # forgets the session it was built in
            raise
    try:
        ctx.policy.check_query(built.result, ctx.principal)
    except BaseException:
        built.release()
        streams.drop(table.database, table.name, flow=flow)
        raise
    return plan_by_name, built


def drop_flow(ctx: StatementContext, statement: st.DropFlow) -> StatementResult:
    """Stop the flow and remove its checkpoint and row; the rows it wrote stay in the table."""
    database, flow = ctx.qualify(statement.flow)
    found = ctx.store.find_flow(database, flow)
    if found is None:
        if statement.if_exists:
            return no_result()
        line, column = ctx.position_of(statement.flow)
        raise FlowNotFoundError(f"The flow `{database}`.`{flow}` cannot be found.", line=line, column=column,
                                hint="SHOW FLOWS lists the flows of a database")
    streams = streams_of(ctx)
    with streams.lifecycle(database, found.name):
        streams.drop(database, found.name, flow=flow)
        ctx.store.drop_flow(database, flow)
        ctx.store.record_event(database, found.name, "STOPPED", f"flow {flow} dropped by {ctx.user}; its rows stay")
    return no_result()


class FullRefreshWithFlowsError(RuntimeQueryError):
    error_class = "FULL_REFRESH_NOT_ALLOWED.TABLE_HAS_FLOWS"
    sqlstate = "0A000"


def refuse_full_refresh_with_flows(ctx: StatementContext, table: TableEntry, line: int | None,
                                   column: int | None) -> None:
    """A full refresh empties the table and starts its own stream over; its flows' checkpoints would go on past the
    rows they wrote, which would be lost for good: refused while the table has flows."""
    flows = [f.stream.flow for f in ctx.store.list_flows(table.database, table.name)]
    if flows:
        raise FullRefreshWithFlowsError(
            f"`{table.database}`.`{table.name}` has flows ({', '.join(f'`{f}`' for f in flows)}): emptying it would "
            "lose their rows for good, as their checkpoints would not read their input again", line=line,
            column=column, hint="DROP FLOW each flow first (and CREATE FLOW it again afterwards to read its input "
                                "again), or REFRESH without FULL")


def drop_flows_of(ctx: StatementContext, database: str, name: str) -> None:
    """Before a table is dropped (the caller holds its lifecycle): every flow into it stopped, checkpoints removed."""
    if ctx.streams is None:
        return
    for entry in ctx.store.list_flows(database, name):
        ctx.streams.drop(database, name, flow=entry.stream.flow)


def show_flows(ctx: StatementContext, statement: st.ShowFlows) -> StatementResult:
    database = (statement.database or ctx.current_database).lower()
    matcher = pattern_matcher(statement.pattern)
    rows = [(f.stream.database, f.stream.flow, f.stream.name, f.stream.status, f.stream.last_batch_id,
             display_time(f.stream.last_batch_at),
             readable_error(ctx, f.stream.database, f.stream.name, f.stream.last_error), f.comment, f.owner)
            for f in ctx.store.list_flows(database) if matcher is None or matcher.match(f.stream.flow or "")]
    return rows_result([("namespace", "string"), ("flowName", "string"), ("tableName", "string"),
                        ("status", "string"), ("lastBatchId", "bigint"), ("lastBatchAt", "string"),
                        ("lastError", "string"), ("comment", "string"), ("owner", "string")], rows)


def flow_rows(ctx: StatementContext, database: str, name: str) -> list[tuple[str, Any]]:
    """DESCRIBE STREAMING TABLE's lines for the table's flows: name, status, last batch, error, stream id."""
    rows: list[tuple[str, Any]] = []
    for entry in ctx.store.list_flows(database, name):
        stream = entry.stream
        text = f"{stream.flow}: {stream.status}, last batch {stream.last_batch_id}, stream id {stream.stream_id}"
        cdc = StreamingPlan.from_json(stream.plan_json).cdc
        text += f", {describe_cdc(cdc)}" if cdc is not None else ""
        rows.append(("Flow", text + (f", last error: {stream.last_error}" if stream.last_error else "")))
    return rows


_WORST_FIRST = ("FAILED", "RETRYING", "STARTING", "STOPPED", "RUNNING")


def flow_only_show_rows(ctx: StatementContext, database: str, matcher: Any) -> list[tuple[Any, ...]]:
    """SHOW STREAMING TABLES' rows for the tables without a query of their own: the status of their flows (the
    worst one, so a failing flow never hides behind a running one), their last error and failures."""
    own = {entry.name for entry in ctx.store.list_streams() if entry.flow is None and entry.database == database}
    rows = []
    for table in ctx.store.list_tables(database, kinds=("STREAMING_TABLE",)):
        if table.name in own or (matcher is not None and not matcher.match(table.name)):
            continue
        flows = [f.stream for f in ctx.store.list_flows(database, table.name)]
        statuses = [f.status for f in flows]
        status = next((s for s in _WORST_FIRST if s in statuses), statuses[0] if statuses else "NO_FLOWS")
        error = readable_error(ctx, database, table.name, next((f.last_error for f in flows if f.last_error), None))
        rows.append((database, table.name, status, _flows_mode(flows),
                     max((f.last_batch_id for f in flows if f.last_batch_id is not None), default=None),
                     display_time(max((f.last_batch_at for f in flows if f.last_batch_at), default=None)),
                     sum(f.rows_per_second or 0.0 for f in flows) if flows else None, error,
                     max((f.failures for f in flows), default=0)))
    return rows


def _flows_mode(flows: list[StreamEntry]) -> str:
    """How a table without a query of its own is written: its flows all append, or all apply AUTO CDC changes."""
    cdc = any(StreamingPlan.from_json(flow.plan_json).cdc is not None for flow in flows)
    return "auto cdc" if cdc else "append"


def flow_only_rows(ctx: StatementContext, table: TableEntry) -> list[tuple[str, Any]]:
    """DESCRIBE STREAMING TABLE of a table without a query of its own."""
    flows = ctx.store.list_flows(table.database, table.name)
    running = sum(1 for f in flows if f.stream.status == RUNNING)
    return [("Table", f"{table.database}.{table.name}"),
            ("Status", f"{running} of {len(flows)} flows running" if flows else "no flows: nothing writes to it"),
            ("Output mode", "auto cdc (its flows apply changes by key)" if _flows_mode([f.stream for f in flows])
             == "auto cdc" else "append (its flows append)"),
            ("Location", table.location), ("Definition", redact_sql(table.definition))]


HANDLERS = {
    st.CreateStreamingTableSchema: create_streaming_table_schema,
    st.CreateFlow: create_flow,
    st.DropFlow: drop_flow,
    st.ShowFlows: show_flows,
}
