"""The Databricks protocol fields through the binary port, with a raw Thrift client built from the same generated
module the connector uses, sending what the connector sends (OpenSession with a Spark protocol version and no
`client_protocol`; ExecuteStatement with runAsync, direct results, Arrow, LZ4 and native types; FetchResults with
maxRows, maxBytes and includeResultSetMetadata). Arrow batches are decoded with pyarrow as the connector does."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from databricks.sql.thrift_api.TCLIService import TCLIService
from databricks.sql.thrift_api.TCLIService import ttypes as T
from lz4 import frame as lz4_frame
from pyhive_helpers import ALL_TYPES  # every type, one row of values and one of NULLs
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

SPARK_V7 = T.TProtocolVersion.SPARK_CLI_SERVICE_PROTOCOL_V7
SPARK_V9 = T.TProtocolVersion.SPARK_CLI_SERVICE_PROTOCOL_V9
TIMESTAMP_HINT = {"spark.thriftserver.arrowBasedRowSet.timestampAsString": "false"}
NATIVE = T.TSparkArrowTypes(timestampAsArrow=True, decimalAsArrow=True, complexTypesAsArrow=True,
                            intervalTypesAsArrow=False)
DIRECT = T.TSparkGetDirectResults(maxRows=100000, maxBytes=104857600)
SCHEMA = "dbx_proto_db"

SCALARS = [1, 2, 3, 4, 1.5, 2.25]


# -- the raw client -------------------------------------------------------------------------------------------


@contextmanager
def raw_client(gateway: Any) -> Iterator[Any]:
    transport = TTransport.TBufferedTransport(TSocket.TSocket(gateway.host, gateway.port))
    transport.open()
    try:
        yield TCLIService.Client(TBinaryProtocol(transport))
    finally:
        transport.close()


def ok(resp: Any) -> Any:
    assert resp.status.statusCode == T.TStatusCode.SUCCESS_STATUS, resp.status
    return resp


def open_req(version: int = SPARK_V7, **fields: Any) -> T.TOpenSessionReq:
    """As the connector builds it: `client_protocol` not sent at all, only `client_protocol_i64`."""
    req = T.TOpenSessionReq(client_protocol_i64=version, configuration=dict(TIMESTAMP_HINT),
                            canUseMultipleCatalogs=True, username="tester", **fields)
    req.client_protocol = None
    return req


@pytest.fixture(scope="module")
def gateway(start_gateway: Any) -> Any:
    """A gateway whose long polls (and so its wait for direct results) outlast a cold statement on a loaded machine:
    the tests below assert what direct results hold, which needs the statement to end within the wait."""
    return start_gateway({"operation": {"long_polling_timeout": 120.0, "databricks_long_polling_timeout": 120.0}})


@pytest.fixture()
def dbx(gateway: Any) -> Iterator[tuple[Any, Any]]:
    """A raw client and a Spark-protocol session."""
    with raw_client(gateway) as client:
        resp = ok(client.OpenSession(open_req()))
        yield client, resp.sessionHandle
        client.CloseSession(T.TCloseSessionReq(sessionHandle=resp.sessionHandle))


def execute(client: Any, session: Any, sql: str, **fields: Any) -> T.TExecuteStatementResp:
    fields.setdefault("runAsync", True)
    return ok(client.ExecuteStatement(T.TExecuteStatementReq(
        sessionHandle=session, statement=sql, confOverlay=dict(TIMESTAMP_HINT), **fields)))


def wait(client: Any, handle: Any, limit: float = 300) -> T.TGetOperationStatusResp:
    """Poll as the connector does (each call long-polls on the server, so no sleep here)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        status = ok(client.GetOperationStatus(T.TGetOperationStatusReq(operationHandle=handle)))
        if status.operationState not in (T.TOperationState.PENDING_STATE, T.TOperationState.RUNNING_STATE):
            return status
    raise AssertionError("the statement did not end")


