"""Refreshes of materialized views that run outside the statement asking for them: as the view's owner, and, for
`REFRESH MATERIALIZED VIEW mv ASYNC`, in the background.

A view is refreshed with its owner's rights whoever asks (the owner, a user granted REFRESH, an admin, the scheduler),
as a view's query runs: `as_owner` gives the refresh a Spark session of the owner's. An ASYNC refresh returns at once
and runs on a worker thread of its view; a view has at most one such worker, and requests that come while it runs
are merged into one more pass after it (that pass reads the inputs as they are then, so nothing asked is lost, and
FULL is kept if any of them asked for it). `mv_refresh.refresh` takes the view's lock, so a background refresh and a
statement's or the scheduler's never overlap; its outcome or error lands in the view's row (DESCRIBE, SHOW
MATERIALIZED VIEWS) and its event log exactly as a synchronous refresh's does.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from sluicegate.engine.sessions import new_user_session, set_current_user
from sluicegate.executor.binding.session_views import SessionViews
from sluicegate.executor.materialized_views import refresh as mv_refresh
from sluicegate.executor.system_work import ASYNC_REFRESH

if TYPE_CHECKING:
    from sluicegate.catalog.store import TableEntry
    from sluicegate.executor.context import StatementContext
    from sluicegate.executor.system_work import SystemWork

log = logging.getLogger(__name__)

Key = tuple[str, str]


def as_owner(ctx: StatementContext, entry: TableEntry, *, detached: bool = False) -> StatementContext:
    """`ctx` for refreshing `entry` with its owner's rights: `ctx` itself when the owner asks in their own session,
    else a fresh Spark session of the owner's (no temporary views of the asker's). `detached`: for a refresh that
    outlives the statement (its own job group, never cancelled with the statement, a session of its own)."""
    owner = entry.owner or ""
    if owner == ctx.user and not detached:
        return ctx
    session = new_user_session(ctx.spark)
    set_current_user(session, owner)
    owned = replace(ctx, spark=session, user=owner, session_views=SessionViews())
    if detached:
        owned = replace(owned, sql=entry.definition or "", job_group=f"mv-refresh-{uuid.uuid4().hex}",
                        cancelled=lambda: False, streams=None)
    return owned


def recorded_refresh(work: SystemWork | None, source: str, entry: TableEntry,
                     run: Callable[[], mv_refresh.RefreshOutcome], full: bool = False) -> mv_refresh.RefreshOutcome:
    """`run()`, a refresh of `entry` the gateway does on its own (scheduled, triggered by its inputs, the background
    pass of an ASYNC refresh), recorded in the query history as user `system`'s REFRESH with `source`: the view
    written, its inputs read, how long it took and how it failed. Without `work` (no history), just `run()`."""
    started = time.time()
    name = f"{entry.database}.{entry.name}"
    text = f"REFRESH MATERIALIZED VIEW {name}{' FULL' if full else ''}"
    try:
        outcome = run()
    except BaseException as exc:
        if work is not None:
            work.record_system(source, "REFRESH", text, started, time.time(), error=exc, written=(name,))
        raise
    if work is not None:
        read = tuple(sorted(outcome.input_versions)) + tuple(outcome.foreign_inputs)
        work.record_system(source, "REFRESH", text, started, time.time(), written=(name,), read=read)
    return outcome


class BackgroundRefreshes:
    """One worker thread per view with requests: the running pass and at most one merged pass after it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[Key, bool | None] = {}    # view -> FULL of the pass after the running one (None: none)
        self._workers: dict[Key, threading.Thread] = {}

    def submit(self, key: Key, run: Callable[[bool], None], full: bool,
               starting: Callable[[], None] = lambda: None) -> bool:
        """Ask for `run(full)` on the view's worker; True when a new worker starts (`starting()` runs just before,
        so what it records cannot overwrite the worker's outcome), False when the request was merged into the pass
        after the running one."""
        with self._lock:
            if key in self._workers:
                self._pending[key] = full or bool(self._pending.get(key))
                return False
            starting()
            self._pending[key] = None
            worker = threading.Thread(target=self._work, args=(key, run, full), daemon=True,
                                      name=f"sluicegate-mv-refresh-{key[0]}.{key[1]}")
            self._workers[key] = worker
            worker.start()
            return True

    def _work(self, key: Key, run: Callable[[bool], None], full: bool) -> None:
        while True:
            try:
                run(full)
            except Exception:
                log.warning("background refresh of %s.%s failed", *key, exc_info=True)
            with self._lock:
                pending = self._pending.pop(key, None)
                if pending is None:
                    del self._workers[key]
                    return
                self._pending[key] = None
                full = pending

    def running(self, key: Key) -> bool:
        with self._lock:
            return key in self._workers

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for every worker to finish (a gateway shutting down); True when none runs."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                workers = list(self._workers.values())
            if not workers:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            workers[0].join(remaining)


REFRESHES = BackgroundRefreshes()   # one per process: views are keyed by name, and every gateway shares the lock


def refresh_async(ctx: StatementContext, entry: TableEntry, full: bool) -> None:
    """Start the view's refresh in the background as its owner; DESCRIBE shows RUNNING from now on (the worker may
    first wait for a refresh that holds the view's lock) and then the outcome."""
    key = (entry.database, entry.name)
    owned = as_owner(ctx, entry, detached=True)

    def run(full: bool) -> None:
        current = owned.store.get_table(*key)
        if current is None or current.kind != entry.kind:
            log.info("background refresh of %s.%s skipped: the view was dropped", *key)
            return
        recorded_refresh(owned.system_work, ASYNC_REFRESH, current,
                         lambda: mv_refresh.refresh(owned, current, full=full), full)

    def starting() -> None:
        if ctx.store.get_stream(*key) is not None:
            ctx.store.update_stream(*key, last_refresh_status=mv_refresh.RUNNING)

    REFRESHES.submit(key, run, full, starting)
