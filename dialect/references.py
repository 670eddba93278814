"""The tables a statement reads, with where each reference stands in the statement's text.

The runtime binds every referenced catalog table to a pinned snapshot view by replacing the reference's text (name
and any `VERSION AS OF` / `TIMESTAMP AS OF` clause) and nothing else, so that Spark's error positions still point
into what the user typed once mapped back through `PositionMap`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from dialect.dialect import StreamingSpark
from dialect.errors import StatementSyntaxError

_TIME_TRAVEL = re.compile(
    r"\s+(?:FOR\s+)?(?:SYSTEM_)?(VERSION|TIMESTAMP)\s+AS\s+OF\s+('(?:[^'\\]|\\.)*'|\d+)", re.IGNORECASE
)


@dataclass(frozen=True)
class TableReference:
    database: str | None
    name: str
    start: int                  # offset of the reference's first character in the statement
    end: int                    # offset just past it (the time-travel clause included)
    version: int | None = None
    timestamp: str | None = None


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


def _span(table: exp.Table) -> tuple[int, int] | None:
    starts, ends = [], []
    for part in (table.args.get("catalog"), table.args.get("db"), table.args.get("this")):
        if isinstance(part, exp.Identifier) and part.meta.get("start") is not None:
            starts.append(part.meta["start"])
            ends.append(part.meta["end"] + 1)
    if not starts:
        return None
    return min(starts), max(ends)


def _quoted_extent(sql: str, start: int, end: int) -> tuple[int, int]:
    """Identifier spans exclude backquotes; the replaced text must include them."""
    if start > 0 and sql[start - 1] == "`":
        start -= 1
    if end < len(sql) and sql[end] == "`":
        end += 1
    return start, end


def table_references(sql: str, tree: exp.Expression | None = None) -> list[TableReference]:
    """Every table or view the statement names (CTE names excluded), in text order."""
    tree = tree if tree is not None else parse(sql)
    ctes = _cte_names(tree)
    found: list[TableReference] = []
    for table in tree.find_all(exp.Table):
        if not table.name or (not table.db and table.name.lower() in ctes):
            continue
        if isinstance(table.this, exp.Func) or isinstance(table.parent, exp.Stream):
            continue  # table functions and streaming sources are not catalog reads
        span = _span(table)
        if span is None:
            continue
        start, end = _quoted_extent(sql, *span)
        version = timestamp = None
        travel = _TIME_TRAVEL.match(sql, end)
        if travel and table.args.get("version") is not None:
            kind, value = travel.group(1).upper(), travel.group(2)
            if kind == "VERSION":
                version = int(value.strip("'"))
            else:
                timestamp = value[1:-1] if value.startswith("'") else value
            end = travel.end()
        found.append(TableReference(table.db or None, table.name, start, end, version, timestamp))
    return sorted(found, key=lambda ref: ref.start)


class PositionMap:
    """Maps offsets in a rewritten statement back to the original, given the replaced spans."""

    def __init__(self, original: str, replacements: list[tuple[int, int, str]]) -> None:
        pieces: list[str] = []
        self._new_starts: list[int] = []
        self._shifts: list[int] = []
        cursor = 0
        written = 0
        for start, end, text in sorted(replacements):
            pieces.append(original[cursor:start])
            written += start - cursor
            pieces.append(text)
            self._new_starts.append(written)
            self._shifts.append(start - written)
            written += len(text)
            self._new_starts.append(written)
            self._shifts.append(end - written)
            cursor = end
        pieces.append(original[cursor:])
        self.original = original
        self.rewritten = "".join(pieces)

    def to_original(self, offset: int) -> int:
        index = bisect_right(self._new_starts, offset) - 1
        return offset if index < 0 else offset + self._shifts[index]
