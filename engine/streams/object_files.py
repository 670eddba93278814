"""read_files over a landing folder on an object store (`s3://bucket/prefix`): a Spark Python data source
(`sg_object_files`), since Spark has no S3 filesystem here.

Offsets. The folder's files are taken in order of (modification time, name). An offset says which files are
taken: `{"mtime": ms, "names": [...]}` = every file older than `mtime`, and of those with that very time the ones
named. A store sets a file's time when its upload completes, so a new file is never older than the ones taken;
within the store's clock resolution (S3 lists whole seconds) several files share a time, and the names tell which of
them are taken, so a file landing in the same second with a smaller name is not passed over. A micro-batch
(start, end] reads the files `end` takes and `start` does not: each file once, and a replayed batch the same files.
(A producer's file must appear whole, as in a local folder; an object store's upload does. A file that appears
with a time older than files already taken is not read.) maxFilesPerTrigger caps a micro-batch, counted from its
start: Spark 4.1 does not tell a Python source where a batch starts, so the first batch of a run starts where the
query's checkpoint says (engine/streams/checkpoint_offsets.py; every offset carries the source's tag), later ones
at the end this reader returned last. A one-batch scheduled pass is given no checkpoint: it reads every file.

Reading. Executors read the bytes with pyarrow. Parquet files are read as Arrow and cast to the schema by name.
JSON and CSV files are read as lines (a CSV header dropped, blank lines skipped, as Spark's file source does) and
parsed by Spark's own parser (`from_json` / `from_csv`) with the same options and the same PERMISSIVE mode: a record
that cannot be parsed or cast keeps its text in the rescued data column exactly as on a local folder. A record
spanning lines (multiLine) is refused here.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition

from sluicegate.catalog.names import quote_identifier
from sluicegate.catalog.uris import ObjectLocation
from sluicegate.engine.streams.checkpoint_offsets import INTERNAL_OPTIONS, RunStart, tagged, untagged
from sluicegate.engine.streams.errors import SourceNotFoundError, SourceSchemaError
from sluicegate.engine.streams.store_sources import register_carrying
from sluicegate.storage.settings import ObjectStoreSettings

if TYPE_CHECKING:
    import pyarrow as pa
    from pyarrow.fs import FileSystem
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

FORMAT_NAME = "sg_object_files"
LINE_COLUMN = "value"
FILES_PER_PARTITION = 8
ROWS_PER_BATCH = 10_000
# options the listing uses (they mean nothing to Spark's record parser)
LISTING_OPTIONS = ("maxfilespertrigger", "pathglobfilter", "recursivefilelookup", "maxbytespertrigger",
                   "latestfirst", "maxfileage", "filenameonly", "modifiedbefore", "modifiedafter")
START: dict[str, Any] = {"mtime": -1, "names": []}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class ObjectFile:
    path: str          # bucket/key
    name: str          # relative to the landing folder
    mtime: int         # ms
    size: int

    @property
    def key(self) -> tuple[int, str]:
        return (self.mtime, self.name)


def list_files(fs: FileSystem, folder: str, options: Mapping[str, str]) -> list[ObjectFile]:
    """The folder's data files in offset order: hidden names (`.`, `_`) left out, as Spark's file source does."""
    from pyarrow.fs import FileSelector, FileType

    lowered = {key.lower(): value for key, value in options.items()}
    recursive = lowered.get("recursivefilelookup", "false").lower() == "true"
    glob = lowered.get("pathglobfilter")
    files = []
    for info in fs.get_file_info(FileSelector(folder, recursive=recursive, allow_not_found=True)):
        name = info.path.rsplit("/", 1)[-1]
        relative = info.path[len(folder) + 1:]
        if info.type != FileType.File or any(part.startswith((".", "_")) for part in relative.split("/")):
            continue
        if glob and not fnmatch.fnmatchcase(name, glob):
            continue
        files.append(ObjectFile(info.path, relative, int(info.mtime_ns // 1_000_000) if info.mtime_ns else 0,
                                info.size or 0))
    return sorted(files, key=lambda f: f.key)


def taken(file: ObjectFile, offset: Mapping[str, Any]) -> bool:
    """Whether `offset` has taken `file`."""
    mtime = int(offset["mtime"])
    return file.mtime < mtime or (file.mtime == mtime and file.name in offset["names"])


def _later(end: Mapping[str, Any], than: Mapping[str, Any]) -> bool:
    return int(end["mtime"]) > int(than["mtime"]) or \
        (int(end["mtime"]) == int(than["mtime"]) and set(end["names"]) > set(than["names"]))


def next_offset(files: list[ObjectFile], position: Mapping[str, Any] | None,
                limit: int | None) -> dict[str, Any] | None:
    """The end of the next micro-batch: every file listed, or with a known `position` at most `limit` files past
    it; None when no file is new."""
    fresh = [f for f in files if position is None or not taken(f, position)]
    if not fresh:
        return None
    if position is not None and limit is not None:
        fresh = fresh[:limit]
    last = fresh[-1].mtime
    names = {f.name for f in fresh if f.mtime == last}
    if position is not None:
        names |= {f.name for f in files if f.mtime == last and taken(f, position)}
    return {"mtime": last, "names": sorted(names)}


def between(files: list[ObjectFile], start: Mapping[str, Any], end: Mapping[str, Any]) -> list[ObjectFile]:
    """The files of the micro-batch (start, end], in offset order."""
    return [f for f in files if taken(f, end) and not taken(f, start)]


@dataclass(frozen=True)
class FilesPartition(InputPartition):
    files: tuple[ObjectFile, ...]


def _lines(data: bytes, options: Mapping[str, str], file_format: str) -> list[str]:
    lowered = {key.lower(): value for key, value in options.items()}
    text = data.decode(lowered.get("encoding") or lowered.get("charset") or "utf-8")
    separator = lowered.get("linesep")
    lines = text.split(separator) if separator else _LINE_BREAK.split(text)
    if file_format == "csv" and lowered.get("header", "false").lower() == "true":
        lines = lines[1:]
    return [line for line in lines if line.strip()]


def read_lines(fs: FileSystem, file: ObjectFile, options: Mapping[str, str],
               file_format: str) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa

    with fs.open_input_stream(file.path) as stream:
        lines = _lines(stream.read(), options, file_format)
    for at in range(0, len(lines), ROWS_PER_BATCH):
        yield pa.RecordBatch.from_arrays([pa.array(lines[at:at + ROWS_PER_BATCH], pa.string())], [LINE_COLUMN])


def read_parquet(fs: FileSystem, file: ObjectFile, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    with fs.open_input_file(file.path) as handle:
        parquet = pq.ParquetFile(handle)
        present = set(parquet.schema_arrow.names)
        for batch in parquet.iter_batches(batch_size=ROWS_PER_BATCH, columns=[n for n in schema.names if n in present]):
            columns = [batch.column(field.name).cast(field.type) if field.name in present
                       else pa.nulls(batch.num_rows, field.type) for field in schema]
            yield pa.RecordBatch.from_arrays(columns, schema=schema)


class FilesReading:
    """What the stream and the batch reader share: the folder's listing, and reading a partition's files on an
    executor."""

    def __init__(self, options: Mapping[str, str], schema: StructType, store: ObjectStoreSettings) -> None:
        self.folder = ObjectLocation.parse(options["path"]).arrow_path
        self.format = options.get("format", "json")
        self.store = store
        self.options = {k: v for k, v in options.items()
                        if k not in ("path", "format") and k.lower() not in INTERNAL_OPTIONS}
        self.schema = schema

    def _files(self) -> list[ObjectFile]:
        return list_files(self.store.arrow_filesystem(), self.folder, self.options)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema

        assert isinstance(partition, FilesPartition)
        fs = self.store.arrow_filesystem()
        schema = to_arrow_schema(self.schema)
        for file in partition.files:
            if self.format == "parquet":
                yield from read_parquet(fs, file, schema)
            else:
                yield from read_lines(fs, file, self.options, self.format)


def _partitioned(files: list[ObjectFile]) -> list[InputPartition]:
    return [FilesPartition(tuple(files[i:i + FILES_PER_PARTITION])) for i in range(0, len(files), FILES_PER_PARTITION)]


class ObjectFilesBatchReader(FilesReading, DataSourceReader):
    """A batch `read_files` over the folder: every file listed now."""

    def partitions(self) -> list[InputPartition]:
        return _partitioned(self._files())


class ObjectFilesReader(FilesReading, DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str], schema: StructType, store: ObjectStoreSettings) -> None:
        super().__init__(options, schema, store)
        limit = {k.lower(): v for k, v in self.options.items()}.get("maxfilespertrigger")
        self.limit = int(limit) if limit else None
        self.run = RunStart.of(options)
        self.resumed = False      # whether this run's start was looked up in the checkpoint
        self.position: dict[str, Any] | None = None   # the end returned last (None: unknown since this run began)

    def initialOffset(self) -> dict[str, Any]:
        return tagged(START, self.run.tag)

    def latestOffset(self) -> dict[str, Any]:
        if self.position is None and not self.resumed:
            self.resumed = True
            self.position = self.run.start(lambda: dict(START), f"read_files({self.folder})")
        end = next_offset(self._files(), self.position, self.limit)
        if end is None:
            return tagged(self.position if self.position is not None else START, self.run.tag)
        self.position = end
        return tagged(end, self.run.tag)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        if self.position is None or _later(end, self.position):
            self.position = untagged(end)   # a replayed batch after a restart: later caps count from its end
        return _partitioned(between(self._files(), start, end))


class ObjectFilesSource(DataSource):
    """`spark.readStream.format("sg_object_files").schema(...)`: lines (json, csv) or the given schema (parquet).
    The store's settings ride on a subclass made by `register` (pickled by value with it), never on an option:
    options are shown in Spark's plans and UI."""

    store: ObjectStoreSettings | None = None

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> str:
        return f"{LINE_COLUMN} STRING"

    def _store(self) -> ObjectStoreSettings:
        if self.store is None:
            raise SourceNotFoundError("read_files on an object store: the gateway registered no store for it")
        return self.store

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return ObjectFilesReader(self.options, schema, self._store())

    def reader(self, schema: StructType) -> DataSourceReader:
        return ObjectFilesBatchReader(self.options, schema, self._store())


