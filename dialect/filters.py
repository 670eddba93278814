"""The predicates a query applies to one table's rows before anything else: what a reader may use to leave out the
files whose statistics say they hold no such row.

Only the WHERE of the SELECT whose FROM holds the table counts, and only when dropping a row of the table there
cannot change the result: the table is that SELECT's FROM or an inner/cross join side, never the null-supplying side
of an outer join (its missing rows would turn into NULL-extended rows), nor a semi/anti join side, nor sampled or
pivoted. A conjunct is used when every column in it is this table's (qualified by its alias, or its name when it has
none; unqualified only when the SELECT reads this table alone) and its form is one a file's min/max/null count can
answer: a column compared to a literal (=, <, <=, >, >=, IN, BETWEEN), IS [NOT] NULL, and AND/OR of those. Anything
else (functions or casts of columns, column against column, NOT, <=>, subqueries) is left out, which only means
reading more files; a WHERE with a non-deterministic call uses nothing (which files are read changes its values).
The shape out is plain data: the column as written, the operator, and literal values with their SQL kind; whether a
literal's kind fits the column's type is the reader's question (storage/delta/skipping.py), since only it has the
schema.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from sqlglot import exp

__all__ = ["AllOf", "AnyOf", "Comparison", "Predicate", "Value", "rewrite_predicates", "table_predicates"]

# the operators a Comparison carries
EQ, LT, LE, GT, GE, IN, IS_NULL, IS_NOT_NULL = "=", "<", "<=", ">", ">=", "in", "is null", "is not null"
_OPERATORS: dict[type[exp.Expr], str] = {exp.EQ: EQ, exp.LT: LT, exp.LTE: LE, exp.GT: GT, exp.GTE: GE}
_FLIPPED = {EQ: EQ, LT: GT, LE: GE, GT: LT, GE: LE}
# calls whose value depends on which rows (files, partitions) are read: a WHERE holding one uses no predicate
_NON_DETERMINISTIC_CLASSES: tuple[type[exp.Expr], ...] = (exp.Rand, exp.Randn, exp.Uuid)
_NON_DETERMINISTIC_NAMES = frozenset({
    "rand", "random", "randn", "uuid", "shuffle", "monotonically_increasing_id", "spark_partition_id",
    "input_file_name", "input_file_block_start", "input_file_block_length", "reflect", "java_method",
    "try_reflect", "randstr", "uniform",
})
_INTEGER_TYPES = {exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT,
                  exp.DataType.Type.BIGINT}
_TIMESTAMP_TYPES = {exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ,
                    exp.DataType.Type.TIMESTAMPNTZ}
_DATE_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}\Z")  # the only date text taken: Spark's cast reads more forms


@dataclass(frozen=True)
class Value:
    """A literal: its Python value and its SQL kind (integer, decimal, double, string, boolean, date, timestamp;
    a timestamp's value is its text, since the session's time zone gives it meaning)."""

    value: int | Decimal | float | str | bool | dt.date
    kind: str


@dataclass(frozen=True)
class Comparison:
    column: str                       # as written, without its qualifier
    op: str                           # one of EQ ... IS_NOT_NULL
    values: tuple[Value, ...] = ()    # one for a comparison, the list for IN, none for IS [NOT] NULL


@dataclass(frozen=True)
class AnyOf:
    """OR: a row may match when any branch may."""

    branches: tuple[Predicate, ...]


@dataclass(frozen=True)
class AllOf:
    """AND: a row may match only when every part may (BETWEEN is one: >= low and <= high)."""

    parts: tuple[Predicate, ...]


Predicate = Comparison | AnyOf | AllOf
Owner = Callable[[exp.Expr], "str | None"]  # a column node -> its name when it is the table's, else None


def table_predicates(table: exp.Table) -> tuple[Predicate, ...]:
    """The conjuncts of the WHERE that every row of `table` (a reference in a parsed query) must satisfy to count,
    in the shapes above; () when there is no such WHERE or none is safe to use."""
    select = _reading_select(table)
    if select is None:
        return ()
    single = len(_sources(select)) == 1 and not select.args.get("laterals")
    return _where_predicates(select.args.get("where"), _owner(table, single_source=single))


def rewrite_predicates(target: exp.Table, where: exp.Expr | None) -> tuple[Predicate, ...]:
    """The conjuncts of a DELETE's or UPDATE's WHERE (`where`) over its one table, `target`: a file none of whose
    rows can satisfy them holds no row to change, so the rewrite need not read it (it rewrites only the files with a
    row it changes, every row of those read)."""
    return _where_predicates(where, _owner(target, single_source=True))


def _where_predicates(where: exp.Expr | None, owns: Owner) -> tuple[Predicate, ...]:
    if not isinstance(where, exp.Where) or _non_deterministic(where):
        return ()
    found = [_predicate(conjunct, owns) for conjunct in _conjuncts(where.this)]
    return tuple(predicate for predicate in found if predicate is not None)


def _reading_select(table: exp.Table) -> exp.Select | None:
    """The SELECT whose FROM reads `table` directly, when dropping rows of `table` that fail its WHERE cannot change
    the result; None otherwise."""
    if table.args.get("sample") is not None or table.args.get("pivots") or table.args.get("joins"):
        return None
    parent = table.parent
    if not isinstance(parent, exp.From | exp.Join) or not isinstance(parent.parent, exp.Select):
        return None
    select = parent.parent
    if parent.arg_key not in ("from", "from_", "joins") or select.args.get("sample") is not None:
        return None
    sources = _sources(select)
    index = next((i for i, source in enumerate(sources) if source is table), None)
    if index is None or index in _null_supplying(select):
        return None
    return select


def _sources(select: exp.Select) -> list[exp.Expr]:
    from_ = select.args.get("from") or select.args.get("from_")
    first = [from_.this] if isinstance(from_, exp.From) else []
    return first + [join.this for join in select.args.get("joins") or []]


def _null_supplying(select: exp.Select) -> set[int]:
    """The positions (0: the FROM) of the sources whose rows an outer join may replace by NULLs, or whose rows are
    not in the result at all (semi and anti joins): dropping rows there changes the other side's rows."""
    supplying: set[int] = set()
    for index, join in enumerate(select.args.get("joins") or [], start=1):
        side, kind = (join.side or "").upper(), (join.kind or "").upper()
        if kind in ("SEMI", "ANTI") or side == "LEFT":
            supplying.add(index)
        if side in ("RIGHT", "FULL"):
            supplying.update(range(index))
        if side == "FULL":
            supplying.add(index)
    return supplying


