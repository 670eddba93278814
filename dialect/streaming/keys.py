"""The result columns that identify a row of an aggregation: its GROUP BY keys as named in the SELECT list, which
update mode merges on.

A key may be selected as written (`k`, `window(ts, '10 seconds')`: the window struct column), or as a column that
identifies it one to one:
- a fixed-size window by its start or its end: `window(ts, d).start`, `window(ts, d, slide).end`, or Spark's
  `window.start` of the one grouped window. Tumbling and sliding windows alike: the duration is fixed, so the start
  determines the end (a sliding window's rows for one key differ in start). A session window's size varies with its
  input, so only the whole `session_window(...)` column identifies it;
- a key under a cast that cannot collapse two values into one: `CAST(k AS STRING)` (every Spark type has a distinct
  text for distinct values). A cast to any other type can (DOUBLE to INT, '01' and '1' to INT), so it is no key.
"""

from __future__ import annotations

from sqlglot import exp

from sluicegate.dialect.streaming.context import function_name, is_time_window

WINDOW_BOUNDS = ("start", "end")


def _is_fixed_window(node: exp.Expr) -> bool:
    return is_time_window(node) and function_name(node) == "window"


def _value(projection: exp.Expr) -> exp.Expr:
    return projection.this if isinstance(projection, exp.Alias) else projection


def _result_name(projection: exp.Expr) -> str:
    """The column name Spark gives the projection (checked against Spark 4.1)."""
    if isinstance(projection, exp.Alias):
        return projection.alias
    if is_time_window(projection):
        return function_name(projection)  # Spark names an unaliased window(...) column `window`
    if isinstance(projection, exp.Dot) and _is_fixed_window(projection.this):
        return f"window.{projection.name.lower()}"  # Spark names window(...).start `window.start`
    return projection.alias_or_name


def _same_column(value: exp.Expr, key: exp.Expr) -> bool:
    """`c.k` and `k` name one column; `a.k` and `b.k` do not."""
    if not (isinstance(value, exp.Column) and isinstance(key, exp.Column)):
        return False
    if value.name.lower() != key.name.lower():
        return False
    return not value.table or not key.table or value.table.lower() == key.table.lower()


def _selects_as_written(projection: exp.Expr, key: exp.Expr) -> bool:
    value = _value(projection)
    if value == key:
        return True
    return not isinstance(projection, exp.Alias) and _same_column(value, key)


def _is_window_bound(value: exp.Expr, key: exp.Expr, windows_grouped: int) -> bool:
    if not _is_fixed_window(key):
        return False
    if isinstance(value, exp.Dot) and value.name.lower() in WINDOW_BOUNDS:
        return value.this == key
    # Spark's `window.start`: the grouped window column by the name Spark gives it (only one can have it)
    return isinstance(value, exp.Column) and value.table.lower() == "window" and not value.args.get("db") \
        and value.name.lower() in WINDOW_BOUNDS and windows_grouped == 1


def _is_injective_cast(value: exp.Expr, key: exp.Expr) -> bool:
    if not isinstance(value, (exp.Cast, exp.TryCast)):
        return False
    to = value.args.get("to")
    to_text = isinstance(to, exp.DataType) and to.this == exp.DataType.Type.TEXT and not to.expressions
    return to_text and (value.this == key or _same_column(value.this, key))


def _identifies(projection: exp.Expr, key: exp.Expr, windows_grouped: int) -> bool:
    value = _value(projection)
    return _is_window_bound(value, key, windows_grouped) or _is_injective_cast(value, key)


def group_keys(select: exp.Select) -> tuple[tuple[str, ...], exp.Expr | None]:
    """(the key column names, the first group key that is not in the result, if any)."""
    group = select.args.get("group")
    keys = list(group.expressions) if group is not None else []
    projections = list(select.expressions)
    windows_grouped = sum(1 for key in keys if is_time_window(key))
    names: list[str] = []
    for key in keys:
        if isinstance(key, exp.Literal) and key.is_int and 0 < int(key.name) <= len(projections):
            names.append(_result_name(projections[int(key.name) - 1]))
            continue
        match = next((p for p in projections if _selects_as_written(p, key)), None) \
            or next((p for p in projections if _identifies(p, key, windows_grouped)), None)
        if match is None:
            if any(isinstance(p, exp.Star) for p in projections) and isinstance(key, exp.Column):
                names.append(key.name)
                continue
            return tuple(names), key
        names.append(_result_name(match))
    return tuple(names), None


def distinct_keys(select: exp.Select) -> tuple[str, ...]:
    return tuple(_result_name(p) for p in select.expressions if not isinstance(p, exp.Star))