def arrow_table(schema_bytes: bytes, rowsets: list[T.TRowSet], lz4: bool) -> pa.Table:
    """The connector's decoding: the schema message, then every batch (one LZ4 frame each when compressed)."""
    data = schema_bytes
    for rowset in rowsets:
        assert rowset.arrowBatches is not None and not rowset.columns
        for batch in rowset.arrowBatches:
            data += lz4_frame.decompress(batch.batch) if lz4 else batch.batch
    return pa.ipc.open_stream(data).read_all()


def fetch_rowsets(client: Any, handle: Any, max_rows: int = 100000, max_bytes: int = 104857600,
                  first_offset: int = 0) -> Iterator[T.TFetchResultsResp]:
    """FetchResults as the connector loops it, checking each response's offset and its metadata."""
    offset = first_offset
    while True:
        resp = ok(client.FetchResults(T.TFetchResultsReq(
            operationHandle=handle, orientation=T.TFetchOrientation.FETCH_NEXT, maxRows=max_rows,
            maxBytes=max_bytes, includeResultSetMetadata=True)))
        assert resp.resultSetMetadata is not None and resp.resultSetMetadata.resultFormat is not None
        assert resp.results.startRowOffset == offset
        rows = sum(b.rowCount for b in resp.results.arrowBatches or [])
        offset += rows
        yield resp
        if not resp.hasMoreRows:
            return


# -- OpenSession ----------------------------------------------------------------------------------------------


def test_open_session_negotiates_the_spark_version_and_the_namespace(gateway: Any) -> None:
    with raw_client(gateway) as client:
        resp = ok(client.OpenSession(open_req()))
        assert resp.serverProtocolVersion == SPARK_V7
        assert resp.canUseMultipleCatalogs is True
        assert resp.initialNamespace.catalogName == "main" and resp.initialNamespace.schemaName == "default"
        higher = ok(client.OpenSession(open_req(SPARK_V9)))
        assert higher.serverProtocolVersion == SPARK_V7  # min(client, the highest implemented)
        lower = ok(client.OpenSession(open_req(T.TProtocolVersion.SPARK_CLI_SERVICE_PROTOCOL_V4)))
        assert lower.serverProtocolVersion == T.TProtocolVersion.SPARK_CLI_SERVICE_PROTOCOL_V4
        hive = ok(client.OpenSession(T.TOpenSessionReq(client_protocol=T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6,
                                                       username="tester")))
        assert hive.serverProtocolVersion == T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6
        assert hive.canUseMultipleCatalogs is None and hive.initialNamespace is None  # Hive clients: as before
        for opened in (resp, higher, lower, hive):
            ok(client.CloseSession(T.TCloseSessionReq(sessionHandle=opened.sessionHandle)))


def test_open_session_without_any_version_is_refused(gateway: Any) -> None:
    with raw_client(gateway) as client:
        req = open_req()
        req.client_protocol_i64 = None
        resp = client.OpenSession(req)
        assert resp.status.statusCode == T.TStatusCode.ERROR_STATUS
        assert "PROTOCOL_VERSION_MISSING" in resp.status.errorMessage and resp.status.sqlState == "08001"


def test_initial_namespace_sets_the_current_database(gateway: Any) -> None:
    with raw_client(gateway) as client:
        setup = ok(client.OpenSession(open_req()))
        made = execute(client, setup.sessionHandle, f"CREATE DATABASE IF NOT EXISTS {SCHEMA}", runAsync=False)
        ok(client.CloseOperation(T.TCloseOperationReq(operationHandle=made.operationHandle)))
        for catalog in ("main", "hive_metastore", None):
            resp = ok(client.OpenSession(open_req(initialNamespace=T.TNamespace(catalogName=catalog,
                                                                                 schemaName=SCHEMA))))
            assert resp.initialNamespace.schemaName == SCHEMA
            direct = execute(client, resp.sessionHandle, "SELECT current_database()", getDirectResults=DIRECT)
            meta = direct.directResults.resultSetMetadata
            assert meta.resultFormat == T.TSparkRowSetType.COLUMN_BASED_SET  # no canReadArrowResult: columns
            values = direct.directResults.resultSet.results.columns[0].stringVal.values
            assert values == [SCHEMA]
            ok(client.CloseSession(T.TCloseSessionReq(sessionHandle=resp.sessionHandle)))
        ok(client.CloseSession(T.TCloseSessionReq(sessionHandle=setup.sessionHandle)))


