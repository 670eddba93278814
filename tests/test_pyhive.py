"""PyHive's DB-API against a real gateway: types, fetching, descriptions and errors."""

from __future__ import annotations

import datetime
import decimal

import pytest
from pyhive import exc as hive_exc


@pytest.mark.parametrize("auth", ["NONE", "NOSASL"])
def test_every_type_round_trips(connect, auth):
    cursor = connect(auth=auth).cursor()
    cursor.execute(
        "SELECT true AS b, CAST(7 AS TINYINT) AS t, CAST(300 AS SMALLINT) AS s, 70000 AS i, 9000000000 AS l, "
        "CAST(1.1 AS FLOAT) AS f, 2.5D AS d, CAST(1.50 AS DECIMAL(5,2)) AS dec, 'héllo' AS str, "
        "X'0102' AS bin, DATE'2024-01-02' AS dt, TIMESTAMP'2024-01-02 03:04:05.123' AS ts, "
        "array(1, 2) AS arr, map('k', 1) AS m, named_struct('a', 1, 'b', 'x') AS st, "
        "INTERVAL '1-2' YEAR TO MONTH AS ym, INTERVAL '1 02:03:04' DAY TO SECOND AS dts, CAST(NULL AS INT) AS n"
    )
    assert [d[1] for d in cursor.description] == [
        "BOOLEAN_TYPE", "TINYINT_TYPE", "SMALLINT_TYPE", "INT_TYPE", "BIGINT_TYPE", "FLOAT_TYPE", "DOUBLE_TYPE",
        "DECIMAL_TYPE", "STRING_TYPE", "BINARY_TYPE", "DATE_TYPE", "TIMESTAMP_TYPE", "ARRAY_TYPE", "MAP_TYPE",
        "STRUCT_TYPE", "INTERVAL_YEAR_MONTH_TYPE", "INTERVAL_DAY_TIME_TYPE", "INT_TYPE",
    ]
    assert [d[0] for d in cursor.description][:3] == ["b", "t", "s"]
    assert cursor.fetchall() == [(
        True, 7, 300, 70000, 9000000000, 1.1, 2.5, decimal.Decimal("1.50"), "héllo", b"\x01\x02", "2024-01-02",
        datetime.datetime(2024, 1, 2, 3, 4, 5, 123000), "[1,2]", '{"k":1}', '{"a":1,"b":"x"}', "1-2",
        "1 02:03:04", None,
    )]


def test_nulls_in_every_primitive_column(connect):
    cursor = connect().cursor()
    cursor.execute(
        "SELECT * FROM VALUES (1, 'a', true, 1.0D, X'01'), (NULL, NULL, NULL, NULL, NULL), (3, 'c', false, 3.0D, X'03')"
        " AS t(i, s, b, d, bin) ORDER BY i NULLS FIRST"
    )
    assert cursor.fetchall() == [
        (None, None, None, None, None), (1, "a", True, 1.0, b"\x01"), (3, "c", False, 3.0, b"\x03"),
    ]


def test_fetchmany_walks_a_large_result_in_order(connect):
    cursor = connect().cursor()
    cursor.arraysize = 7000
    cursor.execute("SELECT id, id * 2 AS twice FROM range(0, 50000, 1, 4)")
    seen = 0
    while True:
        rows = cursor.fetchmany(12345)
        if not rows:
            break
        assert rows[0] == (seen, seen * 2)
        assert rows[-1] == (seen + len(rows) - 1, (seen + len(rows) - 1) * 2)
        seen += len(rows)
    assert seen == 50000


def test_empty_result_has_a_description(connect):
    cursor = connect().cursor()
    cursor.execute("SELECT id FROM range(10) WHERE id < 0")
    assert cursor.description[0][:2] == ("id", "BIGINT_TYPE")
    assert cursor.fetchall() == []


def test_ddl_and_dml_in_a_session(connect):
    cursor = connect().cursor()
    cursor.execute("CREATE TABLE pyhive_ddl (a INT, b STRING) USING parquet")
    try:
        cursor.execute("INSERT INTO pyhive_ddl VALUES (1, 'x'), (2, NULL)")
        cursor.execute("SELECT * FROM pyhive_ddl ORDER BY a")
        assert cursor.fetchall() == [(1, "x"), (2, None)]
    finally:
        cursor.execute("DROP TABLE pyhive_ddl")


