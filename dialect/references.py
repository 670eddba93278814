"""The tables a statement reads, as nodes of sqlglot's tree with their exact spans in the text, and the text with
some of them replaced, with a map from offsets in the new text to offsets in what the user typed.

The runtime binds every referenced catalog table to a pinned snapshot view by replacing the reference's span (its
name and time-travel clause) in the text and nothing else: sqlglot's tree finds the references, but the text Spark
runs is the user's own, never sqlglot's printing of it (which normalises functions, e.g. `to_timestamp(x)` into a
CAST), so Spark reads exactly what was written and its error positions map back through `Spliced.to_original`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import TokenType

from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.parse import parse
from sluicegate.dialect.positions import line_column, start_of
from sluicegate.dialect.qualified_columns import qualified_columns


class TimeTravelSpecError(DialectError):
    error_class = "INVALID_TIME_TRAVEL_SPEC"
    sqlstate = "42K0E"


@dataclass(frozen=True)
class TableReference:
    database: str | None
    name: str
    start: int                  # offset of the reference's first character in the statement
    end: int                    # offset just past it (the time-travel clause included)
    version: int | None = None
    timestamp: str | None = None
    # the node in the tree it came from (a current_catalog() call's is the call)
    node: exp.Table | exp.CurrentCatalog | None = field(default=None, compare=False, repr=False)
    alias_at: int | None = None  # where an alias goes when the reference has none: after a TABLESAMPLE clause
    needs_alias: bool = True     # False: replaced inside an expression, where no alias may follow


def _cte_names(tree: exp.Expr) -> set[str]:
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def _end_of(node: exp.Expr) -> int | None:
    ends = [n.meta["end"] + 1 for n in node.walk() if n.meta.get("end") is not None]
    return max(ends) if ends else None


def time_travel(sql: str, table: exp.Table) -> tuple[int | None, str | None]:
    """The `VERSION AS OF n` / `TIMESTAMP AS OF 'ts'` of a reference: a literal, or an error at the clause."""
    version = table.args.get("version")
    if not isinstance(version, exp.Version):
        return None, None
    value = version.expression
    kind = str(version.this).upper()
    where = start_of(value) if value is not None else None
    line, column = line_column(sql, where) if where is not None else (None, None)
    if kind == "VERSION":
        if isinstance(value, exp.Literal) and value.name.strip().isdigit():
            return int(value.name), None
        raise TimeTravelSpecError("VERSION AS OF takes a version number", line=line, column=column,
                                  hint="write VERSION AS OF 3 (DESCRIBE HISTORY lists the versions)")
    if isinstance(value, exp.Literal) and value.is_string:
        return None, value.name
    raise TimeTravelSpecError("TIMESTAMP AS OF takes a literal timestamp", line=line, column=column,
                              hint="write TIMESTAMP AS OF 'YYYY-MM-DD HH:MM:SS'")


def _after_sample(sql: str, end: int) -> int:
    """The offset just past the `TABLESAMPLE (...)` that follows a reference ending at `end` (Spark wants the alias
    after it)."""
    return after_parentheses(sql, end)


def after_parentheses(sql: str, end: int) -> int:
    """The offset just past the parenthesised group that opens first after `end` (`end` when there is none)."""
    depth = 0
    for token in StreamingSpark().tokenize(sql[end:]):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return end + token.end + 1
    return end


def _parts(table: exp.Table) -> list[exp.Expr]:
    return [p for p in (table.args.get("catalog"), table.args.get("db"), table.this) if p is not None]


def _start(table: exp.Table) -> int | None:
    """Where the name begins in the text (the table's own meta: where a dropped catalog part began)."""
    return min((p.meta["start"] for p in (*_parts(table), table) if p.meta.get("start") is not None), default=None)


def table_references(sql: str, tree: exp.Expr | None = None) -> list[TableReference]:
    """Every table or view the statement names (CTE names, table functions and streaming sources excluded), in text
    order, each with the node it came from (in `tree` when given)."""
    tree = tree if tree is not None else parse(sql)
    ctes = _cte_names(tree)
    found: list[TableReference] = []
    for table in tree.find_all(exp.Table):
        if not table.name or (not table.db and table.name.lower() in ctes):
            continue
        if not isinstance(table.this, exp.Identifier) or isinstance(table.parent, exp.Stream):
            continue  # table functions and streaming sources are not catalog reads
        if _history_subquery(table) is not None:
            continue  # `(DESCRIBE HISTORY t)` reads t's log, not its rows: history_reads
        parts = _parts(table)
        start = _start(table)
        if start is None:
            continue  # not from the text: nothing the user named
        version, timestamp = time_travel(sql, table)
        ends = [_end_of(p) for p in (*parts, table.args.get("version")) if p is not None]
        end = max((e for e in ends if e is not None), default=start)
        alias_at = _after_sample(sql, end) if table.args.get("sample") is not None else end
        found.append(TableReference(table.db or None, table.name, start, end, version, timestamp, table, alias_at))
    return sorted(found, key=lambda ref: ref.start)


# What precedes a history subquery's table name: its opening parenthesis and the two keywords
_HISTORY_OPENING = re.compile(r"\(\s*desc(?:ribe)?\s+history\s*$", re.IGNORECASE)


def _history_subquery(table: exp.Table) -> exp.Subquery | None:
    """The subquery `(DESCRIBE HISTORY table)` the table is named in, if it is."""
    describe = table.parent
    if isinstance(describe, exp.Describe) and str(describe.args.get("style") or "").upper() == "HISTORY" \
            and isinstance(describe.parent, exp.Subquery):
        return describe.parent
    return None


def history_reads(sql: str, tree: exp.Expr) -> list[TableReference]:
    """Every `(DESCRIBE HISTORY t)` in FROM (Databricks reads a table's history as a relation): the table `t`
    names, its span the whole parenthesised subquery, so the binder puts a view over the history rows there."""
    found = []
    for table in tree.find_all(exp.Table):
        subquery = _history_subquery(table)
        start = _start(table)
        if subquery is None or start is None:
            continue
        opening = _HISTORY_OPENING.search(sql, 0, start)
        if opening is None:
            continue  # not as typed here (a comment between the keywords): Spark reports what it cannot read
        end = after_parentheses(sql, opening.start())
        found.append(TableReference(table.db or None, table.name, opening.start(), end, node=table,
                                    needs_alias=not subquery.alias))
    return sorted(found, key=lambda ref: ref.start)


def file_reads(sql: str, tree: exp.Expr) -> list[TableReference]:
    """Every batch `read_files(...)` in FROM (not under STREAM), its span running to the closing parenthesis."""
    return table_function_calls(sql, tree, "read_files")


def table_function_calls(sql: str, tree: exp.Expr, function_name: str) -> list[TableReference]:
    """Every call of the table function `function_name` in FROM (not under STREAM), its span running to the closing
    parenthesis."""
    found = []
    for table in tree.find_all(exp.Table):
        function = table.this
        if not isinstance(function, exp.Func) or table.find_ancestor(exp.Stream) is not None:
            continue
        name = function.name if isinstance(function, exp.Anonymous) else function.sql_name()
        start = function.meta.get("start")
        if name.lower() != function_name or start is None:
            continue
        end = after_parentheses(sql, function.meta.get("end", start) + 1)
        found.append(TableReference(None, function_name, start, end, node=table))
    return sorted(found, key=lambda ref: ref.start)


def current_catalog_calls(sql: str, tree: exp.Expr) -> list[TableReference]:
    """Every `current_catalog()` call, its span running to the closing parenthesis: Spark's would answer
    `spark_catalog`, so the binder puts the gateway's catalog name there. A call that is a column of the result by
    itself keeps Spark's column name, `current_catalog()`."""
    found = []
    for call in tree.find_all(exp.CurrentCatalog):
        start = call.meta.get("start")
        if start is None:
            continue
        end = after_parentheses(sql, call.meta.get("end", start) + 1)
        found.append(TableReference(None, "current_catalog()", start, end, node=call,
                                    needs_alias=isinstance(call.parent, exp.Select)))
    return sorted(found, key=lambda ref: ref.start)


@dataclass(frozen=True)
class FunctionCall:
    """A call of a function by a name Spark does not know as a built-in (sqlglot's `exp.Anonymous`), perhaps one of
    the catalog's SQL functions: `[[catalog.]schema.]name(args)`."""

    catalog: str | None
    database: str | None
    name: str
    start: int          # where the name starts (its first written part)
    name_end: int       # just past the name: the arguments follow
    end: int            # just past the closing parenthesis
    is_column: bool     # a column of the result by itself, unaliased: its name is the call as written


def _name_parts(node: exp.Expr) -> list[exp.Identifier] | None:
    """The identifiers of a dotted name (`a`, `a.b`), or None when `node` is anything else (a column, a call)."""
    if isinstance(node, exp.Identifier):
        return [node]
    if isinstance(node, exp.Dot):
        left, right = _name_parts(node.this), _name_parts(node.expression)
        return left + right if left is not None and right is not None else None
    return None


def function_calls(sql: str, tree: exp.Expr) -> list[FunctionCall]:
    """Every call of a function sqlglot does not know, with the one to three name parts written before its
    parentheses, in text order. Which of them are the catalog's functions is the binder's to ask."""
    found = []
    for call in tree.find_all(exp.Anonymous):
        start = call.meta.get("start")
        if start is None:
            continue
        outer: exp.Expr = call
        qualifier: list[exp.Identifier] = []
        if isinstance(call.parent, exp.Dot) and call.parent.expression is call:
            outer = call.parent
            parts = _name_parts(call.parent.this)
            if parts is None or len(parts) > 2 or any(p.meta.get("start") is None for p in parts):
                continue
            qualifier = parts
            start = min(p.meta["start"] for p in parts)
        names = [p.name for p in qualifier]
        catalog = names[0] if len(names) == 2 else None
        database = names[-1] if names else None
        end = after_parentheses(sql, call.meta.get("end", start) + 1)
        found.append(FunctionCall(catalog, database, call.name, start, call.meta.get("end", start) + 1, end,
                                  isinstance(outer.parent, exp.Select)))
    return sorted(found, key=lambda each: each.start)


def parameter_qualifiers(body: str, function: str, parameters: tuple[str, ...]) -> list[TableReference]:
    """In a SQL function's body, the `f` of each `f.p` naming the parameter `p` by the function's name `f` (as
    Databricks allows, to tell a parameter from a column): the binder puts the name Spark knows the function by."""
    found = []
    for column in parse(body).find_all(exp.Column):
        qualifier = column.args.get("table")
        if (isinstance(qualifier, exp.Identifier) and not column.args.get("db")
                and qualifier.name.lower() == function.lower() and column.name.lower() in parameters
                and qualifier.meta.get("start") is not None):
            found.append(TableReference(None, function, qualifier.meta["start"], qualifier.meta["end"] + 1,
                                        needs_alias=False))
    return sorted(found, key=lambda ref: ref.start)


def column_qualifiers(tree: exp.Expr) -> list[TableReference]:
    """The `catalog.schema.` or `schema.` before the table part of each column the statement names by its table's
    full name (dialect/qualified_columns.py), to be cut out: the binder reads each table as `<view> AS <name>`, where
    only `name.column` resolves."""
    found = []
    for column in qualified_columns(tree):
        parts = [column.args.get(key) for key in ("catalog", "db")]
        starts = [part.meta.get("start") for part in parts if part is not None]
        end = column.args["table"].meta.get("start")
        if end is None or None in starts or not starts:
            continue  # not from the text
        found.append(TableReference(None, column.table, min(starts), end, needs_alias=False))
    return sorted(found, key=lambda ref: ref.start)


@dataclass(frozen=True)
class Spliced:
    """`sql` is the statement with some references replaced; `to_original` maps an offset in it to an offset in the
    text as typed (inside a replacement: its reference's start, plus the distance, within the reference)."""

    sql: str
    _pieces: tuple[tuple[int, int, int], ...] = ()   # (start in sql, start in original, length in original)

    def to_original(self, offset: int) -> int:
        index = bisect_right([piece[0] for piece in self._pieces], offset) - 1
        if index < 0:
            return offset
        printed, original, length = self._pieces[index]
        return original + min(offset - printed, max(length - 1, 0))


def splice(sql: str, replacements: list[tuple[TableReference, str]]) -> Spliced:
    """`sql` with each reference's text (name and time-travel clause) replaced by the view that binds it, everything
    else kept as typed, so Spark reads exactly what the user wrote but for the names. A reference without an alias
    gets its own name as the alias, so that `name.column` still resolves."""
    pieces: list[tuple[int, int, int]] = []
    out: list[str] = []
    cursor = written = 0
    for ref, view in sorted(replacements, key=lambda item: item[0].start):
        if ref.start < cursor:
            raise ValueError("overlapping references")
        kept = sql[cursor:ref.start]
        pieces.append((written, cursor, len(kept)))
        out.append(kept)
        written += len(kept)
        pieces.append((written, ref.start, ref.end - ref.start))
        out.append(view)
        written += len(view)
        cursor = ref.end
        if ref.needs_alias and (ref.node is None or not ref.node.alias):
            alias_at = ref.alias_at if ref.alias_at is not None else ref.end
            between = sql[cursor:alias_at]
            pieces.append((written, cursor, len(between)))
            alias = f"{between} AS `{ref.name.replace('`', '``')}`"
            out.append(alias)
            written += len(alias)
            cursor = alias_at
    pieces.append((written, cursor, len(sql) - cursor))
    out.append(sql[cursor:])
    return Spliced("".join(out), tuple(pieces))
