"""A batch `read_files(path, format => ..., schema => ..., options)` in a query, as Databricks users (and
dbt-databricks) write it: the files are read with `spark.read`, under the same rules as a streaming source's: the
path must lie under `security.allowed_paths`, the reader options come from the allow-list, the formats are the
streaming source's, and so is the `_rescued_data` column keeping what cannot be parsed or cast. The binder puts a
temporary view over the result where the call was."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sluicegate.catalog.uris import ObjectLocation
from sluicegate.dialect.references import TableReference
from sluicegate.dialect.streaming.sources import FILE_FORMATS, FoundSource, source_spec
from sluicegate.engine.streams import object_files
from sluicegate.engine.streams.sources import read_schema, reader_options, without_rescued
from sluicegate.storage.registry import settings_for
from sluicegate.storage.spark_errors import RuntimeQueryError, from_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sluicegate.dialect.streaming.plan import SourceSpec
    from sluicegate.executor.context import StatementContext


class FileReadError(RuntimeQueryError):
    error_class = "INVALID_READ_FILES_ARGUMENTS"
    sqlstate = "42K09"


def file_dataframe(ctx: StatementContext, ref: TableReference) -> DataFrame:
    """The files `ref` (a read_files call) names, once the policy allows them. Raises without a position; the
    binder adds the call's."""
    assert isinstance(ref.node, exp.Table)   # a read_files call's reference is its table node
    found = FoundSource(ref.node, None, ref.node, ref.node.alias or None, None)
    positional, named = found.arguments()
    if not positional and "path" not in named:
        raise FileReadError("read_files needs a path", hint="write read_files('/landing/folder', format => 'json')")
    if "format" not in named:
        raise FileReadError("read_files needs format => 'json', 'csv' or 'parquet'",
                            hint="write read_files('/landing/folder', format => 'json')")
    spec = source_spec(found, "")
    if spec.format not in FILE_FORMATS:
        raise FileReadError(f"read_files cannot read format '{spec.format}'",
                            hint=f"use one of {', '.join(FILE_FORMATS)}")
    folder = ctx.policy.check_read_path(spec.path or "", ctx.principal)
    ctx.policy.check_reader_options(spec.options, ctx.principal)
    if isinstance(folder, ObjectLocation):
        return _object_files(ctx, spec, folder)
    reader = ctx.spark.read.format(spec.format).options(**reader_options(spec))
    try:
        if spec.schema:
            reader = reader.schema(read_schema(spec.schema, spec))
        elif spec.rescued_data is not None:  # inferred, then the rescued data column as a stream's source has it
            reader = reader.schema(read_schema(without_rescued(reader.load(str(folder)).schema, spec), spec))
        return reader.load(str(folder))
    except Exception as exc:
        raise from_spark(exc, include_stack_trace=ctx.include_stack_trace) from exc


def _object_files(ctx: StatementContext, spec: SourceSpec, folder: ObjectLocation) -> DataFrame:
    """A folder on the warehouse's object store (Spark cannot open it): read as the streaming source reads it
    (engine/streams/object_files.py), with the same schema rules."""
    from pyspark.sql.types import DataType, StructType

    store = settings_for(folder)
    options = reader_options(spec)
    try:
        given = spec.schema or without_rescued(
            object_files.infer_schema(ctx.spark, str(folder), spec.format or "json", options, store), spec)
        schema = read_schema(given, spec)
        struct = DataType.fromDDL(schema) if isinstance(schema, str) else schema
        assert isinstance(struct, StructType)
        return object_files.batch_dataframe(ctx.spark, str(folder), spec.format or "json", struct, options, store)
    except RuntimeQueryError:
        raise
    except Exception as exc:
        raise from_spark(exc, include_stack_trace=ctx.include_stack_trace) from exc
