"""REFRESH MATERIALIZED VIEW ... ASYNC through PyHive: the statement returns while the refresh cannot even start (the
test holds the view's refresh lock, as a running refresh would), DESCRIBE shows it RUNNING, then its outcome once it
ran; a failing one leaves the previous rows, its error in DESCRIBE and an ERROR event in event_log(TABLE(mv)); SYNC
(the default) waits for the refresh."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from pyhive_helpers import cursor_in, poll_until, sorted_rows

from sluicegate.executor.materialized_views import refresh as mv_refresh

DATABASE = "mv_async"


@pytest.fixture()
def cursor(connect: Any, gateway: Any) -> Iterator[Any]:
    from pyhive_helpers import drop_database

    drop_database(gateway, DATABASE)
    cur = cursor_in(connect, DATABASE)
    cur.execute("CREATE TABLE raw (v STRING)")
    cur.execute("INSERT INTO raw VALUES ('1'), ('2')")
    cur.execute("CREATE MATERIALIZED VIEW parsed AS SELECT CAST(v AS INT) AS n FROM raw")
    yield cur
    drop_database(gateway, DATABASE)


def _describe(cursor: Any) -> dict[str, str]:
    cursor.execute("DESCRIBE EXTENDED parsed")
    return {row[0]: row[1] for row in cursor.fetchall()}


@contextmanager
def refresh_held(limit: float = 120.0) -> Iterator[threading.Timer]:
    """The view's refresh lock, held as a long refresh would hold it; released after `limit` seconds at the latest
    (a statement that wrongly waits for it then returns late instead of hanging the test)."""
    lock, released = mv_refresh.refresh_lock(DATABASE, "parsed"), threading.Event()

    def release() -> None:
        if not released.is_set():
            released.set()
            lock.release()

    lock.acquire()
    valve = threading.Timer(limit, release)
    valve.start()
    try:
        yield valve
    finally:
        valve.cancel()
        release()


def _settled(cursor: Any) -> dict[str, str]:
    """DESCRIBE once the view's background worker has ended (every merged pass ran)."""
    from sluicegate.executor.materialized_views.background import REFRESHES

    poll_until(lambda: not REFRESHES.running((DATABASE, "parsed")), "the background refresh to end")
    return _describe(cursor)


def test_async_returns_at_once_shows_running_then_the_result(cursor: Any) -> None:
    cursor.execute("INSERT INTO raw VALUES ('3')")
    with refresh_held() as valve:
        cursor.execute("REFRESH MATERIALIZED VIEW parsed ASYNC")
        assert valve.is_alive(), "REFRESH ... ASYNC waited for the refresh"
        assert _describe(cursor)["Latest Refresh Status"] == "RUNNING"
        cursor.execute("REFRESH MATERIALIZED VIEW parsed FULL ASYNC")   # merged into one more pass after it
        cursor.execute("INSERT INTO raw VALUES ('4')")                  # the refresh has not read its inputs yet
        assert sorted_rows(cursor, "SELECT * FROM parsed") == [(1,), (2,)]
    info = _settled(cursor)
    assert info["Latest Refresh Status"] == "COMPLETED" and not info.get("Last Refresh Error")
    assert sorted_rows(cursor, "SELECT * FROM parsed") == [(1,), (2,), (3,), (4,)]
    cursor.execute("SELECT details FROM event_log(TABLE(parsed)) WHERE event_type = 'create_update' "
                   "ORDER BY timestamp")
    updates = [json.loads(row[0])["create_update"] for row in cursor.fetchall()]
    assert [(u["cause"], u["full_refresh"]) for u in updates[-2:]] == [("USER_ACTION", False), ("USER_ACTION", True)]
    assert updates[-1]["input_versions"] == updates[-2]["input_versions"]   # both passes read raw at one version


def test_async_failure_is_recorded_and_the_previous_rows_stay(cursor: Any) -> None:
    cursor.execute("INSERT INTO raw VALUES ('oops')")
    cursor.execute("REFRESH MATERIALIZED VIEW parsed ASYNC")        # CAST_INVALID_INPUT, in the background
    info = _settled(cursor)
    assert info["Latest Refresh Status"] == "FAILED"
    assert "CAST_INVALID_INPUT" in info["Last Refresh Error"]
    assert sorted_rows(cursor, "SELECT * FROM parsed") == [(1,), (2,)]
    cursor.execute("SELECT level, error FROM event_log(TABLE(parsed)) ORDER BY timestamp")
    level, error = cursor.fetchall()[-1]
    assert level == "ERROR" and "CAST_INVALID_INPUT" in error
    cursor.execute("DELETE FROM raw WHERE v = 'oops'")
    cursor.execute("REFRESH MATERIALIZED VIEW parsed SYNC")         # waits: the outcome is there when it returns
    assert _describe(cursor)["Latest Refresh Status"] == "COMPLETED"
