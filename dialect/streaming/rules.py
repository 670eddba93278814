"""The checks a streaming query must pass before it runs, one function each, run in order from `RULES` (as
sqlglot's optimizer rules): each raises one typed error at the offending node, with a hint saying what to write."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from sluicegate.dialect.streaming.context import (
    TRIGGER_KEY,
    Context,
    aggregates,
    function_name,
    is_aggregating,
    left_of,
)
from sluicegate.dialect.streaming.errors import (
    BucketingNotSupportedError,
    ChainedAggregationNotSupportedError,
    CreateOrReplaceNotAllowedError,
    DistinctAggregateNotSupportedError,
    DuplicateExpectationNameError,
    ExpectationNotDeterministicError,
    ExpectationWithAggregateError,
    ExpectationWithSubqueryError,
    GroupKeyNotInOutputError,
    InvalidKafkaOptionError,
    InvalidTriggerIntervalError,
    LimitNotSupportedError,
    MissingSourceFormatError,
    NonDeterministicFunctionError,
    NonTimeWindowNotSupportedError,
    NoStreamingSourceError,
    OuterJoinWithoutWatermarkError,
    PartitionedAndClusteredError,
    QuarantineNameTooLongError,
    RewrittenSourceError,
    SortNotSupportedError,
    UnknownSourceFormatError,
    UnknownSourceFunctionError,
    UnsupportedOutputModeError,
    UnsupportedSetOperationError,
    UnsupportedStreamingJoinError,
    WatermarkNotOnColumnError,
)
from sluicegate.dialect.streaming.expectations import (
    MAX_NAME_LENGTH,
    QUARANTINE_SUFFIX,
    expectation_specs,
    found_expectations,
    needs_quarantine,
    quarantine_name,
)
from sluicegate.dialect.streaming.kafka import KafkaOptionError, parse_options
from sluicegate.dialect.streaming.keys import group_keys
from sluicegate.dialect.streaming.modes import check_output_mode, chosen_mode, stream_stream_join
from sluicegate.dialect.streaming.plan import skips_change_commits
from sluicegate.dialect.streaming.sources import FILE_FORMATS, SOURCE_FUNCTIONS, literal_text

Rule = Callable[[Context], None]

NON_DETERMINISTIC = {
    "rand", "randn", "random", "uuid", "now", "current_timestamp", "current_date", "localtimestamp",
    "current_time", "monotonically_increasing_id", "shuffle", "unix_timestamp", "random_uuid",
}
_NON_DETERMINISTIC_CLASSES = tuple(
    getattr(exp, name) for name in ("Rand", "Randn", "Uuid", "CurrentTimestamp", "CurrentDate", "CurrentTime",
                                    "Localtimestamp", "CurrentDatetime") if hasattr(exp, name)
)
REWRITTEN_KINDS = ("complete", "update", "overwritten", "auto_cdc")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\s*$",
                       re.I)
_UNIT_SECONDS = {"ms": 0.001, "millisecond": 0.001, "s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0,
                 "minute": 60.0, "h": 3600.0, "hour": 3600.0}


def check_not_replace(ctx: Context) -> None:
    if ctx.create.args.get("replace"):
        raise ctx.error(CreateOrReplaceNotAllowedError,
                        "REPLACE is not allowed for streaming tables.", ctx.create.this,
                        "write CREATE OR REFRESH STREAMING TABLE", keyword=("CREATE",))


def check_partitioning(ctx: Context) -> None:
    """PARTITIONED BY and CLUSTER BY are Delta's, and the sink writes either layout; Hive's bucketing is not, and
    the two layouts together are refused as Databricks refuses them."""
    container = ctx.create.args.get("properties")
    props = container.expressions if container else []
    for prop in props:
        if isinstance(prop, exp.ClusteredByProperty):
            raise ctx.error(BucketingNotSupportedError, "CLUSTERED BY ... INTO n BUCKETS is not supported for "
                            "streaming tables: Delta tables have no buckets.", prop,
                            "use CLUSTER BY (columns) or PARTITIONED BY (columns) instead", keyword=("CLUSTERED",))
    partitioned = next((p for p in props if isinstance(p, exp.PartitionedByProperty)), None)
    clustered = next((p for p in props if isinstance(p, exp.ClusterProperty)), None)
    if partitioned is not None and clustered is not None:
        raise ctx.error(PartitionedAndClusteredError, "Cannot specify both CLUSTER BY and PARTITIONED BY.",
                        clustered, "keep one of the two", keyword=("CLUSTER",))


def check_source_functions(ctx: Context) -> None:
    for source in ctx.sources:
        name = source.function_name()
        if name is not None and name not in SOURCE_FUNCTIONS:
            raise ctx.error(UnknownSourceFunctionError,
                            f"Cannot resolve the streaming source function {name}().", source.function,
                            "read files with STREAM read_files('dir', format => 'json'), Kafka with STREAM "
                            "read_kafka(bootstrapServers => 'host:9092', subscribe => 'topic'), generate rows with "
                            "STREAM rate(rows_per_second => n), or read a table with STREAM(table)")


def check_source_formats(ctx: Context) -> None:
    for source in ctx.sources:
        if source.function_name() != "read_files":
            continue
        positional, named = source.arguments()
        if not positional and "path" not in named:
            raise ctx.error(MissingSourceFormatError, "read_files needs the directory to read.", source.function,
                            "write STREAM read_files('dir', format => 'json')")
        if "format" not in named:
            raise ctx.error(MissingSourceFormatError, "read_files needs a format for a streaming read.",
                            source.function, f"add format => one of {', '.join(repr(f) for f in FILE_FORMATS)}")
        file_format = named["format"].name.lower()
        if file_format not in FILE_FORMATS:
            raise ctx.error(UnknownSourceFormatError, f"read_files cannot stream the format '{file_format}'.",
                            named["format"], f"use format => one of {', '.join(repr(f) for f in FILE_FORMATS)}")


def check_kafka_options(ctx: Context) -> None:
    """read_kafka's options, each by name (a wrong one is reported where it is written)."""
    for source in ctx.sources:
        if source.function_name() != "read_kafka":
            continue
        positional, named = source.arguments()
        if positional:
            raise ctx.error(InvalidKafkaOptionError, "read_kafka takes only named options.", positional[0],
                            "write read_kafka(bootstrapServers => 'host:9092', subscribe => 'topic')")
        try:
            parse_options({key: literal_text(value) for key, value in named.items()})
        except KafkaOptionError as exc:
            value = named.get(exc.option.lower()) if exc.option is not None else None
            at, name = (value, (exc.option,)) if value is not None and exc.option is not None \
                else (source.function, ())
            raise ctx.error(InvalidKafkaOptionError, exc.message, at, exc.hint, keyword=name) from None