def test_an_unknown_catalog_in_the_initial_namespace_is_refused_clearly(gateway: Any) -> None:
    with raw_client(gateway) as client:
        resp = client.OpenSession(open_req(initialNamespace=T.TNamespace(catalogName="other_catalog")))
        assert resp.status.statusCode == T.TStatusCode.ERROR_STATUS
        assert "NO_SUCH_CATALOG_EXCEPTION" in resp.status.errorMessage and resp.status.sqlState == "42704"


def test_a_schema_not_created_yet_starts_the_session_in_default(gateway: Any) -> None:
    """As on Databricks: dbt-databricks opens its first sessions with the profile's schema, then creates it."""
    with raw_client(gateway) as client:
        resp = ok(client.OpenSession(open_req(initialNamespace=T.TNamespace(catalogName="main",
                                                                             schemaName="no_such_db_here"))))
        assert resp.initialNamespace.schemaName == "default"
        direct = execute(client, resp.sessionHandle, "SELECT current_database()", getDirectResults=DIRECT)
        assert direct.directResults.resultSet.results.columns[0].stringVal.values == ["default"]
        ok(client.CloseSession(T.TCloseSessionReq(sessionHandle=resp.sessionHandle)))


# -- Arrow results --------------------------------------------------------------------------------------------


def test_all_types_as_native_arrow_with_lz4_in_direct_results(dbx: tuple[Any, Any]) -> None:
    client, session = dbx
    resp = execute(client, session, ALL_TYPES, getDirectResults=DIRECT, canReadArrowResult=True,
                   canDecompressLZ4Result=True, canDownloadResult=True, useArrowNativeTypes=NATIVE)
    direct = resp.directResults
    assert direct.operationStatus.operationState == T.TOperationState.FINISHED_STATE
    meta = direct.resultSetMetadata
    assert meta.resultFormat == T.TSparkRowSetType.ARROW_BASED_SET and meta.lz4Compressed is True
    assert not meta.isStagingOperation
    assert direct.resultSet.hasMoreRows is False and direct.closeOperation is not None  # closed server-side
    assert [b.rowCount for b in direct.resultSet.results.arrowBatches] and \
        sum(b.rowCount for b in direct.resultSet.results.arrowBatches) == 2
    table = arrow_table(meta.arrowSchema, [direct.resultSet.results], lz4=True)
    assert table.column_names == ["t", "s", "i", "b", "f", "d", "dec", "str", "bin", "bool", "day", "ts", "arr", "m",
                                  "st"]
    types = [field.type for field in table.schema]
    assert types[:10] == [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64(),
                          pa.decimal128(10, 2), pa.string(), pa.binary(), pa.bool_()]
    assert types[10] == pa.date32() and pa.types.is_timestamp(types[11]) and types[11].unit == "us"
    assert pa.types.is_list(types[12]) and pa.types.is_map(types[13]) and pa.types.is_struct(types[14])
    first, second = table.to_pylist()
    assert [first[c] for c in ["t", "s", "i", "b", "f", "d"]] == SCALARS
    assert first["dec"] == Decimal("12.34") and first["str"] == "text" and first["bin"] == b"\x01\x02"
    assert first["bool"] is True and first["day"] == dt.date(2024, 1, 2)
    assert first["ts"] == dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone.utc)  # session zone UTC
    assert first["arr"] == [1, 2] and first["m"] == [("k", 1)] and first["st"] == {"a": 1, "b": "x"}
    assert all(value is None for value in second.values())
    # the thrift schema keeps the Hive type ids, with the decimal's qualifiers
    columns = meta.schema.columns
    decimal = columns[6].typeDesc.types[0].primitiveEntry
    assert decimal.type == T.TTypeId.DECIMAL_TYPE and decimal.typeQualifiers.qualifiers["scale"].i32Value == 2
    gone = client.CloseOperation(T.TCloseOperationReq(operationHandle=resp.operationHandle))
    assert gone.status.statusCode == T.TStatusCode.ERROR_STATUS  # already closed by the direct results


