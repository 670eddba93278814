"""StreamManager: every streaming table's stream, started from the catalog and kept running.

Persist before start (as Flink's materialized tables): the catalog row says what should run (desired_state) and what
does (status). At boot every stream whose desired state is RUNNING resumes from its checkpoint. A stream that fails is
marked FAILED with its error and an event, and started again after an exponential backoff; the others never notice.
Stopping the gateway stops every stream cleanly and keeps its desired state, so the next boot resumes it.

Everything that starts, stops or drops one stream (a statement, a retry timer, the static-table watcher, the boot)
holds that stream's lifecycle lock and re-reads the catalog under it: a retry never revives a dropped stream, and two
CREATEs of one name cannot both build a table. A stream keeps one Spark session across its restarts (Spark never
forgets a session's streaming listener bus, so a session per restart would grow without bound).

Progress comes from a StreamingQueryListener on each stream's session: last batch, its time, rows/s, late rows
dropped by the watermark (counted, never silent), and whether the sources are caught up.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql.streaming import StreamingQueryListener

from catalog.errors import PathOutsideWarehouseError
from catalog.names import inside, name_problem, owned_table_folder, remove_folder
from dialect.streaming.plan import StreamingPlan
from runtime.policy.sessions import new_user_session
from runtime.streaming import events
from runtime.streaming.errors import StreamError, StreamStopTimeoutError
from runtime.streaming.runner import BuiltStream, StreamTarget, build, merge_keys, start
from runtime.streaming.settings import StreamSettings
from runtime.streaming.sink import BatchWritten
from runtime.streaming.sources import TableLocations

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from catalog.store import CatalogStore, StreamEntry

log = logging.getLogger(__name__)

RUNNING = "RUNNING"
STARTING = "STARTING"
FAILED = "FAILED"
STOPPED = "STOPPED"

Key = tuple[str, str]

# After Spark's own stop timeout, how long to wait for a micro-batch still committing before giving up on a stop.
STOP_WAIT_SECONDS = 300.0


@dataclass
class LiveStream:
    key: Key
    stream_id: str
    plan: StreamingPlan
    built: BuiltStream
    query: StreamingQuery
    started_at: dt.datetime
    late_rows_dropped: int = 0
    last_progress: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamStatus:
    """What DESCRIBE STREAMING TABLE shows: the catalog's row and, while the stream runs, its live figures."""

    entry: StreamEntry
    plan: StreamingPlan
    active: bool
    late_rows_dropped: int
    last_progress: dict[str, Any]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


_STREAM_ID = re.compile(r"[0-9a-f]{32}")
_PYTHON_ERROR = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.+)$", re.MULTILINE)


def error_text(message: str, limit: int = 2000) -> str:
    """A stream's failure as a person reads it: the Python error raised inside Spark's batch when there is one
    (Spark wraps it in a Java exception and a traceback), else Spark's message without the stack or query dump."""
    if "Traceback (most recent call last)" in message:
        raised = _PYTHON_ERROR.findall(message.split("Traceback (most recent call last)", 1)[1])
        if raised:
            kind, text = raised[-1]
            message = f"{kind}: {text}"
    message = message.split("\n\tat ")[0].split("\nJVM stacktrace:")[0].split("\n=== Streaming Query ===")[0]
    message = message.strip()
    return message if len(message) <= limit else message[:limit] + " ..."


def table_locations(store: CatalogStore, plan: StreamingPlan) -> TableLocations:
    """Where each catalog table the plan reads lives (absent names are left out: the runner says which)."""
    names = {(s.database or "", s.table or "") for s in plan.sources if s.kind == "table"}
    names |= {(s.database or "", s.table) for s in plan.static_tables}
    locations = {}
    for database, name in names:
        entry = store.get_table(database, name)
        if entry is not None and entry.location:
            locations[(database, name)] = entry.location
    return locations


def _batch_after(progress: dict[str, Any], moment: dt.datetime) -> bool:
    """Whether the last reported batch was planned at or after `moment` (its trigger's start)."""
    stamp = progress.get("timestamp")
    if not stamp:
        return False
    started = dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    return started >= moment


class _Listener(StreamingQueryListener):
    def __init__(self, manager: StreamManager) -> None:
        self.manager = manager

    def onQueryStarted(self, event: Any) -> None:  # noqa: N802 - Spark's names
        pass

    def onQueryProgress(self, event: Any) -> None:  # noqa: N802
        try:
            self.manager._progress(str(event.progress.runId), json.loads(event.progress.json))
        except Exception:  # noqa: BLE001 - a listener that raises is dropped by Spark; log and keep listening
            log.exception("recording stream progress failed")

    def onQueryIdle(self, event: Any) -> None:  # noqa: N802
        pass

    def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
        try:
            self.manager._terminated(str(event.runId), event.exception)
        except Exception:  # noqa: BLE001
            log.exception("handling a stream's end failed")