def check_watermarks_on_columns(ctx: Context) -> None:
    """The runtime applies withWatermark(column, delay) to the source itself, so the event time must be a column."""
    for source in ctx.sources:
        if source.watermark is None:
            continue
        column, name = source.watermark.args["column"], source.watermark.args.get("name")
        if not isinstance(column, exp.Column) or (name is not None and name.name.lower() != column.name.lower()):
            raise ctx.error(WatermarkNotOnColumnError,
                            "The WATERMARK clause here must name an existing timestamp column of the source.",
                            column, "compute the event-time column in an upstream streaming table, then write "
                                    "WATERMARK that_column DELAY OF INTERVAL ...", keyword=("WATERMARK",))


def check_has_streaming_source(ctx: Context) -> None:
    if not ctx.sources:
        first = ctx.query.find(exp.Table)
        raise ctx.error(NoStreamingSourceError,
                        "A streaming table needs a streaming source: the query reads only static relations.",
                        first if first is not None else ctx.query,
                        "read the input with STREAM(table) or STREAM read_files(...), or create a plain table "
                        "with CREATE TABLE ... AS SELECT")


_SKIP_CHANGES = "set TBLPROPERTIES ('skipChangeCommits' = 'true') to read only the commits that append"


def auto_cdc_reading_hint(name: str) -> str:
    """How to read the AUTO CDC table `name` instead of a plain stream: for a new reader refused at CREATE, and for
    the readers that make a new AUTO CDC flow into `name` refused (executor/cdc_flows.py)."""
    return (f"read it in a materialized view (CREATE MATERIALIZED VIEW v AS SELECT ... FROM {name}), which follows "
            f"its updates and deletes, stream from the change events it applies, or {_SKIP_CHANGES} (rows of new "
            "keys only)")