def test_without_native_types_decimals_timestamps_and_nested_come_as_text(dbx: tuple[Any, Any]) -> None:
    client, session = dbx
    resp = execute(client, session, ALL_TYPES, getDirectResults=DIRECT, canReadArrowResult=True)
    meta = resp.directResults.resultSetMetadata
    assert meta.resultFormat == T.TSparkRowSetType.ARROW_BASED_SET and not meta.lz4Compressed
    table = arrow_table(meta.arrowSchema, [resp.directResults.resultSet.results], lz4=False)
    types = {field.name: field.type for field in table.schema}
    assert types["dec"] == types["ts"] == types["arr"] == types["m"] == types["st"] == pa.string()
    assert types["day"] == pa.date32()  # dates are date32 in any Arrow result
    first, second = table.to_pylist()
    assert first["dec"] == "12.34" and first["ts"] == "2024-01-02 03:04:05.123456"
    assert first["arr"] == "[1,2]" and first["m"] == '{"k":1}' and first["st"] == '{"a":1,"b":"x"}'
    assert [first[c] for c in ["t", "s", "i", "b", "f", "d"]] == SCALARS
    assert all(value is None for value in second.values())


def test_many_rows_in_several_batches_within_max_rows_and_max_bytes(dbx: tuple[Any, Any]) -> None:
    """No direct results: ExecuteStatement, status, metadata, then FetchResults until hasMoreRows is false."""
    client, session = dbx
    sql = "SELECT id, concat('row-', CAST(id AS STRING)) AS label FROM range(100000)"
    resp = execute(client, session, sql, canReadArrowResult=True, canDecompressLZ4Result=True,
                   useArrowNativeTypes=NATIVE)
    assert resp.directResults is None
    assert wait(client, resp.operationHandle).operationState == T.TOperationState.FINISHED_STATE
    meta = ok(client.GetResultSetMetadata(T.TGetResultSetMetadataReq(operationHandle=resp.operationHandle)))
    assert meta.resultFormat == T.TSparkRowSetType.ARROW_BASED_SET and meta.lz4Compressed
    responses = list(fetch_rowsets(client, resp.operationHandle, max_rows=30000))
    counts = [sum(b.rowCount for b in r.results.arrowBatches) for r in responses]
    assert sum(counts) == 100000 and max(counts) <= 30000 and len(counts) >= 4
    assert sum(len(r.results.arrowBatches) for r in responses) > 4  # Spark's batches, sliced at the bounds
    table = arrow_table(meta.arrowSchema, [r.results for r in responses], lz4=True)
    assert table.column("id").to_pylist() == list(range(100000))
    assert table.column("label")[99999].as_py() == "row-99999"
    ok(client.CloseOperation(T.TCloseOperationReq(operationHandle=resp.operationHandle)))

    bounded = execute(client, session, sql, canReadArrowResult=True)
    wait(client, bounded.operationHandle)
    first = next(fetch_rowsets(client, bounded.operationHandle, max_rows=100000, max_bytes=64 * 1024))
    sizes = [len(b.batch) for b in first.results.arrowBatches]
    assert first.hasMoreRows and 0 < sum(sizes) <= 64 * 1024 + 1024  # IPC framing aside
    rows = sum(b.rowCount for b in first.results.arrowBatches)
    assert 1000 < rows < 100000
    ok(client.CloseOperation(T.TCloseOperationReq(operationHandle=bounded.operationHandle)))


