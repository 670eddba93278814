"""The Delta source: a catalog table read as a stream, version by version (Spark Python data source `sg_delta`).

Offsets are Delta versions. A new stream's first micro-batch, (START, end], reads the table as of version `end` (its
snapshot's files, whatever history led there: a table fully refreshed before the stream began is read as it is now);
each later micro-batch covering versions (start, end] reads exactly the data files those commits added, so every row
is read once, and a restart resumes from the versions in the stream's checkpoint (a replayed batch reads the same
files). Only appends can be streamed: a commit that removes data files rewrote rows in place (UPDATE, DELETE, MERGE,
OVERWRITE, an update-mode streaming table), and re-reading them would count them twice; that stops the stream with a
clear error.
Files are read with pyarrow on the executors, partition values restored from the commit's add actions. A table on
the warehouse's object store is read the same way through the store's pyarrow filesystem: its settings ride on a
subclass of the source pickled by value (never on an option, which Spark shows in plans), and each Python process
that plans or reads registers them for the table (storage/registry.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from sluicegate.catalog.uris import is_object_uri
from sluicegate.engine.streams.errors import SourceRewrittenError
from sluicegate.engine.streams.store_sources import register_carrying
from sluicegate.storage.settings import ObjectStoreSettings

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

FORMAT_NAME = "sg_delta"
SKIP_OPTION = "skipChangeCommits"     # skip commits that removed files instead of failing
READER_OPTION = "readerTable"         # the streaming table that reads: named in the rewrite error's hint
START = -1                     # the offset before version 0: a new stream reads the snapshot it starts at
FILES_PER_PARTITION = 16


@dataclass(frozen=True)
class AddedFile:
    path: str                  # absolute
    partition_values: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class FilesPartition(InputPartition):
    files: tuple[AddedFile, ...]


def _log_file(table_path: str, version: int) -> str:
    if is_object_uri(table_path):
        return f"{table_path.rstrip('/')}/_delta_log/{version:020d}.json"
    return os.path.join(table_path, "_delta_log", f"{version:020d}.json")


def _log_lines(table_path: str, version: int) -> list[str]:
    """The commit file of `version` (FileNotFoundError when the log no longer holds it)."""
    if not is_object_uri(table_path):
        with open(_log_file(table_path, version), encoding="utf-8") as log:
            return log.readlines()
    from pyarrow.fs import FileType

    from sluicegate.storage.files import filesystem

    fs, path = filesystem(_log_file(table_path, version))
    if fs.get_file_info(path).type != FileType.File:
        raise FileNotFoundError(path)
    with fs.open_input_stream(path) as stream:
        return stream.read().decode("utf-8").splitlines()


def _absolute(table_path: str, path: str) -> str:
    if "://" in path:
        return path[len("file://"):] if path.startswith("file://") else path
    if is_object_uri(table_path):
        return f"{table_path.rstrip('/')}/{unquote(path)}"
    return os.path.join(table_path, unquote(path))


def added_files(table_path: str, version: int, skip_change_commits: bool = False,
                reader: str | None = None) -> list[AddedFile]:
    """The data files commit `version` added; when it removed any (rows rewritten, not appended), none if
    `skip_change_commits` (the whole commit is skipped, as Databricks' reader option does), else an error naming
    what `reader` (the streaming table reading it) can do."""
    try:
        actions = [json.loads(line) for line in _log_lines(table_path, version) if line.strip()]
    except FileNotFoundError as exc:
        raise SourceRewrittenError(
            f"the Delta log of {table_path} no longer holds version {version}; the stream cannot resume there",
            hint="recreate the streaming table (CREATE OR REFRESH) to read the source from its current state",
        ) from exc
    removed = [a["remove"] for a in actions if "remove" in a and a["remove"].get("dataChange", True)]
    if removed and skip_change_commits:
        return []
    if removed:
        info = next((a["commitInfo"] for a in actions if "commitInfo" in a), {})
        operation = info.get("sluicegate.operation") or info.get("operation")  # the gateway's SQL verb first
        target = reader or "the table that streams from it"
        raise SourceRewrittenError(
            f"version {version} of the Delta table at {table_path} rewrote rows in place"
            f"{f' ({operation})' if operation else ''}; a stream only reads tables that are appended to",
            hint=f"if the source was fully refreshed, run REFRESH STREAMING TABLE {target} FULL to read it again "
                 f"from its current state, or ALTER TABLE {target} SET TBLPROPERTIES ('skipChangeCommits' = "
                 "'true') to skip such commits; otherwise read the source without STREAM (a stream-static join)",
        )
    files = []
    for action in actions:
        add = action.get("add")
        if add is not None and add.get("dataChange", True):
            values = tuple(sorted((add.get("partitionValues") or {}).items()))
            files.append(AddedFile(_absolute(table_path, add["path"]), values))
    return files


def snapshot_files(table_path: str, version: int) -> list[AddedFile]:
    """The data files of the table as of `version`, with their partition values as the log writes them (text)."""
    import pyarrow as pa

    from sluicegate.storage.delta.tables import open_table

    actions = pa.table(open_table(table_path, version=version).get_add_actions(flatten=True)).to_pylist()
    files = []
    for action in actions:
        values = tuple(sorted((key[len("partition."):], None if value is None else str(value))
                              for key, value in action.items() if key.startswith("partition.")))
        files.append(AddedFile(_absolute(table_path, action["path"]), values))
    return files


def latest_version(table_path: str) -> int:
    from sluicegate.storage.delta.tables import is_delta_table, open_table

    return open_table(table_path).version() if is_delta_table(table_path) else START


def _read_file(file: AddedFile, schema: pa.Schema,
               store: ObjectStoreSettings | None = None) -> Iterator[pa.RecordBatch]:
    import pyarrow.parquet as pq

    values = dict(file.partition_values)
    if store is not None and is_object_uri(file.path):
        with store.arrow_filesystem().open_input_file(file.path.split("://", 1)[1]) as handle:
            yield from _batches(pq.ParquetFile(handle), schema, values)
    else:
        yield from _batches(pq.ParquetFile(file.path), schema, values)


def _batches(parquet: Any, schema: pa.Schema, values: dict[str, str | None]) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa

    present = set(parquet.schema_arrow.names)
    wanted = [name for name in schema.names if name in present]
    for batch in parquet.iter_batches(batch_size=65_536, columns=wanted):
        columns = []
        for field in schema:
            if field.name in present:
                columns.append(batch.column(field.name).cast(field.type))
            else:  # a partition column (or one added to the table later): the same value for the whole file
                value = values.get(field.name)
                columns.append(pa.array([value] * batch.num_rows, pa.string()).cast(field.type))
        yield pa.RecordBatch.from_arrays(columns, schema=schema)


class DeltaStreamReader(DataSourceStreamReader):
    def __init__(self, table_path: str, schema: StructType, skip_change_commits: bool = False,
                 reader: str | None = None, store: ObjectStoreSettings | None = None) -> None:
        self.table_path = table_path
        self.schema = schema
        self.skip_change_commits = skip_change_commits
        self.reader = reader
        self.store = store

    def initialOffset(self) -> dict[str, Any]:
        return {"version": START}

    def latestOffset(self) -> dict[str, Any]:
        return {"version": latest_version(self.table_path)}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        files: list[AddedFile] = []
        if int(start["version"]) == START and int(end["version"]) > START:
            files = snapshot_files(self.table_path, int(end["version"]))
        else:
            for version in range(int(start["version"]) + 1, int(end["version"]) + 1):
                files.extend(added_files(self.table_path, version, self.skip_change_commits, self.reader))
        return [FilesPartition(tuple(files[i:i + FILES_PER_PARTITION]))
                for i in range(0, len(files), FILES_PER_PARTITION)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(self.schema)
        assert isinstance(partition, FilesPartition)
        for file in partition.files:
            yield from _read_file(file, schema, self.store)


class DeltaStreamSource(DataSource):
    """`spark.readStream.format("sg_delta").schema(...).load(path)`: the table's schema comes from its Delta log."""

    store: ObjectStoreSettings | None = None     # set on the subclass `register` makes for an object-store table

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def _adopt_store(self) -> None:
        """In the Python process Spark plans this source in: the table's store is served with the settings that came
        pickled with the class (the gateway's registry is not in this process)."""
        if self.store is not None and is_object_uri(self.options["path"]):
            from sluicegate.storage.registry import register

            register(self.options["path"], self.store)

    def schema(self) -> StructType:
        import pyarrow as pa

        from sluicegate.storage.delta.read import spark_schema
        from sluicegate.storage.delta.snapshots import load_snapshot

        self._adopt_store()
        snapshot = load_snapshot(self.options["path"])
        return spark_schema(pa.schema([f for f in snapshot.schema if f.name not in snapshot.hidden]))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        skip = self.options.get(SKIP_OPTION, "false").lower() == "true"
        self._adopt_store()
        return DeltaStreamReader(self.options["path"], schema, skip, self.options.get(READER_OPTION), self.store)


def register(spark: SparkSession, store: ObjectStoreSettings | None = None) -> str:
    """The source in `spark`'s session, and the name it is registered under; with `store`, a subclass carrying the
    object store's settings, under a name of its own (Spark refuses a name another session already has)."""
    if store is None:
        spark.dataSource.register(DeltaStreamSource)
        return FORMAT_NAME
    return register_carrying(spark, DeltaStreamSource, store)
