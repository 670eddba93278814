"""The Delta source: a catalog table read as a stream, version by version (Spark Python data source `sg_delta`).

Offsets are Delta versions. A new stream's first micro-batch, (START, end], reads the table as of version `end` (its
snapshot's files, whatever history led there: a table fully refreshed before the stream began is read as it is now);
each later micro-batch covering versions (start, end] reads exactly the data files those commits added, so every row
is read once, and a restart resumes from the versions in the stream's checkpoint (a replayed batch reads the same
files). Only appends can be streamed: a commit that removes data files rewrote rows in place (UPDATE, DELETE, MERGE,
OVERWRITE, an update-mode streaming table), and re-reading them would count them twice; that stops the stream with a
clear error.
Files are read with pyarrow on the executors, partition values restored from the commit's add actions.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from runtime.streaming.errors import SourceRewrittenError

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
    return os.path.join(table_path, "_delta_log", f"{version:020d}.json")


def _absolute(table_path: str, path: str) -> str:
    if "://" in path:
        return path[len("file://"):] if path.startswith("file://") else path
    return os.path.join(table_path, unquote(path))


def added_files(table_path: str, version: int, skip_change_commits: bool = False,
                reader: str | None = None) -> list[AddedFile]:
    """The data files commit `version` added; when it removed any (rows rewritten, not appended), none if
    `skip_change_commits` (the whole commit is skipped, as Databricks' reader option does), else an error naming
    what `reader` (the streaming table reading it) can do."""
    try:
        with open(_log_file(table_path, version), encoding="utf-8") as log:
            actions = [json.loads(line) for line in log if line.strip()]
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

    from runtime.storage.delta import open_table

    actions = pa.table(open_table(table_path, version=version).get_add_actions(flatten=True)).to_pylist()
    files = []
    for action in actions:
        values = tuple(sorted((key[len("partition."):], None if value is None else str(value))
                              for key, value in action.items() if key.startswith("partition.")))
        files.append(AddedFile(_absolute(table_path, action["path"]), values))
    return files


def latest_version(table_path: str) -> int:
    from runtime.storage.delta import is_delta_table, open_table

    return open_table(table_path).version() if is_delta_table(table_path) else START


def _read_file(file: AddedFile, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    values = dict(file.partition_values)
    parquet = pq.ParquetFile(file.path)
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
                 reader: str | None = None) -> None:
        self.table_path = table_path
        self.schema = schema
        self.skip_change_commits = skip_change_commits
        self.reader = reader

    def initialOffset(self) -> dict[str, Any]:  # noqa: N802 - Spark's name
        return {"version": START}

    def latestOffset(self) -> dict[str, Any]:  # noqa: N802
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
            yield from _read_file(file, schema)


class DeltaStreamSource(DataSource):
    """`spark.readStream.format("sg_delta").schema(...).load(path)`: the table's schema comes from its Delta log."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> StructType:
        import pyarrow as pa

        from runtime.delta.read import load_snapshot, spark_schema

        snapshot = load_snapshot(self.options["path"])
        return spark_schema(pa.schema([f for f in snapshot.schema if f.name not in snapshot.hidden]))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802
        skip = self.options.get(SKIP_OPTION, "false").lower() == "true"
        return DeltaStreamReader(self.options["path"], schema, skip, self.options.get(READER_OPTION))


def register(spark: SparkSession) -> None:
    spark.dataSource.register(DeltaStreamSource)