def test_native_nested_types_stream_from_several_partitions(dbx: tuple[Any, Any]) -> None:
    """Spark's own Arrow types read from its partition stream (not one collected partition), LZ4 on."""
    client, session = dbx
    sql = ("SELECT id, array(id, NULL) AS a, map('k', id) AS m, named_struct('x', id, 'y', CAST(id AS STRING)) AS s, "
           "CAST(id AS DECIMAL(20,3)) / 8 AS d, timestamp_seconds(id) AS ts, date_from_unix_date(id) AS day "
           "FROM range(0, 40000, 1, 4)")
    resp = execute(client, session, sql, getDirectResults=DIRECT, canReadArrowResult=True,
                   canDecompressLZ4Result=True, useArrowNativeTypes=NATIVE)
    direct = resp.directResults
    assert direct.resultSet.hasMoreRows is False and len(direct.resultSet.results.arrowBatches) >= 4
    table = arrow_table(direct.resultSetMetadata.arrowSchema, [direct.resultSet.results], lz4=True)
    qualifiers = direct.resultSetMetadata.schema.columns[4].typeDesc.types[0].primitiveEntry.typeQualifiers.qualifiers
    assert table.num_rows == 40000 and table.schema.field("d").type == pa.decimal128(
        qualifiers["precision"].i32Value, qualifiers["scale"].i32Value) == pa.decimal128(23, 6)  # as Spark types it
    row = table.slice(12345, 1).to_pylist()[0]
    assert row["a"] == [12345, None] and row["m"] == [("k", 12345)] and row["s"] == {"x": 12345, "y": "12345"}
    assert row["d"] == Decimal("1543.125") and row["day"] == dt.date(1970, 1, 1) + dt.timedelta(days=12345)
    assert row["ts"] == dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=12345)
    assert table.column("id").to_pylist() == list(range(40000))


def test_direct_results_hold_the_first_rows_and_leave_the_rest_to_fetch(dbx: tuple[Any, Any]) -> None:
    client, session = dbx
    small = T.TSparkGetDirectResults(maxRows=1000, maxBytes=104857600)
    resp = execute(client, session, "SELECT id FROM range(2500)", getDirectResults=small, canReadArrowResult=True)
    direct = resp.directResults
    assert direct.resultSet.hasMoreRows and direct.closeOperation is None
    assert sum(b.rowCount for b in direct.resultSet.results.arrowBatches) == 1000
    rest = list(fetch_rowsets(client, resp.operationHandle, first_offset=1000))
    table = arrow_table(direct.resultSetMetadata.arrowSchema,
                        [direct.resultSet.results, *(r.results for r in rest)], lz4=False)
    assert table.column("id").to_pylist() == list(range(2500))
    ok(client.CloseOperation(T.TCloseOperationReq(operationHandle=resp.operationHandle)))


