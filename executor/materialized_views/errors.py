"""Errors of materialized views that both their statements (CREATE checks the refresh policy) and their refresh
(INCREMENTAL STRICT refuses a full recompute) raise."""

from __future__ import annotations

from sluicegate.storage.spark_errors import RuntimeQueryError


class NotIncrementalizableError(RuntimeQueryError):
    error_class = "MATERIALIZED_VIEW_NOT_INCREMENTALIZABLE"
    sqlstate = "42000"


class UnversionedInputError(RuntimeQueryError):
    error_class = "MATERIALIZED_VIEW_INPUT_NOT_VERSIONED"
    sqlstate = "42000"
