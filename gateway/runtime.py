"""The gateway's live sessions and statements as the executor's `RuntimeView` (executor/listings/runtime_tables.py):
what `system.runtime.sessions` and `system.runtime.queries` list, and how `kill_query` cancels a statement.

Everything is read when a statement asks, from the session manager's sessions and the operations each tracks; the
progress of a running statement comes from Spark's status tracker by its job group (engine/progress.py). Nothing
is kept here between reads.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from sluicegate.dialect.redaction import redact_statement
from sluicegate.dialect.statement_types import statement_facts
from sluicegate.engine.progress import NONE, Progress, job_group_progress
from sluicegate.executor.listings.runtime_view import QueryRow, SessionRow
from sluicegate.gateway.errors import OperationCanceledError
from sluicegate.gateway.operation.base import Operation, OperationType
from sluicegate.gateway.operation.state import OperationState
from sluicegate.gateway.thrift import protocol as versions

if TYPE_CHECKING:
    from sluicegate.gateway.session import Session, SessionManager

TEXT_LIMIT = 1000  # characters of a statement's text shown
_MEASURED = (OperationState.RUNNING, OperationState.FINISHED)  # a result is computed as it is fetched


def redacted(text: str) -> str:
    """The statement as the query history stores it by default (dialect/redaction.py: literals as `?`, secrets
    masked), cut to TEXT_LIMIT characters."""
    shown = redact_statement(text)
    return shown if len(shown) <= TEXT_LIMIT else shown[:TEXT_LIMIT] + " ..."


def statement_type(text: str) -> str:
    """The statement's type as the query history names it (dialect/statement_types.py): SELECT, CREATE_TABLE."""
    return statement_facts(text).statement_type


def _utc(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, tz=dt.timezone.utc)


def _monotonic_to_wall(moment: float) -> float:
    return time.time() - (time.monotonic() - moment)


class GatewayRuntime:
    """Implements executor.listings.runtime_tables.RuntimeView over a gateway's sessions."""

    def __init__(self, sessions: SessionManager) -> None:
        self._sessions = sessions

    def _statements(self) -> Iterator[tuple[Session, Operation]]:
        for session in self._sessions.list():
            for operation in session.operations():
                statement = operation.op_type is OperationType.EXECUTE_STATEMENT
                if statement and operation.state is not OperationState.CLOSED:
                    yield session, operation

    def sessions(self, user: str | None) -> list[SessionRow]:
        rows = []
        for session in self._sessions.list():
            if user is not None and session.user != user:
                continue
            operations = session.operations()
            family = "databricks" if versions.is_spark(session.protocol) else "hive"
            rows.append(SessionRow(
                session.handle.hex, session.user, session.client, session.client_application or family,
                versions.name(session.protocol),
                _utc(session.created), _utc(_monotonic_to_wall(session.last_access)),
                "ACTIVE" if session.busy() else "IDLE", len(operations)))
        return sorted(rows, key=lambda row: row.created)

    def queries(self, user: str | None) -> list[QueryRow]:
        rows = []
        now = time.time()
        for session, operation in self._statements():
            if user is not None and session.user != user:
                continue
            state = operation.state
            progress = self.progress(operation) if state in _MEASURED else NONE
            ended = operation.completed
            rows.append(QueryRow(
                operation.handle.hex, session.handle.hex, session.user, session.client, state.value,
                statement_type(operation.statement or ""), redacted(operation.statement or ""),
                _utc(operation.started), int(((ended or now) - operation.started) * 1000), progress.job_ids,
                progress.stages_done, progress.stages_total, progress.tasks_done, progress.tasks_total,
                progress.fraction if progress.stages else None, operation.rows_fetched))
        return sorted(rows, key=lambda row: row.started)

    def _find(self, query_id: str) -> tuple[Session, Operation] | None:
        """The open statement `query_id` names: 32 hex digits, or the same as a UUID with dashes (the Databricks
        connector's `cursor.query_id`)."""
        wanted = query_id.strip().lower().replace("-", "")
        return next(((s, op) for s, op in self._statements() if op.handle.hex == wanted), None)

    def owner_of(self, query_id: str) -> str | None:
        found = self._find(query_id)
        return found[0].user if found is not None else None

    def kill(self, query_id: str, killed_by: str, message: str | None) -> bool:
        found = self._find(query_id)
        if found is None:
            return False
        reason = f": {message}" if message else ""
        error = OperationCanceledError(f"the statement was killed by {killed_by}{reason}",
                                       hint=f"ask {killed_by} why, then run it again if it should run")
        return found[1].kill(error)

    @staticmethod
    def progress(operation: Operation) -> Progress:
        """The Spark progress of `operation` (its job group is its handle's hex)."""
        return job_group_progress(operation.session.spark.sparkContext, operation.handle.hex)
