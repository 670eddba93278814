"""Results out of Spark as Arrow record batches, one partition at a time.

A query's result is never collected whole: Spark computes one partition per job (the next one prefetched), ships it
to this process as Arrow IPC batches over a local socket, and the gateway encodes and sends those batches while the
next partition computes. The gateway's memory bound for a result is therefore about two partitions' Arrow batches,
whatever the result's size. A result of a single partition is collected in one job: the same bound, less latency.

Types that HiveServer2 sends as text (DATE, TIMESTAMP, DECIMAL, intervals, ARRAY/MAP/STRUCT) are turned into text
inside Spark, in the same projection, so that Python only moves primitive columns. A client that reads Arrow results
may ask for some of them natively (`WireTypes`): those cross as Spark's own Arrow types instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sluicegate.catalog.names import quote_identifier
from sluicegate.engine.jvm_objects import java_strings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class ResultColumn:
    """One result column, protocol-neutral: the type is Spark's SQL type string (`int`, `decimal(10,2)` ...)."""

    name: str
    type: str
    nullable: bool = True
    comment: str | None = None


# Spark types whose values cross to Python as they are; everything else is rendered as text inside Spark.
_NATIVE_TYPES = {"boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string", "binary"}


@dataclass(frozen=True)
class WireTypes:
    """Which type families cross as Spark's own Arrow types rather than as text (the Databricks clients'
    `useArrowNativeTypes`; dates go as date32 in any Arrow result, as Spark's server sends them). The default, all
    text, is what HiveServer2's columnar results need."""

    date: bool = False
    timestamp: bool = False
    decimal: bool = False
    nested: bool = False

    def keeps(self, type_name: str) -> bool:
        if type_name in _NATIVE_TYPES:
            return True
        if type_name.startswith(("array", "map", "struct")):
            return self.nested
        if type_name.startswith("timestamp"):
            return self.timestamp
        if type_name.startswith("decimal"):
            return self.decimal
        return type_name == "date" and self.date


TEXT = WireTypes()


def _wire_expression(column: str, type_name: str, types: WireTypes = TEXT) -> str:
    quoted = quote_identifier(column)
    if types.keeps(type_name):
        return quoted
    if type_name.startswith(("array", "map", "struct", "variant")):
        return f"to_json({quoted}, map('ignoreNullFields', 'false'))" if not type_name.startswith("variant") else (
            f"CAST({quoted} AS STRING)"
        )
    if type_name.startswith("interval"):
        # Spark renders `INTERVAL '1-2' YEAR TO MONTH`; HiveServer2 clients expect the Hive style `1-2`.
        return f"regexp_extract(CAST({quoted} AS STRING), '\\'(.*)\\'', 1)"
    return f"CAST({quoted} AS STRING)"


def result_columns(df: DataFrame) -> list[ResultColumn]:
    return [
        ResultColumn(
            name=field.name,
            type=field.dataType.simpleString(),
            nullable=field.nullable,
            comment=(field.metadata or {}).get("comment"),
        )
        for field in df.schema.fields
    ]


def wire_dataframe(df: DataFrame, columns: list[ResultColumn], types: WireTypes = TEXT) -> DataFrame:
    """The projection that renders the columns `types` does not keep as text. Renamed by position: names may
    repeat. A result whose columns are all kept needs none (Arrow batches are read by position): two analyses
    spared."""
    if all(types.keeps(col.type) for col in columns):
        return df
    from pyspark.sql.dataframe import DataFrame as SparkDataFrame

    positional = [f"_c{i}" for i in range(len(columns))]
    expressions = [f"{_wire_expression(name, col.type, types)} AS {name}"
                   for name, col in zip(positional, columns, strict=True)]
    # two round trips and the two lists sent whole, where `df.toDF(*names).selectExpr(*exprs)` costs one per column
    # more (py4j adds a list's strings to a Java list one by one)
    renamed = df._jdf.toDF(java_strings(df, positional))
    return SparkDataFrame(renamed.selectExpr(java_strings(df, expressions)), df.sparkSession)


