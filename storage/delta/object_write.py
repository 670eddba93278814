"""Writing a Delta table's data files to an object store: executors write Parquet through pyarrow's S3FileSystem,
the driver commits (storage/delta/write.commit_files, as for a local table).

Spark has no S3 filesystem here, so `df.write.parquet` cannot be used: `mapInArrow` hands each task its rows as
Arrow batches, the task writes them under the write's own staging prefix (`_sg_write_<id>/`, partitioned as
`key=value/` the way Spark lays them out), and answers one row per file: its path, size, partition values and Delta
statistics, taken from the footer the writer holds in memory. The driver collects those rows and commits them; a job
that fails before the commit leaves unreferenced objects only, which VACUUM removes. The store's credentials reach
the executors inside the pickled writer, never through Spark's conf.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.uris import ObjectLocation
from sluicegate.storage.delta.files import HIVE_DEFAULT_PARTITION, WrittenFile, metadata_stats, write_error
from sluicegate.storage.registry import settings_for
from sluicegate.storage.settings import ObjectStoreSettings

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

log = logging.getLogger(__name__)

RESULT_SCHEMA = "path string, size long, mtime long, partition string, stats string"
# the characters Spark escapes in a partition folder's name (ExternalCatalogUtils.escapePathName)
_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^') | frozenset(chr(c) for c in range(1, 32))


def escape_path_name(text: str) -> str:
    return "".join(f"%{ord(char):02X}" if char in _ESCAPED else char for char in text)


def partition_folder(keys: Sequence[str], values: Sequence[str | None]) -> str:
    return "/".join(f"{escape_path_name(key)}={HIVE_DEFAULT_PARTITION if value is None else escape_path_name(value)}"
                    for key, value in zip(keys, values, strict=True))


class ParquetFileWriter:
    """A picklable function from Arrow batches to the Parquet files written for them (one per partition value per
    call), answering one RESULT_SCHEMA row per file. Used by executors (`mapInArrow`) and on the driver."""

    def __init__(self, settings: ObjectStoreSettings, root: str, staging: str, partition_by: Sequence[str]) -> None:
        self.settings = settings
        self.root = root               # bucket/key of the table
        self.staging = staging
        self.partition_by = tuple(partition_by)

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        files: dict[tuple[str | None, ...], _OpenFile] = {}
        fs = None
        try:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                if fs is None:
                    fs = self.settings.arrow_filesystem()
                for values, rows in self._split(batch):
                    if values not in files:
                        files[values] = _OpenFile(fs, self._relative_path(values), self.root, rows.schema)
                    files[values].write(rows)
            written = [(values, opened.close()) for values, opened in files.items()]
        except BaseException:
            for opened in files.values():
                opened.abandon()
            raise
        if written:
            yield pa.RecordBatch.from_pylist([
                {"path": path, "size": size, "mtime": int(time.time() * 1000),
                 "partition": json.dumps(dict(zip(self.partition_by, values, strict=True))), "stats": stats}
                for values, (path, size, stats) in written], schema=_result_schema())

    def _relative_path(self, values: tuple[str | None, ...]) -> str:
        folder = f"{self.staging}/{partition_folder(self.partition_by, values)}" if values else self.staging
        return f"{folder}/part-{uuid.uuid4().hex}.snappy.parquet"

    def _split(self, batch: pa.RecordBatch) -> Iterator[tuple[tuple[str | None, ...], pa.RecordBatch]]:
        """The batch's rows by partition value (as strings, the way they are written in folder names), without the
        partition columns: a partitioned Delta table keeps those in its log only."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if not self.partition_by:
            yield (), batch
            return
        keys = [pc.cast(batch.column(name), pa.string()).to_pylist() for name in self.partition_by]
        data = batch.select([name for name in batch.schema.names if name not in self.partition_by])
        rows_of: dict[tuple[str | None, ...], list[int]] = {}
        for index, values in enumerate(zip(*keys, strict=True)):
            rows_of.setdefault(values, []).append(index)
        for values, indices in rows_of.items():
            yield values, data.take(pa.array(indices, pa.int64()))


class _OpenFile:
    def __init__(self, fs: Any, relative: str, root: str, schema: pa.Schema) -> None:
        import pyarrow.parquet as pq

        self.fs, self.relative, self.full = fs, relative, f"{root}/{relative}"
        self.stream = fs.open_output_stream(self.full)
        self.writer = pq.ParquetWriter(self.stream, schema, compression="snappy")

    def write(self, rows: pa.RecordBatch) -> None:
        self.writer.write_batch(rows)

    def close(self) -> tuple[str, int, str]:
        """(path relative to the table, size, Delta stats) once the file is complete on the store."""
        self.writer.close()
        size = self.stream.tell()
        self.stream.close()
        return self.relative, size, metadata_stats(self.writer.writer.metadata)

    def abandon(self) -> None:
        """A failed write: the object may be left unreferenced (VACUUM removes it); nothing to report."""
        try:
            self.writer.close()
            self.stream.close()
        except OSError as exc:   # the write already failed; its own error is what the caller sees
            log.debug("closing the abandoned file %s failed too: %s", self.full, exc)


def _result_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([("path", pa.string()), ("size", pa.int64()), ("mtime", pa.int64()),
                      ("partition", pa.string()), ("stats", pa.string())])


def _written(row: Any) -> WrittenFile:
    # the object's key as it is: delta-rs URL-encodes it into the log (and readers decode it), so a partition
    # folder's own `%` escapes survive, as for a file Spark wrote
    return WrittenFile(path=row["path"], size=row["size"], modification_time=row["mtime"],
                       partition_values=json.loads(row["partition"]), stats=row["stats"])


def file_writer(table_path: str, partition_by: Sequence[str] = ()) -> ParquetFileWriter:
    """A writer of new files under a fresh staging prefix of the table at `table_path` (an object URI)."""
    location = ObjectLocation.parse(table_path)
    return ParquetFileWriter(settings_for(location), location.arrow_path, f"_sg_write_{uuid.uuid4().hex}",
                             partition_by)


def write_object_files(df: DataFrame, table_path: str, partition_by: Sequence[str] = ()) -> list[WrittenFile]:
    """Executors write `df` as Parquet files under a new staging prefix of the table; returns what they wrote."""
    writer = file_writer(table_path, partition_by)
    try:
        rows = df.mapInArrow(writer, RESULT_SCHEMA).collect()
    except Exception as exc:
        raise write_error(exc, table_path) from exc
    return [_written(row.asDict()) for row in rows]


def write_arrow_files(table_path: str, rows: pa.Table) -> list[WrittenFile]:
    """The driver writes the Arrow table `rows` (a small result already in memory) as one file, unpartitioned."""
    results = list(file_writer(table_path)(iter(rows.to_batches())))
    return [_written(row) for batch in results for row in batch.to_pylist()]
