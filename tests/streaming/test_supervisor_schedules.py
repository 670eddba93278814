"""Scheduled streaming tables at run time, through PyHive: between passes no query runs; REFRESH runs one
available-now pass on the same checkpoint (SYNC waits, ASYNC returns); a pass missed while the gateway was down runs
when it takes the stream on again; TRIGGER ON UPDATE runs a pass when the table it streams from gets a new version;
a schedule added or dropped switches the stream between continuous and passes without losing or repeating a row.
(The schedule is written on the table's row here as ALTER STREAMING TABLE ... SCHEDULE does, then `reschedule`.)"""

from __future__ import annotations

import datetime as dt
from typing import Any

from delta_log import txn_actions
from pyhive_helpers import poll_until

from sluicegate.dialect.schedule import Schedule


def _ids(cur: Any, table: str) -> list[int]:
    cur.execute(f"SELECT id FROM {table}")
    return sorted(row[0] for row in cur.fetchall())


def _describe(cur: Any, table: str) -> dict[str, str]:
    """DESCRIBE STREAMING TABLE's rows by name, each fact once (no two rows whose names differ only in case, as
    `Refresh schedule` beside `Refresh Schedule` once did)."""
    cur.execute(f"DESCRIBE STREAMING TABLE {table}")
    rows = [(name, value) for name, value in cur.fetchall() if name not in ("Event", "Source", "Static table")]
    names = [name.lower() for name, _ in rows if not name.startswith(("Expectation ", "Flow"))]
    assert len(names) == len(set(names)), sorted(names)
    return dict(rows)


def _schedule(streams: Any, db: str, name: str, schedule: Schedule | None) -> None:
    streams.store.update_table(db, name, schedule=schedule.to_json() if schedule else None)
    streams.reschedule(db, name)


def test_passes_refresh_boot_and_switching_back(stream_cursor, streams, tmp_path, land) -> None:
    cur = stream_cursor
    db = cur.database
    source = tmp_path / "in"
    land(source, [{"id": 1}])
    cur.execute(f"CREATE STREAMING TABLE hourly AS SELECT id FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'id INT')")
    streams.wait_for(db, "hourly")
    checkpoint = streams.store.get_stream(db, "hourly").checkpoint
    _schedule(streams, db, "hourly", Schedule("every", every=1, unit="HOUR"))
    info = _describe(cur, "hourly")
    assert info["Status"] == "SCHEDULED" and info["Refresh Schedule"] == "EVERY 1 HOURS"
    assert info["Refresh Mode"].startswith("SCHEDULED")
    next_run = dt.datetime.fromisoformat(info["Next Refresh"])
    assert dt.timedelta(minutes=55) < next_run - dt.datetime.utcnow() <= dt.timedelta(hours=1)
    assert (db, "hourly") not in streams.running()                 # no query between passes
    # REFRESH runs one pass now and SYNC waits for it
    land(source, [{"id": 2}])
    cur.execute("REFRESH STREAMING TABLE hourly")
    assert _ids(cur, "hourly") == [1, 2]
    info = _describe(cur, "hourly")
    assert info["Status"] == "SCHEDULED" and info["Latest Refresh Status"] == "COMPLETED"
    assert dt.datetime.fromisoformat(info["Last Refreshed"]) <= dt.datetime.utcnow()
    assert streams.store.get_stream(db, "hourly").checkpoint == checkpoint
    # ASYNC returns; the pass ends by itself
    land(source, [{"id": 3}])
    cur.execute("REFRESH STREAMING TABLE hourly ASYNC")
    poll_until(lambda: _ids(cur, "hourly") == [1, 2, 3], "the async pass")
    # a pass missed while the gateway was down runs when the stream is taken on again (as at boot)
    poll_until(lambda: streams.store.get_stream(db, "hourly").status == "SCHEDULED", "the pass to end")
    streams.stop(db, "hourly", desired=None)
    streams.store.update_stream(db, "hourly", next_run_at=dt.datetime.utcnow() - dt.timedelta(minutes=5))
    land(source, [{"id": 4}])
    streams.resume(streams.store.get_stream(db, "hourly"))
    poll_until(lambda: _ids(cur, "hourly") == [1, 2, 3, 4], "the missed pass")
    poll_until(lambda: streams.store.get_stream(db, "hourly").status == "SCHEDULED", "the pass to end")
    # back to continuous on the same checkpoint
    _schedule(streams, db, "hourly", None)
    assert (db, "hourly") in streams.running() and _describe(cur, "hourly")["Status"] == "RUNNING"
    land(source, [{"id": 5}])
    streams.wait_for(db, "hourly")
    assert _ids(cur, "hourly") == [1, 2, 3, 4, 5]
    location = _describe(cur, "hourly")["Location"]
    txns = [batch for _, batch in txn_actions(location)]
    assert txns == sorted(set(txns))                                # each batch committed once, passes included
    kinds = [kind for _, kind, _ in streams.store.events(db, "hourly", 100)]
    assert kinds.count("REFRESH_COMPLETED") >= 3 and "SCHEDULE" in kinds


def test_trigger_on_update_runs_a_pass_when_its_source_changes(stream_cursor, streams) -> None:
    cur = stream_cursor
    db = cur.database
    cur.execute("CREATE TABLE events (id INT) USING DELTA")
    cur.execute("INSERT INTO events VALUES (1)")
    cur.execute("CREATE STREAMING TABLE follower AS SELECT id FROM STREAM(events)")
    streams.wait_for(db, "follower")
    _schedule(streams, db, "follower", Schedule("on_update"))
    assert _describe(cur, "follower")["Status"] == "SCHEDULED"
    cur.execute("INSERT INTO events VALUES (2)")
    poll_until(lambda: _ids(cur, "follower") == [1, 2], "a pass after the source's new version")
    cur.execute("INSERT INTO events VALUES (3)")
    poll_until(lambda: _ids(cur, "follower") == [1, 2, 3], "a pass after the next version")
    info = poll_until(lambda: (i := _describe(cur, "follower"))["Status"] == "SCHEDULED" and i, "the pass to end")
    assert info["Refresh Schedule"] == "TRIGGER ON UPDATE" and info["Latest Refresh Status"] == "COMPLETED"


def test_full_refresh_of_a_scheduled_table_is_one_pass_over_everything(stream_cursor, streams, tmp_path,
                                                                        land) -> None:
    cur = stream_cursor
    db = cur.database
    source = tmp_path / "in"
    land(source, [{"id": 1}, {"id": 2}])
    cur.execute(f"CREATE STREAMING TABLE daily AS SELECT id FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'id INT')")
    streams.wait_for(db, "daily")
    _schedule(streams, db, "daily", Schedule("every", every=1, unit="DAY"))
    old = streams.store.get_stream(db, "daily").checkpoint
    cur.execute("REFRESH STREAMING TABLE daily FULL")
    assert _ids(cur, "daily") == [1, 2]
    entry = streams.store.get_stream(db, "daily")
    assert entry.checkpoint != old and entry.status == "SCHEDULED" and entry.last_refresh_status == "COMPLETED"
    cur.execute("SHOW STREAMING TABLES LIKE 'daily'")
    assert cur.fetchall()[0][2] == "SCHEDULED"
