"""SQL user-defined functions through PyHive against a real gateway: a function is kept by the catalog and called by
`main.s.f`, `s.f` or `f` in the current schema as Databricks resolves them; its body reads the warehouse's tables at
the statement's pinned versions; CREATE OR REPLACE changes what the next call computes; views may call functions;
DESCRIBE FUNCTION and SHOW USER FUNCTIONS answer from the catalog (Spark still describes its built-ins); DROP
FUNCTION [IF EXISTS] forgets it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyhive_helpers import database_cursor, error_status, sorted_rows

DATABASE = "wh_functions"


@pytest.fixture(scope="module")
def cursor(gateway: Any) -> Iterator[Any]:
    yield from database_cursor(gateway, DATABASE)


def test_a_function_is_called_by_any_name_databricks_resolves(cursor: Any) -> None:
    cursor.execute(f"CREATE OR REPLACE FUNCTION main.{DATABASE}.price_for_xlarge (price float) RETURNS float "
                   "LANGUAGE SQL COMMENT 'twice the price' RETURN price * 2")
    assert sorted_rows(cursor, f"SELECT main.{DATABASE}.price_for_xlarge(100), {DATABASE}.price_for_xlarge(1.5), "
                               "price_for_xlarge(0)") == [(200.0, 3.0, 0.0)]
    cursor.execute(f"SELECT main.{DATABASE}.price_for_xlarge(100)")
    assert cursor.description[0][0] == f"main.{DATABASE}.price_for_xlarge(100)"  # the call as written
    cursor.execute(f"CREATE OR REPLACE FUNCTION {DATABASE}.price_for_xlarge (price float) RETURNS float "
                   "RETURN price * 3")
    assert sorted_rows(cursor, "SELECT price_for_xlarge(100) AS p") == [(300.0,)]
    status = error_status(cursor, f"CREATE FUNCTION {DATABASE}.price_for_xlarge (p INT) RETURNS INT RETURN p")
    assert "ROUTINE_ALREADY_EXISTS" in status.errorMessage and status.sqlState == "42723"
    cursor.execute(f"CREATE FUNCTION IF NOT EXISTS {DATABASE}.price_for_xlarge (p INT) RETURNS INT RETURN p")
    assert sorted_rows(cursor, "SELECT price_for_xlarge(1)") == [(3.0,)]


def test_a_body_reads_tables_at_the_statements_version_and_views_call_functions(cursor: Any) -> None:
    cursor.execute("CREATE OR REPLACE TABLE rates (currency STRING, rate DOUBLE)")
    cursor.execute("INSERT INTO rates VALUES ('EUR', 1.1), ('GBP', 1.3)")
    cursor.execute("CREATE OR REPLACE FUNCTION to_usd (amount DOUBLE, cur STRING) RETURNS DOUBLE "
                   "RETURN amount * (SELECT max(rate) FROM rates WHERE currency = cur)")
    cursor.execute("CREATE OR REPLACE TABLE orders (id INT, amount DOUBLE, currency STRING)")
    cursor.execute("INSERT INTO orders VALUES (1, 10.0, 'EUR'), (2, 100.0, 'GBP'), (3, 5.0, 'JPY')")
    query = "SELECT id, round(to_usd(amount, currency), 2) FROM orders"
    assert sorted_rows(cursor, query) == [(1, 11.0), (2, 130.0), (3, None)]
    cursor.execute("CREATE OR REPLACE VIEW orders_usd AS SELECT id, to_usd(amount, currency) AS usd FROM orders")
    cursor.execute("INSERT INTO rates VALUES ('JPY', 0.01)")
    assert sorted_rows(cursor, "SELECT id, round(usd, 2) FROM orders_usd") == [(1, 11.0), (2, 130.0), (3, 0.05)]
    # a body that does not compile is refused at CREATE, with nothing kept
    status = error_status(cursor, "CREATE FUNCTION broken (x INT) RETURNS INT RETURN (SELECT nope FROM rates)")
    assert status.sqlState == "42703", status.errorMessage
    status = error_status(cursor, "SELECT broken(1)")
    assert "UNRESOLVED_ROUTINE" in status.errorMessage, status.errorMessage
    # a function calling itself is refused at CREATE
    status = error_status(cursor, "CREATE FUNCTION again (x INT) RETURNS INT RETURN again(x)")
    assert "ROUTINE_EXCEED_MAX_NESTED_DEPTH" in status.errorMessage, status.errorMessage


def test_describe_show_and_drop(cursor: Any) -> None:
    cursor.execute("CREATE OR REPLACE FUNCTION plus_one (x INT) RETURNS INT COMMENT 'x + 1' RETURN x + 1")
    described = [row[0] for row in sorted_rows(cursor, "DESCRIBE FUNCTION EXTENDED plus_one")]
    assert f"Function: main.{DATABASE}.plus_one" in described and "Input:    x INT" in described
    assert "Body:     x + 1" in described and "Comment:  x + 1" in described
    cursor.execute("DESCRIBE FUNCTION plus_one")
    assert [row[0] for row in cursor.fetchall()] == [f"Function: main.{DATABASE}.plus_one", "Type:     SCALAR",
                                                     "Input:    x INT", "Returns:  INT"]
    builtin = sorted_rows(cursor, "DESCRIBE FUNCTION upper")  # Spark's own
    assert any("upper" in row[0] for row in builtin)
    assert sorted_rows(cursor, f"SHOW USER FUNCTIONS IN {DATABASE} LIKE 'plus*'") == [
        (f"main.{DATABASE}.plus_one",)]
    everything = {row[0] for row in sorted_rows(cursor, "SHOW FUNCTIONS")}
    assert f"main.{DATABASE}.plus_one" in everything and "upper" in everything
    cursor.execute("DROP FUNCTION plus_one")
    assert sorted_rows(cursor, f"SHOW USER FUNCTIONS IN {DATABASE} LIKE 'plus*'") == []
    status = error_status(cursor, "DROP FUNCTION plus_one")
    assert "ROUTINE_NOT_FOUND" in status.errorMessage and status.sqlState == "42883"
    cursor.execute("DROP FUNCTION IF EXISTS plus_one")
    assert ("upper",) in sorted_rows(cursor, "SHOW SYSTEM FUNCTIONS LIKE 'upp*'")  # Spark's list, as before
    status = error_status(cursor, "SHOW USER FUNCTIONS IN no_such_schema")   # not an empty list: a typo says so
    assert "SCHEMA_NOT_FOUND" in status.errorMessage and status.sqlState == "42704"
    cursor.execute("CREATE SCHEMA IF NOT EXISTS functions_only")
    cursor.execute("CREATE OR REPLACE FUNCTION functions_only.twice (x INT) RETURNS INT RETURN x * 2")
    status = error_status(cursor, "DROP SCHEMA functions_only")   # a function is an object of its schema
    assert "SCHEMA_NOT_EMPTY" in status.errorMessage and "1 function(s)" in status.errorMessage
    assert status.sqlState == "2BP01" and sorted_rows(cursor, "SELECT functions_only.twice(21)") == [(42,)]
    cursor.execute("DROP SCHEMA functions_only CASCADE")
    assert sorted_rows(cursor, "SHOW DATABASES LIKE 'functions_only'") == []


def test_functions_in_writes(cursor: Any) -> None:
    """INSERT ... SELECT, UPDATE, DELETE, MERGE and a materialized view call functions as a query does."""
    cursor.execute("CREATE OR REPLACE FUNCTION cents (x DOUBLE) RETURNS BIGINT RETURN CAST(round(x * 100) AS BIGINT)")
    cursor.execute("CREATE OR REPLACE TABLE prices (id INT, amount DOUBLE, c BIGINT)")
    cursor.execute("INSERT INTO prices SELECT id, amount, cents(amount) "
                   "FROM VALUES (1, 1.25), (2, 3.5) AS v(id, amount)")
    cursor.execute("UPDATE prices SET c = cents(amount * 2) WHERE id = 2")
    cursor.execute("DELETE FROM prices WHERE cents(amount) = 125")
    cursor.execute("MERGE INTO prices t USING (SELECT 3 AS id, 0.1 AS amount) s ON t.id = s.id "
                   "WHEN NOT MATCHED THEN INSERT (id, amount, c) VALUES (s.id, s.amount, cents(s.amount))")
    assert sorted_rows(cursor, "SELECT id, c FROM prices") == [(2, 700), (3, 10)]
    # a function calling another; a parameter named by the function's name where a column has the same name
    cursor.execute("CREATE OR REPLACE FUNCTION twice_cents (amount DOUBLE) RETURNS BIGINT "
                   "RETURN cents(amount) * 2 + (SELECT count(*) FROM prices WHERE amount > twice_cents.amount)")
    assert sorted_rows(cursor, "SELECT twice_cents(1.5)") == [(301,)]  # 150 * 2, and the one row of 3.5 above 1.5
    cursor.execute("CREATE OR REPLACE MATERIALIZED VIEW price_cents AS SELECT id, cents(amount) AS c FROM prices")
    assert sorted_rows(cursor, "SELECT id, c FROM price_cents") == [(2, 350), (3, 10)]
