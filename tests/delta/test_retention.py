"""Retention on real Delta tables on disk (written and compacted by delta-rs, no JVM): removed files expire by their
tombstone's deletionTimestamp, untracked files by their age, log entries by delta.logRetentionDuration, and nothing
a held snapshot needs goes. Ages are made by setting files' modification times and by passing `now`, not by waiting.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa
import pytest
from delta_compaction import compact
from deltalake import DeltaTable, write_deltalake

from sluicegate.storage.delta import retention
from sluicegate.storage.delta.errors import DeltaTableNotFoundError, DeltaUnsupportedFeatureError
from sluicegate.storage.delta.holds import hold, holds, oldest_hold
from sluicegate.storage.delta.intervals import InvalidIntervalError, Retentions
from sluicegate.storage.delta.tables import delta_configuration

DAY = 86400.0
WEEK = 7 * DAY


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def _data_files(location: Path) -> set[str]:
    return {str(p.relative_to(location)) for p in location.rglob("*.parquet") if "_delta_log" not in p.parts}


def _table(location: Path, batches: int = 3, configuration: dict[str, str] | None = None,
           age: float = 10 * DAY) -> set[str]:
    """`batches` appends of one row each, their files made `age` old; returns those files."""
    for i in range(batches):
        write_deltalake(str(location), pa.table({"x": [i]}), mode="append",
                        configuration=configuration if i == 0 else None)
    files = _data_files(location)
    for name in files:
        _age(location / name, age)
    return files


def _rows(location: Path, version: int | None = None) -> list[int]:
    return sorted(DeltaTable(str(location), version=version).to_pyarrow_table().column("x").to_pylist())


@pytest.mark.parametrize("text, seconds", [
    ("interval 1 week", WEEK), ("interval 7 days", WEEK), ("7 days", WEEK), ("INTERVAL 168 HOURS", WEEK),
    ("interval 1 seconds", 1.0), ("interval 1 second", 1.0), ("interval 2 weeks", 2 * WEEK),
    ("interval 1 day 12 hours", 1.5 * DAY), ("interval 30 minutes", 1800.0), ("1.5 hours", 5400.0),
    ("interval 500 milliseconds", 0.5),
])
def test_intervals_read_as_delta_reads_them(text, seconds):
    assert retention.interval_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["a fortnight", "interval", "", "interval 1 month", "interval 2 years",
                                  "interval -1 days", "7", "days 7", "interval 1 day and 2 hours"])
def test_a_bad_interval_is_a_typed_error_with_a_hint(text):
    with pytest.raises(InvalidIntervalError) as raised:
        retention.interval_seconds(text, "delta.logRetentionDuration")
    error = raised.value
    assert (error.error_class, error.sqlstate) == ("INVALID_INTERVAL_FORMAT", "22006")
    assert "delta.logRetentionDuration" in str(error) and "interval 7 days" in (error.hint or "")


@pytest.mark.parametrize("text, canonical", [
    ("7 days", "interval 1 week"), ("INTERVAL 1 WEEK", "interval 1 week"), ("interval 2 days", "interval 2 days"),
    ("interval 1 day 12 hours", "interval 36 hours"), ("1.5 hours", "interval 90 minutes"),
    ("interval 1 seconds", "interval 1 second"), ("interval 500 milliseconds", "interval 500 milliseconds"),
])
def test_the_delta_log_gets_the_form_delta_rs_reads_as_spark_does(text, canonical):
    """delta-rs reads only `interval <integer> <lowercase unit>` and takes its default for anything else (`7 days`,
    `INTERVAL 1 WEEK`): the gateway writes that form into the log."""
    assert delta_configuration({"delta.logRetentionDuration": text, "team": "x"}) == {
        "delta.logRetentionDuration": canonical}
    assert retention.interval_seconds(canonical) == pytest.approx(retention.interval_seconds(text))


def test_delta_configuration_refuses_a_bad_retention():
    with pytest.raises(InvalidIntervalError):
        delta_configuration({"delta.deletedFileRetentionDuration": "a week"})


def test_delta_rs_drops_tombstones_past_the_retention_it_reads_from_the_canonical_form(tmp_path):
    """The point of the canonical form: delta-rs's checkpoint keeps a tombstone only while its retention lasts,
    and it must read the same retention as the gateway (with `1 second` it would keep them for its default week)."""
    location = tmp_path / "t"
    configuration = delta_configuration({"delta.deletedFileRetentionDuration": "1 second"})
    assert configuration == {"delta.deletedFileRetentionDuration": "interval 1 second"}
    _table(location, configuration=configuration)
    compact(location)
    deleted_at = max(retention.tombstones(str(location)).values()) / 1000
    while time.time() < deleted_at + 1.5:  # delta-rs reads the clock itself: the tombstones' second must pass
        time.sleep(0.1)
    DeltaTable(str(location)).create_checkpoint()
    for commit in (location / "_delta_log").glob("*.json"):
        commit.unlink()                    # only the checkpoint tells now
    assert retention.tombstones(str(location)) == {}


def test_effective_retentions_are_the_tables_own_or_deltas_defaults(tmp_path):
    _table(tmp_path / "plain", batches=1)
    assert retention.effective_retentions(str(tmp_path / "plain")) == Retentions(WEEK, 30 * DAY)
    _table(tmp_path / "short", batches=1, configuration={"delta.deletedFileRetentionDuration": "interval 1 hours",
                                                         "delta.logRetentionDuration": "interval 2 days"})
    assert retention.effective_retentions(str(tmp_path / "short")) == Retentions(3600.0, 2 * DAY)


def test_old_files_compacted_away_just_now_survive_a_week_of_retention(tmp_path):
    """The case that modification times get wrong: files written ten days ago, removed by a compaction a moment
    ago, are still every older version's files."""
    location = tmp_path / "t"
    small = _table(location)
    before = DeltaTable(str(location)).version()
    compact(location)
    removed = retention.tombstones(str(location))
    assert set(removed) == small
    assert all(abs(ms / 1000 - time.time()) < 60 for ms in removed.values())

    result = retention.vacuum(str(location), WEEK)
    assert result.paths == () and result.bytes == 0
    assert small <= _data_files(location)
    assert _rows(location, before) == [0, 1, 2]

    # eight days later the tombstones are older than the week: the small files go, the compacted one stays
    sizes = sum((location / name).stat().st_size for name in small)
    later = retention.vacuum(str(location), WEEK, now=time.time() + 8 * DAY)
    assert set(later.paths) == small and later.bytes == sizes
    assert not small & _data_files(location)
    assert _rows(location) == [0, 1, 2]


