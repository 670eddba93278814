"""REFRESH ... FULL killed at each of its step boundaries: the gateway process dies there (a crash point armed by
SLUICEGATE_FAULT, engine/streams/faults.py: os._exit(137), as SIGKILL leaves it), is started again on the same
warehouse, and the table must end exactly equal to the query over all input: no row lost (a row keeping the old
stream id without its checkpoint restarts at batch 0 and the sink skips the batches the old txn holds), none doubled
(a new stream id over a table not emptied).

One chain of gateway processes: each boot checks the table the previous process left mid-refresh, then refreshes
it again with the next point armed, and dies there.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from delta_log import txn_actions
from deltalake import DeltaTable
from gateway_process import GatewayProcess, restart_conf
from keyed_files import keyed_rows, per_key
from pyhive_helpers import execute_on

POINTS = ("full_refresh.after_stop", "full_refresh.after_row", "full_refresh.after_checkpoint",
          "full_refresh.after_empty")
ROWS_PER_FILE = 40
KEYS = ("a", "b", "c")


def _rows(index: int) -> list[dict[str, Any]]:
    return keyed_rows(index, ROWS_PER_FILE, KEYS)


def _land(folder: Path, index: int) -> None:
    name = f"part-{index:04d}.json"
    hidden = folder / f".{name}"
    hidden.write_text("".join(json.dumps(row) + "\n" for row in _rows(index)), encoding="utf-8")
    os.rename(hidden, folder / name)


def _expected(files: int) -> dict[str, tuple[int, int]]:
    return per_key(row for index in range(files) for row in _rows(index))




def _table(location: Path) -> dict[str, tuple[int, int]]:
    rows = DeltaTable(str(location)).to_pyarrow_table().to_pylist()
    assert len({r["k"] for r in rows}) == len(rows), f"a key twice: {rows}"
    return {r["k"]: (r["n"], r["total"]) for r in rows}


def _emptied_for(location: Path) -> list[str]:
    """The stream ids the table was emptied for, in commit order: the txn actions of version -1."""
    return [app for app, version in txn_actions(location) if version == -1]


def _wait_exact(location: Path, appended: Path, files: int, deadline: float) -> None:
    """Poll the Delta table until it equals the result over `files` files; on time out, say what it holds."""
    expected = _expected(files)
    while True:
        seen = _table(location)
        if seen == expected:
            ids = sorted(DeltaTable(str(appended)).to_pyarrow_table(columns=["id"]).column("id").to_pylist())
            if ids == sorted(r["id"] for index in range(files) for r in _rows(index)):
                return
        assert time.monotonic() < deadline, f"{location.name}: {seen} != {expected} after the restart"
        time.sleep(0.3)


@pytest.mark.timeout(1500)
def test_full_refresh_killed_at_each_step_ends_exact(tmp_path: Path) -> None:
    warehouse, source = tmp_path / "warehouse", tmp_path / "input"
    source.mkdir()
    gateway = GatewayProcess(warehouse, restart_conf(tmp_path), tmp_path / "gateway.log")
    files = 0
    for _ in range(3):
        _land(source, files)
        files += 1
    read = f"STREAM read_files('{source}', format => 'json', schema => 'id INT, k STRING')"
    aggregated, appended = warehouse / "fr.db" / "per_key", warehouse / "fr.db" / "events"
    gateway.start(env={"SLUICEGATE_FAULT": POINTS[0]})
    try:
        execute_on(gateway.port, "CREATE DATABASE fr",
                 f"CREATE STREAMING TABLE fr.per_key AS SELECT k, count(*) AS n, sum(id) AS total FROM {read} "
                 f"GROUP BY k",
                 f"CREATE STREAMING TABLE fr.events AS SELECT id, k FROM {read}")
        for index, point in enumerate(POINTS):
            _wait_exact(aggregated, appended, files, time.monotonic() + 240)
            _land(source, files)        # input the old stream has not seen when the refresh starts
            files += 1
            table = "per_key" if index % 2 == 0 else "events"
            with pytest.raises(Exception):  # noqa: B017 - the connection dies with the process
                execute_on(gateway.port, f"REFRESH STREAMING TABLE fr.{table} FULL")
            assert gateway.process is not None and gateway.process.wait(timeout=120) == 137, \
                f"the gateway did not stop at {point}; see {gateway.log}"
            _land(source, files)        # input landing while the gateway is down
            files += 1
            gateway.start(env={"SLUICEGATE_FAULT": POINTS[index + 1]} if index + 1 < len(POINTS) else None)
        _wait_exact(aggregated, appended, files, time.monotonic() + 240)
        _land(source, files)            # the refreshed streams go on
        files += 1
        _wait_exact(aggregated, appended, files, time.monotonic() + 240)
        seen = {k: (n, total) for k, n, total in execute_on(gateway.port, "SELECT k, n, total FROM fr.per_key")}
        assert seen == _expected(files)
        assert execute_on(gateway.port, "SELECT count(*), count(DISTINCT id) FROM fr.events") == [
            (files * ROWS_PER_FILE, files * ROWS_PER_FILE)]
        # the refreshes that got past the catalog switch took effect: each stream id's emptying commit (txn -1)
        # per_key: the refresh killed after_checkpoint (the one killed after_stop never switched)
        # events: the refreshes killed after_row (completed at boot) and after_empty
        assert len(_emptied_for(aggregated)) == 1 and len(_emptied_for(appended)) == 2
    finally:
        gateway.stop()
