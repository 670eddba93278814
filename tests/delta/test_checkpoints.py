"""Checkpoints after the gateway's own commits (storage/delta/checkpoints.py, no JVM): delta-rs's post-commit hook is
off for them, so the gateway must write the same checkpoints and clean up the same log entries the hook would have."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.transaction import AddAction

from sluicegate.storage.delta.checkpoints import checkpoint_due, checkpoint_interval, last_checkpoint_version
from sluicegate.storage.delta.commit import commit_actions


def _log(path: Path) -> list[str]:
    return sorted(os.listdir(path / "_delta_log"))


def _add(path: Path, n: int) -> AddAction:
    name = f"part-{n}.parquet"
    pq.write_table(pa.table({"id": pa.array([n], pa.int64())}), path / name)
    return AddAction(name, (path / name).stat().st_size, {}, int(time.time() * 1000), True, None)


def _twins(tmp_path: Path, configuration: dict[str, str], commits: int) -> tuple[Path, Path]:
    """The same commits to two tables: one through delta-rs with its hook, one through the gateway's commit."""
    hooked, ours = tmp_path / "hooked", tmp_path / "ours"
    for path in (hooked, ours):
        write_deltalake(str(path), pa.table({"id": pa.array([0], pa.int64())}), configuration=configuration)
    for n in range(1, commits + 1):
        table = DeltaTable(str(hooked))
        table.create_write_transaction([_add(hooked, n)], "append", table.schema())
        commit_actions(DeltaTable(str(ours)), [_add(ours, n)], "append", "WRITE", None)
    return hooked, ours


def test_the_gateway_checkpoints_the_versions_delta_rs_hook_would(tmp_path: Path) -> None:
    hooked, ours = _twins(tmp_path, {"delta.checkpointInterval": "3"}, commits=9)
    assert _log(ours) == _log(hooked)
    assert [name for name in _log(ours) if "checkpoint.parquet" in name] == [
        f"{version:020d}.checkpoint.parquet" for version in (2, 5, 8)]
    assert last_checkpoint_version(ours) == 8
    table = DeltaTable(str(ours))
    assert table.version() == 9
    assert sorted(table.to_pyarrow_table().column("id").to_pylist()) == list(range(10))


def test_expired_log_entries_go_as_with_delta_rs_hook(tmp_path: Path) -> None:
    configuration = {"delta.checkpointInterval": "2", "delta.logRetentionDuration": "interval 0 seconds"}
    hooked, ours = _twins(tmp_path, configuration, commits=7)
    assert _log(ours) == _log(hooked)
    assert f"{0:020d}.json" not in _log(ours)                 # cleaned up: older than the retention
    assert DeltaTable(str(ours)).version() == 7


def test_no_clean_up_when_the_table_turns_it_off(tmp_path: Path) -> None:
    configuration = {"delta.checkpointInterval": "2", "delta.logRetentionDuration": "interval 0 seconds",
                     "delta.enableExpiredLogCleanup": "false"}
    _hooked, ours = _twins(tmp_path, configuration, commits=5)
    assert [f"{version:020d}.json" for version in range(6)] == [name for name in _log(ours) if name.endswith(".json")]
    assert last_checkpoint_version(ours) == 5


@pytest.mark.parametrize(("value", "interval"), [("10", 10), ("0", 100), ("-3", 100), ("ten", 100), (None, 100)])
def test_checkpoint_interval_as_delta_rs_reads_it(value: str | None, interval: int) -> None:
    configuration = {} if value is None else {"delta.checkpointInterval": value}
    assert checkpoint_interval(configuration) == interval
    assert checkpoint_due(interval - 1, configuration) and not checkpoint_due(interval, configuration)


def test_delta_rs_hook_is_off_for_the_gateway_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the gateway's own call, no checkpoint: delta-rs's hook (which lists and stats the whole log at every
    commit) does not run."""
    from sluicegate.storage.delta import commit

    called: list[int] = []
    monkeypatch.setattr(commit, "checkpoint_if_due", lambda table, version: called.append(version))
    path = tmp_path / "t"
    write_deltalake(str(path), pa.table({"id": pa.array([0], pa.int64())}),
                    configuration={"delta.checkpointInterval": "2"})
    for n in range(1, 6):
        commit_actions(DeltaTable(str(path)), [_add(path, n)], "append", "WRITE", None)
    assert called == [1, 2, 3, 4, 5]
    assert not [name for name in _log(path) if "checkpoint" in name]
