"""Schedules that really fire, end to end through PyHive, with no REFRESH: a Quartz cron every 2 seconds ingests each
landed file in a pass of its own, and TRIGGER ON UPDATE runs a pass when the streaming table it reads commits a new
version. What the user sees is asserted: the rows, DESCRIBE TABLE EXTENDED's refresh rows and the event log.
(tests/streaming/test_supervisor_schedules.py drives the supervisor directly; tests/warehouse/test_schedules.py
covers the clauses and their errors.)"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest
from pyhive_helpers import poll_until

SECOND = dt.timedelta(seconds=1)



def _ids(cur: Any, table: str) -> list[int]:
    cur.execute(f"SELECT id FROM {table}")
    return sorted(row[0] for row in cur.fetchall())


def _extended(cur: Any, table: str) -> dict[str, str]:
    cur.execute(f"DESCRIBE TABLE EXTENDED {table}")
    return {row[0]: row[1] for row in cur.fetchall()}


def _event_counts(cur: Any, table: str) -> dict[str, int]:
    cur.execute(f"SELECT event_type, count(*) FROM event_log(TABLE({table})) GROUP BY event_type")
    return dict(cur.fetchall())


def _passes(cur: Any, table: str) -> int:
    cur.execute(f"SELECT count(*) FROM event_log(TABLE({table})) "
                "WHERE event_type = 'update_progress' AND message LIKE 'a refresh pass from checkpoint%'")
    return cur.fetchone()[0]


def _passes_after(cur: Any, table: str, seconds: float) -> int:
    time.sleep(seconds)
    return _passes(cur, table)


def _time(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S")


@pytest.fixture()
def dropped_after(stream_cursor: Any) -> Any:
    """Tables whose schedules must stop firing once the test ends."""
    tables: list[str] = []
    yield tables
    for table in reversed(tables):
        stream_cursor.execute(f"DROP TABLE IF EXISTS {table}")


def test_a_cron_schedule_every_two_seconds_ingests_new_files_without_refresh(stream_cursor, dropped_after,
                                                                             tmp_path, land) -> None:
    cur = stream_cursor
    source = tmp_path / "in"
    land(source, [{"id": 1}])
    dropped_after.append("every_2s")
    cur.execute("CREATE STREAMING TABLE every_2s\n  SCHEDULE CRON '0/2 * * * * ?' AT TIME ZONE 'UTC'\n"
                f"AS SELECT id FROM STREAM read_files('{source}', format => 'json', schema => 'id INT')")
    poll_until(lambda: _ids(cur, "every_2s") == [1], "the first pass, at CREATE")
    for landed in ([2], [2, 3]):          # each file lands after the last was ingested: a pass of its own
        land(source, [{"id": landed[-1]}])
        poll_until(lambda expected=[1, *landed]: _ids(cur, "every_2s") == expected,
              f"a scheduled pass to ingest id {landed[-1]}")
    passes = _passes(cur, "every_2s")
    poll_until(lambda: _passes(cur, "every_2s") >= passes + 2, "more passes with no new input")  # the schedule goes on

    info = poll_until(lambda: (d := _extended(cur, "every_2s"))["Latest Refresh Status"] == "COMPLETED" and d,
                 "a DESCRIBE between two passes")
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    assert info["Refresh Schedule"] == "CRON '0/2 * * * * ?' AT TIME ZONE 'UTC'"
    assert info["Refresh Mode"].startswith("SCHEDULED")
    last, following = _time(info["Last Refreshed"]), _time(info["Next Refresh"])
    assert last < following and following.second % 2 == 0         # the pass after the last, on an even second
    # due now or soon (a busy supervisor may start it a few seconds late); never more than one period ahead
    assert now - 10 * SECOND <= following <= now + 2 * SECOND
    counts = poll_until(lambda: (c := _event_counts(cur, "every_2s")).get("flow_progress") == 3 and c,
                   "one flow_progress event per file's batch")
    assert counts["create_update"] == 1 and counts["update_progress"] >= passes + 2
    assert _ids(cur, "every_2s") == [1, 2, 3]                      # passes with nothing new wrote nothing


def test_trigger_on_update_runs_a_pass_when_the_upstream_streaming_table_commits(stream_cursor, dropped_after,
                                                                                 tmp_path, land) -> None:
    cur = stream_cursor
    source = tmp_path / "in"
    land(source, [{"id": 1}])
    dropped_after.extend(["bronze", "silver"])
    cur.execute(f"CREATE STREAMING TABLE bronze AS SELECT id FROM STREAM read_files('{source}', format => 'json', "
                "schema => 'id INT')")
    cur.execute("CREATE STREAMING TABLE silver TRIGGER ON UPDATE AS SELECT id, id * 10 AS tenfold FROM STREAM(bronze)")
    poll_until(lambda: _ids(cur, "silver") == [1], "silver's pass after bronze's first commit")
    land(source, [{"id": 2}])
    poll_until(lambda: _ids(cur, "silver") == [1, 2], "a pass after bronze committed the new file")
    cur.execute("SELECT id, tenfold FROM silver ORDER BY id")
    assert cur.fetchall() == [(1, 10), (2, 20)]
    info = poll_until(lambda: (d := _extended(cur, "silver"))["Latest Refresh Status"] == "COMPLETED" and d,
                 "the pass to end")
    assert info["Refresh Schedule"] == "TRIGGER ON UPDATE" and info["Refresh Mode"].startswith("ON UPDATE")
    assert "Next Refresh" not in info                              # a new input version decides, not a time
    poll_until(lambda: _event_counts(cur, "silver").get("flow_progress", 0) >= 2, "a flow_progress event per pass")
    # A pass records the input versions it starts from; when bronze commits between that and the query fixing its
    # end offsets, one more pass follows and finds nothing new (triggering errs on the side of freshness). Let that
    # settle, then: bronze has no new version, so over a few supervisor ticks no pass starts.
    passes = poll_until(lambda: (first := _passes(cur, "silver")) == _passes_after(cur, "silver", 2.0) and first,
                   "the passes to settle")
    assert passes >= 2
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        assert _passes(cur, "silver") == passes, "a pass ran although bronze had no new version"
        time.sleep(0.5)
