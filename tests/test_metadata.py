"""The HiveServer2 metadata RPCs and the protocol's corners, driven raw with PyHive's generated Thrift client.

Every request goes over a real PyHive connection (its `_client` and `_sessionHandle`) to the shared gateway; the
answers are decoded here, nulls included, so that what JDBC's DatabaseMetaData would read is what is asserted.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pyhive import hive
from TCLIService import ttypes as T

SCHEMA = "meta_db"
V1 = T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V1
V5 = T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V5
V6 = T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6
V10 = T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10

_COLUMN_KINDS = ("boolVal", "byteVal", "i16Val", "i32Val", "i64Val", "doubleVal", "stringVal", "binaryVal")
_VALUE_KINDS = ("boolVal", "byteVal", "i16Val", "i32Val", "i64Val", "doubleVal", "stringVal")


# -- decoding -------------------------------------------------------------------------------------------------


def ok(resp: Any) -> Any:
    assert resp.status.statusCode == T.TStatusCode.SUCCESS_STATUS, resp.status
    return resp


def column_values(column: T.TColumn) -> list[Any]:
    """One TColumn's values with its null bitmap applied (bit i of the little-endian bitmap = row i is NULL)."""
    for kind in _COLUMN_KINDS:
        typed = getattr(column, kind)
        if typed is not None:
            values = list(typed.values)
            nulls = typed.nulls or b""
            for i in range(len(values)):
                if i // 8 < len(nulls) and nulls[i // 8] >> (i % 8) & 1:
                    values[i] = None
            return values
    raise AssertionError(f"a TColumn with no values set: {column}")


def row_value(value: T.TColumnValue) -> Any:
    set_kinds = [kind for kind in _VALUE_KINDS if getattr(value, kind) is not None]
    assert len(set_kinds) == 1, value
    return getattr(value, set_kinds[0]).value


def decode(rowset: T.TRowSet) -> list[tuple[Any, ...]]:
    if rowset.columns:
        assert not rowset.rows, "a row set is either columnar or row-based, not both"
        return list(zip(*(column_values(c) for c in rowset.columns), strict=True))
    return [tuple(row_value(v) for v in row.colVals) for row in rowset.rows or []]


def column_names(client: Any, handle: T.TOperationHandle) -> list[str]:
    schema = ok(client.GetResultSetMetadata(T.TGetResultSetMetadataReq(operationHandle=handle))).schema
    return [c.columnName for c in schema.columns]


def column_types(client: Any, handle: T.TOperationHandle) -> list[str]:
    schema = ok(client.GetResultSetMetadata(T.TGetResultSetMetadataReq(operationHandle=handle))).schema
    return [T.TTypeId._VALUES_TO_NAMES[c.typeDesc.types[0].primitiveEntry.type] for c in schema.columns]


def fetch(client: Any, handle: T.TOperationHandle, max_rows: int = 1000,
          orientation: int = T.TFetchOrientation.FETCH_NEXT) -> list[tuple[Any, ...]]:
    resp = ok(client.FetchResults(T.TFetchResultsReq(operationHandle=handle, orientation=orientation,
                                                     maxRows=max_rows)))
    return decode(resp.results)


def fetch_all(client: Any, handle: T.TOperationHandle) -> list[tuple[Any, ...]]:
    """Read to the first empty batch, as PyHive does."""
    rows: list[tuple[Any, ...]] = []
    while True:
        batch = fetch(client, handle)
        if not batch:
            return rows
        rows.extend(batch)


def records(client: Any, resp: Any) -> list[dict[str, Any]]:
    """A metadata operation's rows as dicts keyed by the result's column names."""
    handle = ok(resp).operationHandle
    names = column_names(client, handle)
    return [dict(zip(names, row, strict=True)) for row in fetch_all(client, handle)]


def execute(client: Any, session: T.TSessionHandle, sql: str) -> T.TOperationHandle:
    return ok(client.ExecuteStatement(T.TExecuteStatementReq(sessionHandle=session, statement=sql))).operationHandle