class StreamManager:
    def __init__(self, spark: SparkSession, store: CatalogStore, settings: StreamSettings,
                 warehouse: Path | None = None) -> None:
        """`warehouse`: where the streaming tables' folders must lie; when given, a catalog row whose table folder
        is elsewhere is not resumed at boot."""
        self.spark = spark
        self.store = store
        self.settings = settings
        self.warehouse = warehouse
        self._lock = threading.RLock()
        self._live: dict[Key, LiveStream] = {}
        self._by_run: dict[str, Key] = {}   # by run id: a restart on the same checkpoint keeps the query id
        self._timers: dict[Key, threading.Timer] = {}
        self._lifecycles: dict[Key, threading.RLock] = {}
        self._sessions: dict[Key, SparkSession] = {}
        self._listener = _Listener(self)
        self._stopping = False
        self._quit = threading.Event()
        if settings.static_check_interval > 0:
            threading.Thread(target=self._watch_static_tables, name="sluicegate-static-tables", daemon=True).start()

    # -- what the statements call ------------------------------------------------------------------------------

    def checkpoint_for(self, stream_id: str) -> str:
        """The checkpoint folder of a new stream: named by its generated id, never by a user's name, and checked to
        lie inside the checkpoints root."""
        if _STREAM_ID.fullmatch(stream_id) is None:
            raise ValueError(f"a stream id is 32 hex digits, not {stream_id!r}")
        return str(inside(self.settings.checkpoints, self.settings.checkpoints / stream_id))

    def _owned_checkpoint(self, checkpoint: str) -> Path | None:
        """A catalog row's checkpoint folder if it lies inside the checkpoints root; None (logged) if not."""
        try:
            return inside(self.settings.checkpoints, checkpoint)
        except PathOutsideWarehouseError as exc:
            log.warning("%s (a stream's checkpoint)", exc.message)
            return None

    def boot_problem(self, entry: StreamEntry) -> str | None:
        """Why a catalog row cannot be resumed safely (a name the gateway refuses, a checkpoint outside the
        checkpoints root, a table folder outside the warehouse), or None."""
        problem = name_problem(entry.database, "database") or name_problem(entry.name, "streaming table")
        if problem is not None:
            return f"its name is invalid: {problem}"
        if self._owned_checkpoint(entry.checkpoint) is None:
            return f"its checkpoint {entry.checkpoint} is not inside {self.settings.checkpoints}"
        if self.warehouse is not None:
            table = self.store.get_table(entry.database, entry.name)
            try:
                owned_table_folder(self.warehouse, table.location if table is not None and table.location else "")
            except PathOutsideWarehouseError as exc:
                return exc.message
        return None

    @contextmanager
    def lifecycle(self, database: str, name: str) -> Iterator[None]:
        """Hold the stream's lifecycle lock: whoever starts, stops, drops or creates it waits for the others."""
        with self._lock:
            lock = self._lifecycles.setdefault((database, name), threading.RLock())
        with lock:
            yield

    def _session(self, key: Key) -> SparkSession:
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                session = new_user_session(self.spark)  # a stream's query is a user's query
                session.streams.addListener(self._listener)
                self._sessions[key] = session
            return session

    def _forget_session(self, key: Key) -> None:
        with self._lock:
            session = self._sessions.pop(key, None)
        if session is not None:
            session.streams.removeListener(self._listener)

    def build(self, plan: StreamingPlan) -> BuiltStream:
        """The stream's query, analysed by Spark but not started: for CREATE to learn the table's schema."""
        key = ((plan.database or "").lower(), plan.name.lower())
        return build(self._session(key), plan, table_locations(self.store, plan))

    def start(self, entry: StreamEntry, built: BuiltStream | None = None) -> StreamEntry:
        """Start a persisted stream; raises when it cannot start (CREATE undoes what it persisted)."""
        key = (entry.database, entry.name)
        with self.lifecycle(*key):
            self.stop(*key, desired=None)
            entry = self.store.update_stream(*key, status=STARTING)
            plan = StreamingPlan.from_json(entry.plan_json)
            table = self.store.require_table(*key)
            built = built if built is not None else self.build(plan)
            trigger = plan.trigger_seconds if plan.trigger_seconds is not None else self.settings.trigger_seconds
            target = StreamTarget(entry.stream_id, str(table.location), entry.checkpoint, f"{key[0]}.{key[1]}")
            try:
                query = start(built.result, plan, target, trigger, merge_keys(plan, built.result.columns),
                              on_batch=lambda written: self._batch_written(key, entry.stream_id, written))
            except Exception:
                built.release()
                raise
            run_id = str(query.runId)
            with self._lock:  # the listener's end-of-query handling waits until the stream is registered as running
                self._live[key] = LiveStream(key, entry.stream_id, plan, built, query, _now())
                self._by_run[run_id] = key
                entry = self.store.update_stream(*key, status=RUNNING, query_id=str(query.id), last_error=None)
            self.store.record_event(*key, "STARTED", f"query {query.id} from checkpoint {entry.checkpoint}")
            if not query.isActive:  # it ended before its listener was told of it: handle the end here
                ended = query.exception()
                self._terminated(run_id, str(ended) if ended is not None else None)
            return entry

    def resume(self, entry: StreamEntry) -> None:
        """Start a stream at boot or after a failure; a failure to start is the stream's, not the caller's."""
        try:
            self.start(entry)
        except Exception as exc:  # noqa: BLE001 - recorded on the stream and retried
            self.record_failure((entry.database, entry.name), entry.stream_id,
                                getattr(exc, "message", None) or str(exc))

    def stop(self, database: str, name: str, desired: str | None = STOPPED,
             wait_seconds: float = STOP_WAIT_SECONDS) -> None:
        """Stop the stream if it runs. `desired` None keeps the desired state (a restart or shutdown).

        Returns only once the query has ended: nothing may remove a checkpoint or table under a batch still
        committing. Raises StreamStopTimeoutError (and forgets nothing) if it does not end within `wait_seconds`
        after Spark's own stop timeout.
        """
        key = (database, name)
        with self.lifecycle(*key):
            with self._lock:
                timer = self._timers.pop(key, None)
                live = self._live.get(key)
                if live is not None:
                    self._by_run.pop(str(live.query.runId), None)  # its end is this stop's: the listener ignores it
            if timer is not None:
                timer.cancel()
            if live is not None:
                try:
                    self._halt(live, wait_seconds)
                except StreamStopTimeoutError:
                    with self._lock:
                        self._by_run[str(live.query.runId)] = key
                    raise
                with self._lock:
                    self._live.pop(key, None)
                live.built.release()
            if self.store.get_stream(database, name) is None:
                return
            changes: dict[str, Any] = {"status": STOPPED}
            if desired is not None:
                changes["desired_state"] = desired
            self.store.update_stream(database, name, **changes)
            if live is not None:
                self.store.record_event(database, name, "STOPPED", "stopped" if desired else "stopped with the gateway")

    @staticmethod
    def _halt(live: LiveStream, wait_seconds: float) -> None:
        """Stop the query and wait for it to end. Spark's stop gives up after its timeout while a batch's Delta
        commit runs on (a commit cannot be interrupted): wait for that batch rather than pull files from under it."""
        try:
            live.query.stop()
        except Exception as exc:  # noqa: BLE001 - a query that failed while stopping has ended all the same
            log.warning("stream %s.%s did not stop within Spark's timeout: %s", *live.key, exc)
        # isActive turns false before Spark removes the query from its session's active queries; its termination
        # latch counts down after that, and only then may the stream start again in the same session
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                if live.query.awaitTermination(max(0.1, min(5.0, deadline - time.monotonic()))):
                    return
            except Exception:  # noqa: BLE001 - it ended with an error: ended is all a stop needs
                return
            if time.monotonic() >= deadline:
                raise StreamStopTimeoutError(
                    f"the stream of `{live.key[0]}`.`{live.key[1]}` is still running a micro-batch after "
                    f"{wait_seconds:g} s; nothing was removed",
                    hint="run the statement again once the batch has finished (DESCRIBE STREAMING TABLE shows it)")

    def drop(self, database: str, name: str, keep_session: bool = False) -> None:
        """Stop the stream and remove its checkpoint (the caller drops the table). A full refresh keeps the
        stream's session: the new definition was built in it."""
        key = (database, name)
        with self.lifecycle(*key):
            entry = self.store.get_stream(database, name)
            self.stop(database, name)
            checkpoint = self._owned_checkpoint(entry.checkpoint) if entry is not None else None
            if checkpoint is not None:
                remove_folder(checkpoint, "the checkpoint of a dropped stream")
            if not keep_session:
                self._forget_session(key)

    def status(self, database: str, name: str) -> StreamStatus | None:
        entry = self.store.get_stream(database, name)
        if entry is None:
            return None
        with self._lock:
            live = self._live.get((database, name))
            active = live is not None and live.query.isActive
            return StreamStatus(entry, StreamingPlan.from_json(entry.plan_json), active,
                                live.late_rows_dropped if live else 0, dict(live.last_progress) if live else {})

    def wait_for(self, database: str, name: str) -> None:
        """Process everything available now (tests, and a user's REFRESH): returns when the stream caught up."""
        with self._lock:
            live = self._live.get((database, name))
        if live is not None:
            live.query.processAllAvailable()

    def catch_up(self, database: str, name: str, cancelled: Callable[[], bool], poll_seconds: float = 0.2) -> None:
        """REFRESH STREAMING TABLE without FULL: return once the stream has processed the input that was there when
        called (Spark's processAllAvailable, run aside so that a cancel or timeout of the statement ends the wait;
        a stream of time-driven sources only, which never runs out of input, once a batch planned after the call has
        committed). Raises StreamError if the stream is not running or fails meanwhile."""
        key = (database, name)
        called = dt.datetime.now(dt.timezone.utc)
        while True:
            with self._lock:
                live = self._live.get(key)
            if live is None or not live.query.isActive:
                raise self._not_running(key)
            drained = threading.Event()
            failures: list[BaseException] = []

            def drain(query: StreamingQuery = live.query) -> None:
                try:
                    query.processAllAvailable()
                except BaseException as exc:  # noqa: BLE001 - reported below, after a restart check
                    failures.append(exc)
                finally:
                    drained.set()

            threading.Thread(target=drain, name=f"sluicegate-refresh-{name}", daemon=True).start()
            while not drained.wait(poll_seconds):
                if cancelled():
                    return  # the statement was cancelled or timed out: the stream runs on, as before
                if all(s.kind == "rate" for s in live.plan.sources) and _batch_after(live.last_progress, called):
                    return
            if not failures:
                return
            with self._lock:
                current = self._live.get(key)
            if current is None or current.query.runId == live.query.runId:
                raise self._not_running(key)
            # restarted meanwhile on the same checkpoint (a static table changed): wait on the new query

    def _not_running(self, key: Key) -> StreamError:
        entry = self.store.get_stream(*key)
        status = entry.status if entry is not None else "DROPPED"
        error = f": {entry.last_error}" if entry is not None and entry.last_error else ""
        return StreamError(
            f"the stream of `{key[0]}`.`{key[1]}` is not running ({status}{error})",
            error_class="STREAM_NOT_RUNNING", sqlstate="55000",
            hint="DESCRIBE STREAMING TABLE shows its last error; a failed stream is retried, or fix the cause and "
                 "REFRESH STREAMING TABLE ... FULL")

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def restart_all(self) -> int:
        """Start every stream that should run (at boot); returns how many were found."""
        entries = self.store.list_streams(desired_state=RUNNING)
        for entry in entries:
            problem = self.boot_problem(entry)
            if problem is not None:
                log.warning("not resuming the stream of the catalog row %r.%r: %s; DROP TABLE it, or correct the "
                            "row in the catalog database and restart", entry.database, entry.name, problem)
                continue
            try:
                self.resume(entry)
            except Exception:  # noqa: BLE001 - recording one stream's failure failed: the others still start
                log.exception("resuming stream %s.%s failed", entry.database, entry.name)
        return len(entries)

    def stop_all(self) -> None:
        """Stop every stream, keeping its desired state: the next boot resumes it from its checkpoint."""
        self._quit.set()
        with self._lock:
            self._stopping = True
            keys = list(self._live) + [k for k in self._timers if k not in self._live]
        for key in keys:
            try:
                # no wait past Spark's stop timeout: the process may end mid-batch, its checkpoint and the batch's
                # txn make the next boot redo that batch exactly once
                self.stop(*key, desired=None, wait_seconds=0)
            except StreamStopTimeoutError as exc:
                log.warning("%s", exc.message)

    def running(self) -> list[Key]:
        with self._lock:
            return sorted(self._live)

    # -- static tables -----------------------------------------------------------------------------------------

    def _watch_static_tables(self) -> None:
        """Spark fixes a static table's file list when the stream starts; Databricks' stream-static join reads the
        table's latest version at each batch. A new version restarts the stream on its checkpoint (nothing lost or
        repeated), so the batches after it join with the new rows."""
        while not self._quit.wait(self.settings.static_check_interval):
            try:
                for key, stream_id, changed in self._static_changes():
                    if self._stopping:
                        return
                    with self.lifecycle(*key):  # a DROP or a full refresh since the look wins: re-check under it
                        entry = self.store.get_stream(*key)
                        if entry is None or entry.stream_id != stream_id or entry.desired_state != RUNNING:
                            continue
                        log.info("stream %s.%s: static table %s changed; restarting it on its checkpoint", *key,
                                 changed)
                        self.store.record_event(*key, "RESTART", f"static table {changed} has a new version")
                        self.resume(entry)  # start() stops the running query first
            except Exception:  # noqa: BLE001 - the watcher must outlive one bad look
                log.exception("checking static tables failed")

    def _static_changes(self) -> list[tuple[Key, str, str]]:
        from deltalake import DeltaTable

        with self._lock:
            watched = [(key, live.stream_id, dict(live.built.static_versions)) for key, live in self._live.items()
                       if live.built.static_versions]
        changes = []
        for key, stream_id, versions in watched:
            for (database, table), version in versions.items():
                entry = self.store.get_table(database, table)
                if entry is not None and entry.location and DeltaTable(entry.location).version() != version:
                    changes.append((key, stream_id, f"{database}.{table}"))
                    break
        return changes

    # -- listener ----------------------------------------------------------------------------------------------

    def _batch_written(self, key: Key, stream_id: str, written: BatchWritten) -> None:
        """Called in the batch itself, once its commit is in the Delta log: the catalog's last batch is exact."""
        events.batch_written(stream_id, written)  # its flow_progress event is written with Spark's progress
        self.store.update_stream(*key, status=RUNNING, failures=0, last_batch_id=written.batch_id,
                                 last_batch_at=_now())

    def _progress(self, run_id: str, progress: dict[str, Any]) -> None:
        with self._lock:
            key = self._by_run.get(run_id)
            live = self._live.get(key) if key is not None else None
            if live is None:
                return
            dropped = sum(int(op.get("numRowsDroppedByWatermark") or 0) for op in progress.get("stateOperators", []))
            live.late_rows_dropped += dropped
            live.last_progress = progress
        self.store.update_stream(*key, rows_per_second=progress.get("processedRowsPerSecond"))
        if dropped:
            self.store.record_event(*key, "LATE_ROWS_DROPPED",
                                    f"batch {progress['batchId']}: {dropped} rows arrived after the watermark")
        events.batch_progress(self.store, key, live.stream_id, progress)  # the batch's flow_progress event

    def _terminated(self, run_id: str, exception: str | None) -> None:
        with self._lock:
            key = self._by_run.pop(run_id, None)
            live = self._live.get(key) if key is not None else None
            if key is None or live is None or str(live.query.runId) != run_id:
                return  # stopped on purpose, or already handled
            del self._live[key]
        live.built.release()
        if exception:
            self.record_failure(key, live.stream_id, exception)
        else:
            self.store.update_stream(*key, status=STOPPED)
            self.store.record_event(*key, "STOPPED", "the query ended")

    def record_failure(self, key: Key, stream_id: str, message: str) -> None:
        """Mark the stream FAILED with its error and an event, and retry it after the backoff."""
        entry = self.store.get_stream(*key)
        if entry is None or entry.stream_id != stream_id:
            return
        failures = entry.failures + 1
        delay = min(self.settings.retry_initial * 2 ** (failures - 1), self.settings.retry_max)
        message = error_text(message)
        log.warning("stream %s.%s failed (%d in a row), retrying in %.1f s: %s", *key, failures, delay, message)
        self.store.update_stream(*key, status=FAILED, last_error=message, failures=failures)
        self.store.record_event(*key, "FAILED", f"{message} (attempt {failures}; retry in {delay:g} s)")
        with self._lock:
            if self._stopping or entry.desired_state != RUNNING:
                return
            timer = threading.Timer(delay, self._retry, (key, stream_id))
            timer.daemon = True
            self._timers[key] = timer
        timer.start()

    def _retry(self, key: Key, stream_id: str) -> None:
        with self.lifecycle(*key):  # a DROP, stop or refresh meanwhile decides: re-read the catalog under the lock
            with self._lock:
                if self._timers.get(key) is threading.current_thread():
                    del self._timers[key]
                if self._stopping or key in self._live:
                    return
            entry = self.store.get_stream(*key)
            if entry is not None and entry.stream_id == stream_id and entry.desired_state == RUNNING:
                self.resume(entry)


    def reschedule(self, database: str, name: str) -> None:
        """The table's schedule changed (ALTER STREAMING TABLE ... SCHEDULE): switch its stream between continuous
        and scheduled. Placeholder until the supervisor's version lands: restarts the stream on its checkpoint."""
        entry = self.store.get_stream(database, name)
        if entry is not None and entry.desired_state == RUNNING:
            self.resume(entry)


def new_stream_id() -> str:
    import uuid

    return uuid.uuid4().hex

