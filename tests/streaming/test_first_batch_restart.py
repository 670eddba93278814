"""A stateful stream stopped while its first batch runs starts again (ALTER ... SCHEDULE right after CREATE, a
retry, a crash during batch 0). A stop that interrupts the write of `offsets/0` leaves its temp file; Spark then
finds no offset log entry and refuses any file in `offsets`, `state` or `commits` (STATE_STORE_CHECKPOINT_LOCATION_
NOT_EMPTY), on every retry. The start edge clears what an uncommitted batch 0 left, and the Delta txn keeps its write
exactly once. (Measured before the fix: 1 stream of 6 restarted right after CREATE failed so, its `offsets` holding
only `.0.<uuid>.tmp`.)"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from keyed_files import keyed_rows, per_key
from pyhive_helpers import sorted_rows

from sluicegate.engine.streams.spark_edge import clear_uncommitted_state
from sluicegate.executor.streaming_tables import CREATE_WAITS

FILES = 120
KEYS = ("a", "b", "c", "d")


def _rows(index: int) -> list[dict[str, Any]]:
    return keyed_rows(index, 5, KEYS, stride=100)


def _expected(files: int) -> list[tuple[str, int, int]]:
    totals = per_key(row for index in range(files) for row in _rows(index))
    return sorted(((k, count, total) for k, (count, total) in totals.items()), key=repr)


def _wait(condition: Any, what: str, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_stateful_stream_stopped_in_its_first_batch_starts_again(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "many"
    for index in range(FILES):       # many small files: a first batch slow enough to stop it midway
        land(source, _rows(index))
    cur.execute(f"SET {CREATE_WAITS}=false")   # the stop must come during batch 0: CREATE does not wait for it
    cur.execute(f"CREATE STREAMING TABLE per_key AS SELECT k, count(*) AS n, sum(id) AS total FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'id INT, k STRING') GROUP BY k")
    checkpoint = Path(streams.store.get_stream(cur.database, "per_key").checkpoint)
    _wait((checkpoint / "state").is_dir, "batch 0 to reach its state store")
    # a schedule stops the continuous query on its checkpoint mid-batch; REFRESH runs a pass on the same checkpoint
    cur.execute("ALTER STREAMING TABLE per_key ADD SCHEDULE EVERY 1 HOUR")
    committed = (checkpoint / "commits" / "0").exists()
    cur.execute("REFRESH STREAMING TABLE per_key")
    entry = streams.store.get_stream(cur.database, "per_key")
    assert entry.last_refresh_status == "COMPLETED", (entry.status, entry.last_error)
    assert sorted_rows(cur, "SELECT k, n, total FROM per_key") == _expected(FILES), \
        f"batch 0 {'had' if committed else 'had not'} committed when the stream was stopped"
    land(source, _rows(FILES))
    cur.execute("REFRESH STREAMING TABLE per_key")
    assert sorted_rows(cur, "SELECT k, n, total FROM per_key") == _expected(FILES + 1)
    location = Path(streams.store.get_table(cur.database, "per_key").location)
    batches = [txn["version"] for commit in sorted((location / "_delta_log").glob("*.json"))
               for line in commit.read_text().splitlines() if (txn := json.loads(line).get("txn"))
               and txn["appId"] == entry.stream_id]
    assert batches == sorted(set(batches)), f"a batch written twice: {batches}"   # batch 0 once, whatever stopped


RESTARTED = 6


def test_streams_restarted_right_after_create_all_run(stream_cursor, streams, tmp_path, land):
    """The colleague's report: ALTER ... SCHEDULE right after CREATE stops each query early in batch 0 (some while
    it writes `offsets/0`), DROP SCHEDULE starts it again on the same checkpoint. Every one must run, exactly."""
    cur = stream_cursor
    source = tmp_path / "one"
    land(source, _rows(0))
    cur.execute(f"SET {CREATE_WAITS}=false")   # the stops must come early in batch 0: CREATE does not wait for it
    for index in range(RESTARTED):
        cur.execute(f"CREATE STREAMING TABLE r{index} AS SELECT k, count(*) AS n, sum(id) AS total FROM STREAM "
                    f"read_files('{source}', format => 'json', schema => 'id INT, k STRING') GROUP BY k")
        cur.execute(f"ALTER STREAMING TABLE r{index} ADD SCHEDULE EVERY 3 DAYS")
        cur.execute(f"ALTER STREAMING TABLE r{index} DROP SCHEDULE")
    for index in range(RESTARTED):
        name = f"r{index}"
        _wait(lambda n=name: streams.store.get_stream(cur.database, n).last_batch_id is not None
              or streams.store.get_stream(cur.database, n).last_error is not None, f"{name}'s first batch")
        entry = streams.store.get_stream(cur.database, name)
        assert entry.last_error is None and entry.status == "RUNNING", (name, entry.status, entry.last_error)
        assert sorted_rows(cur, f"SELECT k, n, total FROM {name}") == _expected(1), name


def test_an_uncommitted_first_batch_is_cleared_before_a_start(tmp_path):
    checkpoint = tmp_path / "cp"
    (checkpoint / "offsets").mkdir(parents=True)
    (checkpoint / "offsets" / ".0.20f8616a-3bf3-49c4-8801-36510462fea4.tmp").write_text("v1\n")  # as a stop left it
    (checkpoint / "commits").mkdir()
    (checkpoint / "sources" / "0").mkdir(parents=True)
    (checkpoint / "sources" / "0" / "0").write_text("v1\n")                 # a source's own log: kept
    assert clear_uncommitted_state(str(checkpoint)) is True
    assert list((checkpoint / "offsets").iterdir()) == [] and (checkpoint / "sources" / "0" / "0").exists()
    (checkpoint / "offsets" / "0").write_text("v1\n")                       # batch 0 logged: replayed, kept
    (checkpoint / "offsets" / ".1.c0ffee.tmp").write_text("v1\n")
    assert clear_uncommitted_state(str(checkpoint)) is False
    assert sorted(p.name for p in (checkpoint / "offsets").iterdir()) == [".1.c0ffee.tmp", "0"]


def test_state_is_cleared_only_before_the_first_commit(tmp_path):
    checkpoint = tmp_path / "cp"
    (checkpoint / "state" / "0" / "0").mkdir(parents=True)
    (checkpoint / "state" / "0" / "0" / "1.delta").write_bytes(b"x")
    (checkpoint / "commits").mkdir()
    (checkpoint / "commits" / ".0.crc").write_bytes(b"")          # a checksum is no commit
    assert clear_uncommitted_state(str(checkpoint)) is True
    assert not (checkpoint / "state").exists()
    (checkpoint / "state" / "0").mkdir(parents=True)
    (checkpoint / "commits" / "0").write_text("v1\n{}\n")
    assert clear_uncommitted_state(str(checkpoint)) is False         # batch 0 committed: its state is kept
    assert (checkpoint / "state" / "0").is_dir()
    assert clear_uncommitted_state(str(tmp_path / "new")) is False    # a new checkpoint: nothing to clear
