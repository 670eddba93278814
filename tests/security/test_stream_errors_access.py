"""A stream's last error may quote its data (here a CAST of a row's value): SHOW STREAMING TABLES and SHOW FLOWS
show it only to a user who may read the table, as SHOW MATERIALIZED VIEWS does. The stream's name and status stay
listed for everyone, as SHOW TABLES lists names."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from pyhive_helpers import poll_until

from sluicegate.executor.streaming_tables import CREATE_WAITS

SECRET = "hunter2-secret"


def _rows(cur: Any, sql: str) -> list[dict[str, Any]]:
    cur.execute(sql)
    columns = [d[0] for d in cur.description]
    return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]


def test_a_streams_error_is_shown_only_to_who_may_read_its_table(as_user: Any, landing_root: Path,
                                                                  streams: Any) -> None:
    schema = f"alice_errors_{uuid.uuid4().hex[:8]}"
    folder = landing_root / schema
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps({"id": 1, "secret": SECRET}) + "\n")
    source = f"STREAM read_files('{folder}', format => 'json', schema => 'id INT, secret STRING')"
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"SET {CREATE_WAITS}=false")
    alice.execute(f"CREATE SCHEMA {schema}")
    # both fail at their first batch: CAST_INVALID_INPUT quotes the value
    alice.execute(f"CREATE STREAMING TABLE {schema}.casts AS SELECT CAST(secret AS INT) AS n FROM {source}")
    alice.execute(f"CREATE STREAMING TABLE {schema}.target (n INT)")
    alice.execute(f"CREATE FLOW {schema}.feed AS INSERT INTO {schema}.target BY NAME "
                  f"SELECT CAST(secret AS INT) AS n FROM {source}")
    for name, flow in (("casts", None), ("target", "feed")):
        poll_until(lambda n=name, f=flow: (e := streams.store.get_stream(schema, n, flow=f)) and e.last_error,
                   f"{name} to fail")

    # alice (the owner) sees the errors, with the value they quote: the check below can fail
    tables = {r["tableName"]: r for r in _rows(alice, f"SHOW STREAMING TABLES IN {schema}")}
    assert SECRET in tables["casts"]["lastError"] and SECRET in tables["target"]["lastError"]
    assert SECRET in _rows(alice, f"SHOW FLOWS IN {schema}")[0]["lastError"]

    # bob sees the streams listed, but none of their errors
    tables = {r["tableName"]: r for r in _rows(bob, f"SHOW STREAMING TABLES IN {schema}")}
    assert set(tables) == {"casts", "target"}
    assert tables["casts"]["lastError"] is None and tables["target"]["lastError"] is None
    flows = _rows(bob, f"SHOW FLOWS IN {schema}")
    assert [f["flowName"] for f in flows] == ["feed"] and flows[0]["lastError"] is None

    # a grant to read the table shows its error
    alice.execute(f"GRANT SELECT ON TABLE {schema}.casts TO bob")
    tables = {r["tableName"]: r for r in _rows(bob, f"SHOW STREAMING TABLES IN {schema}")}
    assert SECRET in tables["casts"]["lastError"] and tables["target"]["lastError"] is None
    for name in ("casts", "target"):
        alice.execute(f"DROP TABLE {schema}.{name}")
