"""What the gateway hands down of its live sessions and statements (it implements `RuntimeView` in
gateway/runtime.py): the rows of `system.runtime.sessions` and `system.runtime.queries` and the kill of one
statement (executor/listings/runtime_tables.py reads them). A module of its own so that the StatementContext can
name the protocol without importing what uses the context."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class SessionRow:
    """One open client session."""

    session_id: str
    user: str
    client_address: str
    client_application: str | None
    protocol: str                 # the HiveServer2 (or Spark) protocol version the session speaks
    created: dt.datetime
    last_access: dt.datetime
    state: str                    # ACTIVE: a statement of it runs; IDLE
    operations: int               # operations open in it (running or with a result still to fetch)


@dataclass(frozen=True)
class QueryRow:
    """One statement (ExecuteStatement operation) that is open: running, or ended with its result not yet closed."""

    query_id: str                 # the operation handle's hex: kill_query's argument, Spark's job group
    session_id: str
    user: str
    client_address: str
    state: str                    # PENDING, RUNNING, FINISHED, ERROR, CANCELED, TIMEDOUT
    statement_type: str
    statement_text: str           # string literals redacted, cut short
    started: dt.datetime
    elapsed_ms: int
    spark_job_ids: tuple[int, ...] = ()
    stages_done: int = 0
    stages_total: int = 0
    tasks_done: int = 0
    tasks_total: int = 0
    progress: float | None = None  # tasks done of the tasks known, 0.0 to 1.0; None before any job
    rows_fetched: int = 0          # rows the client has fetched so far


class RuntimeView(Protocol):
    """What the gateway shows of its live sessions and statements, and how one is killed."""

    def sessions(self, user: str | None) -> Sequence[SessionRow]:
        """The open sessions of `user` (None: everyone's)."""

    def queries(self, user: str | None) -> Sequence[QueryRow]:
        """The open statements of `user` (None: everyone's), with the progress of those running."""

    def owner_of(self, query_id: str) -> str | None:
        """The user who runs the statement `query_id`, or None when no open statement has that id."""

    def kill(self, query_id: str, killed_by: str, message: str | None) -> bool:
        """Cancel the statement, its client told who killed it and why; False when it had already ended."""