def test_a_statement_still_running_gets_its_status_only(start_gateway: Any) -> None:
    """Past the wait, direct results hold the running state alone; the client polls and fetches as usual."""
    impatient = start_gateway({"operation": {"databricks_long_polling_timeout": 0.01}})
    with raw_client(impatient) as client:
        session = ok(client.OpenSession(open_req())).sessionHandle
        resp = execute(client, session, "SELECT sum(id) AS total FROM range(30000000)", getDirectResults=DIRECT,
                       canReadArrowResult=True)
        direct = resp.directResults
        assert direct.operationStatus.operationState in (T.TOperationState.PENDING_STATE,
                                                         T.TOperationState.RUNNING_STATE)
        assert direct.resultSetMetadata is None and direct.resultSet is None and direct.closeOperation is None
        assert wait(client, resp.operationHandle).operationState == T.TOperationState.FINISHED_STATE
        meta = ok(client.GetResultSetMetadata(T.TGetResultSetMetadataReq(operationHandle=resp.operationHandle)))
        fetched = list(fetch_rowsets(client, resp.operationHandle))
        table = arrow_table(meta.arrowSchema, [r.results for r in fetched], lz4=False)
        assert table.column("total").to_pylist() == [30000000 * 29999999 // 2]
        ok(client.CloseOperation(T.TCloseOperationReq(operationHandle=resp.operationHandle)))
        ok(client.CloseSession(T.TCloseSessionReq(sessionHandle=session)))


# -- columns, commands, errors, listings ----------------------------------------------------------------------


def test_columnar_results_carry_the_format_and_the_metadata(dbx: tuple[Any, Any]) -> None:
    client, session = dbx
    resp = execute(client, session, "SELECT id, CAST(NULL AS STRING) AS n FROM range(3)")
    wait(client, resp.operationHandle)
    meta = ok(client.GetResultSetMetadata(T.TGetResultSetMetadataReq(operationHandle=resp.operationHandle)))
    assert meta.resultFormat == T.TSparkRowSetType.COLUMN_BASED_SET and meta.arrowSchema is None
    fetched = next(fetch_rowsets(client, resp.operationHandle))
    assert fetched.resultSetMetadata.resultFormat == T.TSparkRowSetType.COLUMN_BASED_SET
    assert fetched.results.columns[0].i64Val.values == [0, 1, 2]
    assert fetched.results.columns[1].stringVal.nulls == b"\x07"
    ok(client.CloseOperation(T.TCloseOperationReq(operationHandle=resp.operationHandle)))


def test_a_command_without_columns_is_answered_and_closed_in_one_response(dbx: tuple[Any, Any]) -> None:
    client, session = dbx
    resp = execute(client, session, "SET spark.sql.shuffle.partitions=2", getDirectResults=DIRECT,
                   canReadArrowResult=True, canDecompressLZ4Result=True, useArrowNativeTypes=NATIVE)
    direct = resp.directResults
    assert direct.operationStatus.operationState == T.TOperationState.FINISHED_STATE
    assert direct.resultSetMetadata.resultFormat in (T.TSparkRowSetType.ARROW_BASED_SET,
                                                     T.TSparkRowSetType.COLUMN_BASED_SET)
    assert direct.resultSet.hasMoreRows is False and direct.closeOperation is not None
    use = execute(client, session, f"CREATE DATABASE IF NOT EXISTS {SCHEMA}", getDirectResults=DIRECT,
                  canReadArrowResult=True)
    meta = use.directResults.resultSetMetadata
    assert meta.resultFormat == T.TSparkRowSetType.COLUMN_BASED_SET and meta.schema.columns == []
    assert use.directResults.closeOperation is not None


def test_command_output_comes_as_arrow_too(dbx: tuple[Any, Any]) -> None:
    """Rows a command produced in the gateway (not a Spark query) go out in the same Arrow form."""
    client, session = dbx
    resp = execute(client, session, "SHOW DATABASES", getDirectResults=DIRECT, canReadArrowResult=True,
                   canDecompressLZ4Result=True, useArrowNativeTypes=NATIVE)
    meta = resp.directResults.resultSetMetadata
    assert meta.resultFormat == T.TSparkRowSetType.ARROW_BASED_SET
    table = arrow_table(meta.arrowSchema, [resp.directResults.resultSet.results], lz4=True)
    assert table.schema.types == [pa.string()] and "default" in table.column(0).to_pylist()


def test_a_failing_statement_reports_its_error_in_the_direct_results(dbx: tuple[Any, Any]) -> None:
    client, session = dbx
    resp = execute(client, session, "SELECT no_such_column FROM range(1)", getDirectResults=DIRECT,
                   canReadArrowResult=True)
    status = resp.directResults.operationStatus
    assert status.operationState == T.TOperationState.ERROR_STATE
    assert "UNRESOLVED_COLUMN" in status.displayMessage and status.displayMessage == status.errorMessage
    assert status.sqlState == "42703"
    assert resp.directResults.resultSet is None
    ok(client.CloseOperation(T.TCloseOperationReq(operationHandle=resp.operationHandle)))


def test_native_parameters_are_refused_with_the_way_around(dbx: tuple[Any, Any]) -> None:
    client, session = dbx
    parameter = T.TSparkParameter(name="n", type="INT", value=T.TSparkParameterValue(stringValue="1"))
    resp = client.ExecuteStatement(T.TExecuteStatementReq(sessionHandle=session, statement="SELECT :n",
                                                          runAsync=True, parameters=[parameter]))
    assert resp.status.statusCode == T.TStatusCode.ERROR_STATUS and resp.status.sqlState == "0A000"
    assert "FEATURE_NOT_SUPPORTED" in resp.status.errorMessage and "use_inline_params" in resp.status.errorMessage
    empty = execute(client, session, "SELECT 1 AS one", parameters=[], getDirectResults=DIRECT)  # as sent usually
    assert empty.directResults.resultSet.results.columns[0].i32Val.values == [1]


def test_metadata_listings_answer_with_direct_results(dbx: tuple[Any, Any]) -> None:
    client, session = dbx
    resp = ok(client.GetSchemas(T.TGetSchemasReq(sessionHandle=session, schemaName="%",
                                                 getDirectResults=DIRECT)))
    direct = resp.directResults
    assert direct.resultSetMetadata.resultFormat == T.TSparkRowSetType.COLUMN_BASED_SET
    assert "default" in direct.resultSet.results.columns[0].stringVal.values
    assert direct.closeOperation is not None and direct.resultSet.hasMoreRows is False
    plain = ok(client.GetCatalogs(T.TGetCatalogsReq(sessionHandle=session)))
    assert plain.directResults is None
    meta = ok(client.GetResultSetMetadata(T.TGetResultSetMetadataReq(operationHandle=plain.operationHandle)))
    assert meta.resultFormat == T.TSparkRowSetType.COLUMN_BASED_SET


def test_hive_sessions_get_no_databricks_fields(gateway: Any) -> None:
    """A Hive client asking for Arrow anyway still gets HiveServer2 columns and no Databricks field."""
    with raw_client(gateway) as client:
        opened = ok(client.OpenSession(T.TOpenSessionReq(
            client_protocol=T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10, username="tester")))
        resp = execute(client, opened.sessionHandle, "SELECT 1 AS one", getDirectResults=DIRECT,
                       canReadArrowResult=True)
        assert resp.directResults is None
        wait(client, resp.operationHandle)
        meta = ok(client.GetResultSetMetadata(T.TGetResultSetMetadataReq(operationHandle=resp.operationHandle)))
        assert meta.resultFormat is None and meta.arrowSchema is None
        fetched = ok(client.FetchResults(T.TFetchResultsReq(operationHandle=resp.operationHandle, maxRows=10,
                                                            includeResultSetMetadata=True)))
        assert fetched.resultSetMetadata is None and fetched.results.columns[0].i32Val.values == [1]
        ok(client.CloseSession(T.TCloseSessionReq(sessionHandle=opened.sessionHandle)))


def test_pyhive_still_reads_logs_by_getlog(connect: Any) -> None:
    """GetLog is HiveServer2's, not in the Databricks IDL; PyHive's fetch_logs() asks it first and must get it."""
    from TCLIService import ttypes as hive_types

    connection = connect()
    cursor = connection.cursor()
    cursor.execute("SELECT 1")
    assert cursor.fetchall() == [(1,)]
    resp = connection.client.GetLog(hive_types.TGetLogReq(operationHandle=cursor._operationHandle))
    assert resp.status.statusCode == hive_types.TStatusCode.SUCCESS_STATUS
    assert "Running: SELECT 1" in resp.log and "Finished" in resp.log