def check_sources_append_only(ctx: Context) -> None:
    if ctx.table_kind is None or skips_change_commits(ctx.properties):
        return
    for source in ctx.sources:
        if source.function_name() is not None:
            continue
        kind = ctx.table_kind(source.target.db or None, source.target.name)
        if kind not in REWRITTEN_KINDS:
            continue
        name = source.target.sql("spark")
        if kind == "auto_cdc":   # Databricks refuses a streaming read of an AUTO CDC target alike
            raise ctx.error(RewrittenSourceError,
                            f"Cannot stream from {name}: it is an AUTO CDC table, whose commits update and delete "
                            "rows by key, so a stream would see changes it cannot apply.", source.target,
                            auto_cdc_reading_hint(name), keyword=("STREAM",))
        raise ctx.error(RewrittenSourceError,
                        f"Cannot stream from {name}: its rows are rewritten in place ({kind}), so a stream would "
                        "see them again as new rows.", source.target,
                        f"read it without STREAM (a stream-static join), stream from the append-only table it is "
                        f"computed from, or {_SKIP_CHANGES}", keyword=("STREAM",))


def non_deterministic(tree: exp.Expr) -> exp.Func | None:
    """The first call in `tree` whose value can differ between two runs over the same row."""
    for func in tree.find_all(exp.Func):
        name = function_name(func)
        if isinstance(func, _NON_DETERMINISTIC_CLASSES) or name in NON_DETERMINISTIC:
            if name == "unix_timestamp" and func.this is not None:
                continue
            return func
    return None


def check_deterministic(ctx: Context) -> None:
    func = non_deterministic(ctx.query)
    if func is not None:
        name = function_name(func)
        raise ctx.error(NonDeterministicFunctionError,
                            f"{name}() is not deterministic: a replayed micro-batch would produce different rows.",
                        func, "compute the value from the input (an event-time column, a hash of the row's "
                              "columns) instead")


def check_no_window_functions(ctx: Context) -> None:
    for window in ctx.query.find_all(exp.Window):
        if window.arg_key == "windows":
            continue  # a named WINDOW definition: the OVER that uses it is reported
        raise ctx.error(NonTimeWindowNotSupportedError,
                        "Window functions (OVER) are not supported on streaming queries.", window,
                        "group by window(event_time, '10 seconds') or session_window(...) instead")


def check_no_distinct_aggregates(ctx: Context) -> None:
    for select in ctx.selects:
        for aggregate in aggregates(select):
            if isinstance(aggregate.this, exp.Distinct):
                raise ctx.error(DistinctAggregateNotSupportedError,
                                "Distinct aggregations are not supported on streaming queries.", aggregate,
                                "use approx_count_distinct(x) instead")


def _inner_selects(ctx: Context, select: exp.Select) -> list[exp.Select]:
    inner = [s for s in select.find_all(exp.Select) if s is not select]
    for table in select.find_all(exp.Table):
        body = ctx.ctes.get(table.name.lower()) if not table.db else None
        if body is not None:
            inner.extend(body.find_all(exp.Select))
    return inner


def check_no_chained_aggregations(ctx: Context) -> None:
    for select in ctx.selects:
        if not is_aggregating(select):
            continue
        for inner in _inner_selects(ctx, select):
            if is_aggregating(inner) and ctx.is_streaming(inner):
                node = next(iter(aggregates(select)), None) or select.args.get("group") or select
                raise ctx.error(ChainedAggregationNotSupportedError,
                                "An aggregation over the result of another streaming aggregation is not supported.",
                                node, "write the inner aggregation as its own streaming table and aggregate "
                                      "STREAM of it in another, or merge the two GROUP BYs into one")


def _has_range_condition(on: exp.Expr | None) -> bool:
    return on is not None and on.find(exp.Between, exp.GT, exp.GTE, exp.LT, exp.LTE) is not None


