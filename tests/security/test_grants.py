"""Owners and grants: alice's objects are hers until she grants them; views run with their owner's rights; every
refusal is 42501 INSUFFICIENT_PERMISSIONS with a hint, and alice's data is intact after each."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from pyhive_helpers import sorted_rows
from security_helpers import refused, secret_schema, still_serves


@pytest.fixture()
def schema(as_user: Callable[[str], Any]) -> str:
    """alice's schema with a table `t` of two rows and a view `v` over it."""
    alice = as_user("alice")
    name = secret_schema(alice, "alice")
    alice.execute(f"CREATE VIEW {name}.v AS SELECT id FROM {name}.t")
    return name


def _intact(as_user: Callable[[str], Any], schema: str) -> None:
    assert sorted_rows(as_user("alice"), f"SELECT * FROM {schema}.t") == [(1, "a"), (2, "b")]


def test_without_grants_bob_can_do_nothing_to_alices_objects(as_user: Any, schema: str) -> None:
    bob = as_user("bob")
    for sql in (f"SELECT * FROM {schema}.t", f"SELECT * FROM {schema}.v",
                f"SELECT * FROM (SELECT * FROM {schema}.t) x", f"WITH c AS (SELECT * FROM {schema}.t) SELECT * FROM c",
                f"SELECT id FROM range(3) WHERE id IN (SELECT id FROM {schema}.t)",
                f"DESCRIBE TABLE {schema}.t", f"SHOW CREATE TABLE {schema}.t",
                f"INSERT INTO {schema}.t VALUES (3, 'c')", f"DELETE FROM {schema}.t WHERE id = 1",
                f"UPDATE {schema}.t SET secret = 'x'", f"MERGE INTO {schema}.t USING (SELECT 1 AS id) s "
                "ON t.id = s.id WHEN MATCHED THEN DELETE",
                f"DROP TABLE {schema}.t", f"DROP VIEW {schema}.v", f"ALTER TABLE {schema}.t ADD COLUMNS (z INT)",
                f"ALTER TABLE {schema}.t RENAME TO {schema}.t2", f"ALTER VIEW {schema}.v RENAME TO {schema}.v2",
                f"COMMENT ON COLUMN {schema}.t.secret IS 'mine'", f"COMMENT ON TABLE {schema}.t IS 'mine'",
                f"COMMENT ON VIEW {schema}.v IS 'mine'", f"VACUUM {schema}.t",
                f"VACUUM {schema}.t DRY RUN",  # it lists the table's file paths: the owner's, as VACUUM
                f"CREATE TABLE {schema}.mine (id INT)", f"CREATE OR REPLACE TABLE {schema}.t (id INT)",
                f"DROP SCHEMA {schema} CASCADE", f"CREATE TABLE stolen AS SELECT * FROM {schema}.t",
                f"GRANT SELECT ON TABLE {schema}.t TO bob"):
        message = refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
        assert "hint:" in message
    _intact(as_user, schema)
    still_serves(bob)


def test_a_grant_gives_exactly_what_it_names(as_user: Any, schema: str) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")
    assert sorted_rows(bob, f"SELECT * FROM {schema}.t") == [(1, "a"), (2, "b")]
    refused(bob, f"INSERT INTO {schema}.t VALUES (3, 'c')", "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"DROP TABLE {schema}.t", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"GRANT MODIFY ON TABLE {schema}.t TO bob")
    bob.execute(f"INSERT INTO {schema}.t VALUES (3, 'c')")
    alice.execute(f"REVOKE ALL PRIVILEGES ON TABLE {schema}.t FROM bob")
    refused(bob, f"SELECT * FROM {schema}.t", "INSUFFICIENT_PERMISSIONS")
    assert sorted_rows(alice, f"SELECT id FROM {schema}.t") == [(1,), (2,), (3,)]


def test_views_run_with_their_owners_rights(as_user: Any, schema: str) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"GRANT SELECT ON VIEW {schema}.v TO bob")
    assert sorted_rows(bob, f"SELECT * FROM {schema}.v") == [(1,), (2,)]
    refused(bob, f"SELECT * FROM {schema}.t", "INSUFFICIENT_PERMISSIONS")  # the view's table stays hers
    view = f"bobs_view_{uuid.uuid4().hex[:6]}"
    bob.execute(f"CREATE VIEW {view} AS SELECT 1 AS one")
    refused(bob, f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM {schema}.t", "INSUFFICIENT_PERMISSIONS")


def test_a_schema_grant_covers_its_tables_and_create_lets_others_create(as_user: Any, schema: str) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"GRANT SELECT ON SCHEMA {schema} TO bob")
    assert sorted_rows(bob, f"SELECT id FROM {schema}.t") == [(1,), (2,)]
    refused(bob, f"CREATE TABLE {schema}.bobs (id INT)", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"GRANT CREATE ON SCHEMA {schema} TO bob")
    bob.execute(f"CREATE TABLE {schema}.bobs (id INT)")
    alice.execute(f"DROP TABLE {schema}.bobs")  # the schema's owner manages what is in it


def test_everybody_may_create_in_default_and_owns_what_they_create(as_user: Any) -> None:
    table = f"mine_{uuid.uuid4().hex[:6]}"
    carol, dave = as_user("carol"), as_user("dave")
    carol.execute(f"CREATE TABLE default.{table} (id INT)")
    refused(dave, f"DROP TABLE default.{table}", "INSUFFICIENT_PERMISSIONS")
    refused(dave, f"SELECT * FROM default.{table}", "INSUFFICIENT_PERMISSIONS")
    carol.execute(f"GRANT SELECT ON {table} TO users")  # `users` is everybody
    assert sorted_rows(dave, f"SELECT * FROM default.{table}") == []
    carol.execute(f"DROP TABLE default.{table}")


