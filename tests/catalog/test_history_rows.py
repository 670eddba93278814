"""The history's rows written raw (no JVM): on SQLite the writer's batches skip SQLAlchemy's per-row conversions and
go to the driver in one executemany (catalog/history.py `insert_raw`); a row so written must be byte for byte the row
SQLAlchemy's insert writes (`insert_core`, what other databases take), so that readers, the order of the history and
the retention's cutoff see no difference."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

from sluicegate.catalog import history
from sluicegate.catalog.history import HistoryRecord, HistorySettings
from sluicegate.catalog.store import CatalogStore

PARIS = dt.timezone(dt.timedelta(hours=1))


def _records() -> list[HistoryRecord]:
    """Records whose values take every form a column can: times with and without microseconds, in UTC and in
    another zone, none; tables none, one, several; flags true, false, none; texts with quotes and non-ASCII."""
    return [
        HistoryRecord(
            statement_id="a" * 32, session_id="s" * 32, executed_by="alice", source="CLIENT",
            client_application="PyHive", client_address="10.1.2.3", statement_type="SELECT",
            execution_status="FINISHED", error_class=None, sqlstate=None, error_message=None,
            start_time=dt.datetime(2026, 12, 6, 9, 0, 0, tzinfo=dt.timezone.utc),
            end_time=dt.datetime(2026, 12, 6, 9, 0, 1, 250, tzinfo=dt.timezone.utc), total_duration_ms=1000,
            execution_duration_ms=990, produced_rows=3, modified_rows=None, read_tables=("db.t", "db.u"),
            written_tables=(), statement_text="SELECT x FROM db.t WHERE name = ? -- 'é'", read_rows=10,
            read_bytes=1 << 40, from_result_cache=True),
        HistoryRecord(
            statement_id="b" * 32, session_id=None, executed_by="system", source="SCHEDULED_REFRESH",
            client_application="sluicegate", client_address=None, statement_type="REFRESH",
            execution_status="FAILED", error_class="TABLE_OR_VIEW_NOT_FOUND", sqlstate="42P01",
            error_message="no table \"t\"; it's gone", start_time=dt.datetime(2026, 12, 6, 10, 0, 0, 123456, PARIS),
            end_time=None, total_duration_ms=None, execution_duration_ms=None, produced_rows=None,
            modified_rows=7, read_tables=(), written_tables=("db.mv",), statement_text=None,
            from_result_cache=False),
    ]


def _rows(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM query_history ORDER BY id").fetchall()


def test_a_row_written_raw_is_the_row_sqlalchemy_writes(tmp_path: Path) -> None:
    raw, core = (CatalogStore.for_warehouse(tmp_path / name) for name in ("raw", "core"))
    try:
        with raw.history_db.connection() as conn:
            history.insert_raw(conn, _records())
        with core.history_db.connection() as conn:
            history.insert_core(conn, _records())
        files = [Path(store.history_db.url.removeprefix("sqlite:///")) for store in (raw, core)]  # type: ignore[union-attr]
        written = _rows(files[0])
        assert written == _rows(files[1])
        assert written[1][12] == "2026-12-06 09:00:00.123456"   # start_time: UTC, naive, with microseconds
        assert [each.statement_id for each in history.read(raw, None)] == ["b" * 32, "a" * 32]
        back = {each.statement_id: each for each in history.read(raw, None)}
        for record in _records():
            assert back[record.statement_id] == record
    finally:
        raw.close()
        core.close()


def test_append_on_sqlite_writes_raw_and_trims_raw_rows_by_age(tmp_path: Path) -> None:
    store = CatalogStore.for_warehouse(tmp_path)
    try:
        settings = HistorySettings(max_age_days=1, max_rows=0)
        now = dt.datetime(2026, 12, 7, 9, 0, 0, 1, tzinfo=dt.timezone.utc)   # the first record: a day and 1 us old
        assert history.append(store, _records(), settings, now=now) == 1
        assert [each.statement_id for each in history.read(store, None)] == ["b" * 32]
    finally:
        store.close()
