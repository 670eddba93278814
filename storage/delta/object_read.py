"""Reading one pinned version of a Delta table on an object store: executors read its Parquet files with pyarrow's
S3FileSystem, since Spark has no S3 filesystem here.

The file list is a small DataFrame spread over a few partitions; `mapInArrow` turns each file into Arrow batches in
the table's schema: columns a file lacks (added later) are nulls, partition columns come from the file's `key=value`
folders (as Spark's own reader restores them for a local table), hidden columns are left out. The store's credentials
reach the executors inside the pickled reader, never through Spark's conf or a data source option (both are shown in
Spark's UI and plans). What Spark's own Parquet reader does that this does not: column pruning and predicate
pushdown into the scan (Spark filters after the read), and the vectorized reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sluicegate.storage.delta.files import partition_values
from sluicegate.storage.registry import settings_for
from sluicegate.storage.settings import ObjectStoreSettings

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

FILES_PER_PARTITION = 4     # a task reads a few files: fewer tasks for many small files, still parallel for big ones
BATCH_ROWS = 64 * 1024


class ParquetFileReader:
    """A picklable function from batches of (file, its folder relative to the table) rows to the files' rows as
    Arrow batches in `schema`."""

    def __init__(self, settings: ObjectStoreSettings, schema: pa.Schema, partition_columns: Sequence[str],
                 with_source_file: bool = False) -> None:
        """`with_source_file`: the last field of `schema` is the URI of each row's file (`input_file_name()` is
        Spark's file scans' only)."""
        self.settings = settings
        self.schema = schema
        self.partition_columns = tuple(partition_columns)
        self.with_source_file = with_source_file

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        fs = None
        for batch in batches:
            for file, folder in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True):
                fs = fs or self.settings.arrow_filesystem()
                yield from self._read(fs, file, partition_values(folder) if self.partition_columns else {})

    def _read(self, fs: Any, file: str, partition: dict[str, Any]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = file.split("://", 1)[1] if "://" in file else file
        try:
            stream = fs.open_input_file(path)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"the data file {file} of the table's pinned version is missing on the object store (removed by "
                "hand, or by a VACUUM with a short retention while this query ran)") from None
        with stream:
            parquet = pq.ParquetFile(stream)
            present = set(parquet.schema_arrow.names)
            fields = list(self.schema)[:-1] if self.with_source_file else list(self.schema)
            wanted = [f.name for f in fields if f.name in present and f.name not in self.partition_columns]
            for rows in parquet.iter_batches(batch_size=BATCH_ROWS, columns=wanted):
                arrays = [self._column(field, rows, partition) for field in fields]
                if self.with_source_file:
                    arrays.append(pa.array([file] * rows.num_rows, pa.string()))
                yield pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _column(self, field: pa.Field, rows: pa.RecordBatch, partition: dict[str, Any]) -> pa.Array:
        import pyarrow as pa

        if field.name in self.partition_columns:
            return pa.array([partition.get(field.name)] * rows.num_rows).cast(field.type)
        index = rows.schema.get_field_index(field.name)
        if index < 0:
            return pa.nulls(rows.num_rows, field.type)
        column = rows.column(index)
        return column if column.type == field.type else column.cast(field.type)


def object_files_dataframe(spark: SparkSession, table_path: str, files: Sequence[str],
                           partition_columns: Sequence[str], spark_schema: Any,
                           with_source_file: bool = False) -> DataFrame:
    """The rows of `files` (a snapshot of the object-store table at `table_path`, at least one file) in
    `spark_schema` (the visible columns, in order, then the file's URI when `with_source_file`)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow_schema = to_arrow_schema(spark_schema)
    reader = ParquetFileReader(settings_for(table_path), arrow_schema, tuple(partition_columns), with_source_file)
    root = table_path.rstrip("/") + "/"
    rows = [(file, file[len(root):].rpartition("/")[0] if file.startswith(root) else "") for file in files]
    slices = max(1, min(len(rows), -(-len(rows) // FILES_PER_PARTITION), spark.sparkContext.defaultParallelism * 4))
    if len(rows) <= spark.sparkContext.defaultParallelism:
        slices = len(rows)   # few files: one task each
    listing = spark.createDataFrame(spark.sparkContext.parallelize(rows, slices), "file string, folder string")
    return listing.mapInArrow(reader, spark_schema)
