"""`event_log(TABLE(t))` through the gateway (PyHive) on real Spark, Delta and files: a stream runs a few batches and
its log shows the create and start events and one flow_progress per batch whose output rows add up to the table's
row count; the JSON is read with get_json_object (and parse_json(...):path); retention trims; bad calls get clear
errors."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from pyhive_helpers import error_status

from sluicegate.catalog.events import EventRetention

FLOW_ROWS = ("SELECT cast(get_json_object(details, '$.flow_progress.batch_id') AS INT) AS batch, "
             "cast(get_json_object(details, '$.flow_progress.metrics.num_output_rows') AS BIGINT) AS written "
             "FROM event_log(TABLE({table})) WHERE event_type = 'flow_progress' ORDER BY batch")


def _batches_logged(streams: Any, database: str, name: str, timeout: float = 120) -> int:
    """Wait until every batch the stream committed has its flow_progress event (Spark's listener reports a batch a
    little after its commit); returns how many batches ran."""
    deadline = time.monotonic() + timeout
    while True:
        entry = streams.store.get_stream(database, name)
        batches = (entry.last_batch_id + 1) if entry.last_batch_id is not None else 0
        logged = [e for e in streams.store.event_log(database, name) if e.event_type == "flow_progress"]
        if batches and len(logged) >= batches:
            return batches
        assert time.monotonic() < deadline, f"{len(logged)} flow_progress events for {batches} batches"
        time.sleep(0.1)


def _last_batch_logged(streams: Any, database: str, name: str, timeout: float = 120) -> None:
    """Wait until the stream's last committed batch has its flow_progress event: under a retention that keeps fewer
    events than the stream ran batches, counting them (`_batches_logged`) would never end."""
    deadline = time.monotonic() + timeout
    while True:
        entry = streams.store.get_stream(database, name)
        logged = {json.loads(e.details)["flow_progress"]["batch_id"] for e in streams.store.event_log(database, name)
                  if e.event_type == "flow_progress"}
        if entry.last_batch_id is not None and entry.last_batch_id in logged:
            return
        assert time.monotonic() < deadline, f"no flow_progress event for batch {entry.last_batch_id}: {logged}"
        time.sleep(0.1)


def test_event_log_shows_create_start_and_one_flow_progress_per_batch(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "clicks"
    land(source, [{"country": "fr", "n": 1}, {"country": "de", "n": 2}])
    cur.execute(f"CREATE STREAMING TABLE clicks AS SELECT country, n FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'country STRING, n INT') WHERE n > 0")
    streams.wait_for(cur.database, "clicks")
    for rows in ([{"country": "it", "n": 3}, {"country": "es", "n": -1}], [{"country": "pt", "n": 4}] * 3):
        land(source, rows)
        streams.wait_for(cur.database, "clicks")
    batches = _batches_logged(streams, cur.database, "clicks")
    assert batches >= 3

    cur.execute("SELECT id, sequence, origin, timestamp, message, level, maturity_level, error, details, event_type "
                "FROM event_log(TABLE(clicks))")
    assert [d[0] for d in cur.description] == ["id", "sequence", "origin", "timestamp", "message", "level",
                                               "maturity_level", "error", "details", "event_type"]
    events = cur.fetchall()
    kinds = [(row[9], json.loads(row[8]).get("update_progress", {}).get("state")) for row in events]
    assert kinds[0] == ("create_update", None) and ("update_progress", "RUNNING") in kinds
    sequences = [json.loads(row[1])["control_plane_seq_no"] for row in events]
    assert sequences == sorted(sequences) and len({row[0] for row in events}) == len(events)
    assert json.loads(events[0][2])["dataset_name"] == f"{cur.database}.clicks"

    cur.execute("SELECT typeof(max(timestamp)), max(timestamp) BETWEEN current_timestamp() - INTERVAL 10 MINUTES "
                "AND current_timestamp(), count(error), count(maturity_level) FROM event_log(TABLE(clicks))")
    assert cur.fetchall() == [("timestamp", True, 0, len(events))]  # UTC instants; no error; every row has a level
    pipeline_id = json.loads(events[-1][2])["pipeline_id"]
    cur.execute(f"SELECT count(*) FROM event_log('{pipeline_id}')")  # Databricks' event_log('<pipeline_id>')
    assert cur.fetchall()[0][0] >= len(events)

    cur.execute(FLOW_ROWS.format(table="clicks"))
    flows = cur.fetchall()
    assert [batch for batch, _ in flows] == list(range(batches))  # one per batch, none twice
    cur.execute("SELECT count(*) FROM clicks")
    assert sum(written for _, written in flows) == cur.fetchall()[0][0] == 6

    cur.execute(f"SELECT count(*), max(level), sum(parse_json(details):flow_progress.metrics.num_output_rows::INT), "
                f"min(parse_json(details):flow_progress.metrics.num_input_rows::INT) "
                f"FROM event_log('{cur.database}.clicks') WHERE event_type = 'flow_progress'")
    count, level, written, least_read = cur.fetchall()[0]
    assert (count, level, written) == (batches, "METRICS", 6) and least_read >= 1  # the string form of the name
    cur.execute("SELECT get_json_object(details, '$.flow_progress.data_quality.dropped_records') "
                "FROM event_log(TABLE(clicks)) WHERE event_type = 'flow_progress' LIMIT 1")
    assert cur.fetchall() == [(None,)]  # no expectations on this table: no data_quality, as in Databricks
    status = error_status(cur, "SELECT details:flow_progress.metrics.num_output_rows FROM event_log(TABLE(clicks))")
    assert status.sqlState == "42K09" and "[COLUMN_IS_NOT_VARIANT_TYPE]" in status.errorMessage  # Spark 4.1's `:`
    assert "parse_json(col)" in status.errorMessage, status.errorMessage
    cur.execute("DESCRIBE STREAMING TABLE clicks")
    assert not any("FLOW_PROGRESS" in str(value) for _, value in cur.fetchall())  # DESCRIBE keeps its few events


def test_event_log_in_views_joins_and_ctes(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "ticks"
    land(source, [{"k": "a"}])
    cur.execute(f"CREATE STREAMING TABLE ticks AS SELECT k FROM STREAM read_files('{source}', format => 'json', "
                f"schema => 'k STRING')")
    streams.wait_for(cur.database, "ticks")
    _batches_logged(streams, cur.database, "ticks")
    cur.execute("CREATE VIEW tick_progress AS SELECT event_type, details FROM event_log(TABLE(ticks)) "
                "WHERE event_type = 'flow_progress'")
    cur.execute("WITH e AS (SELECT * FROM tick_progress) SELECT count(*) FROM e JOIN ticks ON true")
    assert cur.fetchall()[0][0] >= 1


def test_retention_trims_as_events_are_written(stream_cursor, streams, tmp_path, land, monkeypatch):
    monkeypatch.setattr(streams.store, "event_retention", EventRetention(days=0, max_rows_per_table=4))
    cur = stream_cursor
    source = tmp_path / "trimmed"
    land(source, [{"k": "a"}])
    cur.execute(f"CREATE STREAMING TABLE trimmed AS SELECT k FROM STREAM read_files('{source}', format => 'json', "
                f"schema => 'k STRING')")
    for batch in range(4):
        land(source, [{"k": str(batch)}])
        streams.wait_for(cur.database, "trimmed")
    _last_batch_logged(streams, cur.database, "trimmed")
    cur.execute("SELECT get_json_object(sequence, '$.control_plane_seq_no') FROM event_log(TABLE(trimmed))")
    kept = sorted(int(row[0]) for row in cur.fetchall())
    assert len(kept) == 4 and kept[0] > 1  # the oldest (create, start) went; the newest stay, in order
    assert kept == list(range(kept[0], kept[0] + 4))


@pytest.mark.parametrize(("sql", "sqlstate", "error_class", "caret"), [
    ("SELECT * FROM event_log(TABLE(no_such_table))", "42P01", "TABLE_OR_VIEW_NOT_FOUND", "no_such_table"),
    ("SELECT * FROM event_log('plain')", "42832", "EVENT_LOG_UNSUPPORTED_TABLE_TYPE", "'plain'"),
    ("SELECT * FROM event_log(TABLE(plain_view))", "42832", "EVENT_LOG_UNSUPPORTED_TABLE_TYPE", "plain_view"),
    ("SELECT * FROM event_log('../../etc/passwd')", "42602", "INVALID_SCHEMA_OR_RELATION_NAME", "'../../etc"),
    ("SELECT * FROM event_log('a.b.c')", "42704", "NO_SUCH_CATALOG_EXCEPTION", "'a.b.c'"),   # a catalog `a`
    ("SELECT * FROM event_log('main.a.b.c')", "42K09", "INVALID_EVENT_LOG_ARGUMENT", "'main.a.b.c'"),
    ("SELECT * FROM event_log(TABLE(plain), 2)", "42K09", "INVALID_EVENT_LOG_ARGUMENT", "event_log"),
    ("SELECT * FROM event_log(42)", "42K09", "INVALID_EVENT_LOG_ARGUMENT", "event_log"),
])
def test_bad_calls_get_clear_errors_at_their_position(stream_cursor, sql, sqlstate, error_class, caret):
    cur = stream_cursor
    cur.execute("CREATE TABLE IF NOT EXISTS plain (id INT)")
    cur.execute("CREATE VIEW IF NOT EXISTS plain_view AS SELECT * FROM plain")
    status = error_status(cur, sql)
    assert status.sqlState == sqlstate and f"[{error_class}]" in status.errorMessage, status.errorMessage
    column = sql.index(caret) + 1
    assert f"column {column}" in status.errorMessage, status.errorMessage


def test_a_failure_is_an_error_event_with_the_exception(stream_cursor, streams):
    cur = stream_cursor
    cur.execute("CREATE TABLE orders (id INT, amount INT) USING DELTA")
    cur.execute("INSERT INTO orders VALUES (1, 10), (2, 20)")
    cur.execute("CREATE STREAMING TABLE big_orders AS SELECT id, amount FROM STREAM(orders) WHERE amount > 15")
    streams.wait_for(cur.database, "big_orders")
    cur.execute("DELETE FROM orders WHERE id = 1")  # a rewrite the stream cannot read as new rows: it fails
    query = ("SELECT level, get_json_object(details, '$.update_progress.state'), "
             "get_json_object(error, '$.exceptions[0].class_name'), get_json_object(error, '$.exceptions[0].message') "
             "FROM event_log(TABLE(big_orders)) WHERE level = 'ERROR'")
    deadline = time.monotonic() + 120
    while True:
        cur.execute(query)
        failures = cur.fetchall()
        if failures:
            break
        assert time.monotonic() < deadline, "no ERROR event for the failed stream"
        time.sleep(0.2)
    level, state, class_name, message = failures[0]
    assert (level, state) == ("ERROR", "FAILED") and class_name and "rewrote rows in place" in message
    cur.execute("DROP TABLE big_orders")
