"""INSERT ... REPLACE WHERE and INSERT ... REPLACE ON delete rows as well as add them: they need MODIFY on the table
(or its ownership), as any INSERT, and their query may read only what the user may read. A refused one leaves the
table at its Delta version; a predicate or condition with a subquery (a read the policy would not see as the query's)
is refused before anything runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyhive_helpers import sorted_rows
from security_helpers import refused, secret_schema, still_serves

from sluicegate.storage.delta.tables import open_table


def _version(streams: Any, schema: str) -> int:
    return open_table(streams.store.get_table(schema, "t").location).version()


def test_replacing_inserts_need_modify_and_read_only_what_the_user_may(as_user: Callable[[str], Any],
                                                                       streams: Any) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema, other = secret_schema(alice, "repl"), secret_schema(alice, "repl_other")
    before = _version(streams, schema)
    replace_where = f"INSERT INTO {schema}.t REPLACE WHERE id = 1 SELECT 1, 'bob'"
    replace_on = (f"INSERT INTO {schema}.t AS t REPLACE ON (t.id <=> s.id) (SELECT 2 AS id, 'bob' AS secret) AS s")
    for sql in (replace_where, replace_on, f"INSERT INTO {schema}.t BY NAME SELECT 'bob' AS secret, 3 AS id"):
        assert "MODIFY" in refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")  # reading is not enough
    refused(bob, replace_where, "INSUFFICIENT_PERMISSIONS")

    alice.execute(f"GRANT MODIFY ON TABLE {schema}.t TO bob")
    # the query, and the condition's side of it, read a table bob may not read
    refused(bob, f"INSERT INTO {schema}.t REPLACE WHERE id = 1 SELECT id, secret FROM {other}.t WHERE id = 1",
            "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"INSERT INTO {schema}.t AS t REPLACE ON (t.id <=> s.id) (SELECT id, secret FROM {other}.t) AS s",
            "INSUFFICIENT_PERMISSIONS")
    # a subquery in the predicate or condition is refused whoever asks
    for sql in (f"INSERT INTO {schema}.t REPLACE WHERE id IN (SELECT id FROM {other}.t) SELECT 1, 'x'",
                f"INSERT INTO {schema}.t AS t REPLACE ON (t.id IN (SELECT id FROM {other}.t)) (SELECT 1, 'x') AS s"):
        refused(bob, sql, "INVALID_STATEMENT", sqlstate="42000")
        refused(alice, sql, "INVALID_STATEMENT", sqlstate="42000")
    assert _version(streams, schema) == before
    assert sorted_rows(alice, f"SELECT * FROM {schema}.t") == [(1, "a"), (2, "b")]
    still_serves(bob)

    bob.execute(replace_where)
    bob.execute(replace_on)
    assert sorted_rows(alice, f"SELECT * FROM {schema}.t") == [(1, "bob"), (2, "bob")]
    assert _version(streams, schema) == before + 2
    for name in (schema, other):
        alice.execute(f"DROP SCHEMA {name} CASCADE")
