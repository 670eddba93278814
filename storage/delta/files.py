"""The files a write produced, as the Delta log describes them: where each lies, its partition values (from its
Hive-style folder), its statistics (from its Parquet footer, in Delta's JSON), and what a failed write reports. Below
both the local writer (write.py) and the object-store one (object_write.py), which share all of it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow.parquet as pq

from sluicegate.storage.delta.errors import DeltaWriteError
from sluicegate.storage.spark_errors import RuntimeQueryError, from_spark, short_message

HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


@dataclass(frozen=True)
class WrittenFile:
    path: str                      # relative to the table root
    size: int
    modification_time: int         # ms
    partition_values: dict[str, str | None]
    stats: str                     # Delta's JSON statistics


def partition_values(relative_dir: str) -> dict[str, str | None]:
    values: dict[str, str | None] = {}
    for part in Path(relative_dir).parts:
        key, sep, value = part.partition("=")
        if sep:
            value = unquote(value)
            values[unquote(key)] = None if value == HIVE_DEFAULT_PARTITION else value
    return values


def json_value(value: Any) -> Any:
    """A statistic as Delta writes it in JSON (an ISO time, UTC when it has no zone; no bytes, no NaN)."""
    if isinstance(value, bytes):
        return None  # Delta keeps no min/max for binary columns
    if hasattr(value, "isoformat"):
        text = value.isoformat()
        return text if getattr(value, "tzinfo", None) is not None or "T" not in text else text + "Z"
    if isinstance(value, float) and value != value:  # NaN has no place in min/max
        return None
    return value


def _leaf_paths(schema: Any) -> dict[str, tuple[str, ...]]:
    """Parquet leaf column path -> field path, for leaves reached through structs only (Delta keeps no min/max
    inside lists or maps). A window struct's `start` and `end` get statistics, so MERGE and reads can skip files."""
    import pyarrow as pa

    leaves: dict[str, tuple[str, ...]] = {}

    def walk(field: Any, path: tuple[str, ...]) -> None:
        if pa.types.is_struct(field.type):
            for child in field.type:
                walk(child, (*path, child.name))
        elif not pa.types.is_nested(field.type):
            leaves[".".join(path)] = path

    for field in schema:
        walk(field, (field.name,))
    return leaves


def _put(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for part in path[:-1]:
        tree = tree.setdefault(part, {})
    tree[path[-1]] = value


def file_stats(path: str) -> str:
    """numRecords, and per column (struct fields nested as Delta writes them) nullCount/minValues/maxValues from the
    Parquet footer (no data read)."""
    return metadata_stats(pq.read_metadata(path))


def metadata_stats(metadata: pq.FileMetaData) -> str:
    """Delta's JSON statistics of a Parquet file from its footer (`file_stats`), or from the FileMetaData a writer
    holds in memory once it has closed the file (storage/delta/object_write.py: no second read from the store)."""
    stats: dict[str, Any] = {"numRecords": metadata.num_rows, "minValues": {}, "maxValues": {}, "nullCount": {}}
    leaves = _leaf_paths(metadata.schema.to_arrow_schema())
    for index in range(metadata.num_columns):
        groups = [metadata.row_group(g).column(index) for g in range(metadata.num_row_groups)]
        field_path = leaves.get(groups[0].path_in_schema) if groups else None
        if field_path is None or not all(column.is_stats_set for column in groups):
            continue
        nulls = 0
        minimum = maximum = None
        for column in groups:
            statistics = column.statistics
            nulls += statistics.null_count or 0
            if statistics.has_min_max:
                minimum = statistics.min if minimum is None else min(minimum, statistics.min)
                maximum = statistics.max if maximum is None else max(maximum, statistics.max)
        _put(stats["nullCount"], field_path, nulls)
        if minimum is not None and json_value(minimum) is not None:
            _put(stats["minValues"], field_path, json_value(minimum))
            _put(stats["maxValues"], field_path, json_value(maximum))
    return json.dumps(stats, default=str)


def list_written_files(table_path: str, staging: str) -> list[WrittenFile]:
    root = os.path.join(table_path, staging)
    files = []
    for directory, folders, names in os.walk(root):
        # a task's uncommitted output: it reached the driver's disk only if the job commit failed halfway
        folders[:] = [folder for folder in folders if folder != "_temporary"]
        for name in sorted(names):
            if not name.endswith(".parquet") or name.startswith(("_", ".")):
                continue
            full = os.path.join(directory, name)
            if pq.read_metadata(full).num_rows == 0:
                os.remove(full)  # Spark writes a schema-only file for an empty input; it would only cost readers
                continue
            status = os.stat(full)
            files.append(WrittenFile(
                path=os.path.relpath(full, table_path),
                size=status.st_size,
                modification_time=int(status.st_mtime * 1000),
                partition_values=partition_values(os.path.relpath(directory, root)),
                stats=file_stats(full),
            ))
    return files


def write_error(exc: BaseException, table_path: str) -> RuntimeQueryError:
    """What a failed file write reports. The write job runs the whole query, so an error of the query itself (a bad
    cast under ANSI mode, a division by zero) surfaces here: it carries Spark's error class and reads as itself
    (CAST_INVALID_INPUT, 22018), not as a write failure. Only a failure without one is the write's."""
    error = from_spark(exc)
    if error.error_class not in ("SPARK_ERROR", "INTERNAL_ERROR"):
        return error
    return DeltaWriteError(f"writing data files for {table_path} failed: {short_message(str(exc))}")
