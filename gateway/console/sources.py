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
from sluicegate.executor.listings.runtime_tables import kill_statement
from sluicegate.gateway.runtime import GatewayRuntime, redacted

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore
    from sluicegate.executor.listings.runtime_view import RuntimeView
    from sluicegate.gateway.session import SessionManager

ACTIVE_STATES = ("INITIALIZED", "PENDING", "RUNNING")


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
        """End the query for `by_user` (its owner or an admin), or raise the SqlError that says why not."""


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
    """The running statements of the gateway's sessions (the operation registry); cancel is SQL's `kill_query`
    (executor/listings/runtime_tables.py `kill_statement`: one rule of who may, one error for each refusal), and
    the cancelled client's error names who cancelled it and why."""

    def __init__(self, sessions: SessionManager, is_admin: Callable[[str], bool],
                 runtime: RuntimeView | None = None) -> None:
        """`runtime`: the gateway's RuntimeView (service.runtime); without it, one over `sessions`."""
        self._sessions = sessions
        self._is_admin = is_admin
        self._runtime: RuntimeView = runtime if runtime is not None else GatewayRuntime(sessions)

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
        kill_statement(self._runtime, query_id, by_user, self._is_admin(by_user),
                       message or "cancelled from the web console")


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
