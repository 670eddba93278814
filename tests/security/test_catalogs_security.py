"""Catalogs through a real client: a three-part name is the same name (the same grants apply, under every alias of
the catalog), USE/SET CATALOG and SHOW CATALOGS reveal or change nothing, and information_schema shows a user only
what they may read; no catalog or view name is a way out of the warehouse. Every refusal is a clean SQL error, and
the gateway still answers after it."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from security_helpers import error_status, refused, still_serves


@pytest.fixture()
def alices_table(as_user: Callable[[str], Any]) -> str:
    """alice's schema with her table `t` (one secret row) that bob may not read."""
    schema = f"alice_cat_{uuid.uuid4().hex[:8]}"
    alice = as_user("alice")
    alice.execute(f"CREATE SCHEMA main.{schema}")
    alice.execute(f"CREATE TABLE main.{schema}.t (secret STRING) USING delta")
    alice.execute(f"INSERT INTO `main`.`{schema}`.`t` VALUES ('s1')")
    return schema


@pytest.mark.parametrize("catalog", ["main", "hive_metastore", "spark_catalog", "MAIN"])
def test_a_three_part_name_needs_the_same_grants(as_user: Any, alices_table: str, catalog: str) -> None:
    schema = alices_table
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"SELECT secret FROM {catalog}.{schema}.t")
    assert alice.fetchall() == [("s1",)]
    for sql in (f"SELECT * FROM {catalog}.{schema}.t", f"DESCRIBE TABLE {catalog}.{schema}.t",
                f"SHOW TBLPROPERTIES {catalog}.{schema}.t", f"INSERT INTO {catalog}.{schema}.t VALUES ('x')",
                f"DROP TABLE {catalog}.{schema}.t", f"CREATE TABLE {catalog}.{schema}.mine (a INT)",
                f"GRANT SELECT ON TABLE {catalog}.{schema}.t TO bob",
                f"CREATE VIEW default.peek_{uuid.uuid4().hex[:6]} AS SELECT * FROM {catalog}.{schema}.t"):
        refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
    still_serves(bob)


def test_information_schema_shows_only_what_the_user_may_read(as_user: Any, alices_table: str) -> None:
    schema = alices_table
    alice, bob = as_user("alice"), as_user("bob")
    tables = (f"SELECT table_name, table_type, table_owner FROM system.information_schema.tables "
              f"WHERE table_catalog = 'main' AND table_schema = '{schema}'")
    columns = (f"SELECT column_name, is_nullable FROM main.information_schema.columns "
               f"WHERE table_schema = '{schema}' AND table_name = 't'")
    alice.execute(tables)
    assert alice.fetchall() == [("t", "MANAGED", "alice")]
    alice.execute(columns)
    assert alice.fetchall() == [("secret", "YES")]
    alice.execute(f"ALTER TABLE main.{schema}.t ADD CONSTRAINT t_pk PRIMARY KEY (secret)")  # informational, kept
    keys = (f"SELECT constraint_name, column_name FROM main.information_schema.key_column_usage "
            f"WHERE table_schema = '{schema}'")
    alice.execute(keys)
    assert alice.fetchall() == [("t_pk", "secret")]
    for sql in (tables, columns, keys, "SELECT * FROM main.information_schema.table_constraints "
                                       f"WHERE table_schema = '{schema}'"):
        bob.execute(sql)
        assert bob.fetchall() == [], sql  # not even that the table exists
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")
    bob.execute(tables)
    assert bob.fetchall() == [("t", "MANAGED", "alice")]


@pytest.mark.parametrize("sql", [
    "USE CATALOG other", "SET CATALOG other", "USE CATALOG `..`", "SHOW SCHEMAS IN other",
    "SELECT * FROM other.default.t", "SELECT * FROM `/etc`.default.t", "DROP TABLE other.default.t",
    "SELECT * FROM system.default.t", "USE CATALOG system",
])
def test_another_catalog_is_refused(as_user: Any, sql: str) -> None:
    message = refused(as_user("bob"), sql, "NO_SUCH_CATALOG_EXCEPTION", sqlstate="42704")
    assert "hint:" in message
    still_serves(as_user("bob"))


def test_catalog_statements_reveal_and_change_nothing(as_user: Any, alices_table: str) -> None:
    bob = as_user("bob")
    bob.execute("SHOW CATALOGS")
    assert bob.fetchall() == [("main",), ("system",)]
    for sql in ("USE CATALOG hive_metastore", "SET CATALOG spark_catalog", "USE CATALOG main"):
        bob.execute(sql)
    bob.execute("SELECT current_catalog(), current_database()")
    assert bob.fetchall() == [("main", "default")]
    refused(bob, f"SELECT * FROM {alices_table}.t", "INSUFFICIENT_PERMISSIONS")


@pytest.mark.parametrize(("sql", "error_class", "sqlstate"), [
    ("SELECT * FROM system.information_schema.`../../etc`", "TABLE_OR_VIEW_NOT_FOUND", "42P01"),
    ("SELECT * FROM information_schema.secrets", "TABLE_OR_VIEW_NOT_FOUND", "42P01"),
    ("CREATE SCHEMA information_schema", "INVALID_SCHEMA_OR_RELATION_NAME", "42602"),
    ("CREATE TABLE information_schema.tables (a INT)", "", ""),
    ("DROP TABLE system.information_schema.tables", "", ""),
])
def test_information_schema_cannot_be_written_or_escaped(as_user: Any, sql: str, error_class: str,
                                                         sqlstate: str) -> None:
    bob = as_user("bob")

    status = error_status(bob, sql)
    if sqlstate:
        assert status.sqlState == sqlstate, status.errorMessage
        assert f"[{error_class}]" in status.errorMessage, status.errorMessage
    assert "\tat " not in status.errorMessage
    bob.execute("SELECT count(*) FROM system.information_schema.tables WHERE table_name = 'tables'")
    assert bob.fetchall() == [(0,)]  # the views are still not tables
    still_serves(bob)