def typed_arrow_schema(wire_df: DataFrame) -> pa.Schema:
    """The Arrow schema of a wire DataFrame's batches, named by position. Timestamps are UTC instants (Spark labels
    them with the session's zone; the values and the layout are the same)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(wire_df.schema)
    return pa.schema([field.with_name(f"_c{i}") for i, field in enumerate(schema)])


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` under `schema`: the same columns, renamed by position, cast where only labels differ (a timestamp's
    zone)."""
    if batch.schema.equals(schema):
        return batch
    columns = [column if column.type.equals(field.type) else column.cast(field.type)
               for column, field in zip(batch.columns, schema, strict=True)]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def wire_arrow_type(type_name: str) -> pa.DataType:
    return {
        "boolean": pa.bool_(),
        "tinyint": pa.int8(),
        "smallint": pa.int16(),
        "int": pa.int32(),
        "bigint": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "binary": pa.binary(),
    }.get(type_name, pa.string())


class ArrowBatchStream:
    """Iterates a DataFrame's Arrow batches partition by partition; `close()` tells Spark to stop early.

    The protocol is PySpark's local-iterator one: ask for a partition (write 1), read its status (1: data follows,
    0: no more, -1: the job failed), then read length-prefixed Arrow IPC record batches until the end marker.
    """

    def __init__(self, spark: SparkSession, arrow_rdd: Any, schema: pa.Schema, prefetch: bool = True) -> None:
        """`arrow_rdd`: the JVM's `toArrowBatchRdd()` of the wire DataFrame."""
        from pyspark.util import _create_local_socket

        self._schema = schema
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        port, secret, self._server = jvm.PythonRDD.toLocalIteratorAndServe(arrow_rdd, prefetch)
        self._sockfile = _create_local_socket((port, secret))
        self._status = 1
        self._in_partition = False

    @property
    def schema(self) -> pa.Schema:
        return self._schema

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        from pyspark.serializers import SpecialLengths, read_int, write_int

        while self._status == 1:
            write_int(1, self._sockfile)
            self._sockfile.flush()
            self._status = read_int(self._sockfile)
            if self._status == 1:
                self._in_partition = True
                while True:
                    length = read_int(self._sockfile)
                    if length == SpecialLengths.END_OF_DATA_SECTION:
                        break
                    if length < 0:
                        raise RuntimeError(f"unexpected marker {length} in Spark's result stream")
                    payload = self._sockfile.read(length)
                    yield pa.ipc.read_record_batch(pa.py_buffer(payload), self._schema)
                self._in_partition = False
            elif self._status == -1:
                self._server.getResult()  # raises the job's exception

    def close(self) -> None:
        """Stop Spark from computing further partitions and release the socket. Safe to call twice."""
        from pyspark.serializers import SpecialLengths, read_int, write_int

        if self._sockfile.closed:
            return
        try:
            if self._status == 1:
                if self._in_partition:
                    while True:
                        length = read_int(self._sockfile)
                        if length == SpecialLengths.END_OF_DATA_SECTION:
                            break
                        self._sockfile.read(length)
                write_int(0, self._sockfile)
                self._sockfile.flush()
                self._status = 0
        except (OSError, EOFError):
            pass  # the JVM side already ended (cancelled or failed); the socket is closed below either way
        finally:
            self._sockfile.close()


def collect_single_partition(wire_df: DataFrame, schema: pa.Schema) -> list[pa.RecordBatch]:
    """A result of one partition in one job: the local iterator would hold that partition whole too, and its job
    per partition plus socket protocol cost ~40 ms more per statement (SELECT 1, a small table). PySpark's
    `_collect_as_arrow` less its py4j calls around the collect: 5 round trips instead of 11 (it also sets and clears
    the job's call site, which only Spark's UI shows; the job's group and description are the statement's)."""
    from pyspark.errors.exceptions.captured import unwrap_spark_exception
    from pyspark.sql.pandas.serializers import ArrowCollectSerializer
    from pyspark.util import _load_from_socket

    served = wire_df._jdf.collectAsArrowToPython()   # [port, secret, the serving thread], each element a round trip
    port, secret, server = served[0], served[1], served[2]
    try:
        # unordered batches, then the order they belong in (or Spark's error, raised by the serializer)
        results = list(_load_from_socket((port, secret), ArrowCollectSerializer()))
    finally:
        with unwrap_spark_exception():
            server.getResult()   # joins the serving thread; raises the job's failure as Spark's own error
    batches, order = results[:-1], results[-1]
    return [conform(batches[index], schema) for index in order]


def arrow_schema(columns: list[ResultColumn]) -> pa.Schema:
    return pa.schema([pa.field(f"_c{i}", wire_arrow_type(col.type)) for i, col in enumerate(columns)])
