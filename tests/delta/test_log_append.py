"""A stream's append committed by writing its commit file by name (storage/delta/log_commits.py,
storage/delta/log_tail.py, `commit_appended`), no JVM: the file is the one delta-rs writes for the same append,
delta-rs reads the table the same, the tail follows other writers' commits, and a lost race moves on or fails as
delta-rs would."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.transaction import AddAction

from sluicegate.storage.delta import log_commits
from sluicegate.storage.delta.commit import PARAMETERS_KEY, commit_appended, commit_properties
from sluicegate.storage.delta.errors import DeltaCommitConflictError
from sluicegate.storage.delta.files import WrittenFile
from sluicegate.storage.delta.kept import KeptTable
from sluicegate.storage.delta.log_commits import PATH_SAFE, put_commit, read_commit
from sluicegate.storage.delta.log_tail import LogTail
from sluicegate.storage.delta.write import AppTransaction

SCHEMA = pa.schema([("country", pa.string()), ("id", pa.int64())])
# names Spark writes for partition values with a space, a slash, a percent sign, a non-ASCII letter, and null
FOLDERS = {"United States": "country=United%20States", "a/b%": "country=a%2Fb%25", "Zürich": "country=Zürich",
           None: "country=__HIVE_DEFAULT_PARTITION__"}


def _table(path: Path, configuration: dict[str, str] | None = None) -> Path:
    write_deltalake(str(path), pa.table({"country": ["x"], "id": pa.array([0], pa.int64())}, schema=SCHEMA),
                    partition_by=["country"], configuration=configuration)
    return path


def _files(table: Path, first_id: int) -> list[WrittenFile]:
    """Real Parquet files in partition folders, as a batch's write leaves them."""
    written = []
    for n, (value, folder) in enumerate(FOLDERS.items()):
        relative = f"{folder}/part {first_id + n} é.parquet"
        os.makedirs(table / folder, exist_ok=True)
        pq.write_table(pa.table({"id": pa.array([first_id + n], pa.int64())}), table / relative)
        stats = json.dumps({"numRecords": 1, "minValues": {"id": first_id + n}, "maxValues": {"id": first_id + n},
                            "nullCount": {"id": 0}})
        written.append(WrittenFile(relative, (table / relative).stat().st_size, 1_700_000_000_000 + n,
                                   {"country": value}, stats))
    return written


def _actions(path: Path, version: int) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for action in read_commit(path, version):
        (kind, body), = action.items()
        grouped.setdefault(kind, []).append(body)
    return grouped


def test_the_commit_file_is_the_one_delta_rs_writes(tmp_path: Path) -> None:
    theirs, ours = _table(tmp_path / "delta-rs"), _table(tmp_path / "ours")
    files = _files(theirs, 1)
    _files(ours, 1)
    table = DeltaTable(str(theirs))
    table.create_write_transaction(
        [AddAction(f.path, f.size, f.partition_values, f.modification_time, True, f.stats) for f in files],
        "append", table.schema(), partition_by=["country"],
        commit_properties=commit_properties("STREAMING UPDATE", {"epochId": "7"}, AppTransaction("s", 7)))
    assert commit_appended(LogTail(KeptTable(str(ours))), files, "STREAMING UPDATE", {"epochId": "7"},
                           AppTransaction("s", 7)) == 1
    expected, got = _actions(theirs, 1), _actions(ours, 1)
    assert got["add"] == expected["add"]
    assert got["txn"] == expected["txn"] == [{"appId": "s", "version": 7}]
    for info in (expected["commitInfo"][0], got["commitInfo"][0]):
        info.pop("timestamp"), info.pop("clientVersion"), info.pop("engineInfo", None)
    assert got["commitInfo"] == expected["commitInfo"]
    assert json.loads(got["commitInfo"][0][PARAMETERS_KEY]) == {"epochId": "7"}
    # read back by delta-rs: the same rows, files and txn
    for path in (theirs, ours):
        assert DeltaTable(str(path)).transaction_version("s") == 7
    appended = [[uri.split(f"/{path.name}/", 1)[1] for uri in DeltaTable(str(path)).file_uris()
                 if "/country=x/" not in uri] for path in (ours, theirs)]
    assert sorted(appended[0]) == sorted(appended[1]) and len(appended[0]) == len(FOLDERS)
    rows = DeltaTable(str(ours)).to_pyarrow_table().sort_by("id").to_pylist()
    assert rows == DeltaTable(str(theirs)).to_pyarrow_table().sort_by("id").to_pylist()
    assert [row["country"] for row in rows] == ["x", "United States", "a/b%", "Zürich", None]


def test_paths_are_encoded_as_delta_rs_encodes_them(tmp_path: Path) -> None:
    path = _table(tmp_path / "t")
    names = [f"x{chr(c)}y.parquet" for c in range(32, 127) if chr(c) != "/"] + ["dir/ä\tö.parquet"]
    table = DeltaTable(str(path))
    table.create_write_transaction([AddAction(name, 1, {"country": "x"}, 1, True, None) for name in names],
                                   "append", table.schema(), partition_by=["country"])
    written = [action["path"] for action in _actions(path, 1)["add"]]
    assert written == [log_commits.add_action(name, 1, {"country": "x"}, 1, None)["add"]["path"] for name in names]
    assert "%" not in PATH_SAFE and "/" in PATH_SAFE


