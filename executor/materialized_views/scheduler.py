"""Refreshing materialized views on their schedules: `SCHEDULE EVERY` / `SCHEDULE CRON` when `next_run_at` has come,
`TRIGGER ON UPDATE` when a table the view reflects has a new Delta version (at most once per AT MOST EVERY).

When a pass is due is the stream supervisor's pure policy (`engine/streams/lifecycle.py`: `pass_due`, `next_pass_at`)
over the same `Schedule` value and its cron evaluator; what a pass does is `mv_refresh.refresh` with the view owner's
rights. It is a small loop of its own rather than a part of the supervisor: a view's pass runs no Spark stream (no
query to start, stop or watch), and a recompute that takes minutes must not hold up the supervisor's thread, which
answers every stream's commands. The gateway that owns the stream manager runs one; tests call `tick` with a clock.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sluicegate.catalog.clock import utc_now
from sluicegate.catalog.store import TableEntry
from sluicegate.dialect.schedule import Schedule
from sluicegate.engine.streams import lifecycle
from sluicegate.executor.context import StatementContext
from sluicegate.executor.materialized_views import refresh as mv_refresh
from sluicegate.executor.materialized_views.background import as_owner, recorded_refresh
from sluicegate.executor.system_work import SCHEDULED_REFRESH, TRIGGERED_REFRESH
from sluicegate.storage.delta.tables import open_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.catalog.store import CatalogStore, StreamEntry
    from sluicegate.executor.system_work import SystemWork
    from sluicegate.policy import Policy

log = logging.getLogger(__name__)

Key = tuple[str, str]
FAILED_RETRY_SECONDS = 60.0    # a view whose last refresh failed waits this long before its inputs trigger another


def plan_next_run(store: CatalogStore, database: str, name: str, now: dt.datetime | None = None) -> None:
    """Write when the view's next scheduled refresh is due (None: no schedule, or TRIGGER ON UPDATE): after CREATE,
    ALTER ... SCHEDULE and each scheduled refresh."""
    entry = store.get_table(database, name)
    if entry is None or store.get_stream(database, name) is None:
        return
    schedule = Schedule.from_json(entry.schedule)
    next_run = lifecycle.next_pass_at(schedule, now or utc_now()) if schedule is not None else None
    store.update_stream(database, name, next_run_at=next_run)


def inputs_changed(store: CatalogStore, state: mv_refresh.MaterializedViewState) -> bool:
    """Whether a table the view reflects has another Delta version now (or is gone)."""
    for qualified, version in state.input_versions.items():
        database, _, name = qualified.partition(".")
        entry = store.get_table(database, name)
        if entry is None or not entry.location or open_table(entry.location).version() != version:
            return True
    return False


def due(schedule: Schedule, row: StreamEntry, changed: Callable[[], bool], now: dt.datetime,
        last_pass: dt.datetime | None = None) -> bool:
    """Whether the view's scheduled refresh should run now; `last_pass`: when this scheduler last refreshed it (by
    its clock), else the row's last refresh."""
    last = last_pass or row.last_refresh_at
    if row.last_refresh_status == mv_refresh.FAILED and last is not None \
            and (now - last).total_seconds() < FAILED_RETRY_SECONDS:
        return False
    if row.last_refresh_status == mv_refresh.RUNNING:
        return False
    if schedule.kind == "on_update":
        return lifecycle.pass_due(schedule, None, now, changed(), last)
    return lifecycle.pass_due(schedule, row.next_run_at, now, False, last)


def recover_interrupted(store: CatalogStore) -> list[Key]:
    """At start, views whose refresh the last process left RUNNING (it stopped within it) are marked FAILED with
    that reason, so the schedule takes them up again; the previous result stayed (a refresh is one commit, and a
    commit the catalog did not record is found by the next refresh, which then recomputes)."""
    interrupted = []
    for row in store.list_streams(desired_state=mv_refresh.MATERIALIZED_VIEW_STATE):
        if row.last_refresh_status == mv_refresh.RUNNING:
            message = "[REFRESH_INTERRUPTED] the gateway stopped during this refresh; the previous result stays"
            store.update_stream(row.database, row.name, status=mv_refresh.FAILED,
                                last_refresh_status=mv_refresh.FAILED, last_error=message)
            store.record_event(row.database, row.name, "FAILED", message, error=message)
            interrupted.append((row.database, row.name))
    return interrupted