def check_joins(ctx: Context) -> None:
    for join in ctx.query.find_all(exp.Join):
        left_items = left_of(join)
        left_streaming = any(ctx.is_streaming(item) for item in left_items)
        right_streaming = ctx.is_streaming(join.this)
        side = (join.side or "").upper()
        kind = (join.kind or "").upper()
        if not (left_streaming or right_streaming):
            continue
        if left_streaming and right_streaming:
            if side in ("LEFT", "RIGHT", "FULL"):
                both = all(ctx.has_watermark(item) for item in left_items if ctx.is_streaming(item)) and \
                    ctx.has_watermark(join.this)
                if not both or not _has_range_condition(join.args.get("on")):
                    raise ctx.error(
                        OuterJoinWithoutWatermarkError,
                        f"A {side} OUTER join between two streams needs a watermark on both sides and a time-range "
                        "condition, or its state would grow forever and no row could be emitted as unmatched.",
                        join.this, "add WATERMARK col DELAY OF INTERVAL ... to both STREAM sources and a condition "
                                   "such as b.ts BETWEEN a.ts AND a.ts + INTERVAL 1 MINUTE", keyword=(side,))
            continue
        if right_streaming and (side in ("LEFT", "FULL") or kind in ("ANTI", "SEMI")):
            raise ctx.error(UnsupportedStreamingJoinError,
                            f"A {side or kind} join with the stream on the right and a static table on the left is "
                            "not supported.", join.this,
                            "put the stream on the left: FROM STREAM(s) LEFT JOIN static ...", keyword=(side or kind,))
        if left_streaming and side in ("RIGHT", "FULL"):
            raise ctx.error(UnsupportedStreamingJoinError,
                            f"A {side} OUTER join of a stream with a static table is not supported: a static row "
                            "without a match could never be emitted as final.", join.this,
                            "use an inner or LEFT join with the stream on the left", keyword=(side,))
    stream_join = stream_stream_join(ctx)
    if stream_join is not None and ctx.requested_mode is None and ctx.aggregation is not None:
        raise ctx.error(UnsupportedOutputModeError,
                        "A join between two streams only works in append mode, and this query aggregates its "
                        "result (update mode).", stream_join.this,
                        "write the join as its own streaming table and aggregate STREAM of it in another, or "
                        "aggregate by a watermarked window with 'sluicegate.output_mode' = 'append'",
                        keyword=("JOIN",))


def check_set_operations(ctx: Context) -> None:
    for operation in ctx.query.find_all(exp.SetOperation):
        left, right = ctx.is_streaming(operation.this), ctx.is_streaming(operation.expression)
        if not (left or right):
            continue
        if not isinstance(operation, exp.Union):
            raise ctx.error(UnsupportedSetOperationError,
                            f"{operation.key.upper()} is not supported on streams.", operation.expression,
                            "express it as a join (LEFT ANTI / SEMI with the stream on the left)")
        if operation.args.get("distinct"):
            raise ctx.error(UnsupportedSetOperationError,
                            "UNION (distinct) of streams would keep every row ever seen to drop duplicates.",
                            operation.expression, "write UNION ALL (and SELECT DISTINCT over it if duplicates "
                                                  "must go)", keyword=("UNION",))
        if left != right:
            raise ctx.error(UnsupportedSetOperationError,
                            "A UNION between a stream and a static relation is not supported.",
                            operation.this if not left else operation.expression,
                            "read both sides with STREAM(...), or join the static table instead",
                            keyword=("SELECT",))


def check_sort(ctx: Context) -> None:
    mode, _ = chosen_mode(ctx)
    if ctx.order is not None and mode != "complete":
        raise ctx.error(SortNotSupportedError,
                        "Sorting is not supported on streaming queries, unless it is on an aggregation in "
                        "complete output mode.", ctx.order, "remove ORDER BY (sort when you read the table), or "
                        "aggregate and set 'sluicegate.output_mode' = 'complete'", keyword=("ORDER",))


def check_limit(ctx: Context) -> None:
    mode, _ = chosen_mode(ctx)
    limit = ctx.query.find(exp.Limit)
    if limit is not None and mode != "complete":
        raise ctx.error(LimitNotSupportedError,
                        f"LIMIT is not supported on streaming queries in {mode} output mode.", limit,
                        "remove LIMIT (limit when you read the table), or aggregate and set "
                        "'sluicegate.output_mode' = 'complete'", keyword=("LIMIT",))


def check_keys_in_output(ctx: Context) -> None:
    mode, _ = chosen_mode(ctx)
    if mode != "update" or ctx.aggregation is None:
        return
    _, missing = group_keys(ctx.aggregation)
    if missing is not None:
        key = missing.sql("spark")
        if function_name(missing) == "window":
            how = f"add {key} or {key}.start to the SELECT list"
        elif function_name(missing) == "session_window":
            how = f"add {key} to the SELECT list (its size varies, so only the whole column identifies it)"
        else:
            how = f"add {key} to the SELECT list (as it is, renamed with AS, or as CAST({key} AS STRING))"
        raise ctx.error(GroupKeyNotInOutputError,
                        f"The group key {key} is not in the result, so update mode cannot find the row to change.",
                        missing, how)