def register(spark: SparkSession, store: ObjectStoreSettings) -> str:
    """The source, carrying `store`, in `spark`'s session; returns the name to read it by."""
    return register_carrying(spark, ObjectFilesSource, store)


def parser_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options Spark's record parser gets: the reader's, without those of the listing."""
    return {key: value for key, value in options.items() if key.lower() not in LISTING_OPTIONS}


def refuse_multiline(uri: str, options: Mapping[str, str]) -> None:
    if any(key.lower() == "multiline" and str(value).lower() == "true" for key, value in options.items()):
        raise SourceSchemaError(f"read_files('{uri}'): multiLine records are not read from an object store",
                                hint="land one record per line (JSON lines, CSV without line breaks in values)")


def stream_dataframe(spark: SparkSession, uri: str, file_format: str, schema: StructType,
                     options: Mapping[str, str], store: ObjectStoreSettings,
                     internal: Mapping[str, str] | None = None) -> DataFrame:
    """The landing folder `uri` as a streaming DataFrame with `schema` (the rescued data column included when
    `options` name one): Spark parses the lines of json and csv files with `options`. `internal`: the gateway's
    options for the reader only (checkpoint_offsets)."""
    refuse_multiline(uri, options)
    name = register(spark, store)
    reader = spark.readStream.format(name).option("path", uri).option("format", file_format).options(**options) \
        .options(**(internal or {}))
    return _parsed(reader, file_format, schema, options)


def batch_dataframe(spark: SparkSession, uri: str, file_format: str, schema: StructType,
                    options: Mapping[str, str], store: ObjectStoreSettings) -> DataFrame:
    """A batch read_files of every file in `uri` now, read and parsed as the stream reads them."""
    refuse_multiline(uri, options)
    name = register(spark, store)
    reader = spark.read.format(name).option("path", uri).option("format", file_format).options(**options)
    return _parsed(reader, file_format, schema, options)


def _parsed(reader: Any, file_format: str, schema: StructType, options: Mapping[str, str]) -> DataFrame:
    from pyspark.sql.functions import col, from_csv, from_json

    if file_format == "parquet":
        return reader.schema(schema).load()
    parse = parser_options(options)
    lines = reader.load()
    ddl = ", ".join(f"{quote_identifier(field.name)} {field.dataType.simpleString()}" for field in schema.fields)
    parsed = from_json(col(LINE_COLUMN), schema, parse) if file_format == "json" else \
        from_csv(col(LINE_COLUMN), ddl, parse)
    return lines.select(parsed.alias("record")).select("record.*")


def infer_schema(spark: SparkSession, uri: str, file_format: str, options: Mapping[str, str],
                 store: ObjectStoreSettings, files: int = 16) -> StructType:
    """The schema Spark infers from the first `files` files (their lines parsed on the driver's Spark; parquet's
    from the first file's footer)."""
    import pyarrow.parquet as pq

    from sluicegate.storage.delta.read import spark_schema

    refuse_multiline(uri, options)
    fs = store.arrow_filesystem()
    found = list_files(fs, ObjectLocation.parse(uri).arrow_path, options)[:files]
    if not found:
        raise SourceSchemaError(
            f"read_files('{uri}') holds no files yet, so there is nothing to infer its schema from",
            hint=f"give the schema: read_files('...', format => '{file_format}', schema => 'col1 INT, col2 STRING')")
    if file_format == "parquet":
        with fs.open_input_file(found[0].path) as handle:
            return spark_schema(pq.ParquetFile(handle).schema_arrow)
    lines: list[str] = []
    for file in found:
        with fs.open_input_stream(file.path) as stream:
            data = stream.read()
        lines.extend(_lines(data, {**options, "header": "false"}, file_format))  # csv: the header names the columns
    rdd = spark.sparkContext.parallelize(lines, 1)
    reader = spark.read.options(**parser_options(options))
    return reader.json(rdd).schema if file_format == "json" else reader.csv(rdd).schema
