"""Where a node stands in the statement: line and column (1-based) of its first character, taken from the token
offsets sqlglot keeps in `meta`, optionally moved back to the keyword that introduces it (ORDER BY, LIMIT, STREAM)."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token


def start_of(node: exp.Expr) -> int | None:
    starts = [n.meta["start"] for n in node.walk() if n.meta.get("start") is not None]
    return min(starts) if starts else None


def line_column(sql: str, offset: int) -> tuple[int, int]:
    line = sql.count("\n", 0, offset) + 1
    column = offset - (sql.rfind("\n", 0, offset) + 1) + 1
    return line, column


def keyword_before(tokens: list[Token], offset: int, *words: str) -> int | None:
    """Offset of the last token spelled as `words[0]` before `offset` (e.g. the ORDER of `ORDER BY x`)."""
    wanted = {w.upper() for w in words}
    found = None
    for token in tokens:
        if token.start >= offset:
            break
        if token.text.upper() in wanted or token.text.upper().split()[0] in wanted:
            found = token.start
    return found


def position(sql: str, tokens: list[Token], node: exp.Expr | None,
             keyword: tuple[str, ...] = ()) -> tuple[int | None, int | None]:
    if node is None:
        return None, None
    start = start_of(node)
    if start is None:
        return None, None
    if keyword:
        before = keyword_before(tokens, start, *keyword)
        start = before if before is not None else start
    return line_column(sql, start)
