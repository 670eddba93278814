"""Flows change what a streaming table holds: only its owner (or an admin) adds a flow into it or drops one of its
flows, and a flow reads only what its creator may read (SELECT on tables, allowed folders for files). Every refusal is
a clean SQL error; alice's table, flows and rows stay as they were."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from security_helpers import refused, still_serves, untouched


def _alice_table(as_user: Any, landing_root: Path, streams: Any) -> tuple[str, Path]:
    schema = f"alice_flows_{uuid.uuid4().hex[:8]}"
    folder = landing_root / schema
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps({"id": 1}) + "\n")
    alice = as_user("alice")
    alice.execute(f"CREATE SCHEMA {schema}")
    alice.execute(f"CREATE STREAMING TABLE {schema}.st (id INT, secret STRING)")
    alice.execute(f"CREATE TABLE {schema}.private (id INT, secret STRING)")
    alice.execute(f"INSERT INTO {schema}.private VALUES (7, 'pin')")
    alice.execute(f"CREATE FLOW {schema}.feed AS INSERT INTO {schema}.st BY NAME SELECT id FROM STREAM "
                  f"read_files('{folder}', format => 'json', schema => 'id INT')")
    streams.wait_for(schema, "st", flow="feed")
    return schema, folder


def test_another_user_cannot_add_or_drop_a_flow_of_alices_table(as_user: Any, landing_root: Path,
                                                                 streams: Any) -> None:
    schema, _ = _alice_table(as_user, landing_root, streams)
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.st TO bob")
    alice.execute(f"GRANT MODIFY ON TABLE {schema}.st TO bob")     # even MODIFY does not let bob add a flow
    own = landing_root / f"bob_{uuid.uuid4().hex[:8]}"
    own.mkdir()
    for sql in ((f"CREATE FLOW {schema}.mine AS INSERT INTO {schema}.st BY NAME SELECT id FROM STREAM "
                 f"read_files('{own}', format => 'json', schema => 'id INT')"),
                f"DROP FLOW {schema}.feed", f"DROP FLOW IF EXISTS {schema}.feed"):
        message = refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
        assert "hint:" in message
    assert [f.stream.flow for f in streams.store.list_flows(schema)] == ["feed"]
    assert streams.store.list_flows(schema)[0].stream.status == "RUNNING"
    alice.execute(f"SELECT id FROM {schema}.st")
    assert alice.fetchall() == [(1,)]
    still_serves(bob)
    alice.execute(f"DROP TABLE {schema}.st")


def test_a_flow_cannot_read_a_table_or_folder_its_creator_may_not(as_user: Any, landing_root: Path, streams: Any,
                                                                  victim: Path) -> None:
    schema, _ = _alice_table(as_user, landing_root, streams)
    bob = as_user("bob")
    mine = f"bob_flows_{uuid.uuid4().hex[:8]}"
    bob.execute(f"CREATE SCHEMA {mine}")
    bob.execute(f"CREATE STREAMING TABLE {mine}.loot (id INT, secret STRING)")
    refused(bob, f"CREATE FLOW {mine}.steal AS INSERT INTO {mine}.loot BY NAME SELECT id, secret FROM STREAM "
                 f"{schema}.private", "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"CREATE FLOW {mine}.steal AS INSERT INTO {mine}.loot BY NAME SELECT id, secret FROM STREAM "
                 f"{schema}.st", "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"CREATE FLOW {mine}.steal AS INSERT INTO {mine}.loot BY NAME SELECT secret FROM STREAM "
                 f"read_files('{victim}', format => 'csv', schema => 'secret STRING')", "PATH_NOT_ALLOWED")
    assert streams.store.list_flows(mine) == []
    bob.execute(f"SELECT * FROM {mine}.loot")
    assert bob.fetchall() == []
    untouched(victim)
    still_serves(bob)
    bob.execute(f"DROP TABLE {mine}.loot")
    as_user("alice").execute(f"DROP TABLE {schema}.st")