def bogus_handle() -> T.THandleIdentifier:
    return T.THandleIdentifier(guid=uuid.uuid4().bytes, secret=uuid.uuid4().bytes)


# -- fixtures -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def objects(gateway: Any) -> Iterator[None]:
    """A schema of its own: two tables and a view, so that listings are not disturbed by other tests."""
    conn = hive.connect(gateway.host, gateway.port, username="tester")
    cursor = conn.cursor()
    cursor.execute(f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
    cursor.execute(
        f"CREATE TABLE {SCHEMA}.meta_t1 (id INT COMMENT 'the id', name STRING, amount DECIMAL(10,2), "
        f"ts TIMESTAMP, d DATE, flag BOOLEAN, big BIGINT, tags ARRAY<STRING>) USING parquet COMMENT 'first table'"
    )
    cursor.execute(f"CREATE TABLE {SCHEMA}.meta_t2 (x DOUBLE) USING parquet")
    # A view keeps the nullability of its query: range's id and a cast of it are NOT NULL.
    cursor.execute(f"CREATE VIEW {SCHEMA}.meta_v COMMENT 'the view' AS SELECT id, CAST(id AS STRING) AS s "
                   f"FROM range(3)")
    try:
        yield
    finally:
        cursor.execute(f"DROP DATABASE IF EXISTS {SCHEMA} CASCADE")
        conn.close()


@pytest.fixture()
def raw(connect: Any) -> tuple[Any, T.TSessionHandle]:
    conn = connect()
    return conn._client, conn._sessionHandle


# -- GetInfo and the listings ---------------------------------------------------------------------------------


def test_get_info_names_the_server_and_spark(raw, spark):
    client, session = raw

    def info(kind: int) -> T.TGetInfoValue:
        return ok(client.GetInfo(T.TGetInfoReq(sessionHandle=session, infoType=kind))).infoValue

    assert info(T.TGetInfoType.CLI_SERVER_NAME).stringValue == "sluicegate"
    assert info(T.TGetInfoType.CLI_DBMS_NAME).stringValue == "Spark SQL"
    assert info(T.TGetInfoType.CLI_DBMS_VER).stringValue == spark.version
    assert info(T.TGetInfoType.CLI_MAX_TABLE_NAME_LEN).lenValue == 128


def test_get_info_of_an_unknown_kind_is_an_error_not_a_crash(raw):
    client, session = raw
    resp = client.GetInfo(T.TGetInfoReq(sessionHandle=session, infoType=T.TGetInfoType.CLI_MAX_DRIVER_CONNECTIONS))
    assert resp.status.statusCode == T.TStatusCode.ERROR_STATUS
    assert resp.status.sqlState == "22023"
    assert ok(client.GetInfo(T.TGetInfoReq(sessionHandle=session,
                                           infoType=T.TGetInfoType.CLI_DBMS_NAME))).infoValue.stringValue


def test_get_catalogs_lists_the_one_catalog(raw):
    client, session = raw
    handle = ok(client.GetCatalogs(T.TGetCatalogsReq(sessionHandle=session))).operationHandle
    assert column_names(client, handle) == ["TABLE_CAT"]
    assert fetch_all(client, handle) == [("main",)]


def test_get_schemas_with_a_pattern(raw, objects):
    client, session = raw
    every = records(client, client.GetSchemas(T.TGetSchemasReq(sessionHandle=session)))
    assert {"TABLE_SCHEM": "default", "TABLE_CATALOG": "main"} in every
    assert {"TABLE_SCHEM": SCHEMA, "TABLE_CATALOG": "main"} in every
    assert records(client, client.GetSchemas(T.TGetSchemasReq(sessionHandle=session, schemaName="meta%"))) == [
        {"TABLE_SCHEM": SCHEMA, "TABLE_CATALOG": "main"}
    ]
    # `_` is one character, `\_` a literal underscore; matching ignores case as the metastore does
    assert [r["TABLE_SCHEM"] for r in records(client, client.GetSchemas(
        T.TGetSchemasReq(sessionHandle=session, schemaName="META\\_D_")))] == [SCHEMA]
    assert records(client, client.GetSchemas(T.TGetSchemasReq(sessionHandle=session, schemaName="meta\\_"))) == []


def test_get_tables_with_patterns_and_table_types(raw, objects):
    client, session = raw

    def tables(**request: Any) -> list[dict[str, Any]]:
        return records(client, client.GetTables(T.TGetTablesReq(sessionHandle=session, **request)))

    listed = tables(schemaName=SCHEMA, tableName="%")
    assert [(t["TABLE_SCHEM"], t["TABLE_NAME"], t["TABLE_TYPE"], t["REMARKS"]) for t in listed] == [
        (SCHEMA, "meta_t1", "TABLE", "first table"),
        (SCHEMA, "meta_t2", "TABLE", ""),
        (SCHEMA, "meta_v", "VIEW", "the view"),
    ]
    assert list(listed[0]) == ["TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS", "TYPE_CAT",
                               "TYPE_SCHEM", "TYPE_NAME", "SELF_REFERENCING_COL_NAME", "REF_GENERATION"]
    assert listed[0]["TYPE_NAME"] is None and listed[0]["REF_GENERATION"] is None
    assert [t["TABLE_NAME"] for t in tables(schemaName="meta%", tableName="meta_t%", tableTypes=["TABLE"])] == [
        "meta_t1", "meta_t2"]
    assert [t["TABLE_NAME"] for t in tables(schemaName=SCHEMA, tableTypes=["VIEW"])] == ["meta_v"]
    assert [t["TABLE_NAME"] for t in tables(schemaName=SCHEMA, tableName="%_T1")] == ["meta_t1"]
    assert [t["TABLE_NAME"] for t in tables(schemaName=SCHEMA, tableTypes=["TABLE", "VIEW"])] == [
        "meta_t1", "meta_t2", "meta_v"]
    # No schema pattern: every schema; the view is found by name alone
    assert [(t["TABLE_SCHEM"], t["TABLE_NAME"]) for t in tables(tableName="meta_v")] == [(SCHEMA, "meta_v")]
    assert tables(schemaName="no_such_schema%") == []


def test_temporary_views_are_listed_without_a_schema(connect, objects):
    conn = connect()
    client, session = conn._client, conn._sessionHandle
    conn.cursor().execute("CREATE TEMPORARY VIEW meta_tmp AS SELECT 1 AS one, 'x' AS label")

    def tables(**request: Any) -> list[tuple[Any, ...]]:
        found = records(client, client.GetTables(T.TGetTablesReq(sessionHandle=session, **request)))
        return [(t["TABLE_SCHEM"], t["TABLE_NAME"], t["TABLE_TYPE"]) for t in found]

    assert tables(tableName="meta\\_tmp") == [(None, "meta_tmp", "VIEW")]
    assert tables(tableName="meta\\_tmp", tableTypes=["VIEW"]) == [(None, "meta_tmp", "VIEW")]
    assert tables(tableName="meta\\_tmp", tableTypes=["TABLE"]) == []
    # as Spark's Thrift server: a temporary view is listed whatever the schema pattern
    assert [name for _, name, _ in tables(schemaName=SCHEMA, tableName="meta%")] == [
        "meta_t1", "meta_t2", "meta_v", "meta_tmp"]
    columns = records(client, client.GetColumns(T.TGetColumnsReq(sessionHandle=session, tableName="meta_tmp")))
    assert [(c["TABLE_SCHEM"], c["TABLE_NAME"], c["COLUMN_NAME"], c["DATA_TYPE"], c["NULLABLE"],
             c["ORDINAL_POSITION"]) for c in columns] == [
        (None, "meta_tmp", "one", 4, 0, 1), (None, "meta_tmp", "label", 12, 0, 2)]
    # another session has its own temporary views
    other = connect()
    assert records(other._client, other._client.GetTables(
        T.TGetTablesReq(sessionHandle=other._sessionHandle, tableName="meta\\_tmp"))) == []


def test_get_table_types(raw):
    client, session = raw
    handle = ok(client.GetTableTypes(T.TGetTableTypesReq(sessionHandle=session))).operationHandle
    assert column_names(client, handle) == ["TABLE_TYPE"]
    assert fetch_all(client, handle) == [("TABLE",), ("VIEW",)]


def test_get_columns_describes_each_column_as_jdbc_does(raw, objects):
    client, session = raw
    resp = client.GetColumns(T.TGetColumnsReq(sessionHandle=session, schemaName=SCHEMA, tableName="meta_t1"))
    handle = ok(resp).operationHandle
    assert column_types(client, handle)[:7] == ["STRING_TYPE", "STRING_TYPE", "STRING_TYPE", "STRING_TYPE",
                                               "INT_TYPE", "STRING_TYPE", "INT_TYPE"]
    names = column_names(client, handle)
    columns = {row[3]: dict(zip(names, row, strict=True)) for row in fetch_all(client, handle)}
    assert list(columns) == ["id", "name", "amount", "ts", "d", "flag", "big", "tags"]
    wanted = ("DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "DECIMAL_DIGITS", "NUM_PREC_RADIX", "NULLABLE",
              "ORDINAL_POSITION", "IS_NULLABLE")
    described = {name: tuple(col[key] for key in wanted) for name, col in columns.items()}
    assert described == {
        # java.sql.Types: INTEGER 4, VARCHAR 12, DECIMAL 3, TIMESTAMP 93, DATE 91, BOOLEAN 16, BIGINT -5, ARRAY 2003
        "id": (4, "INT", 10, 0, 10, 1, 1, "YES"),
        "name": (12, "STRING", 2147483647, None, None, 1, 2, "YES"),
        "amount": (3, "DECIMAL(10,2)", 10, 2, 10, 1, 3, "YES"),
        "ts": (93, "TIMESTAMP", 29, None, None, 1, 4, "YES"),
        "d": (91, "DATE", 10, None, None, 1, 5, "YES"),
        "flag": (16, "BOOLEAN", None, None, None, 1, 6, "YES"),
        "big": (-5, "BIGINT", 19, 0, 10, 1, 7, "YES"),
        "tags": (2003, "ARRAY<STRING>", None, None, None, 1, 8, "YES"),
    }
    assert columns["id"]["REMARKS"] == "the id"
    assert columns["name"]["REMARKS"] == ""
    assert {(c["TABLE_CAT"], c["TABLE_SCHEM"], c["TABLE_NAME"]) for c in columns.values()} == {
        ("main", SCHEMA, "meta_t1")}


def test_get_columns_of_a_view_reports_not_null(raw, objects):
    client, session = raw
    view = records(client, client.GetColumns(T.TGetColumnsReq(sessionHandle=session, schemaName=SCHEMA,
                                                              tableName="meta_v")))
    assert [(c["COLUMN_NAME"], c["DATA_TYPE"], c["NULLABLE"], c["IS_NULLABLE"], c["ORDINAL_POSITION"])
            for c in view] == [("id", -5, 0, "NO", 1), ("s", 12, 0, "NO", 2)]


def test_get_columns_with_table_and_column_patterns(raw, objects):
    client, session = raw
    found = records(client, client.GetColumns(T.TGetColumnsReq(sessionHandle=session, schemaName="meta%",
                                                               tableName="meta\\_%", columnName="%a%")))
    assert [(c["TABLE_NAME"], c["COLUMN_NAME"], c["ORDINAL_POSITION"]) for c in found] == [
        ("meta_t1", "name", 2), ("meta_t1", "amount", 3), ("meta_t1", "flag", 6), ("meta_t1", "tags", 8),
    ]
    assert records(client, client.GetColumns(T.TGetColumnsReq(sessionHandle=session, schemaName=SCHEMA,
                                                              tableName="meta_t2", columnName="nope"))) == []


def test_get_type_info(raw):
    client, session = raw
    handle = ok(client.GetTypeInfo(T.TGetTypeInfoReq(sessionHandle=session))).operationHandle
    names = column_names(client, handle)
    assert names[:3] == ["TYPE_NAME", "DATA_TYPE", "PRECISION"] and names[-1] == "NUM_PREC_RADIX"
    assert len(names) == 18
    types = {row[0]: dict(zip(names, row, strict=True)) for row in fetch_all(client, handle)}
    assert {name: types[name]["DATA_TYPE"] for name in (
        "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "STRING", "BINARY", "DATE",
        "TIMESTAMP", "ARRAY", "MAP", "STRUCT")} == {
        "BOOLEAN": 16, "TINYINT": -6, "SMALLINT": 5, "INT": 4, "BIGINT": -5, "FLOAT": 6, "DOUBLE": 8, "DECIMAL": 3,
        "STRING": 12, "BINARY": -2, "DATE": 91, "TIMESTAMP": 93, "ARRAY": 2003, "MAP": 2000, "STRUCT": 2002,
    }
    assert (types["DECIMAL"]["PRECISION"], types["DECIMAL"]["MAXIMUM_SCALE"]) == (38, 38)
    assert types["INT"]["NUM_PREC_RADIX"] == 10 and types["STRING"]["NUM_PREC_RADIX"] is None
    assert types["STRING"]["CASE_SENSITIVE"] is True and types["INT"]["CASE_SENSITIVE"] is False
    assert all(t["NULLABLE"] == 1 for t in types.values())  # DatabaseMetaData.typeNullable


def test_get_functions_with_a_pattern(raw):
    client, session = raw
    handle = ok(client.GetFunctions(T.TGetFunctionsReq(sessionHandle=session, functionName="upper"))).operationHandle
    assert column_names(client, handle) == ["FUNCTION_CAT", "FUNCTION_SCHEM", "FUNCTION_NAME", "REMARKS",
                                            "FUNCTION_TYPE", "SPECIFIC_NAME"]
    rows = fetch_all(client, handle)
    assert [(r[2], r[4]) for r in rows] == [("upper", 1)]
    assert "uppercase" in rows[0][3]

    def names(pattern: str) -> list[str]:
        found = records(client, client.GetFunctions(T.TGetFunctionsReq(sessionHandle=session, functionName=pattern)))
        return sorted(f["FUNCTION_NAME"] for f in found)

    several = names("to\\_%")
    assert {"to_date", "to_timestamp", "to_json"} <= set(several)
    assert all(name.startswith("to_") for name in several)
    assert names("UPPER") == ["upper"]  # as the metastore: case-insensitive
    assert "to_date" in names("to_date")  # `_` unescaped is any one character
    assert names("%pper") == ["upper"]
    assert names("+") == ["+"]  # not a plain name: the whole listing, filtered exactly


def test_get_functions_lists_the_catalogs_sql_functions_by_schema(raw, connect, objects):
    """A function made by CREATE FUNCTION is listed in its schema (with its comment), as a BI tool's function
    browser shows it; the built-ins keep no schema; a schema pattern that misses its schema leaves it out."""
    client, session = raw
    cursor = connect(username="tester").cursor()
    cursor.execute(f"CREATE OR REPLACE FUNCTION {SCHEMA}.meta_twice(x INT) RETURNS INT COMMENT 'doubles' "
                   "RETURN x * 2")
    try:
        def listed(**request: Any) -> list[tuple[Any, ...]]:
            found = records(client, client.GetFunctions(T.TGetFunctionsReq(sessionHandle=session, **request)))
            return [(f["FUNCTION_SCHEM"], f["FUNCTION_NAME"], f["REMARKS"], f["FUNCTION_TYPE"]) for f in found]

        assert listed(functionName="meta\\_twice") == [(SCHEMA, "meta_twice", "doubles", 1)]
        # the built-ins (no schema) are listed whatever the schema pattern, as before
        assert [row for row in listed(schemaName="meta%", functionName="%") if row[0]] == [
            (SCHEMA, "meta_twice", "doubles", 1)]
        assert listed(schemaName="no_such_schema", functionName="meta%") == []
        assert (None, "upper") in {row[:2] for row in listed(functionName="%")}
    finally:
        cursor.execute(f"DROP FUNCTION IF EXISTS {SCHEMA}.meta_twice")


def test_get_primary_keys_and_cross_reference_are_empty_with_jdbc_columns(raw, objects):
    client, session = raw
    keys = ok(client.GetPrimaryKeys(T.TGetPrimaryKeysReq(sessionHandle=session, schemaName=SCHEMA,
                                                         tableName="meta_t1"))).operationHandle
    assert column_names(client, keys) == ["TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ",
                                          "PK_NAME"]
    assert fetch_all(client, keys) == []
    refs = ok(client.GetCrossReference(T.TGetCrossReferenceReq(
        sessionHandle=session, parentSchemaName=SCHEMA, parentTableName="meta_t1", foreignSchemaName=SCHEMA,
        foreignTableName="meta_t2"))).operationHandle
    assert column_names(client, refs) == [
        "PKTABLE_CAT", "PKTABLE_SCHEM", "PKTABLE_NAME", "PKCOLUMN_NAME", "FKTABLE_CAT", "FKTABLE_SCHEM",
        "FKTABLE_NAME", "FKCOLUMN_NAME", "KEY_SEQ", "UPDATE_RULE", "DELETE_RULE", "FK_NAME", "PK_NAME",
        "DEFERRABILITY",
    ]
    assert fetch_all(client, refs) == []


# -- results: metadata, fetch orientation, the operation log --------------------------------------------------


def test_result_set_metadata_types_and_qualifiers(raw):
    client, session = raw
    handle = execute(client, session,
                     "SELECT 1 AS i, 2L AS l, 'x' AS s, CAST(1.5 AS DECIMAL(10,2)) AS dec, 1.5D AS dbl, true AS b, "
                     "DATE'2024-01-01' AS dt, TIMESTAMP'2024-01-01 00:00:00' AS ts, array(1) AS arr")
    schema = ok(client.GetResultSetMetadata(T.TGetResultSetMetadataReq(operationHandle=handle))).schema
    assert [(c.columnName, c.position) for c in schema.columns] == [
        ("i", 1), ("l", 2), ("s", 3), ("dec", 4), ("dbl", 5), ("b", 6), ("dt", 7), ("ts", 8), ("arr", 9)]
    assert column_types(client, handle) == [
        "INT_TYPE", "BIGINT_TYPE", "STRING_TYPE", "DECIMAL_TYPE", "DOUBLE_TYPE", "BOOLEAN_TYPE", "DATE_TYPE",
        "TIMESTAMP_TYPE", "ARRAY_TYPE"]
    qualifiers = schema.columns[3].typeDesc.types[0].primitiveEntry.typeQualifiers.qualifiers
    assert (qualifiers["precision"].i32Value, qualifiers["scale"].i32Value) == (10, 2)
    assert fetch_all(client, handle) == [(1, 2, "x", "1.50", 1.5, True, "2024-01-01", "2024-01-01 00:00:00", "[1]")]


def test_fetch_first_reads_again_from_the_start(raw):
    client, session = raw
    handle = execute(client, session, "SELECT id FROM range(0, 10, 1, 3)")
    assert fetch(client, handle, 4) == [(0,), (1,), (2,), (3,)]
    assert fetch(client, handle, 2) == [(4,), (5,)]
    assert fetch(client, handle, 3, T.TFetchOrientation.FETCH_FIRST) == [(0,), (1,), (2,)]
    assert fetch_all(client, handle) == [(i,) for i in range(3, 10)]
    # once more after the end, and for a metadata operation (served from memory)
    assert fetch(client, handle, 100, T.TFetchOrientation.FETCH_FIRST) == [(i,) for i in range(10)]
    types = ok(client.GetTableTypes(T.TGetTableTypesReq(sessionHandle=session))).operationHandle
    assert fetch_all(client, types) == [("TABLE",), ("VIEW",)]
    assert fetch(client, types, 10, T.TFetchOrientation.FETCH_FIRST) == [("TABLE",), ("VIEW",)]


def test_fetch_type_1_returns_the_operation_log(raw):
    client, session = raw
    handle = execute(client, session, "SELECT 'logged' AS what")

    def log(orientation: int) -> list[str]:
        resp = ok(client.FetchResults(T.TFetchResultsReq(operationHandle=handle, orientation=orientation,
                                                         maxRows=100, fetchType=1)))
        return [row[0] for row in decode(resp.results)]

    lines = log(T.TFetchOrientation.FETCH_NEXT)
    assert any("Running: SELECT 'logged' AS what" in line for line in lines)
    assert lines[-1].endswith("Finished")
    assert log(T.TFetchOrientation.FETCH_NEXT) == []  # nothing new since
    assert log(T.TFetchOrientation.FETCH_FIRST) == lines
    # the log is a side channel: the result itself is untouched
    assert fetch_all(client, handle) == [("logged",)]


@pytest.mark.parametrize("orientation", [
    T.TFetchOrientation.FETCH_PRIOR, T.TFetchOrientation.FETCH_RELATIVE, T.TFetchOrientation.FETCH_ABSOLUTE,
    T.TFetchOrientation.FETCH_LAST,
])
def test_unsupported_fetch_orientation_is_a_clear_error(raw, orientation):
    client, session = raw
    handle = execute(client, session, "SELECT id FROM range(3)")
    resp = client.FetchResults(T.TFetchResultsReq(operationHandle=handle, orientation=orientation, maxRows=10))
    assert resp.status.statusCode == T.TStatusCode.ERROR_STATUS
    assert resp.status.sqlState == "0A000"
    assert resp.status.errorMessage.startswith("[FEATURE_NOT_SUPPORTED]")
    assert "FETCH_NEXT" in resp.status.errorMessage and "FETCH_FIRST" in resp.status.errorMessage
    assert fetch_all(client, handle) == [(0,), (1,), (2,)]  # the operation is still readable


# -- bad handles ----------------------------------------------------------------------------------------------


def test_invalid_operation_handle_is_an_error_and_the_connection_lives_on(connect):
    conn = connect()
    client, session = conn._client, conn._sessionHandle
    unknown = T.TOperationHandle(operationId=bogus_handle(), operationType=T.TOperationType.EXECUTE_STATEMENT,
                                 hasResultSet=True)
    closed = execute(client, session, "SELECT 1")
    ok(client.CloseOperation(T.TCloseOperationReq(operationHandle=closed)))
    for handle in (unknown, closed):
        for resp in (
            client.GetOperationStatus(T.TGetOperationStatusReq(operationHandle=handle)),
            client.FetchResults(T.TFetchResultsReq(operationHandle=handle, orientation=0, maxRows=10)),
            client.GetResultSetMetadata(T.TGetResultSetMetadataReq(operationHandle=handle)),
            client.CancelOperation(T.TCancelOperationReq(operationHandle=handle)),
            client.CloseOperation(T.TCloseOperationReq(operationHandle=handle)),
        ):
            assert resp.status.statusCode == T.TStatusCode.ERROR_STATUS, resp
            assert resp.status.sqlState == "HY010", resp.status
            assert resp.status.errorMessage.startswith("[INVALID_OPERATION_HANDLE]")
    cursor = conn.cursor()
    cursor.execute("SELECT 'still here'")
    assert cursor.fetchall() == [("still here",)]


def test_invalid_session_handle_is_an_error_and_the_connection_lives_on(connect):
    conn = connect()
    client = conn._client
    unknown = T.TSessionHandle(sessionId=bogus_handle())
    forged = T.TSessionHandle(sessionId=T.THandleIdentifier(guid=conn._sessionHandle.sessionId.guid,
                                                            secret=uuid.uuid4().bytes))
    for session in (unknown, forged):
        for resp in (
            client.ExecuteStatement(T.TExecuteStatementReq(sessionHandle=session, statement="SELECT 1")),
            client.GetTables(T.TGetTablesReq(sessionHandle=session)),
            client.GetInfo(T.TGetInfoReq(sessionHandle=session, infoType=T.TGetInfoType.CLI_DBMS_NAME)),
        ):
            assert resp.status.statusCode == T.TStatusCode.ERROR_STATUS, resp
            assert resp.status.sqlState == "08003", resp.status
            assert resp.status.errorMessage.startswith("[INVALID_SESSION_HANDLE]")
    resp = client.CloseSession(T.TCloseSessionReq(sessionHandle=unknown))
    assert (resp.status.statusCode, resp.status.sqlState) == (T.TStatusCode.ERROR_STATUS, "08003")
    cursor = conn.cursor()
    cursor.execute("SELECT 'still here'")
    assert cursor.fetchall() == [("still here",)]


# -- protocol negotiation -------------------------------------------------------------------------------------

_TYPED_QUERY = ("SELECT 1 AS i, CAST(NULL AS INT) AS n, 'x' AS s, CAST(NULL AS STRING) AS ns, 2.5D AS d, true AS b, "
                "CAST(3 AS TINYINT) AS t, CAST(4 AS SMALLINT) AS sm, 5L AS l, CAST(1.1 AS FLOAT) AS f, "
                "CAST(1.50 AS DECIMAL(5,2)) AS dec, DATE'2024-01-02' AS dt")
_TYPED_ROW = (1, None, "x", None, 2.5, True, 3, 4, 5, 1.1, "1.50", "2024-01-02")


@pytest.mark.parametrize("version", range(V1, V10 + 1),
                         ids=lambda v: T.TProtocolVersion._VALUES_TO_NAMES[v].rsplit("_", 1)[1])
def test_protocol_is_echoed_and_row_sets_follow_it(raw, version):
    client, _ = raw
    opened = ok(client.OpenSession(T.TOpenSessionReq(client_protocol=version, username="tester")))
    assert opened.serverProtocolVersion == version
    session = opened.sessionHandle
    try:
        handle = execute(client, session, _TYPED_QUERY)
        resp = ok(client.FetchResults(T.TFetchResultsReq(operationHandle=handle, orientation=0, maxRows=10)))
        if version < V6:
            assert resp.results.rows and not resp.results.columns
            kinds = [[kind for kind in _VALUE_KINDS if getattr(value, kind) is not None]
                     for value in resp.results.rows[0].colVals]
            assert kinds == [["i32Val"], ["i32Val"], ["stringVal"], ["stringVal"], ["doubleVal"], ["boolVal"],
                             ["byteVal"], ["i16Val"], ["i64Val"], ["doubleVal"], ["stringVal"], ["stringVal"]]
        else:
            assert resp.results.columns and not resp.results.rows
        assert decode(resp.results) == [_TYPED_ROW]
        # metadata answers follow the session's protocol too
        schemas = ok(client.GetSchemas(T.TGetSchemasReq(sessionHandle=session, schemaName="default")))
        rowset = ok(client.FetchResults(T.TFetchResultsReq(operationHandle=schemas.operationHandle, orientation=0,
                                                           maxRows=10))).results
        assert bool(rowset.columns) == (version >= V6)
        assert decode(rowset) == [("default", "main")]
    finally:
        ok(client.CloseSession(T.TCloseSessionReq(sessionHandle=session)))


def test_a_newer_client_protocol_gets_v10(raw):
    client, _ = raw
    opened = ok(client.OpenSession(T.TOpenSessionReq(client_protocol=V10 + 1, username="tester")))
    try:
        assert opened.serverProtocolVersion == V10
    finally:
        ok(client.CloseSession(T.TCloseSessionReq(sessionHandle=opened.sessionHandle)))


def test_row_based_log_for_old_protocols(raw):
    client, _ = raw
    opened = ok(client.OpenSession(T.TOpenSessionReq(client_protocol=V5, username="tester")))
    session = opened.sessionHandle
    try:
        handle = execute(client, session, "SELECT 1")
        resp = ok(client.FetchResults(T.TFetchResultsReq(operationHandle=handle, orientation=0, maxRows=100,
                                                         fetchType=1)))
        assert not resp.results.columns
        assert any("Running: SELECT 1" in row[0] for row in decode(resp.results))
    finally:
        ok(client.CloseSession(T.TCloseSessionReq(sessionHandle=session)))
