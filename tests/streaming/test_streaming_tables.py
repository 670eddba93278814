"""Streaming tables through the gateway (PyHive), on real Spark, real Delta and real files.

Each stream is driven to completion with the manager's `wait_for` (Spark's processAllAvailable), never by sleeping;
the table is then read through the gateway and, from outside, with delta-rs.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from delta_log import txn_actions
from deltalake import DeltaTable
from pyhive_helpers import error_status as _error
from pyhive_helpers import sorted_rows as _rows


def _location(warehouse: Path, cursor: Any, table: str) -> str:
    return str(warehouse / f"{cursor.database}.db" / table)


def test_append_from_json_files_one_commit_per_batch(stream_cursor, streams, warehouse, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "clicks"
    land(source, [{"country": "fr", "n": 1}, {"country": "de", "n": 2}])
    cur.execute(f"CREATE STREAMING TABLE clicks AS SELECT country, n * 10 AS n10 FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'country STRING, n INT') WHERE n > 0")
    streams.wait_for(cur.database, "clicks")
    assert _rows(cur, "SELECT * FROM clicks") == [("de", 20), ("fr", 10)]
    land(source, [{"country": "it", "n": 3}, {"country": "es", "n": -1}])
    streams.wait_for(cur.database, "clicks")
    assert _rows(cur, "SELECT * FROM clicks") == [("de", 20), ("fr", 10), ("it", 30)]
    location = _location(warehouse, cur, "clicks")
    direct = sorted((r["country"], r["n10"]) for r in DeltaTable(location).to_pyarrow_table().to_pylist())
    assert direct == [("de", 20), ("fr", 10), ("it", 30)]
    txns = txn_actions(location)
    assert [version for _, version in txns] == [0, 1]
    assert len({app for app, _ in txns}) == 1


def test_update_mode_count_per_key_equals_result(stream_cursor, streams, warehouse, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "events"
    source.mkdir()
    cur.execute(f"CREATE STREAMING TABLE per_country AS SELECT country, count(*) AS clicks, sum(n) AS total "
                f"FROM STREAM read_files('{source}', format => 'json', schema => 'country STRING, n INT') "
                f"GROUP BY country")
    assert _rows(cur, "SELECT * FROM per_country") == []  # exists, empty, before the first batch
    seen: list[dict[str, Any]] = []
    for batch in ([{"country": "fr", "n": 1}, {"country": "de", "n": 2}],
                  [{"country": "fr", "n": 5}, {"country": None, "n": 7}],
                  [{"country": "de", "n": 1}, {"country": None, "n": 1}, {"country": "it", "n": 4}]):
        land(source, batch)
        seen.extend(batch)
        streams.wait_for(cur.database, "per_country")
        counts = Counter(row["country"] for row in seen)
        expected = sorted(((c, counts[c], sum(r["n"] for r in seen if r["country"] == c)) for c in counts),
                          key=repr)
        assert _rows(cur, "SELECT * FROM per_country") == expected
    cur.execute("SHOW STREAMING TABLES")
    shown = {row[1]: row for row in cur.fetchall()}
    assert shown["per_country"][2] == "RUNNING" and shown["per_country"][3] == "update"


def test_windowed_count_with_watermark_update_and_append(stream_cursor, streams, tmp_path, land):
    """By default a windowed count is in update mode (the table always equals the result, open windows included);
    in append mode a window is written once, when the watermark closes it, and rows later than that are dropped."""
    cur = stream_cursor
    source = tmp_path / "ticks"
    land(source, [{"ts": "2026-01-01 00:00:01", "k": "a"}, {"ts": "2026-01-01 00:00:04", "k": "a"},
                  {"ts": "2026-01-01 00:00:12", "k": "b"}])
    query = (f"SELECT window(ts, '10 seconds') AS w, k, count(*) AS n "
             f"FROM STREAM read_files('{source}', format => 'json', schema => 'ts TIMESTAMP, k STRING') "
             f"WATERMARK ts DELAY OF INTERVAL 5 SECONDS GROUP BY window(ts, '10 seconds'), k")
    cur.execute(f"CREATE STREAMING TABLE live_windows AS {query}")
    cur.execute(f"CREATE STREAMING TABLE closed_windows TBLPROPERTIES ('sluicegate.output_mode' = 'append') "
                f"AS {query}")
    cur.execute("DESCRIBE STREAMING TABLE live_windows")
    assert dict(cur.fetchall())["Output mode"].startswith("update")
    select = "SELECT cast(w.start AS STRING), cast(w.end AS STRING), k, n FROM {}"

    def settle() -> None:
        for name in ("live_windows", "closed_windows"):
            streams.wait_for(cur.database, name)

    settle()
    assert _rows(cur, select.format("live_windows")) == [
        ("2026-01-01 00:00:00", "2026-01-01 00:00:10", "a", 2), ("2026-01-01 00:00:10", "2026-01-01 00:00:20", "b", 1)]
    assert _rows(cur, select.format("closed_windows")) == []  # watermark 00:00:07: no window closed yet
    land(source, [{"ts": "2026-01-01 00:00:31", "k": "c"}, {"ts": "2026-01-01 00:00:02", "k": "a"}])
    settle()
    closed = [("2026-01-01 00:00:00", "2026-01-01 00:00:10", "a", 3),
              ("2026-01-01 00:00:10", "2026-01-01 00:00:20", "b", 1)]
    assert _rows(cur, select.format("closed_windows")) == closed  # watermark 00:00:26 closed both
    assert _rows(cur, select.format("live_windows")) == sorted(
        [*closed, ("2026-01-01 00:00:30", "2026-01-01 00:00:40", "c", 1)], key=repr)
    land(source, [{"ts": "2026-01-01 00:00:03", "k": "late"}])
    settle()
    assert "late" not in [row[2] for row in _rows(cur, select.format("live_windows"))]
    assert _rows(cur, select.format("closed_windows")) == closed


def test_complete_mode_replaces_the_table_each_batch(stream_cursor, streams, warehouse, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "scores"
    land(source, [{"player": "x", "points": 3}, {"player": "y", "points": 5}])
    cur.execute(f"CREATE STREAMING TABLE leaders TBLPROPERTIES ('sluicegate.output_mode' = 'complete') AS "
                f"SELECT player, sum(points) AS points FROM STREAM read_files('{source}', format => 'json', "
                f"schema => 'player STRING, points INT') GROUP BY player ORDER BY points DESC")
    streams.wait_for(cur.database, "leaders")
    assert _rows(cur, "SELECT * FROM leaders") == [("x", 3), ("y", 5)]
    land(source, [{"player": "x", "points": 4}])
    streams.wait_for(cur.database, "leaders")
    assert _rows(cur, "SELECT * FROM leaders") == [("x", 7), ("y", 5)]
    table = DeltaTable(_location(warehouse, cur, "leaders"))
    assert table.history(1)[0]["operation"] in ("WRITE", "CREATE OR REPLACE TABLE", "STREAMING UPDATE")
    assert len(table.file_uris()) <= 2  # replaced, not accumulated


def _restarted(streams: Any, database: str, name: str) -> bool:
    """Whether the query restarted for a static table's new version exists: a STARTED event newer than the
    RESTART (events come newest first). The old query still runs between RESTART and its halt, so "a query
    runs" alone can be the old one, and a batch waited for on it would not see the new version."""
    kinds = [kind for _, kind, _ in streams.store.events(database, name)]
    return "RESTART" in kinds and "STARTED" in kinds[:kinds.index("RESTART")]


