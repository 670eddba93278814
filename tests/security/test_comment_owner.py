"""`COMMENT ON {TABLE | VIEW | MATERIALIZED VIEW | STREAMING TABLE}` is the owner's alone: another user, even one
granted SELECT and MODIFY (and REFRESH on the materialized view), is refused with 42501 and a hint, and the comment
stays as the owner set it, as dbt's persist_docs would otherwise let any reader rewrite a table's documentation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyhive_helpers import sorted_rows
from security_helpers import refused, secret_schema, still_serves


def _comments(cursor: Any, schema: str) -> dict[str, str | None]:
    return dict(sorted_rows(cursor, f"SELECT table_name, comment FROM information_schema.tables "
                                    f"WHERE table_schema = '{schema}'"))


def test_another_user_cannot_comment_on_alices_relations_of_any_kind(as_user: Callable[[str], Any]) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "alice_comments")
    alice.execute(f"CREATE VIEW {schema}.v AS SELECT id FROM {schema}.t")
    alice.execute(f"CREATE MATERIALIZED VIEW {schema}.mv AS SELECT count(*) AS n FROM {schema}.t")
    alice.execute(f"CREATE STREAMING TABLE {schema}.st (id INT)")   # a flows target: no stream to start
    kinds = {"t": "TABLE", "v": "VIEW", "mv": "MATERIALIZED VIEW", "st": "STREAMING TABLE"}
    for name, kind in kinds.items():
        alice.execute(f"COMMENT ON {kind} {schema}.{name} IS 'alice wrote this'")
        alice.execute(f"GRANT SELECT ON TABLE {schema}.{name} TO bob")
    for name in ("t", "st"):
        alice.execute(f"GRANT MODIFY ON TABLE {schema}.{name} TO bob")
    alice.execute(f"GRANT REFRESH ON MATERIALIZED VIEW {schema}.mv TO bob")
    for name, kind in kinds.items():
        for text in ("'bob was here'", "NULL"):
            message = refused(bob, f"COMMENT ON {kind} {schema}.{name} IS {text}", "INSUFFICIENT_PERMISSIONS")
            assert "hint:" in message
    assert _comments(alice, schema) == dict.fromkeys(kinds, "alice wrote this")
    alice.execute(f"COMMENT ON STREAMING TABLE {schema}.st IS NULL")    # the owner may
    assert _comments(alice, schema)["st"] is None
    still_serves(bob)
