"""A plan's sources as streaming DataFrames: new files in a folder (local, or a prefix on the warehouse's object
store: engine/streams/object_files.py), the rate generator, Kafka topics, or a catalog Delta table read version by
version; and its static tables as DataFrames over one committed Delta snapshot."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from sluicegate.catalog.names import quote_identifier
from sluicegate.catalog.uris import is_object_uri
from sluicegate.dialect.streaming.plan import SourceSpec, StaticTableSpec
from sluicegate.engine.streams import delta_source, kafka_source, object_files
from sluicegate.engine.streams.checkpoint_offsets import CHECKPOINT_OPTION, TAG_OPTION
from sluicegate.engine.streams.errors import SourceNotFoundError, SourceSchemaError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from sluicegate.storage.settings import ObjectStoreSettings

# (database, table) -> the Delta location of a catalog table the plan reads.
TableLocations = Mapping[tuple[str, str], str]


def ddl(schema: StructType) -> str:
    """A schema as the DDL text `read_files(..., schema => ...)` takes, so an inferred schema can be stored."""
    return ", ".join(f"{quote_identifier(field.name)} {field.dataType.simpleString()}" for field in schema.fields)


def reader_options(spec: SourceSpec) -> dict[str, str]:
    """The options Spark's file reader gets: the user's, and with a rescued data column Spark's PERMISSIVE mode
    keeping the text of a record it cannot parse or cast in that column (the record's other fields keep their
    values; the bad ones are null)."""
    options = {key: value for key, value in spec.options.items() if key.lower() != "rescueddatacolumn"}
    if spec.rescued_data is not None:
        options = {key: value for key, value in options.items()
                   if key.lower() not in ("mode", "columnnameofcorruptrecord")}
        options.update(mode="PERMISSIVE", columnNameOfCorruptRecord=spec.rescued_data)
    return options


def without_rescued(schema: StructType, spec: SourceSpec) -> StructType:
    from pyspark.sql.types import StructType

    rescued = (spec.rescued_data or "").lower()
    return StructType([field for field in schema.fields if field.name.lower() != rescued])


def read_schema(schema: str | StructType, spec: SourceSpec) -> str | StructType:
    """The schema files are read with: the source's, plus the rescued data column (a STRING) when it has one. A
    plan stored before the column existed reads exactly as before, so a restart keeps the table's schema."""
    if spec.rescued_data is None:
        return schema
    from pyspark.sql.types import DataType, StringType, StructField, StructType

    struct = DataType.fromDDL(schema) if isinstance(schema, str) else schema
    assert isinstance(struct, StructType)
    if any(field.name.lower() == spec.rescued_data.lower() for field in struct.fields):
        return struct
    return StructType([*struct.fields, StructField(spec.rescued_data, StringType(), True)])


def infer_schema(spark: SparkSession, spec: SourceSpec) -> str:
    """Infer a file source's schema once, from the files present now; the caller stores it with the plan, so that a
    restart reads with the same schema whatever files arrive later."""
    assert spec.kind == "files" and spec.path is not None
    if is_object_uri(spec.path):
        from sluicegate.storage.registry import settings_for

        inferred = object_files.infer_schema(spark, spec.path, spec.format or "json", reader_options(spec),
                                             settings_for(spec.path))
        return ddl(without_rescued(inferred, spec))
    files = [name for name in os.listdir(spec.path) if not name.startswith((".", "_"))] \
        if os.path.isdir(spec.path) else []
    if not files:
        where = "does not exist" if not os.path.isdir(spec.path) else "holds no files yet"
        raise SourceSchemaError(
            f"read_files('{spec.path}') {where}, so there is nothing to infer its schema from",
            hint="give the schema: read_files('...', format => '" + (spec.format or "json")
            + "', schema => 'col1 INT, col2 STRING, ...')",
        )
    schema = spark.read.format(spec.format or "json").options(**reader_options(spec)).load(spec.path).schema
    schema = without_rescued(schema, spec)  # bad lines among the files: the column is added when they are read
    if not schema.fields or [f.name for f in schema.fields] == ["_corrupt_record"]:
        raise SourceSchemaError(f"the files in {spec.path} gave no columns as {spec.format}",
                                hint="check the format, or give the schema with schema => '...'")
    return ddl(schema)


# the cap of each Python source that counts from a batch's start (a local folder is Spark's own file source)
CAP_OPTIONS = {"kafka": "maxoffsetspertrigger", "files": "maxfilespertrigger"}


def capped_python_source(spec: SourceSpec) -> bool:
    """Whether the source is one of ours with a per-batch cap: it needs the query's checkpoint to cap a run's first
    batch (engine/streams/checkpoint_offsets.py)."""
    python = spec.kind == "kafka" or (spec.kind == "files" and is_object_uri(spec.path))
    return python and any(key.lower() == CAP_OPTIONS[spec.kind] for key in spec.options)