def test_the_tail_follows_other_writers_by_name_leaving_the_delta_rs_table_where_it_was(tmp_path: Path) -> None:
    path = _table(tmp_path / "t")
    tail = LogTail(KeptTable(str(path)))
    assert tail.current().version == 0
    other = DeltaTable(str(path))
    other.create_write_transaction([], "append", other.schema(), partition_by=["country"],
                                   commit_properties=commit_properties("STREAMING UPDATE", None,
                                                                       AppTransaction("other", 41)))
    state = tail.current()
    assert state.version == 1 and state.transaction_version("other") == 41
    assert commit_appended(tail, _files(path, 10), "STREAMING UPDATE", {}, AppTransaction("mine", 3)) == 2
    state = tail.current()
    assert state.version == 2 and state.transaction_version("mine") == 3
    # delta-rs's table (whose every move lists the log folder) was not brought forward
    assert state.base_version == int(state.base.version()) == 0
    assert state.base.transaction_version("other") is None
    table = DeltaTable(str(path))
    assert table.version() == 2 and table.transaction_version("mine") == 3


def test_a_change_of_metadata_brings_the_base_forward_through_delta_rs(tmp_path: Path) -> None:
    path = _table(tmp_path / "t")
    tail = LogTail(KeptTable(str(path)))
    assert tail.current().configuration == {}
    DeltaTable(str(path)).alter.set_table_properties({"delta.checkpointInterval": "5"})
    state = tail.current()
    assert state.base_version == state.version == 1
    assert state.configuration["delta.checkpointInterval"] == "5"


def test_a_lost_race_moves_past_the_other_commit(tmp_path: Path) -> None:
    path = _table(tmp_path / "t")
    tail = LogTail(KeptTable(str(path)))
    assert tail.current().version == 0
    # another process takes version 1 between the tail's look and its commit
    assert put_commit(path, 1, [{"commitInfo": {"timestamp": 1, "operation": "WRITE"}},
                                {"txn": {"appId": "other", "version": 1}}])
    assert not put_commit(path, 1, [{"commitInfo": {"timestamp": 2, "operation": "WRITE"}}])
    assert _actions(path, 1)["txn"] == [{"appId": "other", "version": 1}]     # the first file stays as it was
    assert commit_appended(tail, _files(path, 20), "STREAMING UPDATE", {}, AppTransaction("mine", 0)) == 2
    assert not [name for name in os.listdir(path / "_delta_log") if name.endswith(".tmp")]


def test_the_same_streams_batch_landed_first_is_a_conflict(tmp_path: Path) -> None:
    path = _table(tmp_path / "t")
    tail = LogTail(KeptTable(str(path)))
    tail.current()
    assert put_commit(path, 1, [{"commitInfo": {"timestamp": 1, "operation": "WRITE"}},
                                {"txn": {"appId": "mine", "version": 5}}])
    with pytest.raises(DeltaCommitConflictError, match="batch 5 of stream mine"):
        commit_appended(tail, _files(path, 30), "STREAMING UPDATE", {}, AppTransaction("mine", 5))
    assert DeltaTable(str(path)).version() == 1


def test_checkpoints_are_written_when_due(tmp_path: Path) -> None:
    path = _table(tmp_path / "t", {"delta.checkpointInterval": "3"})
    tail = LogTail(KeptTable(str(path)))
    for batch in range(7):
        commit_appended(tail, _files(path, 100 * batch), "STREAMING UPDATE", {}, AppTransaction("s", batch))
    checkpoints = sorted(name for name in os.listdir(path / "_delta_log") if name.endswith(".checkpoint.parquet"))
    assert checkpoints == [f"{version:020d}.checkpoint.parquet" for version in (2, 5)]
    table = DeltaTable(str(path))
    assert table.version() == 7 and table.transaction_version("s") == 6
    assert table.to_pyarrow_table().num_rows == 1 + 7 * len(FOLDERS)


def test_a_table_with_deletion_vectors_is_appended_to_through_delta_rs(tmp_path: Path) -> None:
    path = _table(tmp_path / "t", {"delta.enableDeletionVectors": "true"})
    tail = LogTail(KeptTable(str(path)))
    state = tail.current()
    assert "deletionVectors" in (DeltaTable(str(path)).protocol().writer_features or [])
    assert not state.direct
    started = time.time()
    assert commit_appended(tail, _files(path, 40), "STREAMING UPDATE", {}, AppTransaction("s", 0)) == 1
    info = _actions(path, 1)["commitInfo"][0]
    assert info["clientVersion"].startswith("delta-rs")       # delta-rs wrote it
    assert info["timestamp"] >= int(started * 1000) - 1000
