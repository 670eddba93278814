"""Expectations and their quarantine tables under the grants: the quarantine table of alice's streaming table is
alice's (bob reads or changes it only by her grant), and an expectation's condition is judged by the policy as the
query is, so it cannot reach reflection."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyhive_helpers import error_status, sorted_rows
from security_helpers import refused, still_serves


def _landed(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": 1, "secret": "kept"}, {"id": -1, "secret": "quarantined"}]
    (folder / ".part.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / ".part.json").rename(folder / "part.json")
    return folder


def test_the_quarantine_table_is_the_owners(as_user: Callable[[str], Any], streams: Any,
                                            landing_root: Path) -> None:
    schema = f"alice_q_{uuid.uuid4().hex[:8]}"
    folder = _landed(landing_root / schema)
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(f"CREATE SCHEMA {schema}")
    alice.execute(f"CREATE STREAMING TABLE {schema}.guarded (CONSTRAINT positive EXPECT (id > 0) ON VIOLATION "
                  f"DROP ROW) AS SELECT * FROM STREAM read_files('{folder}', format => 'json', "
                  "schema => 'id INT, secret STRING')")
    streams.wait_for(schema, "guarded")
    quarantine = f"{schema}.guarded__quarantine"
    assert [r[:2] for r in sorted_rows(alice, f"SELECT id, secret FROM {quarantine}")] == [(-1, "quarantined")]
    for sql in (f"SELECT * FROM {quarantine}", f"SELECT count(*) FROM {quarantine}",
                f"DESCRIBE TABLE {quarantine}", f"INSERT INTO {quarantine} SELECT * FROM {quarantine}",
                f"DELETE FROM {quarantine}", f"DROP TABLE {quarantine}", f"GRANT SELECT ON TABLE {quarantine} TO bob"):
        refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"GRANT SELECT ON TABLE {quarantine} TO bob")
    assert [r[:2] for r in sorted_rows(bob, f"SELECT id, secret FROM {quarantine}")] == [(-1, "quarantined")]
    refused(bob, f"SELECT * FROM {schema}.guarded", "INSUFFICIENT_PERMISSIONS")  # the grant names one table
    refused(bob, f"DROP TABLE {schema}.guarded", "INSUFFICIENT_PERMISSIONS")
    assert sorted_rows(alice, f"SELECT count(*) FROM {quarantine}") == [(1,)]
    still_serves(bob)


def test_an_expectation_cannot_reach_reflection(as_user: Callable[[str], Any], landing_root: Path) -> None:
    folder = _landed(landing_root / f"reflect_{uuid.uuid4().hex[:8]}")
    bob = as_user("bob")
    for condition in ("java_method('java.lang.System', 'exit', 0) IS NULL",
                      "reflect('java.lang.System', 'getenv', 'HOME') IS NOT NULL",
                      "exists(array(1), x -> reflect('java.lang.System', 'exit', 0) IS NULL)"):
        status = error_status(bob, f"CREATE STREAMING TABLE default.sneaky (CONSTRAINT c EXPECT ({condition})) AS "
                                   f"SELECT * FROM STREAM read_files('{folder}', format => 'json', "
                                   "schema => 'id INT, secret STRING')")
        assert status.sqlState in ("42501", "42883", "42K05"), status.errorMessage
        assert "\tat " not in status.errorMessage
    bob.execute("SHOW TABLES IN default")
    assert "sneaky" not in [row[1] for row in bob.fetchall()]
    still_serves(bob)
