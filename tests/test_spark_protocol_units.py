"""The Databricks protocol's pure parts without a JVM: version negotiation, Arrow row sets (LZ4 too), the byte and
row bounds of a fetch, result formats and the client hints that are never settings."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from lz4 import frame as lz4_frame

from sluicegate.engine.results import ResultColumn, WireTypes
from sluicegate.engine.sql import ListBatchSource, StatementResult
from sluicegate.gateway.errors import InvalidRequestError
from sluicegate.gateway.operation.base import ArrowBlock, FetchOrientation, Operation, ResultFormat
from sluicegate.gateway.thrift import convert, protocol
from sluicegate.gateway.thrift.generated import ttypes as T
from sluicegate.policy.settings import is_client_hint

V = T.TProtocolVersion


# -- negotiation ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("client_protocol", "client_i64", "served"), [
    (None, V.SPARK_CLI_SERVICE_PROTOCOL_V7, V.SPARK_CLI_SERVICE_PROTOCOL_V7),   # the Python connector
    (None, V.SPARK_CLI_SERVICE_PROTOCOL_V9, V.SPARK_CLI_SERVICE_PROTOCOL_V7),   # the JDBC driver: ours is lower
    (None, V.SPARK_CLI_SERVICE_PROTOCOL_V2, V.SPARK_CLI_SERVICE_PROTOCOL_V2),
    (-7, V.SPARK_CLI_SERVICE_PROTOCOL_V7, V.SPARK_CLI_SERVICE_PROTOCOL_V7),     # field 1 left at its default
    (V.HIVE_CLI_SERVICE_PROTOCOL_V6, None, V.HIVE_CLI_SERVICE_PROTOCOL_V6),    # PyHive
    (V.HIVE_CLI_SERVICE_PROTOCOL_V10, None, V.HIVE_CLI_SERVICE_PROTOCOL_V10),  # Hive JDBC
    (11, None, V.HIVE_CLI_SERVICE_PROTOCOL_V10),                               # a newer Hive
])
def test_negotiation_answers_the_lower_version_of_the_clients_family(client_protocol: Any, client_i64: Any,
                                                                      served: int) -> None:
    assert protocol.negotiate(protocol.client_version(client_protocol, client_i64)) == served


@pytest.mark.parametrize(("client_protocol", "client_i64"), [(None, None), (-7, None)])
def test_a_missing_version_is_refused_not_defaulted(client_protocol: Any, client_i64: Any) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        protocol.client_version(client_protocol, client_i64)
    assert raised.value.error_class == "PROTOCOL_VERSION_MISSING" and raised.value.sqlstate == "08001"
    assert raised.value.hint


def test_a_negative_version_is_refused() -> None:
    with pytest.raises(InvalidRequestError) as raised:
        protocol.negotiate(-3)
    assert raised.value.error_class == "PROTOCOL_VERSION_UNKNOWN"


def test_spark_versions_are_columnar_and_spark() -> None:
    assert protocol.is_spark(V.SPARK_CLI_SERVICE_PROTOCOL_V1) and protocol.columnar(V.SPARK_CLI_SERVICE_PROTOCOL_V1)
    assert not protocol.is_spark(V.HIVE_CLI_SERVICE_PROTOCOL_V10)
    assert not protocol.columnar(V.HIVE_CLI_SERVICE_PROTOCOL_V5)


# -- result formats -------------------------------------------------------------------------------------------


def _execute_req(**fields: Any) -> T.TExecuteStatementReq:
    return T.TExecuteStatementReq(statement="SELECT 1", **fields)


def test_result_format_follows_the_request_in_spark_sessions_only() -> None:
    spark, hive = V.SPARK_CLI_SERVICE_PROTOCOL_V7, V.HIVE_CLI_SERVICE_PROTOCOL_V10
    native = T.TSparkArrowTypes(timestampAsArrow=True, decimalAsArrow=True, complexTypesAsArrow=True)
    asked = _execute_req(canReadArrowResult=True, canDecompressLZ4Result=True, useArrowNativeTypes=native)
    assert convert.to_result_format(asked, spark) == ResultFormat(
        arrow=True, lz4=True, types=WireTypes(date=True, timestamp=True, decimal=True, nested=True))
    assert convert.to_result_format(asked, hive) == ResultFormat()
    plain = convert.to_result_format(_execute_req(canReadArrowResult=True), spark)
    assert plain == ResultFormat(arrow=True, lz4=False, types=WireTypes(date=True))
    assert convert.to_result_format(_execute_req(canReadArrowResult=False), spark) == ResultFormat()


def test_wire_types_keep_only_the_families_asked() -> None:
    text, native = WireTypes(), WireTypes(date=True, timestamp=True, decimal=True, nested=True)
    for name in ("decimal(10,2)", "timestamp", "timestamp_ntz", "date", "array<int>", "map<string,int>",
                 "struct<a:int>"):
        assert not text.keeps(name) and native.keeps(name), name
    for name in ("int", "string", "binary", "double"):
        assert text.keeps(name) and native.keeps(name), name
    for name in ("interval day to second", "variant", "void"):
        assert not native.keeps(name), name


def test_metadata_of_a_hive_session_has_no_databricks_fields() -> None:
    columns = [ResultColumn("a", "int")]
    hive = convert.to_tresult_set_metadata(columns, ResultFormat(), None, V.HIVE_CLI_SERVICE_PROTOCOL_V10)
    assert hive.resultFormat is None and hive.arrowSchema is None
    spark = convert.to_tresult_set_metadata(columns, ResultFormat(), None, V.SPARK_CLI_SERVICE_PROTOCOL_V7)
    assert spark.resultFormat == T.TSparkRowSetType.COLUMN_BASED_SET


# -- Arrow row sets -------------------------------------------------------------------------------------------


def _read(schema_bytes: bytes, rowset: T.TRowSet, lz4: bool) -> pa.Table:
    """What the connector does: the schema message, then each batch (decompressed), as one IPC stream."""
    data = schema_bytes
    for batch in rowset.arrowBatches:
        data += lz4_frame.decompress(batch.batch) if lz4 else batch.batch
    return pa.ipc.open_stream(data).read_all()


@pytest.mark.parametrize("lz4", [False, True])
def test_arrow_rowset_round_trips_with_exact_row_counts(lz4: bool) -> None:
    wire = pa.schema([pa.field("_c0", pa.int64()), pa.field("_c1", pa.string())])
    batches = [pa.record_batch([pa.array([1, None, 3]), pa.array(["a", "b", None])], schema=wire),
               pa.record_batch([pa.array(range(10, 20)), pa.array(["x"] * 10)], schema=wire).slice(2, 5)]
    columns = [ResultColumn("id", "bigint"), ResultColumn("id", "string")]  # names may repeat
    schema = convert.to_arrow_schema(columns, wire)
    rowset = convert.to_arrow_rowset(ArrowBlock(7, wire, batches, has_more=False), schema, lz4)
    assert rowset.startRowOffset == 7 and rowset.rows == [] and rowset.columns is None
    assert [b.rowCount for b in rowset.arrowBatches] == [3, 5]
    if lz4:
        assert all(b.batch.startswith(b"\x04\x22\x4d\x18") for b in rowset.arrowBatches)  # the LZ4 frame magic
    table = _read(schema.serialize().to_pybytes(), rowset, lz4)
    assert table.column_names == ["id", "id"]
    assert table.column(0).to_pylist() == [1, None, 3, 12, 13, 14, 15, 16]
    assert table.column(1).to_pylist() == ["a", "b", None, "x", "x", "x", "x", "x"]


# -- fetch bounds ---------------------------------------------------------------------------------------------


class _Listed(Operation):
    """An operation over batches in memory: the fetch logic without Spark."""

    def __init__(self, batches: list[pa.RecordBatch], columns: list[ResultColumn]) -> None:
        super().__init__(session=None)  # type: ignore[arg-type]
        self._listed = StatementResult(columns, lambda: ListBatchSource(batches))

    def execute(self) -> StatementResult:
        return self._listed


def _finished(rows: int, batch_rows: int) -> _Listed:
    schema = pa.schema([pa.field("_c0", pa.int64()), pa.field("_c1", pa.string())])
    batches = [pa.record_batch([pa.array(range(start, min(start + batch_rows, rows))),
                                pa.array([f"v{i:06d}" for i in range(start, min(start + batch_rows, rows))])],
                               schema=schema)
               for start in range(0, rows, batch_rows)]
    operation = _Listed(batches, [ResultColumn("id", "bigint"), ResultColumn("s", "string")])
    operation.run()
    return operation


def test_max_rows_bounds_each_fetch_across_batches() -> None:
    operation = _finished(2500, 1000)
    seen: list[int] = []
    while True:
        block = operation.fetch_batches(FetchOrientation.NEXT, 700)
        assert block.num_rows <= 700
        seen += [v for b in block.batches for v in b.column(0).to_pylist()]
        if not block.has_more:
            break
    assert seen == list(range(2500))


def test_max_bytes_bounds_each_fetch_and_always_progresses() -> None:
    operation = _finished(5000, 1000)
    row_bytes = 8 + 4 + 7  # int64, string offset, 7 characters
    seen: list[int] = []
    offsets: list[int] = []
    while True:
        block = operation.fetch_batches(FetchOrientation.NEXT, 100_000, max_bytes=2000)
        assert sum(b.nbytes for b in block.batches) <= 2000 + row_bytes + 64  # validity buffers aside
        assert block.start_offset == len(seen)
        seen += [v for b in block.batches for v in b.column(0).to_pylist()]
        if not block.has_more:
            break
        assert block.num_rows >= 1
        offsets.append(block.start_offset)
    assert seen == list(range(5000))
    assert offsets == sorted(offsets) and len(offsets) > 5
    tiny = _finished(10, 10)
    assert tiny.fetch_batches(FetchOrientation.NEXT, 100, max_bytes=1).num_rows == 1  # one row, however large


def test_columnar_fetch_honours_max_bytes_too() -> None:
    operation = _finished(3000, 3000)
    block = operation.fetch(FetchOrientation.NEXT, 100_000, max_bytes=4000)
    assert 0 < block.num_rows < 3000 and block.has_more
    assert block.arrays[0].to_pylist() == list(range(block.num_rows))


def test_fetch_first_restarts_an_arrow_result() -> None:
    operation = _finished(30, 10)
    operation.fetch_batches(FetchOrientation.NEXT, 25)
    again = operation.fetch_batches(FetchOrientation.FIRST, 5)
    assert again.start_offset == 0 and again.batches[0].column(0).to_pylist() == [0, 1, 2, 3, 4]


# -- hints ----------------------------------------------------------------------------------------------------


def test_databricks_hints_are_ignored_not_settings() -> None:
    assert is_client_hint("spark.thriftserver.arrowBasedRowSet.timestampAsString")
    assert is_client_hint("query_tags")
    assert not is_client_hint("spark.thriftserver.arrowBasedRowSet")  # exact names only
    assert not is_client_hint("spark.sql.warehouse.dir")