def test_missing_table_error_has_class_sqlstate_and_position(connect):
    cursor = connect().cursor()
    with pytest.raises(hive_exc.OperationalError) as raised:
        cursor.execute("SELECT *\nFROM no_such_table")
    status = raised.value.args[0].status
    assert status.sqlState == "42P01"
    assert status.errorMessage.startswith("[TABLE_OR_VIEW_NOT_FOUND]")
    assert "at line 2, column 6" in status.errorMessage
    assert "FROM no_such_table\n         ^" in status.errorMessage
    assert "Project" not in status.errorMessage  # the logical plan is not part of the message


def test_syntax_error_position(connect):
    cursor = connect().cursor()
    with pytest.raises(hive_exc.OperationalError) as raised:
        cursor.execute("SELECT 1,\n  FROM (((")
    status = raised.value.args[0].status
    assert status.sqlState == "42601"
    assert "PARSE_SYNTAX_ERROR" in status.errorMessage
    assert "at line 2, column 9:\n      FROM (((\n            ^" in status.errorMessage


def test_runtime_error_during_execution(connect):
    cursor = connect().cursor()
    with pytest.raises(hive_exc.OperationalError) as raised:
        cursor.execute("SELECT 1 / 0 AS boom")
    status = raised.value.args[0].status
    assert status.sqlState == "22012"
    assert "DIVIDE_BY_ZERO" in status.errorMessage


def test_session_survives_a_failed_statement(connect):
    cursor = connect().cursor()
    with pytest.raises(hive_exc.OperationalError):
        cursor.execute("SELECT nope()")
    cursor.execute("SELECT 41 + 1")
    assert cursor.fetchall() == [(42,)]


def test_async_failure_is_reported_by_status(connect):
    """dbt runs statements async and raises the status' errorMessage: it must carry the real error."""
    from TCLIService.ttypes import TOperationState

    cursor = connect().cursor()
    cursor.execute("SELECT * FROM still_no_such_table", async_=True)
    state = cursor.poll().operationState
    while state in (TOperationState.INITIALIZED_STATE, TOperationState.PENDING_STATE,
                    TOperationState.RUNNING_STATE):
        state = cursor.poll().operationState
    status = cursor.poll()
    assert status.operationState == TOperationState.ERROR_STATE
    assert status.sqlState == "42P01"
    assert "TABLE_OR_VIEW_NOT_FOUND" in status.errorMessage


def test_session_configuration_and_database(connect):
    cursor = connect().cursor()
    cursor.execute("CREATE DATABASE IF NOT EXISTS conf_db")
    conn = connect(database="conf_db", configuration={"spark.sql.shuffle.partitions": "3"})
    cursor = conn.cursor()
    cursor.execute("SELECT current_database()")
    assert cursor.fetchall() == [("conf_db",)]
    cursor.execute("SET spark.sql.shuffle.partitions")
    assert cursor.fetchall() == [("spark.sql.shuffle.partitions", "3")]


def test_sessions_are_isolated(connect):
    first, second = connect().cursor(), connect().cursor()
    first.execute("CREATE TEMPORARY VIEW only_mine AS SELECT 1 AS x")
    first.execute("SELECT * FROM only_mine")
    assert first.fetchall() == [(1,)]
    with pytest.raises(hive_exc.OperationalError):
        second.execute("SELECT * FROM only_mine")


def test_hivevar_and_hiveconf_from_open_session(connect):
    """JDBC URLs carry `?hive.var=...#conf=...`; drivers send them as set:hivevar:/set:hiveconf: in OpenSession."""
    conn = connect(configuration={"set:hivevar:threshold": "41", "set:hiveconf:spark.sql.ansi.enabled": "false"})
    cursor = conn.cursor()
    cursor.execute("SELECT ${hivevar:threshold} + 1 AS answer")
    assert cursor.fetchall() == [(42,)]
    cursor.execute("SELECT 1 / 0")  # division by zero is NULL once ANSI mode is off, as dbt sets it
    assert cursor.fetchall() == [(None,)]
