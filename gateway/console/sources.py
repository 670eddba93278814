"""What the console reads about statements, behind two small Protocols, so that the pages do not depend on how the
query history and the live-query registry are built: `HistorySource` (the recorded statements: `CatalogHistory`, or
`NoHistory` when `[history]` is off, whose page says so instead of showing none) and `LiveQueries` (what runs now,
and cancel: `OperationLiveQueries` over the operation registry).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from sluicegate.catalog import history
from sluicegate.gateway.errors import GatewayError
from sluicegate.gateway.runtime import redacted

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore
    from sluicegate.gateway.session import SessionManager

ACTIVE_STATES = ("INITIALIZED", "PENDING", "RUNNING")


class QueryNotFoundError(GatewayError):
    """No running query has that id (it ended, or never existed): the same answer whoever asks."""

    error_class = "QUERY_NOT_FOUND"
    sqlstate = "42704"


class CancelNotAllowedError(GatewayError):
    error_class = "CANCEL_NOT_ALLOWED"
    sqlstate = "42501"


@dataclass(frozen=True)
class LiveQuery:
    query_id: str          # the operation's id (hex): what cancel takes
    user: str
    client: str
    state: str             # INITIALIZED, PENDING or RUNNING
    started: float         # epoch seconds
    statement: str

    def elapsed(self, now: float | None = None) -> float:
        return max(0.0, (time.time() if now is None else now) - self.started)


class LiveQueries(Protocol):
    def list(self, user: str, is_admin: bool) -> list[LiveQuery]:
        """The running queries `user` may see: their own, an admin's every one."""

    def cancel(self, query_id: str, by_user: str, message: str) -> None:
        """Cancel the query for `by_user` (its owner or an admin); QueryNotFoundError, CancelNotAllowedError."""


@dataclass(frozen=True)
class HistoryFilter:
    user: str = ""         # exact user name; "" any
    status: str = ""       # FINISHED, FAILED, CANCELED, ...; "" any
    text: str = ""         # a substring of the statement text; "" any
    limit: int = 200


@dataclass(frozen=True)
class HistoryRow:
    statement_id: str
    session_id: str
    executed_by: str
    client: str
    statement_type: str
    status: str
    error_class: str | None
    start_time: dt.datetime
    end_time: dt.datetime | None
    duration_ms: int | None
    rows: int | None
    statement_text: str


class HistorySource(Protocol):
    @property
    def recorded(self) -> bool:
        """Whether this build records statements at all (False: the page says so instead of showing none)."""

    def query(self, viewer: str, is_admin: bool, filters: HistoryFilter) -> list[HistoryRow]:
        """The newest statements `viewer` may see (their own; an admin's all) matching `filters`, newest first."""


class NoHistory:
    """This build records no query history: the history page says so."""

    @property
    def recorded(self) -> bool:
        return False

    def query(self, viewer: str, is_admin: bool, filters: HistoryFilter) -> list[HistoryRow]:
        return []


class OperationLiveQueries:
    """The running statements of the gateway's sessions (the operation registry), until `system.runtime.queries`
    exists; cancel is the operation's own (its Spark job group is cancelled, its client gets OPERATION_CANCELED)."""

    def __init__(self, sessions: SessionManager, is_admin: Callable[[str], bool],
                 kill: Callable[[str, str, str], bool] | None = None) -> None:
        """`kill(query_id, by_user, message)`: how a cancel ends the statement (the gateway's `kill_query`, whose
        client error names who cancelled it and why); without it, a plain cancel."""
        self._sessions = sessions
        self._is_admin = is_admin
        self._kill = kill

    def list(self, user: str, is_admin: bool) -> list[LiveQuery]:
        found = []
        for session in self._sessions.list():
            if not is_admin and session.user != user:
                continue
            for operation in session.operations():
                if operation.statement is None or operation.state.value not in ACTIVE_STATES:
                    continue
                found.append(LiveQuery(operation.handle.hex, session.user, session.client, operation.state.value,
                                       operation.started, redacted(operation.statement)))
        return sorted(found, key=lambda q: q.started)

    def cancel(self, query_id: str, by_user: str, message: str) -> None:
        for session in self._sessions.list():
            for operation in session.operations():
                if operation.handle.hex != query_id or operation.state.value not in ACTIVE_STATES:
                    continue
                if session.user != by_user and not self._is_admin(by_user):
                    # the same answer as for an id that does not exist: another user's query ids are not disclosed
                    raise QueryNotFoundError(f"no running query {query_id} of yours")
                if self._kill is not None:
                    self._kill(query_id, by_user, message or "cancelled from the web console")
                    return
                operation.log.add(f"Cancelled from the console by {by_user}" + (f": {message}" if message else ""))
                operation.cancel()
                return
        raise QueryNotFoundError(f"no running query {query_id}" + ("" if self._is_admin(by_user) else " of yours"))


class CatalogHistory:
    """The query history the gateway records in its catalog (catalog/history.py, `system.query.history`)."""

    def __init__(self, store: CatalogStore, enabled: bool) -> None:
        self._store = store
        self._enabled = enabled

    @property
    def recorded(self) -> bool:
        return self._enabled

    def query(self, viewer: str, is_admin: bool, filters: HistoryFilter) -> list[HistoryRow]:
        user = (filters.user or None) if is_admin else viewer
        records = history.read(self._store, user, filters.limit, status=filters.status or None,
                               text=filters.text or None)
        return [HistoryRow(r.statement_id, r.session_id or "", r.executed_by,
                           r.client_application or r.client_address or "", r.statement_type, r.execution_status,
                           r.error_class, r.start_time, r.end_time, r.total_duration_ms,
                           r.produced_rows if r.produced_rows is not None else r.modified_rows,
                           r.statement_text or "")
                for r in records]
