"""The catalog's version: a counter raised in the same transaction as every write of a database, table or grant row,
and the reads it lets the gateway serve from memory.

Every statement resolves its names and checks its rights against the catalog (a table's row, its schema's, the
grants), and each such read was a transaction of its own: on SQLite a `BEGIN IMMEDIATE`, the database's one write
lock, queued behind every writer. Those rows change rarely, so they are kept in memory with the counter's value they
were read at, and served while the counter still has that value: one plain read of one row, with no lock taken. A
write raises the counter before it commits (a session event, whichever store method wrote and however: a flushed
object or a bulk UPDATE / DELETE), so the next read anywhere, in this gateway or another one sharing the database,
reads the rows again. A read that starts just before another gateway's commit sees the rows as they were, as a
transaction begun then would.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from sqlalchemy import event, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import ORMExecuteState, Session, sessionmaker

from sluicegate.catalog.models import CatalogVersion, DatabaseRow, FunctionRow, GrantRow, TableRow

# The rows whose reads are kept: a write to any of them raises the version.
VERSIONED_ROWS: tuple[type[Any], ...] = (DatabaseRow, TableRow, GrantRow, FunctionRow)
_CHANGED = "sluicegate.catalog_changed"   # session.info flag: this transaction wrote a versioned row
KEPT_READS = 4096                          # answers kept (each a table's, a schema's or one user's grants on one)

T = TypeVar("T")


def track_changes(sessions: sessionmaker[Session]) -> None:
    """Raise the catalog's version in every transaction of `sessions` that writes a versioned row, before it
    commits: the counter and the rows change together or not at all."""

    @event.listens_for(sessions, "before_flush")
    def _flushed(session: Session, _context: Any, _instances: Any) -> None:
        if any(isinstance(row, VERSIONED_ROWS) for row in (*session.new, *session.dirty, *session.deleted)):
            session.info[_CHANGED] = True

    @event.listens_for(sessions, "do_orm_execute")
    def _executed(state: ORMExecuteState) -> None:
        if state.is_insert or state.is_update or state.is_delete:
            mapper = state.bind_mapper
            if mapper is None or issubclass(mapper.class_, VERSIONED_ROWS):   # unknown target: count it
                state.session.info[_CHANGED] = True

    @event.listens_for(sessions, "before_commit")
    def _committing(session: Session) -> None:
        session.flush()   # a pending object's flush may be what marks the transaction
        if session.info.pop(_CHANGED, False):
            session.execute(update(CatalogVersion).values(version=CatalogVersion.version + 1))
            session.info.pop(_CHANGED, None)   # the counter's own UPDATE marked it again

    @event.listens_for(sessions, "after_rollback")
    def _rolled_back(session: Session) -> None:
        session.info.pop(_CHANGED, None)


def read_version(engine: Engine) -> int:
    """The catalog's version now: one read of one row outside any transaction the engine would open (on SQLite no
    `BEGIN IMMEDIATE`, so no wait for the write lock)."""
    connection = engine.raw_connection()
    try:
        cursor = connection.cursor()
        try:
            cursor.execute("SELECT version FROM catalog_version")
            found = cursor.fetchone()
        finally:
            cursor.close()
        connection.rollback()   # a server database opened a transaction for the read; end it (SQLite: none)
    finally:
        connection.close()
    return int(found[0]) if found else -1


class VersionedReads:
    """Answers read from the catalog, each kept with the version it was read at and given again while the version is
    the same (the last KEPT_READS kept)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._kept: OrderedDict[Hashable, tuple[int, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, read: Callable[[Session], T], transaction: Callable[[], Any]) -> T:
        """`read(session)`'s answer for `key`: kept if the catalog's version has not moved since it was read, else
        read anew, with the version, in one transaction of `transaction()`."""
        now = read_version(self._engine)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[0] == now:
                self._kept.move_to_end(key)
                return kept[1]
        with transaction() as session:
            version = session.scalars(select(CatalogVersion.version)).one_or_none()
            answer = read(session)
        if version is not None:
            with self._lock:
                self._kept[key] = (version, answer)
                self._kept.move_to_end(key)
                while len(self._kept) > KEPT_READS:
                    self._kept.popitem(last=False)
        return answer
