"""GRANT, REVOKE and SHOW GRANTS ON MATERIALIZED VIEW, and the REFRESH privilege: a reader needs SELECT on the view
only (never on its inputs); REFRESH can be granted, but the refresh keeps running with the owner's rights, so a
grantee cannot lend the view their own; ALTER, DROP and OR REPLACE stay the owner's whatever is granted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyhive_helpers import poll_until
from security_helpers import refused, secret_schema, still_serves


def _rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return sorted(cursor.fetchall())


def _status(cursor: Any, mv: str) -> str:
    cursor.execute(f"DESCRIBE EXTENDED {mv}")
    return {row[0]: row[1] for row in cursor.fetchall()}["Latest Refresh Status"]


def test_grant_select_on_materialized_view_lets_a_reader_in_without_rights_on_its_inputs(
        as_user: Callable[[str], Any]) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "mvg")
    mv = f"{schema}.mv"
    alice.execute(f"CREATE MATERIALIZED VIEW {mv} AS SELECT id FROM {schema}.t")
    for sql in (f"SELECT * FROM {mv}", f"DESCRIBE EXTENDED {mv}", f"SELECT * FROM event_log(TABLE({mv}))"):
        refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
    message = refused(bob, f"GRANT SELECT ON MATERIALIZED VIEW {mv} TO bob", "INSUFFICIENT_PERMISSIONS")
    assert "only its owner (alice)" in message
    alice.execute(f"GRANT SELECT ON MATERIALIZED VIEW {mv} TO bob")
    assert _rows(bob, f"SELECT * FROM {mv}") == [(1,), (2,)]
    assert "Type" in dict(row[:2] for row in _rows(bob, f"DESCRIBE EXTENDED {mv}"))
    refused(bob, f"SELECT * FROM {schema}.t", "INSUFFICIENT_PERMISSIONS")       # the input stays closed
    key = f"`{schema}`.`mv`"
    assert _rows(alice, f"SHOW GRANTS ON MATERIALIZED VIEW {mv}") == [
        ("alice", "OWN", "TABLE", key), ("bob", "SELECT", "TABLE", key)]
    assert _rows(alice, f"SHOW GRANTS bob ON MATERIALIZED VIEW {mv}") == [("bob", "SELECT", "TABLE", key)]
    for sql in (f"REFRESH MATERIALIZED VIEW {mv}", f"REFRESH MATERIALIZED VIEW {mv} ASYNC"):
        message = refused(bob, sql, "INSUFFICIENT_PERMISSIONS")   # SELECT is not REFRESH
        assert f"GRANT REFRESH ON MATERIALIZED VIEW {key} TO `bob`" in message
    alice.execute(f"REVOKE SELECT ON MATERIALIZED VIEW {mv} FROM bob")
    refused(bob, f"SELECT * FROM {mv}", "INSUFFICIENT_PERMISSIONS")
    assert _rows(alice, f"SHOW GRANTS ON MATERIALIZED VIEW {mv}") == [("alice", "OWN", "TABLE", key)]
    still_serves(bob)


def test_refresh_grant_lets_a_user_refresh_but_not_alter_replace_drop_or_grant(as_user: Callable[[str], Any]) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "mvg")
    mv = f"{schema}.mv"
    alice.execute(f"CREATE MATERIALIZED VIEW {mv} SCHEDULE EVERY 4 HOURS AS SELECT id FROM {schema}.t")
    alice.execute(f"GRANT SELECT, REFRESH ON MATERIALIZED VIEW {mv} TO bob")
    alice.execute(f"INSERT INTO {schema}.t VALUES (3, 'c')")
    bob.execute(f"REFRESH MATERIALIZED VIEW {mv}")        # bob has no SELECT on t: the refresh runs as alice
    assert _rows(bob, f"SELECT * FROM {mv}") == [(1,), (2,), (3,)]
    alice.execute(f"INSERT INTO {schema}.t VALUES (4, 'd')")
    bob.execute(f"REFRESH MATERIALIZED VIEW {mv} FULL ASYNC")   # in the background, as alice too
    poll_until(lambda: _status(bob, mv) == "COMPLETED", "bob's ASYNC refresh")  # RUNNING from the statement on
    assert _rows(bob, f"SELECT * FROM {mv}") == [(1,), (2,), (3,), (4,)]
    for sql in (f"ALTER MATERIALIZED VIEW {mv} DROP SCHEDULE",
                f"CREATE OR REPLACE MATERIALIZED VIEW {mv} AS SELECT secret FROM {schema}.t",
                f"CREATE OR REFRESH MATERIALIZED VIEW {mv} AS SELECT id FROM {schema}.t",
                f"DROP MATERIALIZED VIEW {mv}",
                f"GRANT SELECT ON MATERIALIZED VIEW {mv} TO carol"):
        refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"SELECT secret FROM {schema}.t", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"REVOKE REFRESH ON MATERIALIZED VIEW {mv} FROM bob")
    refused(bob, f"REFRESH MATERIALIZED VIEW {mv}", "INSUFFICIENT_PERMISSIONS")
    info = dict(row[:2] for row in _rows(alice, f"DESCRIBE EXTENDED {mv}"))
    assert info["Refresh Schedule"] == "EVERY 4 HOURS" and info["Latest Refresh Status"] == "COMPLETED"


def test_a_refresh_grantee_cannot_lend_the_view_their_own_rights(as_user: Callable[[str], Any]) -> None:
    """carol's table feeds alice's view; bob may refresh it and read carol's table himself. Once carol takes SELECT
    back from alice, bob's refresh fails (it runs as alice) and the view keeps its rows."""
    carol, alice, bob = as_user("carol"), as_user("alice"), as_user("bob")
    schema = secret_schema(carol, "mvg")
    carol.execute(f"GRANT SELECT ON TABLE {schema}.t TO alice")
    carol.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")
    carol.execute(f"GRANT CREATE ON SCHEMA {schema} TO alice")
    mv = f"{schema}.alices"
    alice.execute(f"CREATE MATERIALIZED VIEW {mv} AS SELECT id, secret FROM {schema}.t")
    alice.execute(f"GRANT SELECT, REFRESH ON MATERIALIZED VIEW {mv} TO bob")
    carol.execute(f"INSERT INTO {schema}.t VALUES (3, 'c')")
    carol.execute(f"REVOKE SELECT ON TABLE {schema}.t FROM alice")
    message = refused(bob, f"REFRESH MATERIALIZED VIEW {mv}", "INSUFFICIENT_PERMISSIONS")
    assert "User alice" in message
    assert _rows(bob, f"SELECT id FROM {mv}") == [(1,), (2,)]
    info = dict(row[:2] for row in _rows(bob, f"DESCRIBE EXTENDED {mv}"))
    assert info["Latest Refresh Status"] == "FAILED" and "alice" in info["Last Refresh Error"]


