"""OPTIMIZE rewrites a table's files: it needs what changing its rows needs, MODIFY on the table or its ownership.
A user without it gets 42501 and the table gets no new Delta version (no file was written or removed); with the grant
the same statement compacts the table."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from pyhive_helpers import sorted_rows
from security_helpers import refused, secret_schema, still_serves

from sluicegate.storage.delta.tables import open_table


def _state(streams: Any, schema: str, name: str) -> tuple[int, list[str]]:
    """The table's Delta version and every file in its folder (data and log)."""
    location = streams.store.get_table(schema, name).location
    files = sorted(os.path.join(d, f) for d, _, names in os.walk(location) for f in names)
    return open_table(location).version(), files


def test_optimize_needs_modify_or_ownership(as_user: Callable[[str], Any], streams: Any) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "opt")
    alice.execute(f"INSERT INTO {schema}.t VALUES (3, 'c')")
    alice.execute(f"CREATE MATERIALIZED VIEW {schema}.mv AS SELECT id FROM {schema}.t")
    before = {name: _state(streams, schema, name) for name in ("t", "mv")}

    for sql in (f"OPTIMIZE {schema}.t", f"OPTIMIZE main.{schema}.t ZORDER BY (id)",
                f"OPTIMIZE {schema}.t WHERE id = 1", f"OPTIMIZE {schema}.mv"):
        message = refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
        assert "MODIFY" in message and "hint:" in message
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")  # reading is not enough
    refused(bob, f"OPTIMIZE {schema}.t", "INSUFFICIENT_PERMISSIONS")
    assert {name: _state(streams, schema, name) for name in ("t", "mv")} == before
    still_serves(bob)

    alice.execute(f"GRANT MODIFY ON TABLE {schema}.t TO bob")
    bob.execute(f"OPTIMIZE {schema}.t")
    (_, metrics), = bob.fetchall()
    assert json.loads(metrics)["numFilesAdded"] == 1 and json.loads(metrics)["numFilesRemoved"] >= 2
    version, _ = _state(streams, schema, "t")
    assert version == before["t"][0] + 1
    assert sorted_rows(alice, f"SELECT * FROM {schema}.t") == [(1, "a"), (2, "b"), (3, "c")]
    alice.execute(f"OPTIMIZE {schema}.mv")  # the owner needs no grant
    alice.fetchall()
    alice.execute(f"DROP SCHEMA {schema} CASCADE")
