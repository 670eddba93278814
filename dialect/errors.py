"""The project's one error root, and the errors found in a statement before anything runs.

`SqlError` lives here because `dialect` is the lowest layer: every layer above, and the clients in `gateway/shell`,
subclass it (this module imports nothing but the standard library), so one `isinstance` tells a user's error from a
gateway bug, and `gateway/thrift/convert.py` maps every one of them to the wire at one place.
"""

from __future__ import annotations


class SqlError(Exception):
    """A user-facing error: a stable `error_class` (UPPER_SNAKE), a 5-character SQLSTATE, the message, what to do
    instead (`hint`) and, where the statement has one, the 1-based line and column. Subclasses fix the class and
    SQLSTATE; an instance may override both (Spark's own pass through that way)."""

    error_class = "INTERNAL_ERROR"
    sqlstate = "XX000"

    def __init__(
        self,
        message: str,
        *,
        error_class: str | None = None,
        sqlstate: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if error_class is not None:
            self.error_class = error_class
        if sqlstate is not None:
            self.sqlstate = sqlstate
        self.line = line
        self.column = column
        self.hint = hint
        self.detail = detail


class DialectError(SqlError):
    error_class = "INVALID_STATEMENT"
    sqlstate = "42000"


class StatementSyntaxError(DialectError):
    error_class = "PARSE_SYNTAX_ERROR"
    sqlstate = "42601"
