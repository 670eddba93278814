"""Errors of warehouse statements, in Spark's error classes and SQLSTATEs where Spark has one."""

from __future__ import annotations

from sluicegate.storage.spark_errors import RuntimeQueryError


class WarehouseError(RuntimeQueryError):
    error_class = "WAREHOUSE_ERROR"
    sqlstate = "XX000"


class UnresolvedColumnError(WarehouseError):
    error_class = "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    sqlstate = "42703"


class IncompatibleDataError(WarehouseError):
    error_class = "INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST"
    sqlstate = "KD000"


class ColumnCountMismatchError(WarehouseError):
    error_class = "INSERT_COLUMN_ARITY_MISMATCH"
    sqlstate = "21S01"


class NotATableError(WarehouseError):
    error_class = "EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE"
    sqlstate = "42809"


class NotAViewError(WarehouseError):
    error_class = "EXPECT_VIEW_NOT_TABLE.NO_ALTERNATIVE"
    sqlstate = "42809"


class UnsupportedStatementError(WarehouseError):
    error_class = "UNSUPPORTED_FEATURE"
    sqlstate = "0A000"


class StreamingTableOperationError(WarehouseError):
    """A statement Databricks refuses on streaming tables (RENAME): the stream is bound to the table's name."""

    error_class = "STREAMING_TABLE_OPERATION_NOT_ALLOWED.UNSUPPORTED_OPERATION"
    sqlstate = "42601"