def _non_deterministic(node: exp.Expr) -> bool:
    for call in node.find_all(exp.Func):
        if isinstance(call, _NON_DETERMINISTIC_CLASSES):
            return True
        name = call.name if isinstance(call, exp.Anonymous) else call.sql_name()
        if name.lower() in _NON_DETERMINISTIC_NAMES:
            return True
    return False


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    node = _unparen(node)
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    return [node]


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _owner(table: exp.Table, *, single_source: bool) -> Owner:
    """A test of whether a column node is this table's: the column's name when it is, else None."""
    qualifier = (table.alias or table.name).lower()

    def owns(node: exp.Expr) -> str | None:
        node = _unparen(node)
        if not isinstance(node, exp.Column) or not isinstance(node.this, exp.Identifier):
            return None
        if node.args.get("db") is not None or node.args.get("catalog") is not None:
            return None
        if node.table:
            return node.name if node.table.lower() == qualifier else None
        return node.name if single_source else None

    return owns


def _predicate(node: exp.Expr, owns: Owner) -> Predicate | None:
    node = _unparen(node)
    if isinstance(node, exp.And):
        parts = [p for p in (_predicate(c, owns) for c in _conjuncts(node)) if p is not None]
        return None if not parts else parts[0] if len(parts) == 1 else AllOf(tuple(parts))
    if isinstance(node, exp.Or):
        branches = (_predicate(node.this, owns), _predicate(node.expression, owns))
        if any(branch is None for branch in branches):
            return None  # a branch that says nothing keeps every file
        return AnyOf(tuple(b for b in branches if b is not None))
    if type(node) in _OPERATORS:
        op = _OPERATORS[type(node)]
        column, value = owns(node.this), literal(node.expression)
        if column is None or value is None:
            column, value, op = owns(node.expression), literal(node.this), _FLIPPED[op]
        return Comparison(column, op, (value,)) if column is not None and value is not None else None
    if isinstance(node, exp.In):
        column = owns(node.this)
        if column is None or node.args.get("query") is not None or node.args.get("unnest") is not None:
            return None
        values = [literal(item) for item in node.expressions]
        if not values or any(value is None for value in values):
            return None
        return Comparison(column, IN, tuple(v for v in values if v is not None))
    if isinstance(node, exp.Between):
        column, low, high = owns(node.this), literal(node.args["low"]), literal(node.args["high"])
        if column is None or low is None or high is None or node.args.get("symmetric"):
            return None
        return AllOf((Comparison(column, GE, (low,)), Comparison(column, LE, (high,))))
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        column = owns(node.this)
        return Comparison(column, IS_NULL) if column is not None else None
    if isinstance(node, exp.Not) and isinstance(inner := _unparen(node.this), exp.Is) \
            and isinstance(inner.expression, exp.Null):
        column = owns(inner.this)
        return Comparison(column, IS_NOT_NULL) if column is not None else None
    return None


