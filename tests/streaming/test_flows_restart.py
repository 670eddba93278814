"""Flows survive a gateway restart: the gateway runs as a process of its own, is killed (SIGKILL, gateway and JVM
together) with two flows writing into one table, files land while it is down, and the next boot resumes both flows
from their own checkpoints: every row of both folders is in the table exactly once. Two AUTO CDC flows into another
table, killed and resumed alike, end with each key's latest change over both folders, once."""

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


# AUTO CDC flows: change events of the same keys from two folders, sequences interleaved across them and out of order
# within each; (id, op, seq, name), every seq distinct so the expected table is plain to compute
CDC_BEFORE = ([(1, "U", 1, "a1"), (2, "U", 4, "b4"), (1, "U", 6, "a6"), (3, "U", 2, "c2")],
              [(1, "U", 5, "a5"), (2, "D", 7, None), (3, "U", 3, "c3"), (4, "U", 8, "d8")])
CDC_WHILE_DOWN = ([(2, "U", 9, "b9"), (4, "D", 10, None), (1, "U", 11, "a11")],
                  [(2, "U", 8, "b8"), (4, "U", 9, "d9"), (3, "U", 12, "c12")])


def _cdc_land(land: Any, folders: tuple[Path, Path], events: tuple[list[Any], list[Any]]) -> None:
    for folder, batch in zip(folders, events, strict=True):
        land(folder, [{"id": i, "op": op, "seq": seq, "name": name} for i, op, seq, name in batch])


def _cdc_expected(*events: tuple[list[Any], list[Any]]) -> list[tuple[int, int, str]]:
    """Per id the event with the highest seq of either folder; the id stays unless that event is a delete."""
    latest: dict[int, tuple[int, str, str]] = {}
    for pair in events:
        for i, op, seq, name in pair[0] + pair[1]:
            if i not in latest or seq > latest[i][0]:
                latest[i] = (seq, op, name)
    return sorted((i, seq, name) for i, (seq, op, name) in latest.items() if op != "D")


def _until_cdc(cur: Any, expected: list[tuple[int, int, str]], deadline: float) -> None:
    while True:
        cur.execute("SELECT id, seq, name FROM restart.customers")
        rows = sorted(cur.fetchall())
        assert len({row[0] for row in rows}) == len(rows), f"a key twice: {rows}"
        if rows == expected:
            return
        assert time.monotonic() < deadline, f"{rows} instead of {expected} after the deadline"
        time.sleep(0.3)


@pytest.mark.timeout(600)
def test_a_restart_resumes_every_flow_exactly_once(tmp_path: Path, land: Any) -> None:
    gateway = GatewayProcess(tmp_path / "warehouse", restart_conf(tmp_path), tmp_path / "gateway.log")
    first, second = tmp_path / "a", tmp_path / "b"
    changes = (tmp_path / "cdc_a", tmp_path / "cdc_b")
    land(first, [{"id": i} for i in range(5)])
    land(second, [{"id": i} for i in range(100, 103)])
    _cdc_land(land, changes, CDC_BEFORE)
    gateway.start()
    try:
        cur = _cursor(gateway)
        cur.execute("CREATE DATABASE restart")
        cur.execute("CREATE STREAMING TABLE restart.events (id INT, src STRING, note STRING)")
        for flow, folder in (("from_a", first), ("from_b", second)):   # by name: in any order, `note` NULL
            cur.execute(f"CREATE FLOW restart.{flow} AS INSERT INTO restart.events BY NAME SELECT '{flow[-1]}' AS "
                        f"src, id FROM STREAM read_files('{folder}', format => 'json', schema => 'id INT')")
        cur.execute("CREATE STREAMING TABLE restart.customers (id INT, seq BIGINT, name STRING)")
        for flow, folder in zip(("cdc_a", "cdc_b"), changes, strict=True):
            cur.execute(f"CREATE FLOW restart.{flow} AS AUTO CDC INTO restart.customers FROM STREAM read_files("
                        f"'{folder}', format => 'json', schema => 'id INT, op STRING, seq BIGINT, name STRING') "
                        "KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, _rescued_data)")
        _until_rows(cur, 8, time.monotonic() + 180)
        _until_cdc(cur, _cdc_expected(CDC_BEFORE), time.monotonic() + 180)
        gateway.kill()
        land(first, [{"id": i} for i in range(5, 9)])          # landed while the gateway is down
        land(second, [{"id": i} for i in range(103, 106)])
        _cdc_land(land, changes, CDC_WHILE_DOWN)
        gateway.start()
        cur = _cursor(gateway)
        rows = _until_rows(cur, 15, time.monotonic() + 240)
        assert sorted(rows) == sorted([(i, "a") for i in range(9)] + [(i, "b") for i in range(100, 106)])
        _until_cdc(cur, _cdc_expected(CDC_BEFORE, CDC_WHILE_DOWN), time.monotonic() + 240)
        land(second, [{"id": 106}])                            # and both go on after the boot
        land(first, [{"id": 9}])
        assert len(set(_until_rows(cur, 17, time.monotonic() + 120))) == 17
        cur.execute("SHOW FLOWS IN restart")
        assert sorted((row[1], row[3]) for row in cur.fetchall()) == [
            ("cdc_a", "RUNNING"), ("cdc_b", "RUNNING"), ("from_a", "RUNNING"), ("from_b", "RUNNING")]
    finally:
        gateway.stop()
