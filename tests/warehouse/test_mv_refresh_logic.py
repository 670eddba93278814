"""The pure parts of materialized-view refreshes, without a JVM: the refresh state as stored, the reason a refresh
gives, and when the scheduler finds a view's refresh due."""

from __future__ import annotations

import datetime as dt

from sluicegate.catalog.store import StreamEntry
from sluicegate.dialect.schedule import Schedule
from sluicegate.executor.materialized_views.refresh import FAILED, MaterializedViewState, _changes
from sluicegate.executor.materialized_views.scheduler import due

NOW = dt.datetime(2026, 11, 25, 12, 0, 0)


def _row(**changes: object) -> StreamEntry:
    base = StreamEntry("db", "mv", "id", "{}", "", "COMPLETED", "MATERIALIZED_VIEW", last_refresh_status="COMPLETED",
                       last_refresh_at=NOW - dt.timedelta(hours=1))
    return StreamEntry(**{**base.__dict__, **changes})


def test_state_round_trips_and_describes_its_inputs() -> None:
    state = MaterializedViewState(refresh_policy="FULL", database="db", input_versions={"db.b": 3, "db.a": 7},
                                  foreign_inputs=("range(...)",), last_kind="FULL", last_reason="why", last_version=4)
    assert MaterializedViewState.from_json(state.to_json()) == state
    assert state.describe_inputs() == "db.a@v7, db.b@v3, range(...) (not versioned)"
    assert MaterializedViewState.from_json(None) == MaterializedViewState()


def test_changes_name_what_moved() -> None:
    assert _changes({"db.a": 1, "db.b": 2}, {"db.a": 2, "db.b": 2, "db.c": 0}) == ["db.a v1 -> v2", "db.c is new (v0)"]
    assert _changes({"db.a": 1}, {}) == ["db.a no longer read"]
    assert _changes({"db.a": 1}, {"db.a": 1}) == ["the definition changed"]


def test_on_update_is_due_when_an_input_changed_at_most_every() -> None:
    on_update = Schedule("on_update", at_most_every_seconds=600)
    assert due(on_update, _row(), lambda: True, NOW)
    assert not due(on_update, _row(), lambda: False, NOW)
    assert not due(on_update, _row(last_refresh_at=NOW - dt.timedelta(minutes=5)), lambda: True, NOW)
    assert not due(on_update, _row(), lambda: True, NOW, last_pass=NOW - dt.timedelta(minutes=1))


def test_every_is_due_at_its_time_and_a_failure_waits() -> None:
    hourly = Schedule("every", every=1, unit="HOUR")
    assert due(hourly, _row(next_run_at=NOW), lambda: False, NOW)
    assert not due(hourly, _row(next_run_at=NOW + dt.timedelta(seconds=1)), lambda: False, NOW)
    failed = _row(next_run_at=NOW, last_refresh_status=FAILED, last_refresh_at=NOW - dt.timedelta(seconds=5))
    assert not due(hourly, failed, lambda: False, NOW)
    assert not due(hourly, _row(next_run_at=NOW, last_refresh_status="RUNNING"), lambda: False, NOW)


def test_a_refresh_left_running_by_a_stopped_gateway_is_failed_at_start(tmp_path: object) -> None:
    from pathlib import Path

    from sluicegate.catalog.store import CatalogStore, TableEntry
    from sluicegate.executor.materialized_views.scheduler import recover_interrupted

    store = CatalogStore.for_warehouse(Path(str(tmp_path)))
    store.create_database("db")
    for name, status in (("mv", "RUNNING"), ("done", "COMPLETED")):
        store.create_table(TableEntry(database="db", name=name, kind="MATERIALIZED_VIEW", location=f"/x/{name}",
                                      schema_json=None, definition=None))
        store.put_stream(StreamEntry("db", name, name, "{}", "", status, "MATERIALIZED_VIEW",
                                     last_refresh_status=status))
    assert recover_interrupted(store) == [("db", "mv")]
    row = store.get_stream("db", "mv")
    assert row is not None and row.last_refresh_status == FAILED and "REFRESH_INTERRUPTED" in (row.last_error or "")
    assert store.get_stream("db", "done").last_refresh_status == "COMPLETED"  # type: ignore[union-attr]
    assert recover_interrupted(store) == []