def literal(node: exp.Expr) -> Value | None:
    """The value of a literal as Spark reads it, or None when the node is not one this module reads (NULL is not:
    a comparison with it is never true, which no file statistic is needed to know)."""
    node = _unparen(node)
    if isinstance(node, exp.Neg):
        inner = literal(node.this)
        if inner is None or inner.kind not in ("integer", "decimal", "double"):
            return None
        return Value(-inner.value, inner.kind)  # type: ignore[operator]
    if isinstance(node, exp.Boolean):
        return Value(bool(node.this), "boolean")
    if isinstance(node, exp.Literal):
        if not node.is_string:
            return _number(node.this)
        return Value(node.this, "string") if _as_typed(node) else None
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal):
        if node.this.is_string and not _as_typed(node.this):
            return None
        return _typed(node.this, node.to)
    return None


def _as_typed(string: exp.Literal) -> bool:
    """Whether a string literal's text is its value between two quotes: no escape (`\\t`, `\\u0041`, octal...),
    where sqlglot's reading and Spark's could differ and a wrong value would skip files that match."""
    start, end = string.meta.get("start"), string.meta.get("end")
    return start is not None and end is not None and end - start + 1 == len(string.this) + 2


def _number(text: str) -> Value | None:
    if re.fullmatch(r"\d+", text):
        return Value(int(text), "integer")
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    return Value(float(number), "double") if "e" in text.lower() else Value(number, "decimal")


def _typed(value: exp.Literal, to: exp.DataType) -> Value | None:
    """A typed literal (`DATE '2024-01-01'`, `1L`, `1Y`, `1D`, `TIMESTAMP '...'`), as sqlglot reads it: a cast."""
    text = value.this
    if to.this in _INTEGER_TYPES and not value.is_string and re.fullmatch(r"\d+", text):
        return Value(int(text), "integer")
    if to.this == exp.DataType.Type.DATE and value.is_string and _DATE_TEXT.match(text):
        try:
            return Value(dt.date.fromisoformat(text), "date")
        except ValueError:
            return None
    if to.this in _TIMESTAMP_TYPES and value.is_string:
        return Value(text, "timestamp")
    if to.this in (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT) and not value.is_string:
        number = _number(text)
        return Value(float(number.value), "double") if number is not None else None  # type: ignore[arg-type]
    if to.this == exp.DataType.Type.DECIMAL:
        try:
            return Value(Decimal(text), "decimal")
        except InvalidOperation:
            return None
    return None
