"""Errors as a psql user reads them: `ERROR [SQLSTATE] error_class: message`, the statement line with a caret under
the position, then the hint.

The server sends one text (gateway/thrift/convert.py `describe`): `[ERROR_CLASS] message`, then
`  at line L, column C:` with its own excerpt, then `  hint: ...`. The shell takes the fields back out of it and
draws the caret itself from the statement as typed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CLASS = re.compile(r"^\[(?P<cls>[A-Za-z0-9_.]+)\]\s*")
_POSITION = re.compile(r"\n\s*at line (?P<line>\d+), column (?P<column>\d+):?(?:\n {4}[^\n]*\n {4} *\^)?")
_SQLSTATE_SUFFIX = re.compile(r"\s*SQLSTATE: [0-9A-Z]{5}\.?(?=;|$)", re.MULTILINE)  # Spark's, shown once already
_HINT = re.compile(r"\n\s*hint: (?P<hint>[^\n]*)")


@dataclass(frozen=True)
class ErrorReport:
    sqlstate: str
    error_class: str
    message: str
    line: int | None = None
    column: int | None = None
    hint: str | None = None


def parse_error(exc: BaseException) -> ErrorReport:
    """The fields of any error with the gateway's attributes, reading those the server folded into the text."""
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    error_class = getattr(exc, "error_class", None) or "ERROR"
    line, column, hint = getattr(exc, "line", None), getattr(exc, "column", None), getattr(exc, "hint", None)
    match = _CLASS.match(text)
    if match:
        error_class, text = match.group("cls"), text[match.end():]
    match = _POSITION.search(text)
    if match:
        line, column = int(match.group("line")), int(match.group("column"))
        text = text[:match.start()] + text[match.end():]
    match = _HINT.search(text)
    if match:
        hint = match.group("hint")
        text = text[:match.start()] + text[match.end():]
    text = _SQLSTATE_SUFFIX.sub("", text)
    return ErrorReport(getattr(exc, "sqlstate", None) or "XX000", error_class, text.strip(), line, column, hint)


def caret_lines(statement: str, line: int, column: int) -> list[str]:
    """`LINE n: text` and a caret under column `column` (1-based), as psql shows a position."""
    lines = statement.splitlines()
    if not 1 <= line <= len(lines):
        return []
    text = lines[line - 1]
    prefix = f"LINE {line}: "
    if len(text) > 160:  # keep the caret on screen: a window around the column
        start = max(0, column - 80)
        text, column = "..." + text[start:start + 160], column - start + 3
    return [prefix + text, " " * (len(prefix) + max(column - 1, 0)) + "^"]


def format_error(exc: BaseException, statement: str | None = None) -> str:
    report = parse_error(exc)
    lines = [f"ERROR [{report.sqlstate}] {report.error_class}: {report.message}"]
    if report.line is not None and report.column is not None:
        excerpt = caret_lines(statement, report.line, report.column) if statement else []
        lines += excerpt or [f"at line {report.line}, column {report.column}"]
    if report.hint:
        lines.append(f"HINT: {report.hint}")
    return "\n".join(lines)
