"""Errors found in a statement before anything runs: each with an error class, a SQLSTATE and a position."""

from __future__ import annotations


class DialectError(Exception):
    error_class = "INVALID_STATEMENT"
    sqlstate = "42000"

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint


class StatementSyntaxError(DialectError):
    error_class = "PARSE_SYNTAX_ERROR"
    sqlstate = "42601"
