"""The describing statements dbt-databricks sends show no more than DESCRIBE does. `DESCRIBE TABLE EXTENDED ... AS
JSON`: the warehouse's tables need SELECT, Spark's own tables their owner, a temporary view is its session's alone
(Spark's DescribeRelationJsonCommand, on the allow-list for it, stands only at the root). `SHOW COLUMNS` needs SELECT;
`DESCRIBE SCHEMA` shows any user what SHOW SCHEMAS and information_schema.schemata show: name, comment, owner.
`(DESCRIBE HISTORY t)` read as a relation in a query needs what the statement needs: SELECT on t."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from security_helpers import refused, still_serves


@pytest.fixture()
def schema(as_user: Callable[[str], Any]) -> str:
    """alice's schema with a Delta table `t` and one of Spark's own tables `p` (parquet)."""
    name = f"alice_json_{uuid.uuid4().hex[:8]}"
    alice = as_user("alice")
    alice.execute(f"CREATE SCHEMA {name}")
    alice.execute(f"CREATE TABLE {name}.t (id INT, secret STRING)")
    alice.execute(f"CREATE TABLE {name}.p (id INT, secret STRING) USING parquet")
    return name


def _columns(cursor: Any, sql: str) -> list[str]:
    cursor.execute(sql)
    (document,), = cursor.fetchall()
    return [column["name"] for column in json.loads(document)["columns"]]


def test_bob_cannot_describe_alices_tables_as_json(as_user: Any, schema: str) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    assert _columns(alice, f"DESCRIBE TABLE EXTENDED {schema}.t AS JSON") == ["id", "secret"]
    assert _columns(alice, f"DESCRIBE TABLE EXTENDED {schema}.p AS JSON") == ["id", "secret"]
    for table in ("t", "p"):
        assert "hint:" in refused(bob, f"DESCRIBE TABLE EXTENDED {schema}.{table} AS JSON", "INSUFFICIENT_PERMISSIONS")
        refused(bob, f"DESCRIBE TABLE EXTENDED main.{schema}.{table} AS JSON", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")
    assert _columns(bob, f"DESCRIBE TABLE EXTENDED {schema}.t AS JSON") == ["id", "secret"]
    still_serves(bob)


def test_a_temporary_view_described_as_json_is_its_sessions_alone(as_user: Any, schema: str) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    view = f"alices_tmp_{uuid.uuid4().hex[:6]}"
    alice.execute(f"CREATE TEMPORARY VIEW {view} AS SELECT id, secret FROM {schema}.t")
    assert _columns(alice, f"DESCRIBE TABLE EXTENDED {view} AS JSON") == ["id", "secret"]
    refused(bob, f"DESCRIBE TABLE EXTENDED {view} AS JSON", "TABLE_OR_VIEW_NOT_FOUND", sqlstate="42P01")
    still_serves(bob)


def test_show_columns_needs_select_and_describe_schema_shows_only_the_schema(as_user: Any, schema: str) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    for table in ("t", "p"):  # the warehouse's table, and Spark's (which Spark answers, the catalog part dropped)
        alice.execute(f"SHOW COLUMNS IN main.{schema}.{table}")
        assert [row[0].strip() for row in alice.fetchall()] == ["id", "secret"]
    for sql in (f"SHOW COLUMNS IN main.{schema}.t", f"SHOW COLUMNS FROM t IN {schema}",
                f"SHOW COLUMNS IN {schema}.p"):
        refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
    bob.execute(f"DESCRIBE SCHEMA EXTENDED main.{schema}")
    described = dict(bob.fetchall())
    assert described["Namespace Name"] == schema and described["Owner"] == "alice"
    assert not any("secret" in str(value) for value in described.values())
    refused(bob, "DESCRIBE SCHEMA main.no_such_schema_here", "SCHEMA_NOT_FOUND", sqlstate="42704")
    still_serves(bob)


def test_describe_detail_needs_select_and_refuses_a_view(as_user: Any, schema: str) -> None:
    """DESCRIBE DETAIL shows a table's location, size and properties: what SELECT on it lets one see, no more."""
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"INSERT INTO {schema}.t VALUES (1, 'x')")
    alice.execute(f"DESCRIBE DETAIL {schema}.t")
    (row,) = alice.fetchall()
    assert row[0] == "delta" and row[2] == f"main.{schema}.t" and row[9] == 1
    refused(bob, f"DESCRIBE DETAIL {schema}.t", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")
    bob.execute(f"DESCRIBE DETAIL main.{schema}.t")
    assert bob.fetchall()[0][9] == 1
    alice.execute(f"CREATE VIEW {schema}.v AS SELECT id FROM {schema}.t")
    refused(alice, f"DESCRIBE DETAIL {schema}.v", "EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE", sqlstate="42809")
    still_serves(bob)


def test_describe_history_as_a_subquery_needs_what_the_statement_needs(as_user: Any, schema: str) -> None:
    """`select ... from (describe history t)` shows t's operations, parameters and metrics: as DESCRIBE HISTORY,
    only to whom may SELECT from t (inside a view: the view's owner), refused with the same error, and a view, which
    has no log, refused as the statement refuses it."""
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"INSERT INTO {schema}.t VALUES (1, 'x')")
    history = f"SELECT version, operation FROM (DESCRIBE HISTORY {schema}.t) ORDER BY version"
    alice.execute(history)
    assert alice.fetchall() == [(0, "CREATE TABLE"), (1, "WRITE")]
    refused(bob, f"DESCRIBE HISTORY {schema}.t", "INSUFFICIENT_PERMISSIONS")
    for sql in (history, f"SELECT count(*) FROM (DESCRIBE HISTORY main.{schema}.t) h WHERE h.version > 0",
                f"SELECT * FROM {schema}.p JOIN (DESCRIBE HISTORY {schema}.t) ON true"):
        refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
    # a view of alice's over the history: bob with SELECT on the view reads it with alice's rights, as any view
    alice.execute(f"CREATE VIEW {schema}.ops AS SELECT operation FROM (DESCRIBE HISTORY {schema}.t)")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.ops TO bob")
    bob.execute(f"SELECT count(*) FROM {schema}.ops")
    assert bob.fetchall() == [(2,)]
    alice.execute(f"CREATE VIEW {schema}.v AS SELECT id FROM {schema}.t")
    refused(alice, f"SELECT * FROM (DESCRIBE HISTORY {schema}.v)", "EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE",
            sqlstate="42809")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")
    bob.execute(history)
    assert bob.fetchall() == [(0, "CREATE TABLE"), (1, "WRITE")]
    still_serves(bob)