def test_tombstones_are_read_from_the_checkpoint_too(tmp_path):
    location = tmp_path / "t"
    small = _table(location)
    compact(location)
    DeltaTable(str(location)).create_checkpoint()
    write_deltalake(str(location), pa.table({"x": [3]}), mode="append")   # one commit after the checkpoint
    for commit in (location / "_delta_log").glob("*.json"):  # the JSON commits gone: only the checkpoint tells
        if int(commit.name.split(".")[0]) < 3:
            commit.unlink()
    assert set(retention.tombstones(str(location))) == small
    assert retention.vacuum(str(location), WEEK).paths == ()
    assert set(retention.vacuum(str(location), WEEK, now=time.time() + 8 * DAY).paths) == small


def test_untracked_files_go_by_age_and_live_files_never(tmp_path):
    location = tmp_path / "t"
    live = _table(location, batches=1)
    crashed = location / "_sg_write_crashed"
    crashed.mkdir()
    (crashed / "part-0.parquet").write_bytes(b"old, never committed")
    _age(crashed / "part-0.parquet", 8 * DAY)
    in_flight = location / "_sg_write_in_flight"
    in_flight.mkdir()
    (in_flight / "part-0.parquet").write_bytes(b"being written")

    dry = retention.vacuum(str(location), WEEK, dry_run=True)
    assert dry.paths == ("_sg_write_crashed/part-0.parquet",) and dry.bytes == len(b"old, never committed")
    assert (crashed / "part-0.parquet").exists()
    retention.vacuum(str(location), WEEK)
    assert not crashed.exists()           # its folder, left empty and old, goes too
    assert (in_flight / "part-0.parquet").exists() and live <= _data_files(location)
    # even a zero retention never deletes the current version's files nor the log
    retention.vacuum(str(location), 0.0, now=time.time() + 1)
    assert live <= _data_files(location) and _rows(location) == [0]
    assert not (in_flight / "part-0.parquet").exists()


def test_maintain_retention_uses_the_tables_property_and_keeps_young_untracked_files(tmp_path):
    location = tmp_path / "t"
    small = _table(location, configuration={"delta.deletedFileRetentionDuration": "interval 1 seconds"})
    compact(location)
    staging = location / "_sg_write_young"
    staging.mkdir()
    (staging / "part-0.parquet").write_bytes(b"a write in flight")
    _age(staging / "part-0.parquet", 60)   # older than the table's second, younger than the hour kept anyway
    result = retention.maintain_retention(str(location), now=time.time() + 5)
    assert result.files_deleted == len(small) and result.bytes_freed > 0 and result.log_entries_deleted == 0
    assert not small & _data_files(location)
    assert (staging / "part-0.parquet").exists()
    assert _rows(location) == [0, 1, 2]


