"""AUTO CDC is a streaming table's CREATE and a flow's: a user creates one only where they may create tables, reads
only what they may read (SELECT on a source table, allowed folders for files), and adds an AUTO CDC flow only into a
table they own. Each refusal is a clean 42501 before anything ran: no table, no stream, the source untouched. A flow
refused because streams read its target names only the streams the caller may see, and counts the others."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from security_helpers import refused, still_serves, untouched


def _alice(as_user: Any, landing_root: Path) -> tuple[str, Path]:
    schema = f"alice_cdc_{uuid.uuid4().hex[:8]}"
    folder = landing_root / schema
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps({"id": 1, "seq": 1, "secret": "pin"}) + "\n")
    alice = as_user("alice")
    alice.execute(f"CREATE SCHEMA {schema}")
    alice.execute(f"CREATE TABLE {schema}.private (id INT, seq BIGINT, secret STRING)")
    alice.execute(f"INSERT INTO {schema}.private VALUES (7, 1, 'pin')")
    alice.execute(f"CREATE STREAMING TABLE {schema}.st (id INT, seq BIGINT, secret STRING)")
    return schema, folder


def test_auto_cdc_needs_create_select_allowed_folders_and_ownership(as_user: Any, landing_root: Path, streams: Any,
                                                                   victim: Path) -> None:
    schema, folder = _alice(as_user, landing_root)
    bob = as_user("bob")
    files = f"read_files('{folder}', format => 'json', schema => 'id INT, seq BIGINT, secret STRING')"
    cdc = "KEYS (id) SEQUENCE BY seq"
    # no CREATE in alice's schema
    refused(bob, f"CREATE STREAMING TABLE {schema}.mine FLOW AUTO CDC FROM STREAM {files} {cdc}",
            "INSUFFICIENT_PERMISSIONS")
    # not the owner of alice's table: no AUTO CDC flow into it
    refused(bob, f"CREATE FLOW {schema}.feed AS AUTO CDC INTO {schema}.st FROM STREAM {files} {cdc}",
            "INSUFFICIENT_PERMISSIONS")
    mine = f"bob_cdc_{uuid.uuid4().hex[:8]}"
    bob.execute(f"CREATE SCHEMA {mine}")
    # in his own schema: still no read of alice's table, nor of a folder he may not read
    refused(bob, f"CREATE STREAMING TABLE {mine}.loot FLOW AUTO CDC FROM STREAM {schema}.private {cdc}",
            "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"CREATE STREAMING TABLE {mine}.loot FLOW AUTO CDC FROM STREAM read_files('{victim}', "
                 f"format => 'csv', schema => 'id INT, seq BIGINT') {cdc}", "PATH_NOT_ALLOWED")
    # nor through an AUTO CDC flow into a table he owns: the flow's source is judged as a table's
    bob.execute(f"CREATE STREAMING TABLE {mine}.copy (id INT, seq BIGINT, secret STRING)")
    refused(bob, f"CREATE FLOW {mine}.steal AS AUTO CDC INTO {mine}.copy FROM STREAM {schema}.private {cdc}",
            "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"CREATE FLOW {mine}.steal AS AUTO CDC INTO {mine}.copy FROM STREAM read_files('{victim}', "
                 f"format => 'csv', schema => 'id INT, seq BIGINT, secret STRING') {cdc}", "PATH_NOT_ALLOWED")
    for database in (schema, mine):
        assert streams.store.list_flows(database) == []
        assert [s.name for s in streams.store.list_streams()
                if s.database == database] == [], "a refused statement started a stream"
    bob.execute(f"SELECT count(*) FROM {mine}.copy")
    assert bob.fetchall() == [(0,)]
    bob.execute(f"DROP TABLE {mine}.copy")
    bob.execute(f"SHOW TABLES IN {mine}")
    assert bob.fetchall() == []
    untouched(victim)
    still_serves(bob)
    as_user("alice").execute(f"DROP TABLE {schema}.st")


def test_auto_cdc_flow_refusal_names_only_the_readers_the_caller_may_see(as_user: Any, streams: Any) -> None:
    """Bob, granted SELECT on alice's table, streams from it in his own schema; alice's AUTO CDC flow into it is
    refused because of those streams, but the message names only her own reader and counts bob's, until bob grants
    her SELECT on one of his tables (then that one is named: a grant is what DESCRIBE needs too)."""
    alice, bob = as_user("alice"), as_user("bob")
    schema, mine = f"alice_rd_{uuid.uuid4().hex[:8]}", f"bob_rd_{uuid.uuid4().hex[:8]}"
    alice.execute(f"CREATE SCHEMA {schema}")
    alice.execute(f"CREATE TABLE {schema}.changes (id INT, op STRING, seq BIGINT, name STRING)")
    alice.execute(f"CREATE STREAMING TABLE {schema}.t (id INT, seq BIGINT, name STRING)")
    alice.execute(f"CREATE STREAMING TABLE {schema}.alice_down AS SELECT id FROM STREAM({schema}.t)")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")
    bob.execute(f"CREATE SCHEMA {mine}")
    bob.execute(f"CREATE STREAMING TABLE {mine}.bob_hidden_reader AS SELECT id, name FROM STREAM({schema}.t)")
    bob.execute(f"CREATE STREAMING TABLE {mine}.bob_sink (id INT)")
    bob.execute(f"CREATE FLOW {mine}.bob_hidden_flow AS INSERT INTO {mine}.bob_sink SELECT id FROM STREAM({schema}.t)")
    sql = (f"CREATE FLOW {schema}.apply AS AUTO CDC INTO {schema}.t FROM STREAM({schema}.changes) KEYS (id) "
           "APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op)")

    message = refused(alice, sql, "STREAMING_SOURCE_NOT_APPEND_ONLY", "0A000")
    assert f"`{schema}`.`alice_down` and 2 streams you cannot see stream from it" in message, message
    for secret in (mine, "bob_hidden_reader", "bob_hidden_flow", "bob_sink"):
        assert secret not in message, message

    bob.execute(f"GRANT SELECT ON TABLE {mine}.bob_sink TO alice")     # now alice may see the flow's target
    message = refused(alice, sql, "STREAMING_SOURCE_NOT_APPEND_ONLY", "0A000")
    assert f"`{schema}`.`alice_down`, flow `bob_hidden_flow` into `{mine}`.`bob_sink` and 1 stream you cannot see " \
        "stream from it" in message, message
    assert "bob_hidden_reader" not in message, message
    assert streams.store.get_stream(schema, "t", flow="apply") is None
    still_serves(alice)
    for table in ("bob_hidden_reader", "bob_sink"):
        bob.execute(f"DROP TABLE {mine}.{table}")
    for table in ("alice_down", "t", "changes"):
        alice.execute(f"DROP TABLE {schema}.{table}")