def run_options(spec: SourceSpec, checkpoint: str | None) -> dict[str, str]:
    """The gateway's options for a capped Python source: the checkpoint its reader learns a run's start from, and
    the tag it finds its offsets by there (the source's place in the definition). Never a user's: the policy refuses
    these names."""
    if checkpoint is None or not capped_python_source(spec):
        return {}
    return {CHECKPOINT_OPTION: checkpoint, TAG_OPTION: spec.view_name}


def source_dataframe(spark: SparkSession, spec: SourceSpec, tables: TableLocations, reader: str | None = None,
                     skip_change_commits: bool = False, checkpoint: str | None = None) -> DataFrame:
    """`reader`, the streaming table reading a catalog table, and `skip_change_commits` go to the Delta source;
    `checkpoint`, the query's checkpoint folder (None: not known, or a one-batch pass), to a capped Python source."""
    if spec.kind == "files" and is_object_uri(spec.path):
        df = _object_files(spark, spec, run_options(spec, checkpoint))
    elif spec.kind == "files":
        if spec.schema is None:
            raise SourceSchemaError(f"read_files('{spec.path}') has no schema", hint="give schema => '...'")
        if not os.path.isdir(spec.path or ""):  # never created here: a typo must not become a folder
            raise SourceNotFoundError(f"read_files('{spec.path}'): the folder does not exist",
                                      hint="create the folder first (it may stay empty until files land)")
        reader = spark.readStream.format(spec.format or "json").schema(read_schema(spec.schema, spec)) \
            .options(**reader_options(spec))
        df = reader.load(spec.path)
    elif spec.kind == "rate":
        df = spark.readStream.format("rate").options(**spec.options).load()
    elif spec.kind == "kafka":
        kafka_source.register(spark)
        df = spark.readStream.format(kafka_source.FORMAT_NAME).options(**spec.options) \
            .options(**{kafka_source.READER_OPTION: reader or ""}).options(**run_options(spec, checkpoint)).load()
    else:
        location = tables.get((spec.database or "", spec.table or ""))
        if location is None:
            raise SourceNotFoundError(f"the streamed table `{spec.database}`.`{spec.table}` cannot be found",
                                      hint="create it first, or check the name (SHOW TABLES)")
        source_format = delta_source.register(spark, _store_of(location))
        options = {delta_source.SKIP_OPTION: str(skip_change_commits).lower()}
        if reader is not None:
            options[delta_source.READER_OPTION] = reader
        df = spark.readStream.format(source_format).options(**options).load(location)
    if spec.watermark is not None:
        df = df.withWatermark(spec.watermark.column, spec.watermark.delay)
    return df


def _store_of(location: str) -> ObjectStoreSettings | None:
    """The settings of the object store a table lies on (None for a local table)."""
    if not is_object_uri(location):
        return None
    from sluicegate.storage.registry import settings_for

    return settings_for(location)


def _object_files(spark: SparkSession, spec: SourceSpec, internal: Mapping[str, str]) -> DataFrame:
    """A landing folder on the warehouse's object store, read with the same schema and options as a local one."""
    from pyspark.sql.types import DataType, StructType

    from sluicegate.storage.registry import settings_for

    assert spec.path is not None
    if spec.schema is None:
        raise SourceSchemaError(f"read_files('{spec.path}') has no schema", hint="give schema => '...'")
    store = settings_for(spec.path)   # an absent prefix is an empty folder: nothing is created by reading it
    schema = read_schema(spec.schema, spec)
    struct = DataType.fromDDL(schema) if isinstance(schema, str) else schema
    assert isinstance(struct, StructType)
    return object_files.stream_dataframe(spark, spec.path, spec.format or "json", struct, reader_options(spec),
                                         store, internal)


def static_dataframe(spark: SparkSession, spec: StaticTableSpec, tables: TableLocations) -> tuple[DataFrame, int]:
    """The table at its version now, and that version. Spark keeps the file list in the stream's plan, so the stream
    manager restarts the stream (on its checkpoint) when the table gets a new version."""
    from sluicegate.storage.delta.read import snapshot_dataframe
    from sluicegate.storage.delta.snapshots import load_snapshot

    location = tables.get((spec.database or "", spec.table))
    if location is None:
        raise SourceNotFoundError(f"the table `{spec.database}`.`{spec.table}` cannot be found",
                                  hint="create it first, or check the name (SHOW TABLES)")
    snapshot = load_snapshot(location)
    return snapshot_dataframe(spark, snapshot), snapshot.version
