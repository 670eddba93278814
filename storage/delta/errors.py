"""Errors of the Delta data path: runtime errors with their own error classes and SQLSTATEs."""

from __future__ import annotations

from sluicegate.storage.spark_errors import RuntimeQueryError


class DeltaError(RuntimeQueryError):
    error_class = "DELTA_ERROR"
    sqlstate = "XX000"


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


class DeltaFilesNotVisibleError(DeltaError):
    """The rows Spark wrote are not all in the files the driver sees: executors wrote to a disk of their own. Nothing
    is committed, so no table ever points at files that are not there."""

    error_class = "DELTA_FILES_NOT_VISIBLE"
    sqlstate = "58030"
