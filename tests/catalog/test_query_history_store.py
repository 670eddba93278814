"""The query history in the catalog (version 6; no JVM): records round-trip with their columns, a user reads only
their own, retention trims by count and by age as batches are written, and the rows survive the store's reopening."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import create_engine, inspect, text

from sluicegate.catalog import history
from sluicegate.catalog.history import HistoryRecord, HistorySettings
from sluicegate.catalog.migrations import LATEST, migrate
from sluicegate.catalog.store import CatalogStore

NOW = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.timezone.utc)


def _record(n: int, user: str = "alice", start: dt.datetime = NOW, status: str = "FINISHED") -> HistoryRecord:
    return HistoryRecord(
        statement_id=f"{n:032x}", session_id="s" * 32, executed_by=user, source="CLIENT", client_application=None,
        client_address="127.0.0.1", statement_type="SELECT", execution_status=status,
        error_class="TABLE_OR_VIEW_NOT_FOUND" if status == "FAILED" else None,
        sqlstate="42P01" if status == "FAILED" else None, error_message=None, start_time=start,
        end_time=start + dt.timedelta(milliseconds=5), total_duration_ms=5, execution_duration_ms=3, produced_rows=1,
        modified_rows=None, read_tables=("db.t",), written_tables=(), statement_text="SELECT ? FROM db.t")


def test_records_round_trip_and_users_read_their_own(tmp_path: Path) -> None:
    store = CatalogStore.for_warehouse(tmp_path)
    settings = HistorySettings(max_age_days=0, max_rows=0)
    history.append(store, [_record(1), _record(2, "bob", status="FAILED"), _record(3)], settings, NOW)
    everything = history.read(store, None)
    assert [r.statement_id[-1] for r in everything] == ["3", "2", "1"]       # newest first
    assert everything[2] == _record(1)
    assert {r.executed_by for r in history.read(store, "alice")} == {"alice"}
    assert [(r.error_class, r.sqlstate) for r in history.read(store, "bob")] == [("TABLE_OR_VIEW_NOT_FOUND", "42P01")]
    store.close()
    reopened = CatalogStore.for_warehouse(tmp_path)
    assert len(history.read(reopened, None)) == 3                           # it is in the catalog: a restart keeps it
    reopened.close()


def test_retention_by_count_keeps_the_newest(tmp_path: Path) -> None:
    store = CatalogStore.for_warehouse(tmp_path)
    settings = HistorySettings(max_age_days=0, max_rows=5)
    for batch in range(4):
        history.append(store, [_record(batch * 3 + i) for i in range(3)], settings, NOW)
    assert history.count(store) == 5
    assert [int(r.statement_id, 16) for r in history.read(store, None)] == [11, 10, 9, 8, 7]
    store.close()


def test_retention_by_age_drops_old_statements(tmp_path: Path) -> None:
    store = CatalogStore.for_warehouse(tmp_path)
    settings = HistorySettings(max_age_days=1, max_rows=0)
    old = NOW - dt.timedelta(days=2)
    history.append(store, [_record(1, start=old), _record(2, start=old)], HistorySettings(max_age_days=0), NOW)
    assert history.count(store) == 2
    trimmed = history.append(store, [_record(3)], settings, NOW)
    assert trimmed == 2 and [int(r.statement_id, 16) for r in history.read(store, None)] == [3]
    store.close()


def test_version_6_adds_the_table_to_an_older_catalog(tmp_path: Path) -> None:
    assert LATEST >= 6
    store = CatalogStore.for_warehouse(tmp_path)
    store.close()
    engine = create_engine(f"sqlite:///{tmp_path / 'catalog.db'}")
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE query_history"))
        conn.execute(text("DELETE FROM schema_version WHERE version >= 6"))
    with engine.begin() as conn:
        assert 6 in migrate(conn)
        assert inspect(conn).has_table("query_history")
    engine.dispose()
