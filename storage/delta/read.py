"""Reading Delta tables: one committed version, pinned, read by Spark's native Parquet reader.

delta-rs replays the log to the file list of one version (storage/delta/snapshots.py); Spark reads exactly those
files with the table's schema from the log (so column and predicate pruning work as for any Parquet table),
restoring partition values from the `key=value` folders the writers lay out. A reader bound to a version never sees
a later commit, and never half a commit: this is what makes every query see a consistent snapshot.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sluicegate.catalog.names import quote_identifier
from sluicegate.catalog.uris import is_object_uri
from sluicegate.storage.delta.object_read import object_files_dataframe
from sluicegate.storage.delta.snapshots import Snapshot
from sluicegate.storage.delta.tables import open_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class TableStatistics:
    size_bytes: int
    rows: int | None  # None when a file's statistics carry no record count


def table_statistics(path: str, version: int | None = None) -> TableStatistics:
    """A version's (default: the latest) size in bytes and row count, from the Delta log alone (no data file is
    read); the row count is None when a file has no statistics."""
    actions = pa.table(open_table(path, version).get_add_actions(flatten=True))
    sizes = actions.column("size_bytes").to_pylist() if "size_bytes" in actions.column_names else []
    counts = actions.column("num_records").to_pylist() if "num_records" in actions.column_names else []
    rows = None if any(count is None for count in counts) or len(counts) != len(sizes) else sum(counts)
    return TableStatistics(sum(size or 0 for size in sizes), rows)


def spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    # delta-rs hands out large (64-bit offset) string and binary types; Spark's are the same logical types.
    fields = []
    for field in schema:
        kind = field.type
        if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
            kind = pa.string()
        elif pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind):
            kind = pa.binary()
        fields.append(pa.field(field.name, kind, field.nullable, field.metadata))
    return from_arrow_schema(pa.schema(fields))


def snapshot_dataframe(spark: SparkSession, snapshot: Snapshot, source_file: str | None = None) -> DataFrame:
    """A DataFrame over exactly the files of `snapshot`, with the table's schema and column order (its hidden
    columns left out). `source_file`: the name of one more column holding the URI of each row's file (what
    DELETE, UPDATE and MERGE rewrite by): `input_file_name()` for Spark's reader, the object reader's own column."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    schema = spark_schema(snapshot.schema)
    columns = [quote_identifier(name) for name in schema.fieldNames() if name not in snapshot.hidden]
    if not snapshot.files:
        empty = spark.createDataFrame([], schema).select(*columns)
        return empty if source_file is None else empty.withColumn(source_file, F.lit(None).cast("string"))
    if is_object_uri(snapshot.path):
        visible = [field for field in schema.fields if field.name not in snapshot.hidden]
        if source_file is not None:
            visible.append(StructField(source_file, StringType(), False))
        return object_files_dataframe(spark, snapshot.path, snapshot.files, snapshot.partition_columns,
                                      StructType(visible), with_source_file=source_file is not None)
    if source_file is not None:
        return snapshot_dataframe(spark, snapshot).withColumn(source_file, F.input_file_name())
    paths = [uri[len("file://"):] if uri.startswith("file://") else uri for uri in snapshot.files]
    if not snapshot.partition_columns:
        frame = spark.read.schema(schema).parquet(*paths)
        # every column in order needs no projection (each column named costs Py4J calls)
        return frame if len(columns) == len(schema.fields) else frame.select(*columns)
    # Partition values come from the `key=value` folders under each write's own folder (`_sg_write_*`): one
    # partition discovery per such root, since Spark refuses several roots in one read.
    table_root = snapshot.path if "://" in snapshot.path else os.path.abspath(snapshot.path)
    roots: dict[str, list[str]] = {}
    for path in paths:
        parts = os.path.relpath(path, table_root).split(os.sep) if path.startswith(table_root) else [path]
        first = next((i for i, part in enumerate(parts) if "=" in part), 0)
        roots.setdefault(os.path.join(table_root, *parts[:first]), []).append(path)
    frames = [spark.read.schema(schema).option("basePath", root).parquet(*files).select(*columns)
              for root, files in roots.items()]
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


_FrameKey = tuple[str, int, tuple[str, ...], "str | None"]
_SNAPSHOT_FRAMES: weakref.WeakKeyDictionary[Any, OrderedDict[_FrameKey, DataFrame]] = weakref.WeakKeyDictionary()
_SNAPSHOT_FRAMES_PER_SESSION = 64
_snapshot_frames_lock = threading.Lock()


def pinned_dataframe(spark: SparkSession, snapshot: Snapshot, source_file: str | None = None) -> DataFrame:
    """`snapshot_dataframe`, remembered per Spark session, table and version: a committed version never changes,
    and building its DataFrame costs tens of Py4J calls, paid once instead of by every query (the last 64 per
    session are kept). The file list is part of the key: a table dropped and created again at the same place starts
    over at version 0 with other files."""
    key = (snapshot.path, snapshot.version, snapshot.files, source_file)
    with _snapshot_frames_lock:
        frames = _SNAPSHOT_FRAMES.setdefault(spark, OrderedDict())
        frame = frames.get(key)
        if frame is not None:
            frames.move_to_end(key)
            return frame
    frame = snapshot_dataframe(spark, snapshot, source_file)
    with _snapshot_frames_lock:
        frames[key] = frame
        while len(frames) > _SNAPSHOT_FRAMES_PER_SESSION:
            frames.popitem(last=False)
    return frame