class MaterializedViewScheduler:
    def __init__(self, spark: SparkSession, store: CatalogStore, warehouse: Path, policy: Policy,
                 tick_seconds: float = 1.0, clock: Callable[[], dt.datetime] = utc_now,
                 input_check_seconds: float = 0.0) -> None:
        """`input_check_seconds`: how often TRIGGER ON UPDATE views look at their inputs' Delta versions (as the
        supervisor's `streams.static_check_interval`; 0: at every tick)."""
        self.spark = spark
        self.store = store
        self.warehouse = warehouse
        self.policy = policy
        self.tick_seconds = tick_seconds
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_pass: dict[Key, dt.datetime] = {}
        self.input_check_seconds = input_check_seconds
        self._next_input_check: dt.datetime | None = None
        self.system_work: SystemWork | None = None   # the query history's recorder, set by the gateway that has one

    def start(self) -> MaterializedViewScheduler:
        recover_interrupted(self.store)
        self._thread = threading.Thread(target=self._run, name="sluicegate-mv-scheduler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def _run(self) -> None:
        while not self._stop.wait(self.tick_seconds):
            try:
                self.tick()
            except Exception:
                log.exception("materialized view scheduler: the tick failed")

    def tick(self) -> list[Key]:
        """Refresh every view whose scheduled refresh is due; returns them (their errors are in their rows)."""
        now = self.clock()
        check_inputs = self._next_input_check is None or now >= self._next_input_check
        if check_inputs:
            self._next_input_check = now + dt.timedelta(seconds=self.input_check_seconds)
        refreshed = []
        for entry in self.store.list_tables(kinds=("MATERIALIZED_VIEW",)):
            if self._stop.is_set():
                break
            schedule = Schedule.from_json(entry.schedule)
            row = self.store.get_stream(entry.database, entry.name)
            if schedule is None or row is None:
                continue
            state = mv_refresh.MaterializedViewState.from_json(row.plan_json)
            if schedule.kind != "on_update" and row.next_run_at is None:
                plan_next_run(self.store, entry.database, entry.name, now)
                continue
            key = (entry.database, entry.name)
            if schedule.kind == "on_update" and not check_inputs:
                continue
            if due(schedule, row, lambda s=state: inputs_changed(self.store, s), now, self._last_pass.get(key)) \
                    and self._refresh(entry, schedule, now):
                self._last_pass[key] = now
                refreshed.append(key)
        return refreshed

    def _refresh(self, entry: TableEntry, schedule: Schedule, now: dt.datetime) -> bool:
        """One refresh as the view's owner, in a session of its own; the next run planned whatever the outcome.
        A TRIGGER ON UPDATE pass looks at the inputs again once it holds the view's refresh lock: a statement's
        refresh (a dbt run's REFRESH or CREATE OR REPLACE) may have caught the view up while this pass waited, and
        then there is nothing to do, and no no-op pass is recorded over that refresh. False: it did not run."""
        ctx = as_owner(StatementContext(spark=self.spark, store=self.store, warehouse=self.warehouse, user="",
                                        sql="", job_group="", policy=self.policy), entry, detached=True)
        triggered = schedule.kind == "on_update"
        cause = "INPUT_CHANGED" if triggered else "SCHEDULED"
        source = TRIGGERED_REFRESH if triggered else SCHEDULED_REFRESH
        try:
            with mv_refresh.refresh_lock(entry.database, entry.name):
                current = self.store.get_table(entry.database, entry.name)
                if current is None:
                    return False                     # dropped while this pass waited
                _, state = mv_refresh.state_of(ctx, current)
                if triggered and not inputs_changed(self.store, state):
                    return False
                recorded_refresh(self.system_work, source, current,
                                 lambda: mv_refresh.refresh_unlocked(ctx, current, cause=cause))
        except Exception as exc:  # noqa: BLE001 - recorded in the view's row and event log by refresh_unlocked()
            log.warning("scheduled refresh of %s.%s failed: %s", entry.database, entry.name, exc)
        finally:
            plan_next_run(self.store, entry.database, entry.name, now)
        return True
