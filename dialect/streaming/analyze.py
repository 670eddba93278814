"""`analyze(sql)`: check a CREATE STREAMING TABLE with every rule of `RULES`, and describe what passes as a
`StreamingPlan` (sources, output mode and why, keys, operators, state) before anything runs; `analyze_flow` does the
same for a CREATE FLOW's query. The classifier hands over the tree it parsed (`create=`, `flow=`); the text alone is
parsed here only for callers that hold nothing else (the warehouse's second pass with the catalog's table kinds)."""

from __future__ import annotations

from sqlglot import exp

from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.expressions import CreateFlowCommand
from sluicegate.dialect.parse import parse
from sluicegate.dialect.statements import CLUSTERING_PROPERTY
from sluicegate.dialect.streaming.context import TRIGGER_KEY, Context, TableKindLookup, function_name, is_time_window
from sluicegate.dialect.streaming.errors import UnsupportedOutputModeError
from sluicegate.dialect.streaming.expectations import expectation_specs
from sluicegate.dialect.streaming.kafka import kafka_description
from sluicegate.dialect.streaming.keys import distinct_keys, group_keys
from sluicegate.dialect.streaming.modes import chosen_mode, closed_by_watermark, stream_stream_join
from sluicegate.dialect.streaming.plan import Aggregation, Operator, SourceSpec, StreamingPlan
from sluicegate.dialect.streaming.rules import RULES, trigger_seconds
from sluicegate.dialect.streaming.sources import find_sources, rewrite
from sluicegate.dialect.trees import column_specs, create_properties, table_name


def _properties(create: exp.Create) -> tuple[str | None, dict[str, str], dict[str, exp.Expr]]:
    comment = None
    properties: dict[str, str] = {}
    values: dict[str, exp.Expr] = {}
    container = create.args.get("properties")
    for prop in container.expressions if container else []:
        if isinstance(prop, exp.SchemaCommentProperty):
            comment = prop.this.name
        elif isinstance(prop, exp.Property) and prop.args.get("value") is not None:
            key = prop.this.name if isinstance(prop.this, exp.Expression) else str(prop.this)
            properties[key] = prop.args["value"].name
            values[key.lower()] = prop.args["value"]
    return comment, properties, values


def _parsed_create(sql: str) -> exp.Create:
    """The tree of a statement's text the caller knows is a CREATE STREAMING TABLE (the classifier said so)."""
    tree = parse(sql)
    if not isinstance(tree, exp.Create):
        raise DialectError("expected CREATE [OR REFRESH] STREAMING TABLE ... AS SELECT ...")
    return tree


def _parsed_flow(sql: str) -> CreateFlowCommand:
    """The tree of a statement's text the caller knows is a CREATE FLOW (the classifier said so)."""
    tree = parse(sql)
    if not isinstance(tree, CreateFlowCommand):
        raise DialectError("expected CREATE FLOW f AS INSERT INTO t BY NAME SELECT ...")
    return tree


def _operators(ctx: Context, sources: tuple[SourceSpec, ...]) -> tuple[Operator, ...]:
    ops: list[Operator] = []
    for spec in sources:
        what = {"table": f"Delta table {spec.database + '.' if spec.database else ''}{spec.table}",
                "files": f"{spec.format} files in {spec.path}", "rate": "rate generator",
                "kafka": kafka_description(spec.options)}[spec.kind]
        mark = f", watermark {spec.watermark.column} - {spec.watermark.delay}" if spec.watermark else ""
        ops.append(Operator("stream", f"stream {spec.view_name}: {what}{mark}"))
    for join in ctx.query.find_all(exp.Join):
        right = "stream" if ctx.is_streaming(join.this) else "static table"
        ops.append(Operator("join", f"{(join.side or join.kind or 'inner').lower()} join with {right}"))
    if any(s.args.get("where") is not None for s in ctx.selects):
        ops.append(Operator("filter", "filter"))
    for union in ctx.query.find_all(exp.Union):
        ops.append(Operator("union", "union all" if not union.args.get("distinct") else "union (distinct)"))
    if ctx.aggregation is not None:
        group = ctx.aggregation.args.get("group")
        keys = [k.sql("spark") for k in group.expressions] if group is not None else []
        windows = [k for k in (group.expressions if group is not None else []) if is_time_window(k)]
        kind = f"{function_name(windows[0])} " if windows else ""
        ops.append(Operator("aggregate", f"{kind}aggregate by {', '.join(keys)}" if keys else "global aggregate"))
    if ctx.distinct is not None:
        ops.append(Operator("deduplicate", "deduplicate (SELECT DISTINCT)"))
    if ctx.order is not None:
        ops.append(Operator("sort", "sort"))
    if ctx.query.find(exp.Limit) is not None:
        ops.append(Operator("limit", "limit"))
    ops.append(Operator("project", "project"))
    return tuple(ops)


def _aggregation(ctx: Context) -> Aggregation | None:
    """Global: an aggregate without GROUP BY keys (its one row has none); keyed: GROUP BY, windows included."""
    if ctx.aggregation is None:
        return None
    group = ctx.aggregation.args.get("group")
    return "keyed" if group is not None and group.expressions else "global"


