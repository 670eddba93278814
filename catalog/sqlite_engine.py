"""How the catalog opens a database: a server URL as it is; a SQLite file in WAL mode with a busy timeout, every
transaction opened with BEGIN IMMEDIATE (writers queue on SQLite's lock, waiting up to the timeout, instead of
failing with "database is locked" when a read would have to upgrade to a write), and foreign keys enforced.

One place for the catalog's file (catalog/store.py) and the query history's own file next to it
(catalog/history_db.py), which asks for `synchronous=NORMAL`: in WAL mode a commit then writes the log without
waiting for the disk, and only a power loss (not a crash of the process) can lose the last statements recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from sluicegate.catalog.errors import CatalogConflictError

SQLITE_BUSY_TIMEOUT_MS = 30_000


def open_engine(url: str, *, synchronous: str | None = None) -> Engine:
    """An engine for `url`; `synchronous`: SQLite's PRAGMA synchronous for a file (None: SQLite's default, FULL)."""
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True)
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy's begin event below decides how a transaction opens
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        if synchronous is not None:
            cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")  # take the write lock up front: no upgrade deadlocks

    return engine


@contextmanager
def one_transaction(sessions: sessionmaker[Session], what: str) -> Iterator[Session]:
    """One session of `sessions` in one transaction: committed on leaving, rolled back on an error; a busy or locked
    database raised as CatalogConflictError naming `what` ("the catalog", "the query history")."""
    session = sessions()
    try:
        with session.begin():
            yield session
    except OperationalError as exc:
        raise CatalogConflictError(f"{what} is busy or locked: {exc.orig}", hint="run the statement again") from exc
    finally:
        session.close()
