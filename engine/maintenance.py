"""Table maintenance in the background: auto-compaction and retention of the tables streams and refreshes write.

Every commit to a Delta table is announced (storage/delta/commit.py's listeners; the stream sink's MERGE too). A
streaming table (flows' targets included) or a materialized view that committed is looked at once `delay` seconds
have passed since its first unexamined commit (so a stream's commits are examined together, not one by one), and its
small files are merged by size class (storage/delta/compaction.py), one merge per step. A plain table is compacted
only when its Delta log configuration asks for it (`delta.autoOptimize.autoCompact` = true, as on Databricks); any
table opts out with that property set to false. A table that then stays quiet for `settle` seconds (no commit) is
settled: its partitions' last small files merged into one where that is cheap (storage/delta/compaction.py's
`settle_candidates`). The compactor keeps each table it looks after open between steps (storage/delta/kept.py):
opening one from its checkpoint costs more the longer its stream has run. Every `retention_interval` a table that
commits also gets its retention pass (storage/delta/retention.py): the files and log entries its own retention
properties let go, never a file a running statement's pinned version reads.

What it takes from queries is bounded twice: the worker thread runs at a lower OS priority (nice +10, Linux), so it
gets only the CPU that statements and streams leave, and after each step of t seconds it rests t * (1 - cpu_share) /
cpu_share, so it never averages more than `cpu_share` of one core. A merge that loses to a concurrent writer commits
nothing and is tried again at the table's next commit.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sluicegate.engine.maintenance_settings import MaintenanceSettings
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.compaction import Compacted, candidates, compact, live_files
from sluicegate.storage.delta.compaction_policy import AUTO_COMPACT_PROPERTY
from sluicegate.storage.delta.kept import KeptTable
from sluicegate.storage.delta.locks import table_key
from sluicegate.storage.delta.retention import RetentionResult, maintain_retention

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore

log = logging.getLogger(__name__)

MAINTAINED_KINDS = ("STREAMING_TABLE", "MATERIALIZED_VIEW")
NICENESS = 10
KINDS_REREAD = 2.0                 # seconds: the catalog's kinds are re-read at most this often for an unknown table


KEPT_TABLES = 64                   # tables the compactor keeps open between steps


@dataclass
class _Due:
    since: float                   # monotonic time of the first commit not yet examined
    settle: bool = False           # the table has been quiet: merge its last small files


class TableMaintenance:
    """The background compactor of one gateway (the owner of its streams starts it)."""

    def __init__(self, store: CatalogStore, settings: MaintenanceSettings,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.settings = settings
        self._clock = clock
        self._due: dict[str, _Due] = {}
        self._kinds: dict[str, str] = {}        # table key -> catalog kind, re-read when a key is unknown
        self._kinds_read = -KINDS_REREAD
        self._condition = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.compacted: list[Compacted] = []    # the last merges, newest last (for DESCRIBE and tests)
        self.merges_committed = 0               # merges committed since the start (the gateway's /metrics)
        self._retained: dict[str, float] = {}   # table key -> when its last retention pass ran (monotonic)
        self._tables: OrderedDict[str, KeptTable] = OrderedDict()   # the worker thread's kept tables, by key
        self._tables_guard = threading.Lock()

    def start(self) -> TableMaintenance:
        if self.settings.enabled:
            commit.add_commit_listener(self.committed)
            self._thread = threading.Thread(target=self._run, name="sluicegate-compactor", daemon=True)
            self._thread.start()
        return self

    def close(self, timeout: float = 30.0) -> None:
        """Stop after the step under way (a merge is never left half done: it commits or writes nothing visible)."""
        commit.remove_commit_listener(self.committed)
        with self._condition:
            self._stopping = True
            self._condition.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def committed(self, location: str) -> None:
        """A commit landed on the table at `location`: look at it once `delay` has passed."""
        key = table_key(location)
        with self._condition:
            due = self._due.get(key)
            if due is None or due.settle:   # a commit: the table is not quiet, it is compacted first
                self._due[key] = _Due(self._clock())
                self._condition.notify_all()

    # -- what the worker does ----------------------------------------------------------------------------------

    def maintain(self, location: str, settle: bool = False) -> list[Compacted]:
        """Compact the table at `location` now, until no size class is full (`settle`: until its partitions' last
        small files are merged) (tests, benchmarks, the worker)."""
        done: list[Compacted] = []
        while not self._stopping:
            step = self._step(location, settle)
            if not step:
                break
            done.extend(step)
            if step[-1].version is None:
                break  # lost to a concurrent writer: its commit announces the table again
        return done

    def _kept(self, location: str) -> KeptTable:
        """The worker's kept table of `location`; a fresh one for any other thread (tests and benchmarks calling
        `maintain` or `pending`), since a kept table is moved in place and belongs to one thread."""
        if threading.current_thread() is not self._thread:
            return KeptTable(location)
        key = table_key(location)
        with self._tables_guard:
            kept = self._tables.get(key)
            if kept is None:
                kept = self._tables[key] = KeptTable(location)
            self._tables.move_to_end(key)
            while len(self._tables) > KEPT_TABLES:
                self._tables.popitem(last=False)
        return kept

    def _step(self, location: str, settle: bool = False) -> list[Compacted]:
        kept = self._kept(location)
        table = kept.latest()
        if table is None or not self._wanted(location, table):
            return []
        try:
            merged = compact(location, self.settings.policy, max_merges=1, settle=settle, latest=kept.latest)
        except Exception:
            kept.forget()
            raise
        self.compacted = [*self.compacted[-99:], *merged]
        self.merges_committed += sum(1 for result in merged if result.version is not None)
        for result in merged:
            log.info("%s %d files (%d bytes) of %s into 1 (%d bytes)%s", "settled" if settle else "compacted",
                     result.files_removed, result.bytes_removed, location, result.bytes_added,
                     "" if result.version is not None else ": a concurrent writer won, nothing committed")
        return merged

    def _wanted(self, location: str, table: Any) -> bool:
        """Streaming tables and materialized views unless they opt out; other tables only when they opt in."""
        configuration = table.metadata().configuration or {}
        setting = str(configuration.get(AUTO_COMPACT_PROPERTY, "")).strip().lower()
        if setting in ("true", "false"):
            return setting == "true"
        return self._kind(location) in MAINTAINED_KINDS

    def _kind(self, location: str) -> str | None:
        key = table_key(location)
        if key not in self._kinds and self._clock() - self._kinds_read > KINDS_REREAD:
            self._kinds = {table_key(entry.location): entry.kind for entry in self.store.list_tables()
                           if entry.location}
            self._kinds_read = self._clock()
        return self._kinds.get(key)

    def pending(self, location: str, settle: bool = False) -> bool:
        """Whether the table has a size class full enough to merge (`settle`: small files a settling merges) (tests
        wait on this)."""
        table = self._kept(location).latest()
        return table is not None and bool(candidates(live_files(table), self.settings.policy, settle))

    def _next_due(self) -> tuple[tuple[str, bool] | None, float]:
        """The table whose delay has passed first (and whether it is settling), or how long to wait for one."""
        now = self._clock()
        if not self._due:
            return None, 3600.0
        key, due = min(self._due.items(), key=lambda item: item[1].since)
        wait = due.since + self.settings.delay - now
        return ((key, due.settle), 0.0) if wait <= 0 else (None, wait)

    def _take_due(self) -> tuple[str, bool] | None:
        """The next table to look at, once its delay has passed, and whether it is settling; None when stopping."""
        with self._condition:
            while not self._stopping:
                due, wait = self._next_due()
                if due is not None:
                    del self._due[due[0]]
                    return due
                self._condition.wait(wait)
        return None

    def _run(self) -> None:
        _lower_priority()
        while (due := self._take_due()) is not None:
            key, settle = due
            started = time.perf_counter()
            try:
                merged = self._step(key, settle)
                if merged and merged[-1].version is not None and self.pending(key, settle):
                    self._again(key, settle)  # one merge per step; the next after the rest
                else:
                    if self._retention_due(key):
                        self.retain(key)
                    if not settle:
                        self._settle_later(key)
            except Exception as exc:  # noqa: BLE001 - one table's failure must not stop the others' maintenance
                log.warning("maintaining %s failed; it is tried again at its next commit: %s", key, exc)
            self._rest(time.perf_counter() - started)

    def _retention_due(self, key: str) -> bool:
        interval = self.settings.retention_interval
        last = self._retained.get(key)
        return interval > 0 and (last is None or self._clock() - last >= interval)

    def retain(self, location: str, now: float | None = None) -> RetentionResult | None:
        """The table's retention pass now (as of the wall-clock `now`, default the time), if it is a streaming table,
        a materialized view or a table that asked for auto-compaction (one that opted out of compaction still
        gets it)."""
        self._retained[table_key(location)] = self._clock()
        table = self._kept(location).latest()
        if table is None or not (self._kind(location) in MAINTAINED_KINDS or self._wanted(location, table)):
            return None
        result = maintain_retention(location, now)
        if result.files_deleted or result.log_entries_deleted:
            log.info("retention of %s: %d files (%d bytes) and %d log entries deleted", location,
                     result.files_deleted, result.bytes_freed, result.log_entries_deleted)
        return result

    def _again(self, key: str, settle: bool = False) -> None:
        with self._condition:
            self._due.setdefault(key, _Due(self._clock() - self.settings.delay, settle))

    def _settle_later(self, key: str) -> None:
        """Look at the table again once it has been quiet for `settle` seconds (a commit before then replaces this
        with an ordinary look)."""
        if self.settings.settle > 0:
            with self._condition:
                self._due.setdefault(key, _Due(self._clock() + self.settings.settle - self.settings.delay, True))
                self._condition.notify_all()

    def _rest(self, worked: float) -> None:
        share = min(max(self.settings.cpu_share, 0.01), 1.0)
        with self._condition:
            if not self._stopping:
                self._condition.wait(worked * (1 - share) / share)


def _lower_priority() -> None:
    """Run this thread at a lower OS priority (Linux lets a thread renice itself): queries come first."""
    if hasattr(os, "setpriority") and hasattr(threading, "get_native_id"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
        except OSError as exc:
            log.debug("could not lower the compactor's priority: %s", exc)
