"""A kept Delta table (storage/delta/kept.py, no JVM): brought forward to the latest commit by reading only the new
ones, and opened anew when the table was dropped and created again, cleaned up past it, or is far behind."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from sluicegate.storage.delta import kept
from sluicegate.storage.delta.kept import KeptTable, latest_version, table_location


def _append(path: Path, start: int, rows: int = 3) -> None:
    write_deltalake(str(path), pa.table({"id": pa.array(range(start, start + rows), pa.int64())}), mode="append")


def _ids(table: DeltaTable) -> list[int]:
    return sorted(table.to_pyarrow_table().column("id").to_pylist())


def test_a_kept_table_follows_the_commits_of_other_writers(tmp_path: Path) -> None:
    path = tmp_path / "t"
    held = KeptTable(str(path))
    assert held.latest() is None                             # no table yet
    _append(path, 0)
    first = held.latest()
    assert first is not None and first.version() == 0
    for batch in range(1, 4):
        _append(path, batch * 10)
    table = held.latest()
    assert table is first                                     # the same object, moved forward in place
    assert table.version() == 3 and _ids(table) == _ids(DeltaTable(str(path)))
    assert held.latest().version() == 3                       # nothing new: as it is


def test_a_table_dropped_and_created_again_is_opened_anew(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _append(path, 0)
    _append(path, 10)
    held = KeptTable(str(path))
    assert _ids(held.latest()) == [0, 1, 2, 10, 11, 12]
    shutil.rmtree(path)
    _append(path, 100)
    _append(path, 200)                                        # version 1 again, another table
    assert _ids(held.latest()) == [100, 101, 102, 200, 201, 202]
    shutil.rmtree(path)
    assert held.latest() is None


def test_a_table_far_behind_is_opened_from_its_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _append(path, 0)
    held = KeptTable(str(path))
    old = held.latest()
    for batch in range(1, kept.MAX_COMMITS_TO_CATCH_UP + 5):
        _append(path, batch * 10, rows=1)
    table = held.latest()
    assert table is not old and table.version() == kept.MAX_COMMITS_TO_CATCH_UP + 4
    assert _ids(table) == _ids(DeltaTable(str(path)))


def test_latest_version_and_location_of_a_path_with_odd_characters(tmp_path: Path) -> None:
    path = tmp_path / "a b%c"
    _append(path, 0)
    table = DeltaTable(str(path))
    assert table_location(table) == str(path)
    _append(path, 10)
    _append(path, 20)
    assert latest_version(str(path), 0) == 2 == latest_version(table_location(table), table.version())


def test_a_kept_table_is_opened_anew_from_a_newer_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """delta-rs's table carries every commit loaded since it was opened; past REOPEN_AFTER_COMMITS, with a newer
    checkpoint to open from, the kept table is opened anew."""
    monkeypatch.setattr(kept, "REOPEN_AFTER_COMMITS", 4)
    path = tmp_path / "t"
    write_deltalake(str(path), pa.table({"id": pa.array([0], pa.int64())}),
                    configuration={"delta.checkpointInterval": "3"})
    held = KeptTable(str(path))
    first = held.latest()
    for batch in range(1, 4):
        _append(path, batch * 10, rows=1)
        assert held.latest() is first                         # brought forward in place: 3 commits, under 4
    _append(path, 40, rows=1)                                 # version 4; the checkpoint of version 2 is newer
    table = held.latest()
    assert table is not first and table.version() == 4
    assert _ids(table) == _ids(DeltaTable(str(path)))
    _append(path, 50, rows=1)
    assert held.latest() is table                             # kept again from its new opening


def test_a_kept_table_without_a_newer_checkpoint_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "REOPEN_AFTER_COMMITS", 2)
    path = tmp_path / "t"
    _append(path, 0)
    held = KeptTable(str(path))
    first = held.latest()
    for batch in range(1, 5):
        _append(path, batch * 10, rows=1)
        assert held.latest() is first                         # no checkpoint (interval 100): opening gains nothing
