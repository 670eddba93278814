"""Small command outputs (listings, DESCRIBE rows) as an in-memory result with Spark's column names and types."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from sluicegate.engine.results import ResultColumn, WireTypes, wire_arrow_type
from sluicegate.engine.sql import BatchSource, ListBatchSource, StatementResult


def rows_result(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> StatementResult:
    specs = [ResultColumn(name, type_name) for name, type_name in columns]
    arrays = [pa.array([row[i] for row in rows], type=wire_arrow_type(t)) for i, (_, t) in enumerate(columns)]
    batch = pa.RecordBatch.from_arrays(arrays, names=[f"_c{i}" for i in range(len(columns))])
    return StatementResult(specs, lambda: ListBatchSource([batch]))


def typed_rows_result(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]],
                      arrow_types: Mapping[int, pa.DataType]) -> StatementResult:
    """`rows_result` for rows whose values at the positions of `arrow_types` are Python values of an array, map or
    struct (lists, dicts) or a timestamp (an aware datetime). A HiveServer2 client reads them as text, as Spark's
    server sends them (JSON as Spark's to_json writes it; a timestamp to the millisecond); a client whose
    `WireTypes` keeps the column's type family natively (the Databricks connector) gets Arrow values: a list, a
    dict, a datetime, as Databricks answers (dbt-databricks' suite compares DESCRIBE DETAIL's `partitionColumns`
    with a list)."""
    text_rows = [tuple(_as_text(value) if index in arrow_types else value for index, value in enumerate(row))
                 for row in rows]
    result = rows_result(columns, text_rows)

    def open_typed(types: WireTypes) -> tuple[pa.Schema, BatchSource]:
        native = {index: arrow for index, arrow in arrow_types.items() if types.keeps(columns[index][1])}
        if not native:
            return result.open()
        arrays = [pa.array([_as_arrow(row[index], native[index]) for row in rows], type=native[index])
                  if index in native else pa.array([row[index] for row in text_rows], type=wire_arrow_type(type_name))
                  for index, (_, type_name) in enumerate(columns)]
        batch = pa.RecordBatch.from_arrays(arrays, names=[f"_c{index}" for index in range(len(columns))])
        return batch.schema, ListBatchSource([batch])

    result.open_typed = open_typed
    return result


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return json.dumps(value, separators=(",", ":"))


def _as_arrow(value: Any, arrow: pa.DataType) -> Any:
    """A map's dict as the key-value pairs pyarrow builds a map from; anything else as it is."""
    if isinstance(value, dict) and pa.types.is_map(arrow):
        return list(value.items())
    return value


def no_result() -> StatementResult:
    return StatementResult([], lambda: ListBatchSource(()))


def modified(rows: int) -> StatementResult:
    """A DML statement's result: no rows, the count of rows it inserted, updated or deleted."""
    return StatementResult([], lambda: ListBatchSource(()), modified_rows=rows)
