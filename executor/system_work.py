"""What the gateway hands down to record its own work in the query history (user `system`): the materialized views it
refreshes on their schedules, when their inputs change, and in the background for REFRESH ... ASYNC. The gateway's
history recorder implements it (gateway/history.py `HistoryRecorder.record_system`); without one nothing is
recorded. A module of its own so that the StatementContext and the view scheduler can name it without importing
what uses them."""

from __future__ import annotations

from typing import Protocol

SCHEDULED_REFRESH = "SCHEDULED_REFRESH"   # SCHEDULE EVERY / CRON came due
TRIGGERED_REFRESH = "TRIGGERED_REFRESH"   # TRIGGER ON UPDATE: an input has a new version
ASYNC_REFRESH = "ASYNC_REFRESH"           # the background pass of a REFRESH ... ASYNC


class SystemWork(Protocol):
    def record_system(self, source: str, statement_type: str, text: str | None, started: float, ended: float,
                      error: BaseException | None = None, written: tuple[str, ...] = (),
                      read: tuple[str, ...] = ()) -> None:
        """One piece of the gateway's own work, from `started` to `ended` (epoch seconds), as a statement of user
        `system` whose `source` says which kind; `error` when it failed."""
