"""Errors of the Delta data path, in the shape the gateway reports (error class, SQLSTATE, message, hint)."""

from __future__ import annotations


class DeltaError(Exception):
    error_class = "DELTA_ERROR"
    sqlstate = "XX000"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.line: int | None = None
        self.column: int | None = None


class DeltaWriteError(DeltaError):
    error_class = "DELTA_WRITE_FAILED"
    sqlstate = "58030"


class DeltaCommitConflictError(DeltaError):
    error_class = "DELTA_CONCURRENT_WRITE"
    sqlstate = "40001"


class DeltaTableNotFoundError(DeltaError):
    error_class = "DELTA_TABLE_NOT_FOUND"
    sqlstate = "42P01"


class DeltaVersionNotFoundError(DeltaError):
    error_class = "DELTA_VERSION_NOT_FOUND"
    sqlstate = "22023"


class DeltaUnsupportedFeatureError(DeltaError):
    error_class = "DELTA_UNSUPPORTED_FEATURE"
    sqlstate = "0A000"
