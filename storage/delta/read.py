"""Reading Delta tables: one committed version, pinned, read by Spark's native Parquet reader.

delta-rs replays the log to the file list of one version; Spark reads exactly those files with the table's schema
from the log (so column and predicate pruning work as for any Parquet table), restoring partition values from the
`key=value` folders the writers lay out. A reader bound to a version never sees a later commit, and never half a
commit: this is what makes every query see a consistent snapshot.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sluicegate.catalog.names import quote_identifier
from sluicegate.catalog.uris import is_object_uri
from sluicegate.storage.delta.errors import (
    DeltaTableNotFoundError,
    DeltaUnsupportedFeatureError,
    DeltaVersionNotFoundError,
)
from sluicegate.storage.delta.object_read import object_files_dataframe
from sluicegate.storage.delta.tables import is_delta_table, open_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# The field metadata that marks a column readers do not see: a materialized view's state
# (executor/materialized_views/incremental.py), kept beside its rows so that one commit changes both (delta-rs keeps
# field metadata; it refuses table properties of its own naming).
HIDDEN_FIELD_KEY = "sluicegate.hidden"

# Reader features whose files Spark's plain Parquet reader reads correctly.
SUPPORTED_READER_FEATURES = frozenset({"timestampNtz", "vacuumProtocolCheck", "v2Checkpoint", "typeWidening"})


@dataclass(frozen=True)
class Snapshot:
    path: str
    version: int
    files: tuple[str, ...]
    schema: pa.Schema
    partition_columns: tuple[str, ...]
    hidden: tuple[str, ...] = ()       # columns of the files that readers do not see (HIDDEN_FIELD_KEY)
    # the files' add actions with their statistics (delta-rs' flattened form, in the order of `files`), loaded when
    # first asked for: only a query with predicates needs them (storage/delta/skipping.py)
    add_actions: Callable[[], pa.Table] | None = dataclasses.field(default=None, compare=False, repr=False)


def hidden_columns(schema: pa.Schema) -> tuple[str, ...]:
    return tuple(f.name for f in schema if (f.metadata or {}).get(HIDDEN_FIELD_KEY.encode()) == b"true")


def hide(schema: pa.Schema, names: set[str]) -> pa.Schema:
    """`schema` with the columns `names` marked hidden."""
    return pa.schema([f.with_metadata({**(f.metadata or {}), HIDDEN_FIELD_KEY.encode(): b"true"})
                      if f.name in names else f for f in schema])


@dataclass(frozen=True)
class TableStatistics:
    size_bytes: int
    rows: int | None  # None when a file's statistics carry no record count


def table_statistics(path: str, version: int | None = None) -> TableStatistics:
    """A version's (default: the latest) size in bytes and row count, from the Delta log alone (no data file is
    read); the row count is None when a file has no statistics."""
    import pyarrow as pa


    actions = pa.table(open_table(path, version).get_add_actions(flatten=True))
    sizes = actions.column("size_bytes").to_pylist() if "size_bytes" in actions.column_names else []
    counts = actions.column("num_records").to_pylist() if "num_records" in actions.column_names else []
    rows = None if any(count is None for count in counts) or len(counts) != len(sizes) else sum(counts)
    return TableStatistics(sum(size or 0 for size in sizes), rows)


def load_snapshot(path: str, version: int | None = None, timestamp: dt.datetime | None = None) -> Snapshot:
    """The table at `path` as of `version` or `timestamp` (the latest version when neither is given)."""
    from deltalake.exceptions import DeltaError, TableNotFoundError


    if not is_delta_table(path):
        raise DeltaTableNotFoundError(f"no Delta table at {path}")
    try:
        table = open_table(path) if version is None else open_table(path, version=version)
        if timestamp is not None:
            table.load_as_version(timestamp)
    except TableNotFoundError as exc:
        raise DeltaTableNotFoundError(f"no Delta table at {path}") from exc
    except DeltaError as exc:
        latest = open_table(path).version()
        wanted = f"version {version}" if timestamp is None else f"timestamp {timestamp.isoformat()}"
        raise DeltaVersionNotFoundError(
            f"the table has no {wanted}: {exc}",
            hint=f"versions 0 to {latest} exist (DESCRIBE HISTORY lists them with their times)",
        ) from exc
    protocol = table.protocol()
    unsupported = set(protocol.reader_features or ()) - SUPPORTED_READER_FEATURES
    if unsupported:
        raise DeltaUnsupportedFeatureError(
            f"the table at {path} uses Delta reader features this gateway cannot read: "
            f"{', '.join(sorted(unsupported))}",
            hint="rewrite the table without them (for example disable deletion vectors and run OPTIMIZE)",
        )
    schema = pa.schema(table.schema().to_arrow())

    @cache
    def add_actions() -> pa.Table:
        return pa.table(table.get_add_actions(flatten=True))

    return Snapshot(
        path=path,
        version=table.version(),
        files=tuple(table.file_uris()),
        schema=schema,
        partition_columns=tuple(table.metadata().partition_columns),
        hidden=hidden_columns(schema),
        add_actions=add_actions,
    )


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

