"""Compaction at the storage layer (no JVM): which files merge, that no row changes, that a merge's commit changes no
data for downstream readers, and that it never races a writer into duplicates or lost rows."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from sluicegate.storage.delta import commit
from sluicegate.storage.delta.changes import table_change
from sluicegate.storage.delta.compaction import (
    LiveFile,
    compact,
    live_files,
    merge_candidates,
    merge_files,
    settle_candidates,
)
from sluicegate.storage.delta.compaction_policy import CompactionPolicy
from sluicegate.storage.delta.errors import DeltaCommitConflictError

SMALL = CompactionPolicy(target_size=1 << 20, fan_in=4, base_size=64 * 1024)


def _batch(start: int, rows: int = 10, key: str = "a") -> pa.Table:
    return pa.table({
        "id": pa.array(range(start, start + rows), pa.int64()),
        "k": pa.array([key] * rows),
        "at": pa.array([dt.datetime(2026, 11, 27, 12, tzinfo=dt.timezone.utc)] * rows, pa.timestamp("us", "UTC")),
        "amount": pa.array([decimal.Decimal("1.25")] * rows, pa.decimal128(10, 2)),
        "tags": pa.array([["x", "y"]] * rows, pa.list_(pa.string())),
    })


def _table(path: Path, commits: int, partition_by: list[str] | None = None) -> str:
    for index in range(commits):
        key = ("a b" if index % 2 else "c%d") if partition_by else "a"
        write_deltalake(str(path), _batch(index * 10, key=key), mode="append", partition_by=partition_by)
    return str(path)


def _rows(location: str, version: int | None = None) -> list[tuple]:
    table = DeltaTable(location, version=version).to_pyarrow_table()
    return sorted(zip(*(table.column(name).to_pylist() for name in sorted(table.column_names)), strict=True))


def test_size_classes_merge_once_full_and_leave_big_files() -> None:
    policy = CompactionPolicy(target_size=1000, fan_in=3, base_size=10)
    files = [LiveFile(f"f{i}", size, {}) for i, size in enumerate([5, 5, 50, 5, 60, 2000, 70])]
    groups = merge_candidates(files, policy)
    assert [[file.path for file in group] for group in groups] == [["f0", "f1", "f3"], ["f2", "f4", "f6"]]
    assert merge_candidates(files[:2], policy) == []            # a class below fan_in waits
    assert policy.size_class(5) == 0 and policy.size_class(10) == 1 and policy.size_class(30) == 2


def test_settling_merges_the_small_files_across_classes_but_not_a_big_file_alone() -> None:
    policy = CompactionPolicy(target_size=1000, fan_in=3, base_size=10)
    files = [LiveFile(f"f{i}", size, {}) for i, size in enumerate([50, 5, 5, 2000, 20])]
    (group,) = settle_candidates(files, policy)
    assert [file.path for file in group] == ["f0", "f1", "f2", "f4"]      # log order; the file of target size stays
    big = [LiveFile("big", 900, {}), LiveFile("a", 5, {}), LiveFile("b", 5, {})]
    (group,) = settle_candidates(big, policy)
    assert [file.path for file in group] == ["a", "b"]      # 900 > 3 * 10: not rewritten for 10 bytes
    assert settle_candidates([LiveFile("one", 5, {})], policy) == []
    split = [LiveFile("a", 5, {"k": "1"}), LiveFile("b", 5, {"k": "2"}), LiveFile("c", 5, {"k": "1"})]
    assert [[file.path for file in group] for group in settle_candidates(split, policy)] == [["a", "c"]]


def test_settling_makes_one_file_of_a_quiet_table(tmp_path: Path) -> None:
    location = _table(tmp_path / "t", 5)
    assert compact(location, SMALL) != []                    # the 5 merged, their class being full ...
    for index in range(2):
        write_deltalake(location, _batch(100 + index * 10), mode="append")
    before = _rows(location)
    assert len(DeltaTable(location).file_uris()) == 3
    assert compact(location, SMALL) == []                    # ... and the new ones wait for their class to fill
    (settled,) = compact(location, SMALL, settle=True)
    assert settled.version is not None and settled.files_removed == 3
    assert len(DeltaTable(location).file_uris()) == 1 and _rows(location) == before
    assert compact(location, SMALL, settle=True) == []


def test_a_merged_file_has_a_page_index_for_spark_to_skip_pages(tmp_path: Path) -> None:
    """Spark's reader skips the pages whose min/max cannot match a filter when the file carries a page index (its own
    writer writes one); pyarrow writes none unless asked."""
    location = _table(tmp_path / "t", 4)
    (merged,) = compact(location, SMALL)
    assert merged.version is not None
    (uri,) = DeltaTable(location).file_uris()
    metadata = pq.ParquetFile(uri.removeprefix("file://")).metadata
    columns = [metadata.row_group(0).column(i) for i in range(metadata.num_columns)]
    assert all(column.has_column_index and column.has_offset_index for column in columns)


def test_a_merge_stays_under_the_target_size() -> None:
    policy = CompactionPolicy(target_size=100, fan_in=2, base_size=1000)
    files = [LiveFile(f"f{i}", 40, {}) for i in range(5)]
    (group,) = merge_candidates(files, policy)
    assert [file.path for file in group] == ["f0", "f1"]


def test_compaction_keeps_every_row_and_changes_no_data(tmp_path: Path) -> None:
    location = _table(tmp_path / "t", 12)
    before = _rows(location)
    version = DeltaTable(location).version()
    results = compact(location, SMALL)
    assert [r.files_removed for r in results] == [12] and results[0].version == version + 1
    assert len(DeltaTable(location).file_uris()) == 1
    assert _rows(location) == before
    assert _rows(location, version) == before                  # time travel to before the merge still reads
    change = table_change(location, version, version + 1)
    assert change is not None and change.empty                  # what STREAM(t) and incremental views see: nothing
    log = (Path(location) / "_delta_log" / f"{version + 1:020d}.json").read_text().splitlines()
    actions = [json.loads(line) for line in log]
    assert all(a["add"]["dataChange"] is False for a in actions if "add" in a)
    assert all(a["remove"]["dataChange"] is False for a in actions if "remove" in a)
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    assert info[commit.OPERATION_KEY] == "OPTIMIZE"
    stats = json.loads(next(a["add"]["stats"] for a in actions if "add" in a))
    assert stats["numRecords"] == 120 and stats["minValues"]["id"] == 0 and stats["maxValues"]["id"] == 119


def test_partitions_merge_apart_and_keep_their_values(tmp_path: Path) -> None:
    location = _table(tmp_path / "p", 16, partition_by=["k"])
    before = _rows(location)
    compact(location, SMALL)
    table = DeltaTable(location)
    assert len(table.file_uris()) == 2
    assert _rows(location) == before
    values = sorted(str(v) for v in pa.table(table.get_add_actions(flatten=True)).column("partition.k").to_pylist())
    assert values == ["a b", "c%d"]


def test_nothing_merges_below_fan_in(tmp_path: Path) -> None:
    location = _table(tmp_path / "few", 3)
    assert compact(location, SMALL) == []
    assert DeltaTable(location).version() == 2


def test_a_merge_whose_files_were_rewritten_meanwhile_commits_nothing(tmp_path: Path) -> None:
    location = _table(tmp_path / "raced", 5)
    table = DeltaTable(location)
    group = live_files(table)
    # a DELETE-like rewrite removes one of the files after the merge read them
    commit.rewrite(location, table.version(), [f"file://{location}/{group[0].path}"], None, "DELETE")
    expected = _rows(location)
    result = merge_files(location, table.version(), group)
    assert result.version is None
    assert _rows(location) == expected
    staged = [p for p in Path(location).rglob("*.parquet") if p.stat().st_size == result.bytes_added]
    assert len(live_files(DeltaTable(location))) == 4 and not any("_sg_write_" in str(p) for p in staged)


def test_a_rewrite_read_before_a_merge_fails_instead_of_duplicating(tmp_path: Path) -> None:
    location = _table(tmp_path / "stale", 6)
    read_version = DeltaTable(location).version()
    first = live_files(DeltaTable(location))[0]
    compact(location, SMALL)                                    # the file the rewrite read is merged away
    with pytest.raises(DeltaCommitConflictError) as failure:
        commit.rewrite(location, read_version, [f"file://{location}/{first.path}"], None, "DELETE")
    assert failure.value.sqlstate == "40001"
    assert len(_rows(location)) == 60


def test_a_rewrite_in_a_partition_named_with_a_percent_sign_commits_after_others_landed(tmp_path: Path) -> None:
    location = _table(tmp_path / "pct", 4, partition_by=["k"])
    read_version = DeltaTable(location).version()
    target = next(file for file in live_files(DeltaTable(location)) if "%" in file.partition_values["k"])
    write_deltalake(location, _batch(1000, key="a b"), mode="append", partition_by=["k"])   # lands meanwhile
    commit.rewrite(location, read_version, [f"file://{location}/{quote(target.path)}"], None, "DELETE")
    assert len(_rows(location)) == 40 and target.path not in {f.path for f in live_files(DeltaTable(location))}


def test_an_overwrite_read_before_a_merge_replaces_the_merged_file(tmp_path: Path) -> None:
    location = _table(tmp_path / "over", 6)
    read_version = DeltaTable(location).version()
    compact(location, SMALL)
    commit.replace_with_arrow(location, read_version, _batch(1000, rows=3), "WRITE")
    ids = sorted(DeltaTable(location).to_pyarrow_table().column("id").to_pylist())
    assert ids == [1000, 1001, 1002]  # no row of the merged file survives


def test_appends_after_a_merge_from_an_older_version_land(tmp_path: Path) -> None:
    location = _table(tmp_path / "append", 6)
    stale = DeltaTable(location)
    compact(location, SMALL)
    write_deltalake(location, _batch(500), mode="append")     # delta-rs rebases a blind append
    assert stale.version() < DeltaTable(location).version()
    assert len(_rows(location)) == 70
