"""Flows survive a gateway restart: the gateway runs as a process of its own, is killed (SIGKILL, gateway and JVM
together) with two flows writing into one table, files land while it is down, and the next boot resumes both flows
from their own checkpoints: every row of both folders is in the table exactly once."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from gateway_process import GatewayProcess, restart_conf


def _cursor(gateway: GatewayProcess) -> Any:
    from pyhive import hive

    return hive.connect("127.0.0.1", gateway.port, username="tester").cursor()


def _until_rows(cur: Any, expected: int, deadline: float) -> list[tuple[int, str]]:
    """Poll the table until it holds `expected` rows (never more: a duplicate fails at once)."""
    while True:
        cur.execute("SELECT id, src FROM restart.events WHERE note IS NULL")
        rows = cur.fetchall()
        assert len(rows) <= expected, f"more rows than landed: {Counter(rows).most_common(3)}"
        if len(rows) == expected:
            return rows
        assert time.monotonic() < deadline, f"{len(rows)} of {expected} rows after the deadline"
        time.sleep(0.3)


@pytest.mark.timeout(600)
def test_a_restart_resumes_every_flow_exactly_once(tmp_path: Path, land: Any) -> None:
    gateway = GatewayProcess(tmp_path / "warehouse", restart_conf(tmp_path), tmp_path / "gateway.log")
    first, second = tmp_path / "a", tmp_path / "b"
    land(first, [{"id": i} for i in range(5)])
    land(second, [{"id": i} for i in range(100, 103)])
    gateway.start()
    try:
        cur = _cursor(gateway)
        cur.execute("CREATE DATABASE restart")
        cur.execute("CREATE STREAMING TABLE restart.events (id INT, src STRING, note STRING)")
        for flow, folder in (("from_a", first), ("from_b", second)):   # by name: in any order, `note` NULL
            cur.execute(f"CREATE FLOW restart.{flow} AS INSERT INTO restart.events BY NAME SELECT '{flow[-1]}' AS "
                        f"src, id FROM STREAM read_files('{folder}', format => 'json', schema => 'id INT')")
        _until_rows(cur, 8, time.monotonic() + 180)
        gateway.kill()
        land(first, [{"id": i} for i in range(5, 9)])          # landed while the gateway is down
        land(second, [{"id": i} for i in range(103, 106)])
        gateway.start()
        cur = _cursor(gateway)
        rows = _until_rows(cur, 15, time.monotonic() + 240)
        assert sorted(rows) == sorted([(i, "a") for i in range(9)] + [(i, "b") for i in range(100, 106)])
        land(second, [{"id": 106}])                            # and both go on after the boot
        land(first, [{"id": 9}])
        assert len(set(_until_rows(cur, 17, time.monotonic() + 120))) == 17
        cur.execute("SHOW FLOWS IN restart")
        assert sorted((row[1], row[3]) for row in cur.fetchall()) == [("from_a", "RUNNING"), ("from_b", "RUNNING")]
    finally:
        gateway.stop()
