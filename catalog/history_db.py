"""Where the query history is kept: in a SQLite file of its own next to a SQLite catalog (`catalog.db` ->
`catalog.history.db`), in the catalog's own database otherwise (a server URL: several gateways share one history, as
they share the catalog; an in-memory catalog).

Why a file of its own: every catalog transaction opens with BEGIN IMMEDIATE (catalog/sqlite_engine.py), so a history
batch written into the catalog's file held the lock that every statement's catalog reads and writes wait for, and
its commit waited for the disk. In its own file the history's writes never hold the catalog's lock, and its commits
use `synchronous=NORMAL` (a crash of the process loses nothing; a power loss may lose the last batch recorded).

The table has the same shape wherever it lives (catalog/models.py `QueryHistoryRow`); `ensure_table` creates it and
adds the columns later versions gave it (catalog migration 7 does the same in a catalog database). Rows an earlier
version wrote into the catalog's file are moved here once, when the history file is first opened.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Table, delete, insert, inspect, select, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from sluicegate.catalog.errors import CatalogConflictError
from sluicegate.catalog.models import Base, QueryHistoryRow
from sluicegate.catalog.sqlite_engine import one_transaction, open_engine

log = logging.getLogger(__name__)

# columns added to `query_history` after it first shipped (catalog version 6), with their SQL types
ADDED_COLUMNS: tuple[tuple[str, str], ...] = (("read_rows", "BIGINT"), ("read_bytes", "BIGINT"),
                                              ("from_result_cache", "BOOLEAN"))
_MOVE_BATCH = 5000


def history_url(catalog_url: str) -> str | None:
    """The URL of the history's own SQLite file for a catalog at `catalog_url`, or None when the history shares the
    catalog's database (a server URL, or SQLite in memory)."""
    url = make_url(catalog_url)
    database = url.database or ""
    if not url.drivername.startswith("sqlite") or database in ("", ":memory:") or database.startswith("file:"):
        return None
    path = Path(database)
    return str(url.set(database=str(path.with_name(f"{path.stem}.history{path.suffix}"))))


def _table() -> Table:
    return Base.metadata.tables[QueryHistoryRow.__tablename__]


def ensure_table(conn: Connection) -> None:
    """The `query_history` table with every column of this version (created, or the missing columns added)."""
    table = _table()
    if not inspect(conn).has_table(table.name):
        table.create(conn)
        return
    present = {column["name"] for column in inspect(conn).get_columns(table.name)}
    for column, kind in ADDED_COLUMNS:
        if column not in present:
            conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {column} {kind}"))


class HistoryDatabase:
    """The history's database: its engine and transactions."""

    def __init__(self, catalog_url: str, catalog_engine: Engine) -> None:
        self.url = history_url(catalog_url)
        self._owned = self.url is not None
        self._engine = open_engine(self.url, synchronous="NORMAL") if self.url is not None else catalog_engine
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)
        if self._owned:
            with self._engine.begin() as conn:
                ensure_table(conn)
            _move_rows(catalog_engine, self._engine)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One session in one transaction, committed on leaving (as CatalogStore.transaction)."""
        with one_transaction(self._sessions, "the query history") as session:
            yield session

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """One Core connection in one transaction, committed on leaving: the writer's batches (no ORM session)."""
        try:
            with self._engine.begin() as conn:
                yield conn
        except OperationalError as exc:
            raise CatalogConflictError(f"the query history is busy or locked: {exc.orig}",
                                       hint="run the statement again") from exc

    def close(self) -> None:
        if self._owned:
            self._engine.dispose()


def _move_rows(catalog: Engine, history: Engine) -> None:
    """Rows an earlier version recorded in the catalog's own `query_history` table, moved into the history's file in
    their order, in one transaction of each, when the history's file holds none yet (under the catalog's lock: two
    gateways opening one warehouse move them once; a move cut short between the two commits is not done twice)."""
    table = _table()
    with catalog.begin() as source:
        if not inspect(source).has_table(table.name):
            return
        present = {column["name"] for column in inspect(source).get_columns(table.name)}
        columns = [column for column in table.columns if column.name != "id" and column.name in present]
        with history.begin() as target:
            if target.execute(select(table.c.id).limit(1)).first() is not None:
                return
            moved, last = 0, 0
            while True:
                rows = source.execute(select(table.c.id, *columns).where(table.c.id > last).order_by(table.c.id)
                                      .limit(_MOVE_BATCH)).all()
                if not rows:
                    break
                target.execute(insert(table), [dict(zip([c.name for c in columns], row[1:], strict=True))
                                               for row in rows])
                last, moved = rows[-1][0], moved + len(rows)
        if moved:
            source.execute(delete(table))
            log.info("moved %d statements of the query history from the catalog into %s", moved,
                     history.url.database)


class LazyHistoryDatabase:
    """The history's database opened on first use (a catalog that never records or reads a statement opens no
    second file), once even when several threads ask at the same time."""

    def __init__(self, catalog_url: str, catalog_engine: Engine) -> None:
        self._catalog_url = catalog_url
        self._catalog_engine = catalog_engine
        self._lock = threading.Lock()
        self._opened: HistoryDatabase | None = None

    def get(self) -> HistoryDatabase:
        with self._lock:
            if self._opened is None:
                self._opened = HistoryDatabase(self._catalog_url, self._catalog_engine)
            return self._opened

    def close(self) -> None:
        with self._lock:
            if self._opened is not None:
                self._opened.close()
                self._opened = None