def trigger_seconds(text: str) -> float | None:
    found = _DURATION.match(text)
    if found is None:
        return None
    unit = (found.group(2) or "s").lower()
    unit = unit[:-1] if unit.endswith("s") and unit not in ("s", "ms") else unit
    return float(found.group(1)) * _UNIT_SECONDS[unit]


def check_trigger_interval(ctx: Context) -> None:
    text = ctx.properties.get(TRIGGER_KEY)
    if text is not None and trigger_seconds(text) is None:
        raise ctx.error(InvalidTriggerIntervalError, f"'{text}' is not a trigger interval.",
                        ctx.property_values.get(TRIGGER_KEY), "write a duration such as '1 second' or '500 ms'")


def check_expectation_names(ctx: Context) -> None:
    seen: set[str] = set()
    for found in found_expectations(ctx.create):
        if found.name.lower() in seen:
            raise ctx.error(DuplicateExpectationNameError,
                            f"The expectation name `{found.name}` is used twice: names identify an expectation's "
                            "counts and must be unique in a table.", found.constraint.this,
                            "give each CONSTRAINT ... EXPECT its own name")
        seen.add(found.name.lower())


def check_expectation_expressions(ctx: Context) -> None:
    """An expectation is judged on one row at a time, the same on every replay: no subquery, no aggregate or window
    function, nothing non-deterministic."""
    for found in found_expectations(ctx.create):
        condition = found.node.this
        subquery = condition.find(exp.Select)  # EXISTS (SELECT ...), IN (SELECT ...), (SELECT ...); not exists(arr, f)
        if subquery is not None:
            raise ctx.error(ExpectationWithSubqueryError,
                            f"The expectation `{found.name}` contains a subquery; an expectation reads one row of "
                            "the table.", subquery, "join what the check needs in the query, then test the column "
                                                    "in EXPECT", keyword=("SELECT",))
        over = condition.find(exp.Window)
        aggregate = over if over is not None else condition.find(exp.AggFunc)
        if aggregate is not None:
            what = "a window function" if over is not None else "an aggregate function"
            raise ctx.error(ExpectationWithAggregateError,
                            f"The expectation `{found.name}` uses {what}; an expectation is evaluated on each row "
                            "on its own.", aggregate, "compute the value in the query (a column), then test that "
                                                      "column in EXPECT")
        func = non_deterministic(condition)
        if func is not None:
            raise ctx.error(ExpectationNotDeterministicError,
                            f"The expectation `{found.name}` calls {function_name(func)}(), which is not "
                            "deterministic: a replayed micro-batch could keep other rows.", func,
                            "test only the row's columns and deterministic functions")


def check_quarantine_name(ctx: Context) -> None:
    """A DROP ROW expectation keeps the rows it drops in `<table>__quarantine`, which must be a valid name."""
    if not needs_quarantine(expectation_specs(ctx.sql, ctx.create), ctx.properties):
        return
    table = ctx.create.this.this if isinstance(ctx.create.this, exp.Schema) else ctx.create.this
    name = quarantine_name(table.name)
    if len(name) > MAX_NAME_LENGTH:
        raise ctx.error(QuarantineNameTooLongError,
                        f"The quarantine table `{name}` of this table's DROP ROW expectations would have a name "
                        f"longer than {MAX_NAME_LENGTH} characters.", table,
                        f"shorten the table's name to at most {MAX_NAME_LENGTH - len(QUARANTINE_SUFFIX)} "
                        "characters, or set TBLPROPERTIES ('sluicegate.quarantine' = 'false') to only count dropped "
                        "rows")


RULES: tuple[Rule, ...] = (
    check_not_replace,
    check_partitioning,
    check_source_functions,
    check_source_formats,
    check_kafka_options,
    check_watermarks_on_columns,
    check_has_streaming_source,
    check_sources_append_only,
    check_deterministic,
    check_no_window_functions,
    check_no_distinct_aggregates,
    check_no_chained_aggregations,
    check_joins,
    check_set_operations,
    check_output_mode,
    check_sort,
    check_limit,
    check_keys_in_output,
    check_trigger_interval,
    check_expectation_names,
    check_expectation_expressions,
    check_quarantine_name,
)