def test_grants_name_the_right_kind_of_object(as_user: Callable[[str], Any]) -> None:
    alice = as_user("alice")
    schema = secret_schema(alice, "mvg")
    alice.execute(f"CREATE MATERIALIZED VIEW {schema}.mv AS SELECT id FROM {schema}.t")
    message = refused(alice, f"GRANT SELECT ON MATERIALIZED VIEW {schema}.t TO bob", "EXPECT_MATERIALIZED_VIEW",
                      sqlstate="42809")
    assert "is a table, not a materialized view" in message and "ON TABLE" in message
    message = refused(alice, f"GRANT REFRESH ON TABLE {schema}.t TO bob", "UNSUPPORTED_FEATURE", sqlstate="0A000")
    assert "REFRESH is granted on a materialized view" in message
    alice.execute(f"GRANT SELECT ON TABLE {schema}.mv TO bob")    # ON TABLE names the view's row too
    assert _rows(alice, f"SHOW GRANTS bob ON MATERIALIZED VIEW {schema}.mv") == [
        ("bob", "SELECT", "TABLE", f"`{schema}`.`mv`")]
    refused(alice, f"GRANT SELECT ON MATERIALIZED VIEW {schema}.nothing TO bob", "TABLE_OR_VIEW_NOT_FOUND",
            sqlstate="42P01")
