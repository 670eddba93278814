"""Errors of warehouse statements, in Spark's error classes and SQLSTATEs where Spark has one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sluicegate.dialect.errors import SqlError
from sluicegate.storage.spark_errors import RuntimeQueryError, from_spark


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


@contextmanager
def spark_errors(include_stack_trace: bool) -> Iterator[None]:
    """Errors leaving the block typed: a typed one as it is, any other (Spark's, py4j's) through `from_spark`. For the
    steps a handler must undo itself before the error leaves it (the executor converts what reaches it, with the
    statement's positions)."""
    try:
        yield
    except SqlError:
        raise
    except Exception as exc:
        raise from_spark(exc, include_stack_trace=include_stack_trace) from exc
