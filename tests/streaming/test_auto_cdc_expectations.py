"""Expectations on an AUTO CDC table (issue 29), through PyHive against a real gateway: they judge the change events
before any is ranked (engine/streams/cdc_checks.py). DROP ROW keeps an event out of the ranking and in the quarantine
table, a warning counts, FAIL UPDATE applies nothing and fails the stream; the counts reach the event log and
DESCRIBE as for every streaming table."""

from __future__ import annotations

import json

from cdc_reference import events_source
from pyhive_helpers import error_status, logged_quality, sorted_rows

CDC = "KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, _rescued_data)"


def test_expectations_judge_the_events_before_they_are_applied(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    folder = tmp_path / "changes"
    land(folder, [{"id": 1, "op": "U", "seq": 1, "name": "ann", "amount": 10},
                  {"id": 2, "op": "U", "seq": 1, "name": None, "amount": 20}])
    cur.execute("CREATE STREAMING TABLE checked (id INT, seq BIGINT, name STRING, amount INT, "
                "CONSTRAINT known_op EXPECT (op IN ('U', 'D')) ON VIOLATION DROP ROW, "
                "CONSTRAINT named EXPECT (name IS NOT NULL)) "
                f"FLOW AUTO CDC FROM STREAM {events_source(folder)} {CDC}")
    # a dropped event takes no part: its higher sequence neither wins nor leaves a tombstone
    land(folder, [{"id": 1, "op": "X", "seq": 9, "name": "bad", "amount": 0},
                  {"id": 1, "op": "U", "seq": 2, "name": "ann2", "amount": 12}])
    streams.wait_for(cur.database, "checked")
    assert sorted_rows(cur, "SELECT * FROM checked") == [(1, 2, "ann2", 12), (2, 1, None, 20)]
    cur.execute("SELECT id, op, seq, _failed_expectations FROM checked__quarantine")
    assert [(*row[:3], json.loads(row[3])) for row in cur.fetchall()] == [(1, "X", 9, ["known_op"])]
    totals, dropped = logged_quality(cur, streams, "checked")
    assert totals == {"known_op": (3, 1), "named": (3, 1)} and dropped == 1
    cur.execute("DESCRIBE STREAMING TABLE checked")
    described = dict(cur.fetchall())
    assert "ON VIOLATION DROP ROW: passed 3, failed 1" in described["Expectation known_op"]

    # FAIL UPDATE: the batch applies nothing and the stream fails, naming the expectation (the first update: so
    # does the CREATE, the table staying, as for every streaming table)
    strict = tmp_path / "strict"
    land(strict, [{"id": 1, "op": "U", "seq": 1, "name": "ann", "amount": 10},
                  {"id": 2, "op": "U", "seq": 2, "name": "neg", "amount": -5}])
    status = error_status(cur, "CREATE STREAMING TABLE strict (id INT, seq BIGINT, name STRING, amount INT, "
                               "CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION FAIL UPDATE) "
                               f"FLOW AUTO CDC FROM STREAM {events_source(strict)} {CDC}")
    assert status.sqlState == "22000" and "[EXPECTATION_VIOLATION.FAIL_UPDATE]" in status.errorMessage
    assert "Violated expectations: 'positive'" in status.errorMessage and '"amount": -5' in status.errorMessage
    assert streams.store.get_stream(cur.database, "strict").status == "FAILED"
    assert sorted_rows(cur, "SELECT * FROM strict") == []
