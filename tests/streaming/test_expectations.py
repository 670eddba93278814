"""Expectations on streaming tables through PyHive, on real Spark and Delta: warn writes and counts, DROP ROW keeps
rows out of the table and in `<table>__quarantine` (nothing lost), FAIL UPDATE commits nothing and fails the stream
naming the rule; the counts of every batch (BatchWritten.quality, the event log's data_quality) match what the
tables hold and what DESCRIBE shows. Streams are driven with processAllAvailable, the failure polled in the catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from pyhive_helpers import error_status, logged_quality, sorted_rows

from sluicegate.engine.streams.sink import BatchWritten


@pytest.fixture()
def batches(streams: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[BatchWritten]]:
    """Every BatchWritten the sink reports, per table name, while the manager records it as usual."""
    seen: dict[str, list[BatchWritten]] = {}
    original = streams._batch_written

    def record(key: tuple[str, str], stream_id: str, written: BatchWritten) -> None:
        seen.setdefault(key[1], []).append(written)
        original(key, stream_id, written)

    monkeypatch.setattr(streams, "_batch_written", record)
    return seen


def _files(folder: Path) -> str:
    return f"STREAM read_files('{folder}', format => 'json', schema => 'id INT, amount DOUBLE, country STRING')"


def _describe(cursor: Any, table: str) -> dict[str, list[str]]:
    cursor.execute(f"DESCRIBE STREAMING TABLE {table}")
    info: dict[str, list[str]] = {}
    for name, value in cursor.fetchall():
        info.setdefault(name, []).append(value)
    return info


def _totals(written: list[BatchWritten]) -> dict[str, tuple[int, int]]:
    totals: dict[str, tuple[int, int]] = {}
    for batch in written:
        assert batch.quality is not None, "every written batch carries its counts"
        for item in batch.quality["expectations"]:
            passed, failed = totals.get(item["name"], (0, 0))
            totals[item["name"]] = (passed + item["passed_records"], failed + item["failed_records"])
    return totals


ROWS = [{"id": 1, "amount": 10.0, "country": "fr"}, {"id": 2, "amount": -5.0, "country": "de"},
        {"id": 3, "amount": None, "country": "fr"}, {"id": 4, "amount": 7.5, "country": None}]


def test_warn_writes_every_row_and_counts_failures(stream_cursor, streams, tmp_path, land, batches):
    cur = stream_cursor
    land(tmp_path / "warn", ROWS)
    cur.execute(f"CREATE STREAMING TABLE warned (CONSTRAINT positive EXPECT (amount > 0), "
                f"CONSTRAINT has_country EXPECT (country IS NOT NULL)) AS SELECT * FROM {_files(tmp_path / 'warn')}")
    streams.wait_for(cur.database, "warned")
    assert [row[0] for row in sorted_rows(cur, "SELECT id FROM warned")] == [1, 2, 3, 4]
    # NULL is not TRUE: id 3 fails `positive`
    assert _totals(batches["warned"]) == {"positive": (2, 2), "has_country": (3, 1)}
    assert all(b.quality["dropped_records"] == 0 for b in batches["warned"])
    assert batches["warned"][0].quality["expectations"][0]["dataset"] == f"{cur.database}.warned"
    info = _describe(cur, "warned")
    assert "passed 2, failed 2" in info["Expectation positive"][0]
    assert "Quarantine table" not in info
    cur.execute("SHOW TABLES")
    assert "warned__quarantine" not in [row[1] for row in cur.fetchall()]


def test_drop_row_quarantines_the_rows_with_the_rules_they_failed(stream_cursor, streams, tmp_path, land, batches,
                                                                  warehouse):
    cur = stream_cursor
    folder = tmp_path / "drop"
    land(folder, ROWS)
    cur.execute(f"CREATE STREAMING TABLE orders (id INT, amount DOUBLE, country STRING, "
                f"CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW, "
                f"CONSTRAINT has_country EXPECT (country IS NOT NULL)) AS SELECT id, amount, country "
                f"FROM {_files(folder)}")
    streams.wait_for(cur.database, "orders")
    land(folder, [{"id": 5, "amount": 0.0, "country": None}, {"id": 6, "amount": 1.0, "country": "it"}])
    streams.wait_for(cur.database, "orders")
    assert [row[0] for row in sorted_rows(cur, "SELECT id FROM orders")] == [1, 4, 6]
    quarantined = sorted_rows(cur, "SELECT id, amount, country, _failed_expectations, _batch_id FROM "
                                   "orders__quarantine")
    # arrays arrive as JSON text over HiveServer2, as from Spark's Thrift server
    assert [(r[0], json.loads(r[3])) for r in quarantined] == [(2, ["positive"]), (3, ["positive"]),
                                                   (5, ["positive", "has_country"])]
    assert quarantined[0][1:3] == (-5.0, "de")  # the row itself, replayable
    assert {r[4] for r in quarantined} <= {b.batch_id for b in batches["orders"]}
    cur.execute("SELECT count(*) FROM orders__quarantine WHERE _quarantined_at IS NOT NULL")
    assert cur.fetchall() == [(3,)]
    dropped = sum(b.quality["dropped_records"] for b in batches["orders"])
    assert dropped == len(quarantined) == 3
    assert _totals(batches["orders"]) == {"positive": (3, 3), "has_country": (4, 2)}
    info = _describe(cur, "orders")
    assert "passed 3, failed 3" in info["Expectation positive"][0]
    assert info["Quarantine table"] == [f"{cur.database}.orders__quarantine"]
    # both tables' commits carry the stream's txn: each checks its own version on replay
    stream_id = streams.store.get_stream(cur.database, "orders").stream_id
    table = DeltaTable(str(warehouse / f"{cur.database}.db" / "orders"))
    quarantine = DeltaTable(str(warehouse / f"{cur.database}.db" / "orders__quarantine"))
    assert table.transaction_version(stream_id) == quarantine.transaction_version(stream_id) == \
        max(b.batch_id for b in batches["orders"])
    # dropped with its streaming table
    cur.execute("DROP TABLE orders")
    assert error_status(cur, "SELECT * FROM orders__quarantine").sqlState == "42P01"
    assert not (warehouse / f"{cur.database}.db" / "orders__quarantine").exists()


def test_quarantine_off_only_counts(stream_cursor, streams, tmp_path, land, batches):
    cur = stream_cursor
    land(tmp_path / "off", ROWS)
    cur.execute(f"CREATE STREAMING TABLE counted (CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW) "
                f"TBLPROPERTIES ('sluicegate.quarantine' = 'false') AS SELECT * FROM {_files(tmp_path / 'off')}")
    streams.wait_for(cur.database, "counted")
    assert [row[0] for row in sorted_rows(cur, "SELECT id FROM counted")] == [1, 4]
    assert sum(b.quality["dropped_records"] for b in batches["counted"]) == 2
    assert error_status(cur, "SELECT * FROM counted__quarantine").sqlState == "42P01"


def test_update_mode_drops_a_group_that_now_fails(stream_cursor, streams, tmp_path, land, batches):
    cur = stream_cursor
    folder = tmp_path / "update"
    land(folder, [{"id": 1, "amount": 10.0, "country": "fr"}, {"id": 2, "amount": 1.0, "country": "de"}])
    cur.execute(f"CREATE STREAMING TABLE per_country (CONSTRAINT small EXPECT (total < 100) ON VIOLATION DROP ROW, "
                f"CONSTRAINT busy EXPECT (n > 1)) AS SELECT country, count(*) AS n, sum(amount) AS total "
                f"FROM {_files(folder)} GROUP BY country")
    streams.wait_for(cur.database, "per_country")
    assert sorted_rows(cur, "SELECT * FROM per_country") == [("de", 1, 1.0), ("fr", 1, 10.0)]
    land(folder, [{"id": 3, "amount": 200.0, "country": "fr"}, {"id": 4, "amount": 2.0, "country": "de"}])
    streams.wait_for(cur.database, "per_country")
    # fr's new total fails `small`: its old row is no longer the result, so it leaves the table for the quarantine
    assert sorted_rows(cur, "SELECT * FROM per_country") == [("de", 2, 3.0)]
    assert sorted_rows(cur, "SELECT country, n, total, _failed_expectations FROM per_country__quarantine") == \
        [("fr", 2, 210.0, '["small"]')]
    assert _totals(batches["per_country"]) == {"small": (3, 1), "busy": (2, 2)}


def test_fail_update_commits_nothing_and_fails_the_stream(stream_cursor, streams, tmp_path, land, warehouse):
    cur = stream_cursor
    land(tmp_path / "fail", ROWS)
    # the first update fails, and so does the CREATE (the table stays, its stream FAILED), as on Databricks
    status = error_status(cur, f"CREATE STREAMING TABLE strict (CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION "
                               f"FAIL UPDATE, CONSTRAINT known EXPECT (id < 100) ON VIOLATION DROP ROW) "
                               f"AS SELECT * FROM {_files(tmp_path / 'fail')}")
    assert status.sqlState == "22000" and "[EXPECTATION_VIOLATION.FAIL_UPDATE]" in status.errorMessage
    entry = streams.store.get_stream(cur.database, "strict")
    assert entry.status == "FAILED" and entry.last_error in status.errorMessage
    assert "[EXPECTATION_VIOLATION.FAIL_UPDATE]" in entry.last_error
    assert f"Flow '{cur.database}.strict' failed to meet the expectation" in entry.last_error
    assert "Violated expectations: 'positive'" in entry.last_error and '"amount": -5.0' in entry.last_error
    for table in ("strict", "strict__quarantine"):  # neither table has a commit after its creation
        assert DeltaTable(str(warehouse / f"{cur.database}.db" / table)).version() == 0
    assert sorted_rows(cur, "SELECT * FROM strict") == []
    status = error_status(cur, "REFRESH STREAMING TABLE strict")
    assert "EXPECTATION_VIOLATION" in status.errorMessage
    cur.execute("DROP TABLE strict")


def test_create_time_errors_have_a_sqlstate_and_a_position(stream_cursor, tmp_path, land):
    cur = stream_cursor
    land(tmp_path / "bad", ROWS)
    source = _files(tmp_path / "bad")
    sql = f"CREATE STREAMING TABLE bad (CONSTRAINT c EXPECT (amount > 0 AND nope = 1)) AS SELECT * FROM {source}"
    status = error_status(cur, sql)
    assert status.sqlState == "42703" and "`nope`" in status.errorMessage and "`c`" in status.errorMessage
    assert f"at line 1, column {sql.index('nope') + 1}" in status.errorMessage  # at the column, in the statement
    sql = f"CREATE STREAMING TABLE bad (CONSTRAINT c EXPECT (amount + 1)) AS SELECT * FROM {source}"
    status = error_status(cur, sql)
    assert status.sqlState == "42K09" and "not a boolean" in status.errorMessage
    assert f"at line 1, column {sql.index('amount + 1') + 1}" in status.errorMessage
    status = error_status(cur, f"CREATE STREAMING TABLE bad (CONSTRAINT c EXPECT (rand() > amount)) AS SELECT * "
                               f"FROM {source}")
    assert status.sqlState == "42K0E" and "INVALID_EXPECTATION.NON_DETERMINISTIC" in status.errorMessage
    status = error_status(cur, f"CREATE STREAMING TABLE bad (CONSTRAINT c EXPECT (amount > 0) ON VIOLATION "
                               f"DROP) AS SELECT * FROM {source}")
    assert status.sqlState == "42601" and "DROP ROW or FAIL UPDATE" in status.errorMessage
    cur.execute("CREATE TABLE taken__quarantine (x INT) USING delta")
    status = error_status(cur, f"CREATE STREAMING TABLE taken (CONSTRAINT c EXPECT (amount > 0) ON VIOLATION "
                               f"DROP ROW) AS SELECT * FROM {source}")
    assert "taken__quarantine" in status.errorMessage
    cur.execute("SHOW TABLES")
    assert sorted(row[1] for row in cur.fetchall()) == ["taken__quarantine"]  # nothing else was left behind


def test_create_or_refresh_adding_drop_row_creates_the_quarantine(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    folder = tmp_path / "later"
    land(folder, ROWS[:2])
    query = f"AS SELECT * FROM {_files(folder)}"
    cur.execute(f"CREATE STREAMING TABLE later {query}")
    streams.wait_for(cur.database, "later")
    cur.execute(f"CREATE OR REFRESH STREAMING TABLE later (CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION "
                f"DROP ROW) {query}")
    land(folder, [{"id": 7, "amount": -1.0, "country": "nl"}])
    streams.wait_for(cur.database, "later")
    assert [row[0] for row in sorted_rows(cur, "SELECT id FROM later")] == [1, 2]  # new rules, new rows only
    assert [row[0] for row in sorted_rows(cur, "SELECT id FROM later__quarantine")] == [7]


def test_a_windowed_append_quarantines_closed_windows_that_fail(stream_cursor, streams, tmp_path, land, batches):
    """A stateful query in append mode: a window is judged once, when the watermark closes it."""
    cur = stream_cursor
    folder = tmp_path / "windows"
    land(folder, [{"k": "a", "ts": "2026-01-01 00:00:01"}, {"k": "b", "ts": "2026-01-01 00:00:02"},
                  {"k": "b", "ts": "2026-01-01 00:00:03"}])
    cur.execute(f"CREATE STREAMING TABLE busy_windows (CONSTRAINT busy EXPECT (n > 1) ON VIOLATION DROP ROW) "
                f"TBLPROPERTIES ('sluicegate.output_mode' = 'append') AS "
                f"SELECT k, window(ts, '10 seconds') AS w, count(*) AS n FROM STREAM read_files('{folder}', "
                f"format => 'json', schema => 'k STRING, ts TIMESTAMP') WATERMARK ts DELAY OF INTERVAL 5 SECONDS "
                f"GROUP BY k, window(ts, '10 seconds')")
    streams.wait_for(cur.database, "busy_windows")
    land(folder, [{"k": "c", "ts": "2026-01-01 00:01:00"}])  # moves the watermark past the first window
    streams.wait_for(cur.database, "busy_windows")
    land(folder, [{"k": "c", "ts": "2026-01-01 00:01:01"}])  # a batch after the watermark moved emits it
    streams.wait_for(cur.database, "busy_windows")
    assert sorted_rows(cur, "SELECT k, n FROM busy_windows") == [("b", 2)]
    assert sorted_rows(cur, "SELECT k, n, _failed_expectations FROM busy_windows__quarantine") == \
        [("a", 1, '["busy"]')]
    assert sum(b.quality["dropped_records"] for b in batches["busy_windows"]) == 1


def _listener_count(spark: Any) -> int:
    return spark.sparkContext._jsc.sc().listenerBus().listeners().size()


def _ids(cur: Any, table: str) -> list[int]:
    cur.execute(f"SELECT id FROM {table}")
    return sorted(row[0] for row in cur.fetchall())


RESTARTED = {
    "warned_again": "(CONSTRAINT positive EXPECT (amount > 0))",
    "dropped_again": "(CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW, "
                     "CONSTRAINT has_country EXPECT (country IS NOT NULL))",
    "guarded_again": "(CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW, "
                     "CONSTRAINT known EXPECT (id < 100) ON VIOLATION FAIL UPDATE)",
}


def test_restarts_with_expectations_add_no_listeners(stream_cursor, streams, spark, tmp_path, land, batches):
    """Each start of a query runs in a session of its own, and Spark's Observation leaves a listener holding that
    session on the context's listener bus: counting expectations must leave nothing behind, restart after restart
    (a scheduled stream restarts at every pass), and still count every row exactly once."""
    cur = stream_cursor
    for name, constraints in RESTARTED.items():
        land(tmp_path / name, ROWS)
        cur.execute(f"CREATE STREAMING TABLE {name} {constraints} AS SELECT * FROM {_files(tmp_path / name)}")
        streams.wait_for(cur.database, name)
    listeners = _listener_count(spark)
    for restart in range(3):
        for name in RESTARTED:
            streams.stop(cur.database, name, desired=None)
            land(tmp_path / name, [{"id": 10 + restart, "amount": -1.0, "country": None},
                                   {"id": 20 + restart, "amount": 1.0, "country": "fr"}])
            streams.resume(streams.store.get_stream(cur.database, name))
            streams.wait_for(cur.database, name)
    assert _listener_count(spark) == listeners
    # ROWS, then three times one row failing both rules and one passing them
    assert _ids(cur, "warned_again") == [1, 2, 3, 4, 10, 11, 12, 20, 21, 22]
    expected = {"warned_again": ({"positive": (5, 5)}, 0),
                "dropped_again": ({"positive": (5, 5), "has_country": (6, 4)}, 5),
                "guarded_again": ({"positive": (5, 5), "known": (10, 0)}, 5)}
    for name, (totals, dropped) in expected.items():
        assert _totals(batches[name]) == totals, name
        assert sum(b.quality["dropped_records"] for b in batches[name]) == dropped, name
        assert logged_quality(cur, streams, name) == (totals, dropped), name
        if dropped:
            assert _ids(cur, name) == [1, 4, 20, 21, 22]
            assert _ids(cur, f"{name}__quarantine") == [2, 3, 10, 11, 12]
    assert "passed 5, failed 5" in _describe(cur, "dropped_again")["Expectation positive"][0]