def test_stream_static_join_reads_the_catalog_table(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    cur.execute("CREATE TABLE campaigns (ad_id INT, campaign STRING) USING DELTA")
    cur.execute("INSERT INTO campaigns VALUES (1, 'spring'), (2, 'spring'), (3, 'autumn')")
    source = tmp_path / "ads"
    land(source, [{"ad_id": 1, "kind": "view"}, {"ad_id": 3, "kind": "view"}, {"ad_id": 2, "kind": "click"},
                  {"ad_id": 9, "kind": "view"}])
    cur.execute(f"CREATE STREAMING TABLE views_per_campaign AS SELECT c.campaign, count(*) AS views "
                f"FROM STREAM read_files('{source}', format => 'json', schema => 'ad_id INT, kind STRING') e "
                f"JOIN campaigns c ON e.ad_id = c.ad_id WHERE e.kind = 'view' GROUP BY c.campaign")
    streams.wait_for(cur.database, "views_per_campaign")
    assert _rows(cur, "SELECT * FROM views_per_campaign") == [("autumn", 1), ("spring", 1)]
    # a new version of the static table reaches the batches after it (the stream restarts on its checkpoint)
    cur.execute("INSERT INTO campaigns VALUES (9, 'winter')")
    deadline = time.monotonic() + 60
    while not _restarted(streams, cur.database, "views_per_campaign"):
        assert time.monotonic() < deadline, "the stream did not restart with the static table's new version"
        time.sleep(0.2)
    land(source, [{"ad_id": 9, "kind": "view"}, {"ad_id": 1, "kind": "view"}])
    streams.wait_for(cur.database, "views_per_campaign")
    assert _rows(cur, "SELECT * FROM views_per_campaign") == [("autumn", 1), ("spring", 2), ("winter", 1)]


def test_bronze_silver_gold_chain_through_delta_sources(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "raw"
    land(source, [{"user": "u1", "amount": 10}, {"user": "u2", "amount": -5}])
    cur.execute(f"CREATE STREAMING TABLE bronze AS SELECT * FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'user STRING, amount INT')")
    cur.execute("CREATE STREAMING TABLE silver AS SELECT user, amount FROM STREAM(bronze) WHERE amount > 0")
    cur.execute("CREATE STREAMING TABLE gold AS SELECT user, sum(amount) AS total FROM STREAM silver GROUP BY user")
    for batch in ([{"user": "u1", "amount": 5}], [{"user": "u3", "amount": 1}, {"user": "u1", "amount": -100}]):
        for name in ("bronze", "silver", "gold"):
            streams.wait_for(cur.database, name)
        land(source, batch)
    for name in ("bronze", "silver", "gold"):
        streams.wait_for(cur.database, name)
    assert _rows(cur, "SELECT * FROM silver") == sorted([("u1", 5), ("u1", 10), ("u3", 1)], key=repr)
    assert _rows(cur, "SELECT * FROM gold") == [("u1", 15), ("u3", 1)]
    # gold is rewritten in place (update mode): streaming from it is refused before anything runs
    status = _error(cur, "CREATE STREAMING TABLE platinum AS SELECT * FROM STREAM(gold)")
    assert status.sqlState == "42K0E" or "rewritten" in status.errorMessage


def test_drop_streaming_table_stops_it_and_removes_table_and_checkpoint(stream_cursor, streams, warehouse,
                                                                        tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "d"
    land(source, [{"a": 1}])
    cur.execute(f"CREATE STREAMING TABLE doomed AS SELECT a FROM STREAM read_files('{source}', format => 'json')")
    streams.wait_for(cur.database, "doomed")
    assert _rows(cur, "SELECT * FROM doomed") == [(1,)]
    entry = streams.store.get_stream(cur.database, "doomed")
    assert os.path.isdir(entry.checkpoint)
    cur.execute("DROP STREAMING TABLE doomed")
    assert (cur.database, "doomed") not in streams.running()
    assert not os.path.exists(entry.checkpoint)
    assert not os.path.exists(_location(warehouse, cur, "doomed"))
    cur.execute("DROP STREAMING TABLE IF EXISTS doomed")
    assert _error(cur, "SELECT * FROM doomed").sqlState == "42P01"


def test_errors_are_clear_and_create_nothing(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    empty = tmp_path / "empty"
    empty.mkdir()
    status = _error(cur, f"CREATE STREAMING TABLE s1 AS SELECT * FROM STREAM read_files('{empty}', format => 'json')")
    assert status.sqlState == "42KD9" and "schema =>" in status.errorMessage
    status = _error(cur, "CREATE STREAMING TABLE s2 AS SELECT * FROM STREAM(no_such_table)")
    assert status.sqlState == "42P01"
    land(tmp_path / "ok", [{"a": 1}])
    status = _error(cur, f"CREATE STREAMING TABLE s3 AS SELECT a, no_such_column FROM STREAM "
                         f"read_files('{tmp_path / 'ok'}', format => 'json')")
    assert status.sqlState == "42703"
    status = _error(cur, f"CREATE STREAMING TABLE s4 AS SELECT a FROM STREAM "
                         f"read_files('{tmp_path / 'ok'}', format => 'json') ORDER BY a")
    assert status.sqlState and "ORDER BY" in status.errorMessage
    cur.execute("SHOW TABLES")
    assert [row for row in cur.fetchall() if row[1].startswith("s")] == []
    assert not [e for e in streams.store.list_streams() if e.database == cur.database]


def test_describe_shows_status_progress_and_plan(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "p"
    land(source, [{"k": "a", "v": 1}, {"k": "b", "v": 2}])
    cur.execute(f"CREATE STREAMING TABLE described TBLPROPERTIES ('pipelines.trigger.interval' = '300 milliseconds')"
                f" AS SELECT k, max(v) AS top FROM STREAM read_files('{source}', format => 'json') GROUP BY k")
    streams.wait_for(cur.database, "described")
    cur.execute("DESCRIBE STREAMING TABLE described")
    info: dict[str, list[str]] = {}
    for name, value in cur.fetchall():
        info.setdefault(name, []).append(value)
    assert info["Status"] == ["RUNNING"]
    assert info["Output mode"][0].startswith("update")
    assert info["Keys"] == ["k"]
    assert info["Trigger interval"] == ["0.3 seconds"]
    assert int(info["Last batch id"][0]) >= 0
    assert "json files" in info["Source"][0]
    assert any("STARTED" in event for event in info["Event"])
    assert "read_files" in info["Definition"][0]
    # the listener's figures arrive after the batch: poll for them
    deadline = time.monotonic() + 60
    while True:
        cur.execute("DESCRIBE STREAMING TABLE described")
        rows_per_second = dict(cur.fetchall())["Rows per second"]
        if rows_per_second is not None or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert rows_per_second is not None and float(rows_per_second) >= 0
    # dbt-databricks' persist_docs on a streaming table: the comment in the catalog and the Delta log, the stream on
    cur.execute(f"COMMENT ON STREAMING TABLE `main`.`{cur.database}`.`described` IS 'top per key'")
    cur.execute(f"SELECT comment FROM information_schema.tables WHERE table_schema = '{cur.database}' "
                "AND table_name = 'described'")
    assert cur.fetchall() == [("top per key",)]
    cur.execute("DESCRIBE STREAMING TABLE described")
    assert dict(cur.fetchall())["Status"] == "RUNNING"


def test_rate_source_through_beeline_and_the_shell(stream_cursor, streams, gateway, beeline, tmp_path):
    """A stream created and watched from beeline and `sluicegate shell`, the clients a person types into."""
    import subprocess
    import sys

    cur = stream_cursor
    db = cur.database
    done = beeline(gateway.port, "-e", f"CREATE STREAMING TABLE {db}.ticks AS SELECT value, value % 3 AS m "
                                       f"FROM STREAM rate(rows_per_second => 50)")
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        streams.wait_for(db, "ticks")
        cur.execute("SELECT count(*), count(DISTINCT value), min(value) FROM ticks")
        count, distinct, first = cur.fetchone()
        if count >= 20:
            break
    assert count >= 20 and distinct == count and first == 0  # every generated row once, from the start
    done = beeline(gateway.port, "-e", f"SHOW STREAMING TABLES IN {db}")
    assert done.returncode == 0, done.stderr
    assert f"{db},ticks,RUNNING,append" in done.stdout
    shell = Path(sys.executable).with_name("sluicegate")
    done = subprocess.run([str(shell), "shell", "--port", str(gateway.port), "-u", "tester", "-e",
                           f"DESCRIBE STREAMING TABLE {db}.ticks"], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env=dict(os.environ, HOME=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert "rate generator" in done.stdout and "RUNNING" in done.stdout
    done = beeline(gateway.port, "-e", f"DROP STREAMING TABLE {db}.ticks")
    assert done.returncode == 0, done.stderr
    assert (db, "ticks") not in streams.running()
