"""Who may do what with a materialized view, each statement kind on purpose: CREATE needs CREATE in the schema and
SELECT on every input; REFRESH, ALTER ... SCHEDULE, CREATE OR REPLACE / OR REFRESH and DROP are the owner's; reading
it (SELECT, DESCRIBE, event_log) needs SELECT on the view only, because it is refreshed with its owner's rights, as
a view's query runs; an owner who loses SELECT on an input can no longer refresh it, and the result stays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from security_helpers import refused, secret_schema, still_serves


def test_another_user_cannot_create_refresh_alter_replace_or_drop(as_user: Callable[[str], Any]) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "alice_mv")
    alice.execute(f"CREATE MATERIALIZED VIEW {schema}.mv SCHEDULE EVERY 4 HOURS AS SELECT id FROM {schema}.t")
    refused(bob, f"CREATE MATERIALIZED VIEW {schema}.bobs AS SELECT 1 AS x", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.mv TO bob")
    alice.execute(f"GRANT MODIFY ON TABLE {schema}.mv TO bob")
    for sql in (f"REFRESH MATERIALIZED VIEW {schema}.mv",
                f"REFRESH MATERIALIZED VIEW {schema}.mv FULL",
                f"ALTER MATERIALIZED VIEW {schema}.mv DROP SCHEDULE",
                f"ALTER MATERIALIZED VIEW {schema}.mv ALTER SCHEDULE EVERY 1 HOUR",
                f"CREATE OR REPLACE MATERIALIZED VIEW {schema}.mv AS SELECT secret FROM {schema}.t",
                f"CREATE OR REFRESH MATERIALIZED VIEW {schema}.mv AS SELECT id FROM {schema}.t",
                f"DROP MATERIALIZED VIEW {schema}.mv",
                f"INSERT INTO {schema}.mv VALUES (3)"):
        message = refused(bob, sql, "" if sql.startswith("INSERT") else "INSUFFICIENT_PERMISSIONS",
                          sqlstate="42809" if sql.startswith("INSERT") else "42501")
        assert "hint:" in message
    alice.execute(f"DESCRIBE EXTENDED {schema}.mv")
    assert ("Refresh Schedule", "EVERY 4 HOURS", "") in alice.fetchall()
    alice.execute(f"SELECT * FROM {schema}.mv")
    assert sorted(alice.fetchall()) == [(1,), (2,)]
    alice.execute(f"DROP MATERIALIZED VIEW {schema}.mv")  # the owner may
    still_serves(bob)


def test_create_needs_select_on_every_input(as_user: Callable[[str], Any]) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "alice_mv")
    alice.execute(f"GRANT CREATE ON SCHEMA {schema} TO bob")
    refused(bob, f"CREATE MATERIALIZED VIEW {schema}.peek AS SELECT secret FROM {schema}.t",
            "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"CREATE MATERIALIZED VIEW {schema}.peek2 AS SELECT 1 AS one UNION ALL "
                 f"SELECT count(*) FROM (SELECT * FROM {schema}.t)", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"SHOW MATERIALIZED VIEWS IN {schema}")
    assert alice.fetchall() == []


def test_readers_need_select_on_the_view_only_and_refresh_runs_with_the_owners_rights(
        as_user: Callable[[str], Any]) -> None:
    alice, bob, carol = as_user("alice"), as_user("bob"), as_user("carol")
    schema = secret_schema(alice, "alice_mv")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO carol")
    alice.execute(f"GRANT CREATE ON SCHEMA {schema} TO carol")
    carol.execute(f"CREATE MATERIALIZED VIEW {schema}.carols AS SELECT id FROM {schema}.t")
    for sql in (f"SELECT * FROM {schema}.carols", f"DESCRIBE EXTENDED {schema}.carols",
                f"SELECT * FROM event_log(TABLE({schema}.carols))"):
        refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
    carol.execute(f"GRANT SELECT ON TABLE {schema}.carols TO bob")
    bob.execute(f"SELECT * FROM {schema}.carols")
    assert sorted(bob.fetchall()) == [(1,), (2,)]          # without SELECT on the table it reads
    refused(bob, f"SELECT * FROM {schema}.t", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"INSERT INTO {schema}.t VALUES (3, 'c')")
    alice.execute(f"REVOKE SELECT ON TABLE {schema}.t FROM carol")
    refused(carol, f"REFRESH MATERIALIZED VIEW {schema}.carols", "INSUFFICIENT_PERMISSIONS")
    bob.execute(f"SELECT * FROM {schema}.carols")
    assert sorted(bob.fetchall()) == [(1,), (2,)]          # the failed refresh left the result as it was
    carol.execute(f"DESCRIBE EXTENDED {schema}.carols")
    info = {row[0]: row[1] for row in carol.fetchall()}
    assert info["Latest Refresh Status"] == "FAILED" and "INSUFFICIENT_PERMISSIONS" in info["Last Refresh Error"]
