"""The output mode: the default is the one that keeps the Delta table equal to the result table (update for an
aggregation or dedup, whose rows change in place; append otherwise), and an explicit mode is checked for whether
Spark can produce it."""

from __future__ import annotations

from sqlglot import exp

from sluicegate.dialect.streaming.context import Context, function_name, is_time_window, left_of
from sluicegate.dialect.streaming.errors import InvalidOutputModeError, UnsupportedOutputModeError

MODES = ("append", "update", "complete")


def closed_by_watermark(ctx: Context) -> bool:
    """Whether the aggregation groups by an event-time window (or column) whose column carries a watermark."""
    select = ctx.aggregation
    group = select.args.get("group") if select is not None else None
    for key in group.expressions if group is not None else []:
        column = key.expressions[0] if is_time_window(key) and key.expressions else key
        if isinstance(column, exp.Column) and column.name.lower() in ctx.watermark_columns:
            return True
    return False


def session_windowed(ctx: Context) -> bool:
    group = ctx.aggregation.args.get("group") if ctx.aggregation is not None else None
    return group is not None and any(function_name(k) == "session_window" for k in group.expressions)


def stream_stream_join(ctx: Context) -> exp.Join | None:
    for join in ctx.query.find_all(exp.Join):
        if ctx.is_streaming(join.this) and any(ctx.is_streaming(item) for item in left_of(join)):
            return join
    return None


def default_mode(ctx: Context) -> tuple[str, str]:
    if ctx.aggregation is not None:
        return "update", ("the query aggregates, so a result row changes as input arrives: update merges each "
                          "changed group into the table by its keys")
    if ctx.distinct is not None:
        return "update", ("SELECT DISTINCT keeps one row per distinct value: update merges new values by the "
                          "selected columns")
    return "append", "the query neither aggregates nor deduplicates, so every result row is final and is appended"


def chosen_mode(ctx: Context) -> tuple[str, str]:
    requested = ctx.requested_mode
    if requested is None:
        return default_mode(ctx)
    return requested, f"set by TBLPROPERTIES ('sluicegate.output_mode' = '{requested}')"


def check_output_mode(ctx: Context) -> None:
    """An explicit output mode must be one Spark can produce for this query."""
    requested = ctx.requested_mode
    if requested is None:
        return
    node = ctx.property_values.get("sluicegate.output_mode")
    if requested not in MODES:
        raise ctx.error(InvalidOutputModeError, f"Invalid streaming output mode: {requested}.", node,
                        "write 'append', 'update' or 'complete'")
    keyed = ctx.aggregation is not None or ctx.distinct is not None
    if requested == "append" and keyed and not closed_by_watermark(ctx):
        raise ctx.error(
            UnsupportedOutputModeError,
            "Invalid streaming output mode: append. This output mode is not supported for streaming aggregations "
            "without watermark: a group's row would change after it was appended.", node,
            "group by window(event_time, ...) on a column with WATERMARK ... DELAY OF, or drop the property to "
            "use update mode")
    if requested == "complete" and ctx.aggregation is None:
        raise ctx.error(
            UnsupportedOutputModeError,
            "Invalid streaming output mode: complete. Complete output mode not supported when there are no "
            "streaming aggregations: the whole input would be rewritten on every trigger.", node,
            "use append (drop the property), or aggregate with GROUP BY")
    if requested == "update" and ctx.order is not None:
        raise ctx.error(
            UnsupportedOutputModeError,
            "Invalid streaming output mode: update. Sorting is only possible in complete mode, where the whole "
            "result is rewritten.", node, "set 'sluicegate.output_mode' = 'complete', or remove ORDER BY")
    if requested == "update" and session_windowed(ctx):
        raise ctx.error(
            UnsupportedOutputModeError,
            "Invalid streaming output mode: update. Update output mode not supported for session window.", node,
            "use append with a WATERMARK on the session column, or complete")
    if requested != "append" and stream_stream_join(ctx) is not None:
        raise ctx.error(
            UnsupportedOutputModeError,
            f"Invalid streaming output mode: {requested}. A join between two streams only works in append mode.",
            node, "use append (aggregate the joined stream in a downstream streaming table)")