def _state(ctx: Context, mode: str) -> str:
    marks = ", ".join(sorted(ctx.watermark_columns))
    parts = []
    if ctx.aggregation is not None:
        if closed_by_watermark(ctx):
            parts.append(f"one row per open group, dropped once the watermark on {marks} passes its window's end")
        else:
            parts.append("one row per group, kept forever (no watermark closes a group)")
    if ctx.distinct is not None:
        parts.append("every distinct row seen" + (f", until the watermark on {marks} passes it" if marks else ""))
    if stream_stream_join(ctx) is not None:
        parts.append("both join inputs buffered" + (f" until the watermark on {marks} passes them" if marks
                                                    else " forever"))
    if not parts:
        return "none: each micro-batch is processed on its own"
    if mode == "complete":
        parts.append("the whole result is rewritten each trigger")
    return "; ".join(parts)


def _keys(ctx: Context) -> tuple[str, ...]:
    if ctx.aggregation is not None:
        return group_keys(ctx.aggregation)[0]
    if ctx.distinct is not None:
        return distinct_keys(ctx.distinct)
    return ()


def analyze(sql: str, table_kind: TableKindLookup | None = None, *, create: exp.Create | None = None) -> StreamingPlan:
    """Check a CREATE STREAMING TABLE statement and plan it. Raises a DialectError subclass naming what cannot
    run incrementally, where, and what to write instead. `table_kind` tells how a catalog table changes; `create` is
    the statement's tree (parsed from `sql` when not given), whose positions are offsets in `sql`."""
    create = create if create is not None else _parsed_create(sql)
    query = create.args.get("expression")
    if not isinstance(query, exp.Query):
        raise DialectError("a streaming table needs its query",
                           hint="write CREATE STREAMING TABLE t AS SELECT ... FROM STREAM(source)")
    comment, properties, values = _properties(create)
    partition_by, _, layout, _ = create_properties(create)   # PARTITIONED BY, and CLUSTER BY as a property
    properties.update({key: value for key, value in layout.items() if key == CLUSTERING_PROPERTY})
    ctx = Context(sql, StreamingSpark().tokenize(sql), create, query, find_sources(query), properties, values,
                  table_kind)
    for rule in RULES:
        rule(ctx)
    query_sql, sources, statics = rewrite(query)
    mode, reason = chosen_mode(ctx)
    table = table_name(create.this)
    trigger = properties.get(TRIGGER_KEY)
    return StreamingPlan(
        database=table.database, name=table.name,
        columns=column_specs(create.this) if isinstance(create.this, exp.Schema) else (),
        comment=comment, properties=properties, query_sql=query_sql, sources=sources, static_tables=statics,
        output_mode=mode, mode_reason=reason, keys=_keys(ctx),
        trigger_seconds=trigger_seconds(trigger) if trigger is not None else None,
        operators=_operators(ctx, sources), aggregation=_aggregation(ctx), state=_state(ctx, mode),
        or_refresh=bool(create.args.get("refresh")), if_not_exists=bool(create.args.get("exists")),
        expectations=expectation_specs(sql, create), partition_by=partition_by,
    )


def analyze_flow(sql: str, table_kind: TableKindLookup | None = None, *,
                 flow: CreateFlowCommand | None = None) -> StreamingPlan:
    """Check a CREATE FLOW's query as a streaming table's (the same RULES, positions in the statement as typed) and
    plan it as an append flow into its target: a flow adds rows, so an aggregation must be closed by a watermark
    (its rows are final once appended) and SELECT DISTINCT is refused. `flow` is the statement's tree (parsed from
    `sql` when not given)."""
    tree = flow if flow is not None else _parsed_flow(sql)
    query = tree.expression
    target = tree.args["table"]
    create = exp.Create(this=target.copy(), kind="TABLE", expression=query)
    ctx = Context(sql, StreamingSpark().tokenize(sql), create, query, find_sources(query), {}, {}, table_kind)
    keyed = ctx.aggregation or ctx.distinct
    if keyed is not None and (ctx.aggregation is None or not closed_by_watermark(ctx)):
        raise ctx.error(
            UnsupportedOutputModeError,
            "Invalid streaming output mode: append. A flow appends rows to its table, and this query's rows "
            + ("would change after they were appended (an aggregation without a watermark)." if ctx.aggregation
               is not None else "would be deduplicated again as input arrives (SELECT DISTINCT)."),
            keyed.args.get("group") or keyed, "group by window(event_time, ...) on a column with WATERMARK ... "
            "DELAY OF INTERVAL ..., or write the aggregation as a streaming table of its own: CREATE STREAMING "
            "TABLE t AS SELECT ...")
    for rule in RULES:
        rule(ctx)
    query_sql, sources, statics = rewrite(query)
    table = table_name(target)
    reason = ("a flow appends its rows to the table" + (": each window is final once the watermark passes it"
                                                        if ctx.aggregation is not None else ""))
    return StreamingPlan(
        database=table.database, name=table.name, columns=(), comment=None, properties={}, query_sql=query_sql,
        sources=sources, static_tables=statics, output_mode="append", mode_reason=reason, keys=_keys(ctx),
        trigger_seconds=None, operators=_operators(ctx, sources), aggregation=_aggregation(ctx),
        state=_state(ctx, "append"), or_refresh=False,
        if_not_exists=False,
    )
