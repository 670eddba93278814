"""The tables a statement reads, as nodes of sqlglot's tree, and the tree printed back as Spark SQL with a map from
offsets in the printed text to offsets in what the user typed.

The runtime binds every referenced catalog table to a pinned snapshot view by changing the `exp.Table` node (its
name, and the time-travel clause it has read) and printing the tree again; `generate` proves the printed text reads
back as the same tree (else it refuses, rather than run something else) and keeps every node's original offset, so
that Spark's error positions still point into what the user typed.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from dialect.dialect import StreamingSpark
from dialect.errors import DialectError, StatementSyntaxError
from dialect.streaming.positions import line_column, start_of


class TimeTravelSpecError(DialectError):
    error_class = "INVALID_TIME_TRAVEL_SPEC"
    sqlstate = "42K0E"


class RewriteError(DialectError):
    """The tree, once changed, does not print as text that reads back as the same tree: nothing runs."""

    error_class = "UNSUPPORTED_QUERY_REWRITE"
    sqlstate = "0A000"


@dataclass(frozen=True)
class TableReference:
    database: str | None
    name: str
    start: int                  # offset of the reference's first character in the statement
    end: int                    # offset just past it (the time-travel clause included)
    version: int | None = None
    timestamp: str | None = None
    node: exp.Table | None = field(default=None, compare=False, repr=False)   # the node in the tree it came from


def parse(sql: str) -> exp.Expression:
    try:
        tree = sqlglot.parse_one(sql, read=StreamingSpark)
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        raise StatementSyntaxError(
            str(first.get("description") or exc).split(". Line")[0],
            line=first.get("line"), column=first.get("col"),
        ) from exc
    except TokenError as exc:  # an unterminated quote or comment: sqlglot gives no position
        raise StatementSyntaxError(str(exc), hint="check the quotes and comments") from exc
    if tree is None:
        raise StatementSyntaxError("the statement is empty")
    return tree


def _cte_names(tree: exp.Expression) -> set[str]:
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def _end_of(node: exp.Expression) -> int | None:
    ends = [n.meta["end"] + 1 for n in node.walk() if n.meta.get("end") is not None]
    return max(ends) if ends else None


def _time_travel(sql: str, table: exp.Table) -> tuple[int | None, str | None]:
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


def table_references(sql: str, tree: exp.Expression | None = None) -> list[TableReference]:
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
        parts = [p for p in (table.args.get("catalog"), table.args.get("db"), table.this) if p is not None]
        start = min((p.meta["start"] for p in parts if p.meta.get("start") is not None), default=None)
        if start is None:
            continue  # not from the text: nothing the user named
        version, timestamp = _time_travel(sql, table)
        ends = [_end_of(p) for p in (*parts, table.args.get("version")) if p is not None]
        end = max((e for e in ends if e is not None), default=start)
        found.append(TableReference(table.db or None, table.name, start, end, version, timestamp, table))
    return sorted(found, key=lambda ref: ref.start)


def point_at(ref: TableReference, view: str) -> None:
    """Make the reference's node name `view`: its alias kept, or the table's own name made the alias so that
    `name.column` resolves; the time-travel clause (already read) dropped. The new name carries the whole
    reference's span, so an error Spark reports at the view points at the reference as typed."""
    table = ref.node
    if table is None:
        raise ValueError("the reference has no node to change")
    identifier = exp.to_identifier(view)
    identifier.meta.update(start=ref.start, end=ref.end - 1)
    table.set("this", identifier)
    table.set("db", None)
    table.set("catalog", None)
    table.set("version", None)
    if not table.alias:
        alias = table.args.get("alias")
        columns = alias.args.get("columns") if isinstance(alias, exp.TableAlias) else None
        name = exp.to_identifier(ref.name, quoted=True)
        name.meta.update(start=ref.end, end=ref.end - 1)  # written, not typed: the text after it maps on as is
        table.set("alias", exp.TableAlias(this=name, columns=columns))


