"""Results the driver already holds (a projection of literals, VALUES, a command's output) are answered without a
Spark job, and are the very batches a job would have produced: values, types, the session's time zone, the text
wire form, no rows at all."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from sluicegate.engine.driver_results import driver_batches
from sluicegate.engine.results import TEXT, WireTypes, result_columns, wire_dataframe
from sluicegate.engine.sql import stream_dataframe

LITERALS = ("SELECT 1 AS i, CAST(2 AS BIGINT) AS l, CAST(3 AS TINYINT) AS t, 1.5D AS d, CAST(0.1 AS FLOAT) AS f, "
            "'x' AS s, NULL AS n, true AS b, X'CAFE' AS bin, CAST(12.345 AS DECIMAL(10,3)) AS dec, "
            "DATE'2024-02-29' AS dt, TIMESTAMP'2024-03-10 02:30:00' AS ts, TIMESTAMP_NTZ'2024-01-01 00:00:00' AS ntz, "
            "ARRAY(1, NULL) AS arr, MAP('k', 1) AS m, NAMED_STRUCT('a', 1, 'b', 'y') AS st, "
            "INTERVAL '1-2' YEAR TO MONTH AS ym, INTERVAL '3' DAY AS dd, current_date() AS today")
IN_DRIVER = [
    "SELECT 1",
    "SELECT 1 AS a, 2 AS a",
    LITERALS,
    "SELECT * FROM VALUES (1, 'a'), (2, NULL) AS t(n, s)",
    "SELECT n * 2 AS twice, upper(s) FROM VALUES (1, 'a'), (2, 'b') AS t(n, s)",
    "SELECT * FROM VALUES (1) AS t(a) WHERE a > 1",
    "SHOW DATABASES",
    "SET spark.sql.shuffle.partitions",
]
AS_A_JOB = ["SELECT rand() AS r", "SELECT id FROM range(3)", "SELECT 1 AS a UNION ALL SELECT 2"]


@pytest.fixture(scope="module")
def session(spark: Any) -> Any:
    """A session in a zone with daylight saving time (2024-03-10 02:30 does not exist in New York)."""
    session = spark.newSession()
    session.conf.set("spark.sql.session.timeZone", "America/New_York")
    return session


def _by_a_job(df: Any) -> pa.Table:
    batches = df._collect_as_arrow()
    return pa.Table.from_batches(batches) if batches else pa.Table.from_pylist([], schema=batches_schema(df))


def batches_schema(df: Any) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema)


@pytest.mark.parametrize("sql", IN_DRIVER)
@pytest.mark.parametrize("types", [TEXT, WireTypes(date=True, timestamp=True, decimal=True, nested=True)],
                         ids=["text", "native"])
def test_driver_rows_are_the_rows_a_job_computes(session: Any, sql: str, types: WireTypes) -> None:
    df = session.sql(sql)
    wire = wire_dataframe(df, result_columns(df), types)
    in_driver = driver_batches(wire)
    assert in_driver is not None, f"{sql} should be answered in the driver"
    expected = _by_a_job(wire)
    got = pa.Table.from_batches(in_driver, schema=expected.schema) if in_driver else expected.slice(0, 0)
    assert got.num_rows == expected.num_rows
    assert [str(field.type) for field in got.schema] == [str(field.type) for field in expected.schema]
    assert got.to_pylist() == expected.to_pylist()


@pytest.mark.parametrize("sql", AS_A_JOB)
def test_what_needs_computing_is_left_to_a_job(session: Any, sql: str) -> None:
    assert driver_batches(session.sql(sql)) is None


def _jobs_of(session: Any, sql: str) -> int:
    group = f"driver-results-{uuid.uuid4().hex}"
    df = session.sql(sql)
    _, source = stream_dataframe(session, df, sql, group).open()
    rows = sum(batch.num_rows for batch in source)
    source.close()
    assert rows > 0
    return len(session.sparkContext.statusTracker().getJobIdsForGroup(group))


def test_select_1_runs_no_job_where_a_computed_row_does(session: Any) -> None:
    assert _jobs_of(session, "SELECT 1, current_timestamp()") == 0
    assert _jobs_of(session, "SELECT * FROM VALUES (1), (2)") == 0
    assert _jobs_of(session, "SELECT rand()") >= 1


def test_clients_get_literals_unchanged_through_the_gateway(connect: Any) -> None:
    cursor = connect().cursor()
    cursor.execute("SELECT 1 AS a, 'x' AS b, NULL AS n, CAST(1.50 AS DECIMAL(5,2)) AS d, "
                   "TIMESTAMP'2024-01-02 03:04:05' AS ts, ARRAY(1, 2) AS arr")
    assert cursor.fetchall() == [(1, "x", None, Decimal("1.50"), dt.datetime(2024, 1, 2, 3, 4, 5), "[1,2]")]
    assert [column[:2] for column in cursor.description] == [
        ("a", "INT_TYPE"), ("b", "STRING_TYPE"), ("n", "NULL_TYPE"), ("d", "DECIMAL_TYPE"),
        ("ts", "TIMESTAMP_TYPE"), ("arr", "ARRAY_TYPE")]
