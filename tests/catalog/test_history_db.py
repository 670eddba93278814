"""Where the query history lives (no JVM): a SQLite catalog's history is a file of its own next to it, so that a
history write never waits for (or holds) the catalog's lock; other catalogs keep it in their own database. Rows an
earlier version wrote into the catalog are moved once; version 7 gives the table its rows and bytes read, version 8
whether the result cache answered."""

from __future__ import annotations

import dataclasses
import datetime as dt
import sqlite3
from pathlib import Path

from sqlalchemy import create_engine, inspect, text

from sluicegate.catalog import history
from sluicegate.catalog.history import HistoryRecord, HistorySettings
from sluicegate.catalog.history_db import history_url
from sluicegate.catalog.migrations import migrate
from sluicegate.catalog.store import CatalogStore

NOW = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.timezone.utc)


def _record(n: int, read_rows: int | None = None) -> HistoryRecord:
    return HistoryRecord(
        statement_id=f"{n:032x}", session_id=None, executed_by="alice", source="CLIENT", client_application="hive",
        client_address="127.0.0.1", statement_type="SELECT", execution_status="FINISHED", error_class=None,
        sqlstate=None, error_message=None, start_time=NOW, end_time=NOW, total_duration_ms=1,
        execution_duration_ms=1, produced_rows=1, modified_rows=None, read_tables=("db.t",), written_tables=(),
        statement_text="SELECT ?", read_rows=read_rows, read_bytes=None if read_rows is None else 10 * read_rows)


def test_the_history_url_of_each_catalog() -> None:
    assert history_url("sqlite:////w/catalog.db") == "sqlite:////w/catalog.history.db"
    assert history_url("sqlite:///rel/cat.sqlite") == "sqlite:///rel/cat.history.sqlite"
    assert history_url("sqlite://") is None and history_url("sqlite:///:memory:") is None
    assert history_url("postgresql://u:p@db/catalog") is None   # a shared server database keeps one history


def test_a_sqlite_catalogs_history_is_a_file_of_its_own(tmp_path: Path) -> None:
    store = CatalogStore.for_warehouse(tmp_path)
    history.append(store, [_record(1, read_rows=7)], HistorySettings(), NOW)
    (row,) = history.read(store, None)
    assert (row.read_rows, row.read_bytes, row.read_tables) == (7, 70, ("db.t",))
    with sqlite3.connect(tmp_path / "catalog.history.db") as own:
        assert own.execute("SELECT count(*) FROM query_history").fetchone() == (1,)
        assert own.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    with sqlite3.connect(tmp_path / "catalog.db") as catalog:
        assert catalog.execute("SELECT count(*) FROM query_history").fetchone() == (0,)
    store.close()


def test_a_history_write_does_not_wait_for_the_catalogs_lock(tmp_path: Path) -> None:
    """Another process holding the catalog's write lock (a long catalog transaction) does not hold up the history:
    in the catalog's own file this append would wait for the lock (30 s, then fail)."""
    store = CatalogStore.for_warehouse(tmp_path)
    history.count(store)   # the history's file opened (and rows of an older catalog moved) before the lock is held
    holder = sqlite3.connect(tmp_path / "catalog.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        history.append(store, [_record(1), _record(2)], HistorySettings(), NOW)
        assert history.count(store) == 2
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.close()


def test_the_history_commits_without_waiting_for_the_disk(tmp_path: Path) -> None:
    store = CatalogStore.for_warehouse(tmp_path)
    with store.history_db.transaction() as session:
        assert session.execute(text("PRAGMA synchronous")).scalar() == 1   # NORMAL
    store.close()


def test_rows_an_older_version_kept_in_the_catalog_are_moved_once(tmp_path: Path) -> None:
    store = CatalogStore.for_warehouse(tmp_path)
    store.close()
    engine = create_engine(f"sqlite:///{tmp_path / 'catalog.db'}")
    with engine.begin() as conn:   # as version 6 wrote them: into the catalog's file
        for n in (1, 2, 3):
            conn.execute(text(
                "INSERT INTO query_history (statement_id, executed_by, source, statement_type, execution_status, "
                "start_time, read_tables, written_tables, statement_text) VALUES "
                f"('{n:032x}', 'bob', 'CLIENT', 'SELECT', 'FINISHED', '2026-11-27 10:00:0{n}', '[]', '[]', "
                f"'SELECT {n}')"))
    reopened = CatalogStore.for_warehouse(tmp_path)
    assert [r.statement_text for r in history.read(reopened, "bob")] == ["SELECT 3", "SELECT 2", "SELECT 1"]
    reopened.close()
    with engine.begin() as conn:
        assert conn.execute(text("SELECT count(*) FROM query_history")).scalar() == 0
    engine.dispose()
    again = CatalogStore.for_warehouse(tmp_path)
    assert history.count(again) == 3
    again.close()


def test_an_in_memory_catalog_keeps_its_history_in_itself() -> None:
    store = CatalogStore("sqlite://")
    assert store.history_db.url is None
    history.append(store, [_record(1)], HistorySettings(), NOW)
    assert history.count(store) == 1
    store.close()


def test_version_7_gives_an_older_history_table_its_read_columns(tmp_path: Path) -> None:
    store = CatalogStore.for_warehouse(tmp_path)
    store.close()
    engine = create_engine(f"sqlite:///{tmp_path / 'catalog.db'}")
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE query_history DROP COLUMN read_rows"))
        conn.execute(text("ALTER TABLE query_history DROP COLUMN read_bytes"))
        conn.execute(text("DELETE FROM schema_version WHERE version >= 7"))
    with engine.begin() as conn:
        assert 7 in migrate(conn)
        assert {"read_rows", "read_bytes"} <= {c["name"] for c in inspect(conn).get_columns("query_history")}
    engine.dispose()


def test_version_8_gives_an_older_history_its_result_cache_column_which_keeps_each_flag(tmp_path: Path) -> None:
    store = CatalogStore.for_warehouse(tmp_path)
    history.append(store, [_record(0)], HistorySettings(), NOW)   # the history's own file made
    store.close()
    engine = create_engine(f"sqlite:///{tmp_path / 'catalog.db'}")
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE query_history DROP COLUMN from_result_cache"))
        conn.execute(text("DELETE FROM schema_version WHERE version >= 8"))
    with engine.begin() as conn:
        assert migrate(conn)[0] == 8
        assert "from_result_cache" in {c["name"] for c in inspect(conn).get_columns("query_history")}
    engine.dispose()
    with sqlite3.connect(tmp_path / "catalog.history.db") as own:   # as a version before the column made it
        own.execute("ALTER TABLE query_history DROP COLUMN from_result_cache")
    store = CatalogStore.for_warehouse(tmp_path)   # opening the history file adds it again
    flags = ((1, True), (2, False), (3, None))
    records = [dataclasses.replace(_record(n), from_result_cache=flag) for n, flag in flags]
    history.append(store, records, HistorySettings(), NOW)
    assert [row.from_result_cache for row in history.read(store, None)] == [None, False, True, None]   # newest first
    store.close()
