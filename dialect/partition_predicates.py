"""OPTIMIZE's WHERE as data: a conjunction of `column op literal` terms, the only predicates a Delta table's
partition values can answer without reading a file (delta-rs's `partition_filters`).

Pure and positional: a shape outside the conjunction (OR, a function, a column compared with a column) is refused
here, at the token the user typed. Whether the columns are partition columns is known only with the table, so the
executor checks that (executor/tables/optimize.py).
"""

from __future__ import annotations

from sqlglot import exp

from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.positions import line_column, start_of
from sluicegate.dialect.statements import ColumnName, PartitionTerm
from sluicegate.dialect.trees import offset_of

_COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
}
# `3 < col` is `col > 3`
_MIRRORED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


class UnsupportedPartitionPredicateError(DialectError):
    """A WHERE that is not a conjunction of comparisons of partition columns with literals."""

    error_class = "DELTA_UNSUPPORTED_PARTITION_PREDICATE"
    sqlstate = "0AKDC"


def partition_terms(sql: str, where: exp.Expr) -> tuple[PartitionTerm, ...]:
    """The terms of `where` (an AND of comparisons and IN lists), or UnsupportedPartitionPredicateError at the first
    part that is not one."""
    if isinstance(where, exp.Paren):
        return partition_terms(sql, where.this)
    if isinstance(where, exp.And):
        return partition_terms(sql, where.this) + partition_terms(sql, where.expression)
    return (_term(sql, where),)


def _term(sql: str, node: exp.Expr) -> PartitionTerm:
    if isinstance(node, exp.In) and isinstance(node.this, exp.Column) and node.expressions \
            and not node.args.get("query"):
        return PartitionTerm(_column(sql, node.this), "in", tuple(_literal(sql, v) for v in node.expressions))
    op = _COMPARISONS.get(type(node))
    if op is not None:
        left, right = node.this, node.expression
        if isinstance(left, exp.Column) and not isinstance(right, exp.Column):
            return PartitionTerm(_column(sql, left), op, (_literal(sql, right),))
        if isinstance(right, exp.Column) and not isinstance(left, exp.Column):
            return PartitionTerm(_column(sql, right), _MIRRORED[op], (_literal(sql, left),))
    raise _unsupported(sql, node, f"OPTIMIZE cannot use the predicate `{node.sql('databricks')}`")


def _column(sql: str, column: exp.Column) -> ColumnName:
    if column.table:
        raise _unsupported(sql, column, f"OPTIMIZE's WHERE names columns of its table only, not `{column.sql()}`")
    return ColumnName(column.name, offset_of(column))


def _literal(sql: str, value: exp.Expr) -> str:
    """A literal's value as the Delta log writes partition values: numbers and text as written, booleans in lower
    case, `DATE '...'` / `TIMESTAMP '...'` their text."""
    if isinstance(value, exp.Paren):
        return _literal(sql, value.this)
    if isinstance(value, exp.Literal):
        return value.name
    if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal) and not value.this.is_string:
        return f"-{value.this.name}"
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    if isinstance(value, exp.Cast) and isinstance(value.this, exp.Literal) and value.this.is_string:
        return value.this.name
    raise _unsupported(sql, value, f"OPTIMIZE compares partition columns with literals only, not `{value.sql()}`")


def _unsupported(sql: str, node: exp.Expr, message: str) -> UnsupportedPartitionPredicateError:
    start = start_of(node)
    line, column = line_column(sql, start) if start is not None else (None, None)
    return UnsupportedPartitionPredicateError(
        message, line=line, column=column,
        hint="write the WHERE as partition columns compared with literals, joined by AND "
             "(=, !=, <, <=, >, >=, IN (...)), e.g. WHERE day >= '2024-01-01' AND region IN ('eu', 'us')")