def test_a_hold_keeps_the_files_of_its_version(tmp_path):
    location = tmp_path / "t"
    small = _table(location, configuration={"delta.deletedFileRetentionDuration": "interval 1 seconds"})
    before = DeltaTable(str(location)).version()
    release = hold(location, before)          # a statement pinned the version before the compaction
    assert [h.version for h in holds(str(location))] == [before] and oldest_hold(location) is not None
    compact(location)
    kept = retention.maintain_retention(str(location), now=time.time() + DAY)
    assert kept.files_deleted == 0 and small <= _data_files(location)
    assert _rows(location, before) == [0, 1, 2]
    release()
    release()                                 # twice is harmless
    assert holds(str(location)) == [] and oldest_hold(location) is None
    freed = retention.maintain_retention(str(location), now=time.time() + DAY)
    assert freed.files_deleted == len(small) and not small & _data_files(location)


def test_a_hold_on_an_older_version_keeps_the_files_removed_before_it_was_taken(tmp_path):
    """A time-travel read pins a version older than the hold: the files removed between that version and the hold
    are its files too."""
    location = tmp_path / "t"
    small = _table(location, configuration={"delta.deletedFileRetentionDuration": "interval 1 seconds"})
    before = DeltaTable(str(location)).version()
    compact(location)
    release = hold(str(location), before)     # taken after the compaction, on the version before it
    try:
        assert retention.maintain_retention(str(location), now=time.time() + DAY).files_deleted == 0
        assert small <= _data_files(location) and _rows(location, before) == [0, 1, 2]
    finally:
        release()


def test_files_removed_after_the_oldest_hold_are_kept(tmp_path):
    location = tmp_path / "t"
    small = _table(location, configuration={"delta.deletedFileRetentionDuration": "interval 1 seconds"})
    release = hold(str(location), DeltaTable(str(location)).version())
    try:
        compact(location)
        retention.vacuum(str(location), 0.0, now=time.time() + DAY)   # explicit VACUUM: the same guard
        assert small <= _data_files(location)
    finally:
        release()


def _age_log(location: Path, versions: range, seconds: float) -> None:
    for version in versions:
        for entry in (location / "_delta_log").glob(f"{version:020d}.*"):
            _age(entry, seconds)


def test_log_cleanup_deletes_entries_before_an_old_checkpoint_and_time_travel_inside_the_window_works(tmp_path):
    location = tmp_path / "t"
    _table(location, batches=6, configuration={"delta.logRetentionDuration": "interval 1 days"})
    DeltaTable(str(location), version=3).create_checkpoint()
    _age_log(location, range(4), 3 * DAY)       # versions 0-3 and the checkpoint at 3 are past the window

    assert retention.clean_up_log(str(location)) == 3
    left = sorted(p.name for p in (location / "_delta_log").iterdir())
    assert f"{3:020d}.checkpoint.parquet" in left and f"{0:020d}.json" not in left
    assert [_rows(location, v) for v in (3, 4, 5)] == [[0, 1, 2, 3], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 5]]
    assert _rows(location) == [0, 1, 2, 3, 4, 5]


def test_log_cleanup_keeps_what_versions_inside_the_window_need(tmp_path):
    """Old entries before a checkpoint that is itself inside the window are still needed to load the versions
    between them and the checkpoint: nothing goes."""
    location = tmp_path / "t"
    _table(location, batches=4, configuration={"delta.logRetentionDuration": "interval 1 days"})
    DeltaTable(str(location)).create_checkpoint()
    _age_log(location, range(2), 3 * DAY)
    assert retention.clean_up_log(str(location)) == 0
    assert [_rows(location, v) for v in range(4)] == [[0], [0, 1], [0, 1, 2], [0, 1, 2, 3]]


def test_log_cleanup_deletes_a_killed_writers_temporary_commit_once_it_is_an_hour_old(tmp_path):
    """A writer killed between writing its commit's temporary file and linking it in place leaves the file behind
    (the gateway's hex name, delta-rs's hyphenated one); a live writer's, minutes old, is kept."""
    location = tmp_path / "t"
    _table(location, batches=2)
    log = location / "_delta_log"
    ours, theirs, live = (log / f"_commit_{'a' * 32}.json.tmp", log / "_commit_0b6e5a8c-3f57-4b8e-9d0c-1c2d3e4f5a6b"
                          ".json.tmp", log / f"_commit_{'b' * 32}.json.tmp")
    for temporary in (ours, theirs, live):
        temporary.write_text('{"commitInfo":{}}')
    _age(ours, 2 * 3600)
    _age(theirs, 2 * 3600)
    _age(live, 600)
    assert retention.clean_up_log(str(location)) == 2
    assert not ours.exists() and not theirs.exists() and live.exists()
    assert retention.clean_up_log(str(location), now=time.time() + 3600) == 1 and not live.exists()
    assert _rows(location) == [0, 1]


