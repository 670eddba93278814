"""Small command outputs (listings, DESCRIBE rows) as an in-memory result with Spark's column names and types."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from sluicegate.engine.results import ResultColumn, wire_arrow_type
from sluicegate.engine.sql import ListBatchSource, StatementResult


def rows_result(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> StatementResult:
    specs = [ResultColumn(name, type_name) for name, type_name in columns]
    arrays = [pa.array([row[i] for row in rows], type=wire_arrow_type(t)) for i, (_, t) in enumerate(columns)]
    batch = pa.RecordBatch.from_arrays(arrays, names=[f"_c{i}" for i in range(len(columns))])
    return StatementResult(specs, lambda: ListBatchSource([batch]))


def no_result() -> StatementResult:
    return StatementResult([], lambda: ListBatchSource(()))


def modified(rows: int) -> StatementResult:
    """A DML statement's result: no rows, the count of rows it inserted, updated or deleted."""
    return StatementResult([], lambda: ListBatchSource(()), modified_rows=rows)
