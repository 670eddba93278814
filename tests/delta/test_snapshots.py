"""The latest snapshot kept between statements (no JVM): it follows every commit, equals a table opened afresh, never
changes under a statement that pinned it, and starts over when the table is dropped and created again in place."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from sluicegate.storage.delta import kept
from sluicegate.storage.delta.compaction import compact
from sluicegate.storage.delta.compaction_policy import CompactionPolicy
from sluicegate.storage.delta.snapshots import Snapshot, load_snapshot


def _append(path: Path, start: int, rows: int = 10, mode: str = "append") -> None:
    write_deltalake(str(path), pa.table({"id": pa.array(range(start, start + rows), pa.int64())}), mode=mode)


def _fresh(path: Path) -> tuple[int, set[str], int]:
    table = DeltaTable(str(path))
    return table.version(), set(table.file_uris()), pa.table(table.get_add_actions(flatten=True)).num_rows


def _seen(snapshot: Snapshot) -> tuple[int, set[str], int]:
    assert snapshot.add_actions is not None
    return snapshot.version, set(snapshot.files), snapshot.add_actions().num_rows


def test_the_kept_snapshot_follows_each_commit_and_equals_a_fresh_open(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _append(path, 0)
    first = load_snapshot(str(path))
    assert load_snapshot(str(path)) is first            # no commit since: the kept snapshot, not a replay
    for batch in range(1, 6):
        _append(path, batch * 10)
        assert _seen(load_snapshot(str(path))) == _fresh(path)
    _append(path, 100)
    _append(path, 110)
    _append(path, 0, mode="overwrite")                 # several commits since the last statement, one removing all
    assert _seen(load_snapshot(str(path))) == _fresh(path) == (8, _fresh(path)[1], 1)


def test_a_pinned_snapshot_never_moves_when_the_table_does(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _append(path, 0)
    pinned = load_snapshot(str(path))
    before = _seen(pinned)
    for batch in range(1, 4):
        _append(path, batch * 10)
    latest = load_snapshot(str(path))
    assert latest.version == 3 and _seen(pinned) == before == (0, before[1], 1)
    assert load_snapshot(str(path), version=0).files == pinned.files     # time travel is its own open


def test_a_compaction_commit_is_followed_like_any_other(tmp_path: Path) -> None:
    path = tmp_path / "t"
    for batch in range(4):
        _append(path, batch * 10)
    assert len(load_snapshot(str(path)).files) == 4
    assert compact(str(path), CompactionPolicy(target_size=1 << 20, fan_in=4, base_size=64 * 1024))
    latest = load_snapshot(str(path))
    assert _seen(latest) == _fresh(path) and len(latest.files) == 1


def test_a_table_dropped_and_created_again_in_place_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "t"
    for batch in range(3):
        _append(path, batch * 10)
    assert load_snapshot(str(path)).version == 2
    for commits in (1, 3, 5):                          # fewer, as many and more versions than the kept one
        shutil.rmtree(path)
        for batch in range(commits):
            _append(path, 1000 + batch * 7, rows=7)
        assert _seen(load_snapshot(str(path))) == _fresh(path)
        assert load_snapshot(str(path)).version == commits - 1


def test_a_table_far_behind_is_opened_from_its_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _append(path, 0)
    load_snapshot(str(path))
    for batch in range(1, kept.MAX_COMMITS_TO_CATCH_UP + 5):
        _append(path, batch * 10, rows=1)
    assert _seen(load_snapshot(str(path))) == _fresh(path)


def test_statements_on_many_threads_while_a_writer_commits(tmp_path: Path) -> None:
    path = tmp_path / "t"
    _append(path, 0)
    errors: list[BaseException] = []
    seen: list[int] = []

    def read() -> None:
        try:
            for _ in range(30):
                snapshot = load_snapshot(str(path))
                assert _seen(snapshot)[1:] == (set(snapshot.files), len(snapshot.files))
                seen.append(snapshot.version)
        except BaseException as exc:  # noqa: BLE001 - reported to the test's thread below
            errors.append(exc)

    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    for batch in range(1, 11):
        _append(path, batch * 10)
    for reader in readers:
        reader.join()
    assert not errors
    assert _seen(load_snapshot(str(path))) == _fresh(path) and max(seen) <= 10