def test_maintain_retention_counts_the_log_entries_it_cleaned(tmp_path):
    location = tmp_path / "t"
    _table(location, batches=3, configuration={"delta.logRetentionDuration": "interval 1 hours"})
    DeltaTable(str(location)).create_checkpoint()
    _age_log(location, range(3), 2 * 3600)
    result = retention.maintain_retention(str(location))
    assert result.log_entries_deleted == 2 and result.files_deleted == 0
    assert _rows(location) == [0, 1, 2]


def test_a_table_with_deletion_vectors_is_refused_not_vacuumed(tmp_path):
    """A deletion vector's file is named by the add action it belongs to, not as a file of its own: retention would
    take it for an untracked file. The gateway writes none; a table that may have them is left alone."""
    location = tmp_path / "t"
    files = _table(location, batches=1, configuration={"delta.enableDeletionVectors": "true"})
    with pytest.raises(DeltaUnsupportedFeatureError) as raised:
        retention.maintain_retention(str(location), now=time.time() + 30 * DAY)
    assert raised.value.error_class == "DELTA_UNSUPPORTED_FEATURE" and raised.value.hint
    assert files <= _data_files(location)


def test_maintaining_a_table_that_is_gone_is_a_typed_error(tmp_path):
    (tmp_path / "gone").mkdir()
    with pytest.raises(DeltaTableNotFoundError) as raised:
        retention.maintain_retention(str(tmp_path / "gone"))
    assert raised.value.sqlstate == "42P01" and str(tmp_path / "gone") in str(raised.value)


def test_maintenance_deletes_an_auto_cdc_states_rewritten_files_an_hour_after(tmp_path):
    """Each AUTO CDC batch rewrites part of the table's state (engine/streams/cdc_sink.py), whose batches read its
    latest version only: the background retention of the table deletes the state's removed files an hour after
    their removal (a state grew by every batch's rewrite before), and keeps its current files."""
    location = tmp_path / "t"
    _table(location, batches=1)
    state = location / retention.CDC_STATE_FOLDER / "stream-1"
    write_deltalake(str(state), pa.table({"id": [1], "__sg_seq": [1]}))
    first = {p for p in state.rglob("*.parquet") if "_delta_log" not in p.parts}
    write_deltalake(str(state), pa.table({"id": [1], "__sg_seq": [2]}), mode="overwrite")
    current = {p for p in state.rglob("*.parquet") if "_delta_log" not in p.parts} - first
    table_files = _data_files(location)
    assert first and current
    now = time.time()
    assert retention.maintain_retention(str(location), now=now + 60).files_deleted == 0   # removed just now
    assert all(path.exists() for path in first | current)
    result = retention.maintain_retention(str(location), now=now + 2 * 3600)
    assert result.files_deleted == len(first) and not any(path.exists() for path in first)
    assert all(path.exists() for path in current) and _data_files(location) == table_files - {
        str(path.relative_to(location)) for path in first}
    assert DeltaTable(str(state)).to_pyarrow_table().column("__sg_seq").to_pylist() == [2]


def test_an_auto_cdc_tables_state_inside_its_folder_is_never_vacuumed(tmp_path):
    """The ranks and tombstones of an AUTO CDC table are a Delta table of their own under `_sg_cdc_state/` in the
    table's folder: files the table's log does not know, which VACUUM of the table must leave alone."""
    location = tmp_path / "t"
    _table(location, batches=1)
    state = location / retention.CDC_STATE_FOLDER / "stream-1"
    write_deltalake(str(state), pa.table({"id": [1], "__sg_seq": [5]}))
    kept = {p for p in state.rglob("*") if p.is_file()}
    for path in kept:
        _age(path, 30 * DAY)
    assert retention.vacuum(str(location), 0.0, dry_run=True, now=time.time() + 1).paths == ()
    retention.vacuum(str(location), 0.0, now=time.time() + 1)
    assert all(path.exists() for path in kept)
    assert DeltaTable(str(state)).to_pyarrow_table().column("id").to_pylist() == [1]
