"""The event log in the catalog, without a JVM: Databricks' columns, the kinds the runtime records mapped to event
types and levels, sequence order, retention as events are written, and migration 4 over a version-3 catalog."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import update

from sluicegate.catalog.events import EventRetention, error_object, shape_of_kind
from sluicegate.catalog.models import StreamEventRow
from sluicegate.catalog.store import CatalogStore, StreamEntry, TableEntry


def _streaming_table(store: CatalogStore, name: str = "clicks") -> None:
    store.create_table(TableEntry("default", name, "STREAMING_TABLE", f"/w/default.db/{name}", None, "SELECT 1"))
    store.put_stream(StreamEntry("default", name, "a" * 32, "{}", "/w/_checkpoints/x", "RUNNING", "RUNNING",
                                 query_id="q-1"))


@pytest.fixture()
def store(tmp_path: Path) -> CatalogStore:
    found = CatalogStore.for_warehouse(tmp_path)
    _streaming_table(found)
    return found


def test_the_four_argument_form_maps_kinds_to_databricks_types_and_levels(store):
    store.record_event("default", "clicks", "STARTED", "query q-1 from checkpoint /c")
    store.record_event("default", "clicks", "FAILED", "DeltaWriteError: writing failed (attempt 1; retry in 2 s)")
    store.record_event("default", "clicks", "REFRESH_FULL", "the query changed")
    store.record_event("default", "clicks", "STOPPED", "the query ended")
    started, failed, refreshed, stopped = store.event_log("default", "clicks")
    assert (started.event_type, started.level, json.loads(started.details)) == (
        "update_progress", "INFO", {"update_progress": {"state": "RUNNING"}})
    assert (failed.event_type, failed.level) == ("update_progress", "ERROR")
    assert json.loads(failed.error) == {"fatal": False, "exceptions": [
        {"class_name": "DeltaWriteError", "message": "DeltaWriteError: writing failed (attempt 1; retry in 2 s)"}]}
    assert json.loads(refreshed.details) == {"create_update": {"cause": "USER_ACTION", "full_refresh": True}}
    assert json.loads(stopped.details)["update_progress"]["state"] == "COMPLETED"
    assert started.error is None and started.maturity_level == "STABLE"
    origin = json.loads(started.origin)
    assert origin["pipeline_id"] == "a" * 32 and origin["update_id"] == "q-1"
    assert origin["dataset_name"] == "default.clicks"
    assert started.timestamp.tzinfo is not None


def test_the_supervisors_and_schedules_kinds_are_databricks_types(store):
    for kind in ("REFRESH", "RETRY", "REFRESH_COMPLETED", "SCHEDULED", "SCHEDULE_CHANGED", "SCHEDULE"):
        store.record_event("default", "clicks", kind, f"{kind} happened")
    shapes = [(e.event_type, json.loads(e.details)) for e in store.event_log("default", "clicks")]
    assert shapes == [
        ("create_update", {"create_update": {"cause": "USER_ACTION", "full_refresh": False}}),
        ("create_update", {"create_update": {"cause": "RETRY_ON_FAILURE", "full_refresh": False}}),
        ("update_progress", {"update_progress": {"state": "COMPLETED"}}),
        ("update_progress", {"update_progress": {"state": "QUEUED"}}),
        ("user_action", {"user_action": {"action": "SCHEDULE_CHANGED", "message": "SCHEDULE_CHANGED happened"}}),
        ("user_action", {"user_action": {"action": "SCHEDULE_APPLIED", "message": "SCHEDULE happened"}}),
    ]


def test_keywords_give_type_level_details_and_origin_and_sequence_grows_per_table(store):
    _streaming_table(store, "other")
    store.record_event("default", "other", "STARTED", "elsewhere")
    event_id = store.record_event("default", "clicks", "FLOW_PROGRESS", "batch 0", event_type="flow_progress",
                                  level="METRICS", details={"flow_progress": {"metrics": {"num_output_rows": 3}}},
                                  origin={"batch_id": 0})
    store.record_event("default", "clicks", "whatever", "a new type", event_type="schedule_run")
    progress, scheduled = store.event_log("default", "clicks")
    assert progress.id == event_id and progress.level == "METRICS" and progress.event_type == "flow_progress"
    assert json.loads(progress.origin)["batch_id"] == 0
    assert json.loads(progress.details)["flow_progress"]["metrics"]["num_output_rows"] == 3
    assert (scheduled.event_type, scheduled.maturity_level, scheduled.level) == ("schedule_run", "EVOLVING", "INFO")
    numbers = [json.loads(e.sequence)["control_plane_seq_no"] for e in (progress, scheduled)]
    assert numbers == [1, 2]  # per table: the other table's event does not count
    with pytest.raises(ValueError):
        store.record_event("default", "clicks", "X", "bad level", event_type="x", level="DEBUG")


def test_describe_rows_leave_out_metrics_events(store):
    store.record_event("default", "clicks", "STARTED", "first")
    store.record_event("default", "clicks", "FLOW_PROGRESS", "batch 0", event_type="flow_progress", level="METRICS")
    assert [kind for _, kind, _ in store.events("default", "clicks")] == ["STARTED"]


def test_retention_keeps_the_newest_rows_per_table(tmp_path):
    store = CatalogStore.for_warehouse(tmp_path, EventRetention(days=0, max_rows_per_table=3))
    _streaming_table(store)
    for batch in range(7):
        store.record_event("default", "clicks", "FLOW_PROGRESS", f"batch {batch}", event_type="flow_progress",
                           level="METRICS")
    kept = store.event_log("default", "clicks")
    assert [e.message for e in kept] == ["batch 4", "batch 5", "batch 6"]
    assert [json.loads(e.sequence)["control_plane_seq_no"] for e in kept] == [5, 6, 7]


def test_retention_removes_events_older_than_the_days(tmp_path):
    store = CatalogStore.for_warehouse(tmp_path, EventRetention(days=1, max_rows_per_table=0))
    _streaming_table(store)
    store.record_event("default", "clicks", "STARTED", "old")
    with store.transaction() as session:  # age the first event by two days
        session.execute(update(StreamEventRow).values(at=dt.datetime.now() - dt.timedelta(days=2)))
    for batch in range(60):  # the age trim runs every TRIM_DAYS_EVERY writes
        store.record_event("default", "clicks", "FLOW_PROGRESS", f"batch {batch}", event_type="flow_progress",
                           level="METRICS")
    messages = [e.message for e in store.event_log("default", "clicks")]
    assert "old" not in messages and len(messages) == 60


def test_events_go_with_their_table(store):
    store.record_event("default", "clicks", "STARTED", "first")
    store.drop_table("default", "clicks")
    _streaming_table(store)
    assert store.event_log("default", "clicks") == []


def test_migration_4_keeps_the_events_of_a_version_3_catalog(tmp_path):
    path = tmp_path / "catalog.db"
    with sqlite3.connect(path) as conn:  # what a version-3 gateway left: the old stream_events columns only
        conn.executescript("""
            CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description VARCHAR(200), applied_at DATETIME);
            INSERT INTO schema_version VALUES (1, 'v1', '2026-01-01'), (2, 'v2', '2026-01-01'), (3, 'v3', '2026-01-01');
            CREATE TABLE databases (name VARCHAR(128) PRIMARY KEY, comment TEXT, created_at DATETIME,
                owner VARCHAR(128));
            INSERT INTO databases VALUES ('default', 'default database', '2026-01-01', NULL);
            CREATE TABLE tables (id INTEGER PRIMARY KEY AUTOINCREMENT, database VARCHAR(128), name VARCHAR(128),
                kind VARCHAR(32), location TEXT, schema_json TEXT, definition TEXT, properties JSON, partition_by JSON,
                comment TEXT, owner VARCHAR(128), created_at DATETIME, updated_at DATETIME, schedule TEXT);
            INSERT INTO tables (database, name, kind, properties, partition_by, created_at, updated_at)
                VALUES ('default', 'clicks', 'STREAMING_TABLE', '{}', '[]', '2026-01-01', '2026-01-01');
            CREATE TABLE stream_events (id INTEGER PRIMARY KEY AUTOINCREMENT, table_id INTEGER, at DATETIME,
                kind VARCHAR(32), message TEXT);
            INSERT INTO stream_events (table_id, at, kind, message) VALUES
                (1, '2026-01-01 10:00:00', 'STARTED', 'query q from checkpoint c'),
                (1, '2026-01-01 10:05:00', 'FAILED', 'boom (attempt 1; retry in 2 s)');
            CREATE TABLE streams (table_id INTEGER PRIMARY KEY, stream_id VARCHAR(64), plan_json TEXT,
                checkpoint TEXT, status VARCHAR(16), desired_state VARCHAR(16), query_id VARCHAR(64),
                last_batch_id INTEGER, last_batch_at DATETIME, rows_per_second FLOAT, last_error TEXT,
                failures INTEGER, updated_at DATETIME, next_run_at DATETIME, last_refresh_at DATETIME,
                last_refresh_status VARCHAR(32));
            CREATE TABLE grants (id INTEGER PRIMARY KEY AUTOINCREMENT, kind VARCHAR(16), database VARCHAR(128),
                name VARCHAR(128), principal VARCHAR(128), privilege VARCHAR(32), granted_by VARCHAR(128),
                granted_at DATETIME);
        """)
    store = CatalogStore(f"sqlite:///{path}")
    started, failed = store.event_log("default", "clicks")
    assert (started.event_type, started.level, failed.level) == ("update_progress", "INFO", "ERROR")
    assert [json.loads(e.sequence)["control_plane_seq_no"] for e in (started, failed)] == [1, 2]
    assert started.id != failed.id and len(started.id) == 36
    store.record_event("default", "clicks", "STOPPED", "stopped")
    assert json.loads(store.event_log("default", "clicks")[-1].sequence)["control_plane_seq_no"] == 3
    assert [kind for _, kind, _ in store.events("default", "clicks")] == ["STOPPED", "FAILED", "STARTED"]


def test_shapes_of_unknown_kinds_and_error_classes():
    assert shape_of_kind("SCHEDULED_PASS", "ran").event_type == "scheduled_pass"
    assert error_object("[CAST_INVALID_INPUT] 'abc' cannot be cast")["exceptions"][0]["class_name"] == \
        "CAST_INVALID_INPUT"
    assert error_object("no class here")["exceptions"][0]["class_name"] == "StreamError"
