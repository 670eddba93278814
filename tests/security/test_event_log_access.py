"""Who may read a streaming table's event log: whoever may read the table (its owner, a SELECT grant, a view its
owner shares), nobody else, and a name given to event_log is a name, never a path or a way into another table's log.
Every refusal is a clean SQL error, and the gateway still answers after it."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from security_helpers import refused, still_serves


def _json_file(folder: Path, rows: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"part-{uuid.uuid4().hex}.json").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture()
def alices_stream(as_user: Callable[[str], Any], streams: Any, tmp_path: Path) -> str:
    """alice's schema with a streaming table `st` that has run a batch (its log holds a flow_progress event)."""
    schema = f"alice_log_{uuid.uuid4().hex[:8]}"
    alice = as_user("alice")
    alice.execute(f"CREATE SCHEMA {schema}")
    _json_file(tmp_path / "src", [{"secret": "s1"}])
    alice.execute(f"CREATE STREAMING TABLE {schema}.st AS SELECT secret FROM STREAM read_files('{tmp_path / 'src'}', "
                  f"format => 'json', schema => 'secret STRING')")
    streams.wait_for(schema, "st")
    deadline = time.monotonic() + 60
    while not any(e.event_type == "flow_progress" for e in streams.store.event_log(schema, "st")):
        assert time.monotonic() < deadline, "no flow_progress event"
        time.sleep(0.1)
    return schema


def _log_types(cursor: Any, sql: str) -> set[str]:
    cursor.execute(sql)
    return {row[0] for row in cursor.fetchall()}


def test_another_user_cannot_read_the_log_without_select(as_user: Any, alices_stream: str, streams: Any) -> None:
    schema = alices_stream
    alice, bob = as_user("alice"), as_user("bob")
    pipeline_id = streams.store.get_stream(schema, "st").stream_id
    assert "flow_progress" in _log_types(alice, f"SELECT event_type FROM event_log(TABLE({schema}.st))")
    assert "flow_progress" in _log_types(alice, f"SELECT event_type FROM event_log('{pipeline_id}')")
    for sql in (f"SELECT * FROM event_log(TABLE({schema}.st))", f"SELECT * FROM event_log('{schema}.st')",
                f"SELECT * FROM event_log('{pipeline_id}')",
                f"SELECT count(*) FROM (SELECT * FROM event_log(TABLE({schema}.st))) x",
                f"WITH e AS (SELECT * FROM event_log(TABLE({schema}.st))) SELECT * FROM e",
                f"CREATE VIEW default.peek_{schema} AS SELECT * FROM event_log(TABLE({schema}.st))",
                f"CREATE TABLE default.copy_{schema} AS SELECT * FROM event_log(TABLE({schema}.st))"):
        message = refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
        assert "hint:" in message
    still_serves(bob)


def test_select_on_the_table_or_a_shared_view_opens_the_log(as_user: Any, alices_stream: str) -> None:
    schema = alices_stream
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"CREATE VIEW {schema}.progress AS SELECT event_type, details FROM event_log(TABLE({schema}.st)) "
                  "WHERE event_type = 'flow_progress'")
    refused(bob, f"SELECT * FROM {schema}.progress", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"GRANT SELECT ON TABLE {schema}.progress TO bob")
    assert _log_types(bob, f"SELECT event_type FROM {schema}.progress") == {"flow_progress"}
    refused(bob, f"SELECT * FROM event_log(TABLE({schema}.st))", "INSUFFICIENT_PERMISSIONS")  # the view only
    alice.execute(f"GRANT SELECT ON TABLE {schema}.st TO bob")
    assert "flow_progress" in _log_types(bob, f"SELECT event_type FROM event_log(TABLE({schema}.st))")


@pytest.mark.parametrize("argument", [
    "'/etc/passwd'", "'..'", "'../alice'", "'file:/tmp/x'", "'a/b'", "'x\\' OR 1=1 --'", "'st;DROP TABLE st'",
    "TABLE(`a/b`)", "TABLE(`..`)", "' st'", "''",
])
def test_a_name_is_never_a_path(as_user: Any, argument: str, victim: Path) -> None:
    message = refused(as_user("bob"), f"SELECT * FROM event_log({argument})", "INVALID_SCHEMA_OR_RELATION_NAME",
                      sqlstate="42602")
    assert "never a path" in message
    assert sorted(p.name for p in victim.iterdir()) == ["important.txt"]


def test_a_name_never_reaches_another_tables_log(as_user: Any, alices_stream: str, streams: Any,
                                                 tmp_path: Path) -> None:
    """bob's own streaming table of the same name, and a temporary view named like alice's table, each read as
    what they are: his log holds only his table's events; the view is no streaming table."""
    schema = alices_stream
    bob = as_user("bob")
    mine = f"bob_log_{uuid.uuid4().hex[:8]}"
    bob.execute(f"CREATE SCHEMA {mine}")
    bob.execute(f"USE {mine}")
    _json_file(tmp_path / "bobs", [{"v": 1}])
    bob.execute(f"CREATE STREAMING TABLE st AS SELECT v FROM STREAM read_files('{tmp_path / 'bobs'}', "
                "format => 'json', schema => 'v INT')")
    streams.wait_for(mine, "st")
    bob.execute("SELECT DISTINCT get_json_object(origin, '$.dataset_name') FROM event_log(TABLE(st))")
    assert bob.fetchall() == [(f"{mine}.st",)]
    bob.execute("CREATE TEMPORARY VIEW secret_st AS SELECT 1 AS x")
    refused(bob, "SELECT * FROM event_log(TABLE(secret_st))", "EVENT_LOG_UNSUPPORTED_TABLE_TYPE", sqlstate="42832")
    refused(bob, f"SELECT * FROM event_log('{schema}.st') UNION ALL SELECT * FROM event_log(TABLE(st))",
            "INSUFFICIENT_PERMISSIONS")
    still_serves(bob)
