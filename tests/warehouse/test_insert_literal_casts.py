"""Quoted literals in INSERT ... VALUES land in typed columns as Databricks lands them (what dbt-databricks' seeds
send): text into dates, timestamps, decimals, numbers and booleans, checked as ANSI casts (a bad value fails with
CAST_INVALID_INPUT and writes nothing); only literals: a string column of a query still needs an explicit CAST."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest
from pyhive_helpers import cursor_in, error_status, sorted_rows

from sluicegate.dialect.classify import classify
from sluicegate.dialect.statements import Insert

DB = "literal_casts"


@pytest.fixture()
def cursor(connect: Any) -> Any:
    cursor = cursor_in(connect, DB)
    cursor.execute("CREATE OR REPLACE TABLE seeded (day DATE, at TIMESTAMP, amount DECIMAL(10,2), n INT, ok BOOLEAN, "
                   "label STRING)")
    return cursor


def test_which_positions_are_quoted_literals_only() -> None:
    def positions(sql: str) -> frozenset[int]:
        statement = classify(sql)
        assert isinstance(statement, Insert)
        return statement.string_literals

    assert positions("INSERT INTO t VALUES ('2021-01-01', 1, NULL, -2.5, 'x')") == {0, 4}
    assert positions("INSERT INTO t VALUES ('a', 1), (NULL, 'b')") == {0}
    assert positions("INSERT INTO t VALUES (NULL), (NULL)") == frozenset()
    assert positions("INSERT INTO t (a, b) SELECT '1', 2") == {0}
    assert positions("INSERT INTO t SELECT '1' FROM u") == frozenset()   # a query's column, not a literal
    assert positions("INSERT INTO t SELECT * FROM u") == frozenset()


def test_a_seed_of_quoted_values_lands_typed(cursor: Any) -> None:
    cursor.execute("INSERT OVERWRITE seeded VALUES ('2021-01-01', '2021-01-01 10:20:30', '1.50', '7', 'true', 'a'), "
                   "('2021-02-03', NULL, '-0.25', NULL, 'false', NULL)")
    assert sorted_rows(cursor, "SELECT * FROM seeded") == [
        ("2021-01-01", dt.datetime(2021, 1, 1, 10, 20, 30), decimal.Decimal("1.50"), 7, True, "a"),
        ("2021-02-03", None, decimal.Decimal("-0.25"), None, False, None)]   # PyHive reads dates as text
    cursor.execute("INSERT INTO seeded (amount, day) VALUES ('3', '2021-03-04')")
    assert ("2021-03-04", decimal.Decimal("3.00")) in sorted_rows(cursor, "SELECT day, amount FROM seeded")


def test_a_quoted_value_that_is_no_such_type_fails_and_writes_nothing(cursor: Any) -> None:
    cursor.execute("INSERT INTO seeded (n) VALUES (1)")
    for sql in ("INSERT INTO seeded (day) VALUES ('not a date')", "INSERT INTO seeded (n) VALUES ('seven')",
                "INSERT INTO seeded (amount) VALUES ('12345678901.5')"):
        status = error_status(cursor, sql)
        assert status.sqlState in ("22018", "22003", "22007"), (sql, status.errorMessage)
        assert "CAST_INVALID_INPUT" in status.errorMessage or "NUMERIC_VALUE_OUT_OF_RANGE" in status.errorMessage
    assert sorted_rows(cursor, "SELECT n FROM seeded") == [(1,)]


def test_only_literals_are_cast_a_query_column_still_needs_cast(cursor: Any) -> None:
    status = error_status(cursor, "INSERT INTO seeded (day) SELECT '2021-01-01' AS d FROM range(1)")
    assert "CANNOT_SAFELY_CAST" in status.errorMessage and status.sqlState == "KD000"
    status = error_status(cursor, "INSERT INTO seeded (n) VALUES (CONCAT('1', '2'))")
    assert "CANNOT_SAFELY_CAST" in status.errorMessage