def test_show_grants_in_databricks_shape(as_user: Any, schema: str) -> None:
    alice = as_user("alice")
    alice.execute(f"GRANT SELECT, MODIFY ON TABLE {schema}.t TO bob")
    alice.execute(f"SHOW GRANTS ON TABLE {schema}.t")
    assert [d[0] for d in alice.description] == ["Principal", "ActionType", "ObjectType", "ObjectKey"]
    assert sorted(alice.fetchall()) == [("alice", "OWN", "TABLE", f"`{schema}`.`t`"),
                                        ("bob", "MODIFY", "TABLE", f"`{schema}`.`t`"),
                                        ("bob", "SELECT", "TABLE", f"`{schema}`.`t`")]
    alice.execute(f"SHOW GRANTS bob ON TABLE {schema}.t")
    assert sorted(r[1] for r in alice.fetchall()) == ["MODIFY", "SELECT"]


def test_streaming_tables_need_select_on_what_they_stream(as_user: Any, schema: str) -> None:
    bob = as_user("bob")
    refused(bob, f"CREATE STREAMING TABLE default.peek AS SELECT * FROM STREAM {schema}.t",
            "INSUFFICIENT_PERMISSIONS")


def test_admins_may_do_everything(start_gateway: Any, as_user: Any, schema: str) -> None:
    from pyhive import hive

    admin_gateway = start_gateway({"security": {"admins": ["root_admin"]}})
    admin = hive.connect(admin_gateway.host, admin_gateway.port, username="root_admin").cursor()
    assert sorted_rows(admin, f"SELECT * FROM {schema}.t") == [(1, "a"), (2, "b")]
    admin.execute(f"GRANT SELECT ON TABLE {schema}.t TO erin")
    assert sorted_rows(as_user("erin"), f"SELECT id FROM {schema}.t") == [(1,), (2,)]


def test_get_columns_shows_only_what_the_user_may_read(connect: Any, schema: str) -> None:
    from TCLIService import ttypes as T
    from test_metadata import records

    def columns_seen_by(user: str) -> set[str]:
        conn = connect(username=user)
        resp = conn._client.GetColumns(T.TGetColumnsReq(sessionHandle=conn._sessionHandle, schemaName=schema))
        return {f"{row['TABLE_NAME']}.{row['COLUMN_NAME']}" for row in records(conn._client, resp)}

    assert columns_seen_by("alice") == {"t.id", "t.secret", "v.id"}
    assert columns_seen_by("bob") == set()
    connect(username="alice").cursor().execute(f"GRANT SELECT ON VIEW {schema}.v TO bob")
    assert columns_seen_by("bob") == {"v.id"}


def test_a_replaced_view_loses_its_grants_and_a_replaced_table_keeps_them(as_user: Any, schema: str) -> None:
    """Databricks' semantics, which dbt-spark's grant handling relies on: CREATE OR REPLACE VIEW makes a new view
    (grants go); CREATE OR REPLACE TABLE keeps the table, its history and its grants. Views show as TABLE."""
    alice = as_user("alice")
    alice.execute(f"CREATE OR REPLACE VIEW {schema}.shared AS SELECT 1 AS one")
    alice.execute(f"GRANT SELECT ON VIEW {schema}.shared TO bob")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")
    alice.execute(f"SHOW GRANTS ON VIEW {schema}.shared")
    assert ("bob", "SELECT", "TABLE", f"`{schema}`.`shared`") in alice.fetchall()
    alice.execute(f"CREATE OR REPLACE VIEW {schema}.shared AS SELECT 2 AS two")
    alice.execute(f"CREATE OR REPLACE TABLE {schema}.t (id INT) USING delta")
    alice.execute(f"SHOW GRANTS ON VIEW {schema}.shared")
    assert [row[:2] for row in alice.fetchall()] == [("alice", "OWN")]
    alice.execute(f"SHOW GRANTS ON TABLE {schema}.t")
    assert ("bob", "SELECT") in [row[:2] for row in alice.fetchall()]
    assert refused(as_user("bob"), f"SELECT * FROM {schema}.shared")


def test_the_binders_own_views_cannot_be_named(as_user: Any, schema: str) -> None:
    """A catalog view's tables are bound to temporary views read with the view owner's rights; bob, who may read
    only `v` (t's id), once read t whole by naming the one bound in the same statement (`__sg_snapshot_<n>`, n from
    a counter). The binder's names are now random and refused in a user's text."""
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"GRANT SELECT ON VIEW {schema}.v TO bob")
    bob.execute("CREATE OR REPLACE TEMPORARY VIEW __sg_snapshot_0 AS SELECT 1 AS one")  # the name exists, his own
    for name in ("__sg_snapshot_0", "`__sg_snapshot_0`", "__SG_SNAPSHOT_0"):
        message = refused(bob, f"SELECT * FROM {schema}.v CROSS JOIN {name}", "TABLE_OR_VIEW_NOT_FOUND", "42P01")
        assert "at line 1" in message
    for n in range(1, 5):  # Spark resolves IDENTIFIER() itself: the names it could guess no longer exist
        refused(bob, f"SELECT * FROM {schema}.v CROSS JOIN IDENTIFIER('__sg_snapshot_{n}')",
                "TABLE_OR_VIEW_NOT_FOUND", "42P01")
    assert sorted_rows(bob, f"SELECT * FROM {schema}.v") == [(1,), (2,)]
    _intact(as_user, schema)