# Private-use characters: a marker is _OPEN + a point's number + _CLOSE, printed before a node's text (the point is
# the node's start in the original) and, for one-token nodes (identifiers, literals), after it (the point is its end).
_OPEN, _CLOSE = "\ue000", "\ue001"
_ONE_TOKEN = (exp.Identifier, exp.Literal)


@dataclass(frozen=True)
class Generated:
    """`sql` is the printed tree; `to_original` maps an offset in it to an offset in the text the tree was parsed
    from (the nearest node before it that came from the text, plus the distance to it)."""

    sql: str
    _printed: tuple[int, ...] = ()
    _original: tuple[int, ...] = ()
    _length: int = 0

    def to_original(self, offset: int) -> int:
        index = bisect_right(self._printed, offset) - 1
        if index < 0:
            return min(offset, self._length)
        return min(self._original[index] + offset - self._printed[index], self._length)


class _MarkingGenerator(StreamingSpark.Generator):
    """Prints markers around the nodes tagged with `meta["sg_mark"]` (the nodes with an offset in the text)."""

    def sql(self, expression: object, key: str | None = None, comment: bool = True) -> str:
        text = super().sql(expression, key, comment)  # type: ignore[arg-type]
        if key is None and isinstance(expression, exp.Expression) and expression.meta.get("sg_mark") is not None:
            mark = expression.meta["sg_mark"]
            text = f"{_OPEN}{mark}{_CLOSE}{text}"
            if expression.meta.get("sg_end") is not None:
                text += f"{_OPEN}{expression.meta['sg_end']}{_CLOSE}"
        return text


def _unmark(marked: str, points: list[int]) -> tuple[str, list[tuple[int, int]]]:
    """The text without markers, and (offset in it, offset in the original) at every marker."""
    pieces: list[str] = []
    found: list[tuple[int, int]] = []
    cursor = written = 0
    while (open_at := marked.find(_OPEN, cursor)) >= 0:
        close_at = marked.index(_CLOSE, open_at)
        pieces.append(marked[cursor:open_at])
        written += open_at - cursor
        found.append((written, points[int(marked[open_at + 1:close_at])]))
        cursor = close_at + 1
    pieces.append(marked[cursor:])
    return "".join(pieces), found


def generate(tree: exp.Expression, original: str) -> Generated:
    """`tree` as Spark SQL, with offsets mapped back into `original` by the nodes' `meta` start offsets.

    Raises RewriteError when the text does not read back as `tree`: sqlglot could not print some construct
    faithfully, and running the text could mean running something else. When the markers change what is printed
    (they never should), the text still runs, with offsets mapped to the start of the statement.
    """
    sql = tree.sql(dialect=StreamingSpark)
    try:
        reread = parse(sql)
    except StatementSyntaxError as exc:
        raise RewriteError(f"the gateway cannot print this query back for Spark ({exc.message})",
                           hint="simplify the construct, or report the query to the gateway's maintainers") from exc
    if reread != tree:
        raise RewriteError("the gateway cannot print this query back for Spark without changing it",
                           hint="simplify the construct, or report the query to the gateway's maintainers")
    if _OPEN in original or _CLOSE in original:
        return Generated(sql, _length=len(original))
    tagged = tree.copy()
    offsets: list[int] = []
    for node in tagged.walk():
        if node.meta.get("start") is not None:
            node.meta["sg_mark"] = len(offsets)
            offsets.append(node.meta["start"])
            if isinstance(node, _ONE_TOKEN) and node.meta.get("end") is not None:
                node.meta["sg_end"] = len(offsets)
                offsets.append(node.meta["end"] + 1)
    marked = _MarkingGenerator(dialect=StreamingSpark()).generate(tagged)
    unmarked, points = _unmark(marked, offsets)
    if unmarked != sql:
        return Generated(sql, _length=len(original))
    printed, at = zip(*points) if points else ((), ())
    return Generated(sql, tuple(printed), tuple(at), len(original))
