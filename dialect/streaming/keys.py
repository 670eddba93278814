"""The result columns that identify a row of an aggregation: its GROUP BY keys as named in the SELECT list (a
window(...) key is the result's window struct column), which update mode merges on."""

from __future__ import annotations

from sqlglot import exp

from dialect.streaming.context import function_name, is_time_window


def _result_name(projection: exp.Expression) -> str:
    if isinstance(projection, exp.Alias):
        return projection.alias
    if is_time_window(projection):
        return function_name(projection)  # Spark names an unaliased window(...) column `window`
    return projection.alias_or_name


def _matches(projection: exp.Expression, key: exp.Expression) -> bool:
    value = projection.this if isinstance(projection, exp.Alias) else projection
    if value == key:
        return True
    if isinstance(key, exp.Column) and not isinstance(projection, exp.Alias) and isinstance(value, exp.Column):
        return value.name.lower() == key.name.lower()
    return False


def group_keys(select: exp.Select) -> tuple[tuple[str, ...], exp.Expression | None]:
    """(the key column names, the first group key that is not in the result, if any)."""
    group = select.args.get("group")
    projections = list(select.expressions)
    names: list[str] = []
    for key in group.expressions if group is not None else []:
        if isinstance(key, exp.Literal) and key.is_int and 0 < int(key.name) <= len(projections):
            names.append(_result_name(projections[int(key.name) - 1]))
            continue
        match = next((p for p in projections if _matches(p, key)), None)
        if match is None:
            if any(isinstance(p, exp.Star) for p in projections) and isinstance(key, exp.Column):
                names.append(key.name)
                continue
            return tuple(names), key
        names.append(_result_name(match))
    return tuple(names), None


def distinct_keys(select: exp.Select) -> tuple[str, ...]:
    return tuple(_result_name(p) for p in select.expressions if not isinstance(p, exp.Star))
