"""The supervisor's edge to Spark: each stream's session, building and starting its query, stopping it, the listener
that reports progress and ends, and the Delta versions of the tables it reads. Everything here calls Spark or
delta-rs; the supervisor decides, this module does.

A stream keeps one Spark session across its restarts (Spark never forgets a session's streaming listener bus, so a
session per restart would grow without bound).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.java_gateway import ensure_callback_server_started

from sluicegate.dialect.streaming.plan import StreamingPlan
from sluicegate.engine.sessions import new_user_session
from sluicegate.engine.streams.cdc_flows import CdcShare
from sluicegate.engine.streams.checkpoint_mirror import CheckpointMirror, CheckpointStore
from sluicegate.engine.streams.errors import StreamStopTimeoutError
from sluicegate.engine.streams.reset import empty_for_stream
from sluicegate.engine.streams.runner import BuiltStream, StreamTarget, build, merge_keys, start
from sluicegate.engine.streams.sink import BatchWritten
from sluicegate.engine.streams.sources import TableLocations

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from sluicegate.catalog.store import CatalogStore

log = logging.getLogger(__name__)

Key = tuple[str, str]

_PYTHON_ERROR = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.+)$", re.MULTILINE)


def error_text(message: str, limit: int = 2000) -> str:
    """A stream's failure as a person reads it: the Python error raised inside Spark's batch when there is one
    (Spark wraps it in a Java exception and a traceback), else Spark's message without the stack or query dump."""
    if "Traceback (most recent call last)" in message:
        raised = _PYTHON_ERROR.findall(message.split("Traceback (most recent call last)", 1)[1])
        if raised:
            kind, text = raised[-1]
            # one of the gateway's typed errors already reads `[ERROR_CLASS] message`: the Python type adds nothing
            message = text if text.startswith("[") else f"{kind}: {text}"
    message = message.split("\n\tat ")[0].split("\nJVM stacktrace:")[0].split("\n=== Streaming Query ===")[0]
    message = message.strip()
    return message if len(message) <= limit else message[:limit] + " ..."


def one_line(message: str, limit: int = 500) -> str:
    """A failure for the server log's single warning line."""
    text = " | ".join(part.strip() for part in message.splitlines() if part.strip())
    return text if len(text) <= limit else text[:limit] + " ..."


def table_locations(store: CatalogStore, plan: StreamingPlan) -> TableLocations:
    """Where each catalog table the plan reads lives (absent names are left out: the runner says which)."""
    locations = {}
    for database, name in input_tables(plan):
        entry = store.get_table(database, name)
        if entry is not None and entry.location:
            locations[(database, name)] = entry.location
    return locations


def input_tables(plan: StreamingPlan) -> set[Key]:
    """The catalog tables a plan streams from or joins with."""
    names = {(s.database or "", s.table or "") for s in plan.sources if s.kind == "table"}
    return names | {(s.database or "", s.table) for s in plan.static_tables}


def delta_versions(store: CatalogStore, tables: set[Key] | dict[Key, Any]) -> dict[Key, int]:
    """The current Delta version of each table (a table gone or unreadable is left out)."""
    from sluicegate.storage.delta.tables import open_table

    versions = {}
    for database, name in tables:
        entry = store.get_table(database, name)
        if entry is None or not entry.location:
            continue
        try:
            versions[(database, name)] = open_table(entry.location).version()
        except Exception as exc:  # noqa: BLE001 - the stream itself reports a source it cannot read
            log.debug("reading the version of %s.%s failed: %s", database, name, exc)
    return versions


def _logged(folder: Path) -> bool:
    """Whether a checkpoint log folder (offsets, commits) holds an entry: a file named by a batch id."""
    return folder.is_dir() and any(entry.name.isdigit() for entry in folder.iterdir())


def clear_uncommitted_state(checkpoint: str) -> bool:
    """Before a query starts on a checkpoint where no batch has committed (no `commits/<n>`): remove what its first
    batch left behind there, the `state` folder and the stray files (an interrupted write's `.0.<uuid>.tmp` and
    checksums) of a log folder with no entry. Returns whether anything was removed.

    Why: a query stopped while its first batch runs can leave them (measured: the stop interrupts the write of
    `offsets/0`, leaving only its temp file). Spark then finds no offset log entry, takes the query as new and, as
    `spark.sql.streaming.verifyCheckpointDirectoryEmptyOnStart` asks (MicroBatchExecution.populateStartOffsets ->
    verifyNewCheckpointDirectory), refuses any file in `offsets`, `state` or `commits` with
    STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY, on every retry. Safe: `commits/N` is written only after batch N's
    sink and state stores committed, so before `commits/0` the state holds nothing any batch committed, and a log
    folder without an entry holds no record at all. Batch 0 runs again, from `offsets/0` if it was logged (kept),
    or planned afresh; it rebuilds the state from the input, and its Delta commit carries txn(stream id, 0), so the
    table gets it exactly once."""
    root = Path(checkpoint)
    if _logged(root / "commits"):
        return False
    removed = False
    if (root / "state").is_dir():
        shutil.rmtree(root / "state")
        removed = True
    for folder in (root / "offsets", root / "commits"):
        if folder.is_dir() and not _logged(folder):
            for stray in folder.iterdir():
                if stray.is_file():
                    stray.unlink()
                    removed = True
    if removed:
        log.info("checkpoint %s: no batch had committed; cleared what its first batch left behind", checkpoint)
    return removed


@dataclass
class LiveQuery:
    """A started query and its live figures (written by the listener, read by DESCRIBE)."""

    key: Key
    stream_id: str
    plan: StreamingPlan
    built: BuiltStream
    query: StreamingQuery
    run_id: str
    started_at: dt.datetime
    available_now: bool
    late_rows_dropped: int = 0
    last_progress: dict[str, Any] = field(default_factory=dict)
    ended_seen_at: dt.datetime | None = None   # when the supervisor's tick first found it ended (a safety net)
    mirror: CheckpointMirror | None = None     # the checkpoint's copy on the object store, when the warehouse is there

    def release(self) -> None:
        """Once the query has ended: its cached static tables are freed, and the checkpoint's last files (the last
        batch's `commits/N`) reach the store, so the next start does not replay that batch."""
        self.built.release()
        if self.mirror is not None:
            try:
                self.mirror.upload()
            except OSError as exc:   # the store's copy stays a valid prefix: the next start replays one batch
                log.warning("stream %s: the checkpoint's last upload failed: %s", ".".join(self.key), exc)


# The JVM's loggers that write a full stack for each failed micro-batch (the query's end, the task that failed, the
# job and write it aborted). A stream's failure is the supervisor's one warning line; these are kept for DEBUG.
# (The task-level ones also log failing batch statements, whose errors the gateway returns to the client.)
JVM_FAILURE_LOGGERS = (
    "org.apache.spark.sql.execution.streaming",
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
    "org.apache.spark.util.Utils",
    "org.apache.spark.sql.execution.datasources.FileFormatWriter",
)


class _CallbackTraceFilter(logging.Filter):
    """py4j logs the trace of every Python callback that raised (a foreachBatch batch that failed) at ERROR: the
    query's end reports the same failure, which the supervisor logs in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "exception while executing the Python Proxy" not in record.getMessage()


def quiet_failure_logs(spark: SparkSession) -> None:
    """One line per stream failure in the server log: the JVM's and py4j's traces of it are silenced unless the
    streams' logger is at DEBUG (then they stay, and the supervisor logs each failure in full too)."""
    if logging.getLogger("sluicegate.engine.streams").isEnabledFor(logging.DEBUG):
        return
    py4j = logging.getLogger("py4j.clientserver")
    if not any(isinstance(f, _CallbackTraceFilter) for f in py4j.filters):
        py4j.addFilter(_CallbackTraceFilter())
    try:
        jvm = spark.sparkContext._jvm
        configurator = jvm.org.apache.logging.log4j.core.config.Configurator
        for name in JVM_FAILURE_LOGGERS:
            configurator.setLevel(name, jvm.org.apache.logging.log4j.Level.OFF)
    except Exception as exc:  # noqa: BLE001 - a Spark without log4j 2 logs more; streams run all the same
        log.info("could not quiet Spark's failure logs: %s", exc)


class _ProgressRelay:
    """Spark's Python listener interface, taking of each event only what the supervisor uses: a progress's JSON
    text, a termination's run id and error. PySpark's own listener turns every progress into Python objects field
    by field first: about a hundred py4j calls, 0.1 s a micro-batch, on a core and the GIL the next batch needs
    (issue 29's profile)."""

    def __init__(self, progress: Callable[[str, dict[str, Any]], None],
                 terminated: Callable[[str, str | None], None]) -> None:
        self.progress, self.terminated = progress, terminated

    def onQueryStarted(self, jevent: Any) -> None:
        pass

    def onQueryProgress(self, jevent: Any) -> None:
        try:
            progress = jevent.progress()
            self.progress(progress.runId().toString(), json.loads(progress.json()))
        except Exception:
            log.exception("recording stream progress failed")

    def onQueryIdle(self, jevent: Any) -> None:
        pass

    def onQueryTerminated(self, jevent: Any) -> None:
        try:
            failure = jevent.exception()
            self.terminated(jevent.runId().toString(), failure.get() if failure.isDefined() else None)
        except Exception:
            log.exception("handling a stream's end failed")

    class Java:
        implements = ["org.apache.spark.sql.streaming.PythonStreamingQueryListener"]


class SparkEdge:
    """What the supervisor asks of Spark. A fake with the same methods drives the supervisor in unit tests."""

    def __init__(self, spark: SparkSession, store: CatalogStore, progress: Callable[[str, dict[str, Any]], None],
                 terminated: Callable[[str, str | None], None],
                 checkpoint_store: CheckpointStore | None = None) -> None:
        """`checkpoint_store`: where checkpoints are kept when the warehouse is on an object store (None: the local
        checkpoint folder is the truth)."""
        self.spark = spark
        self.store = store
        self.checkpoint_store = checkpoint_store
        self._sessions: dict[Key, SparkSession] = {}
        self._lock = threading.Lock()   # sessions are made by statements' threads (CREATE builds) and the supervisor
        jvm, gateway = spark.sparkContext._jvm, spark.sparkContext._gateway
        assert jvm is not None and gateway is not None  # typed optional; a running session has both
        ensure_callback_server_started(gateway)
        self._listener = jvm.org.apache.spark.sql.streaming.PythonStreamingQueryListenerWrapper(
            _ProgressRelay(progress, terminated))
        quiet_failure_logs(spark)

    def session(self, key: Key) -> SparkSession:
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                session = new_user_session(self.spark)  # a stream's query is a user's query
                session._jsparkSession.streams().addListener(self._listener)
                self._sessions[key] = session
            return session

    def forget_session(self, key: Key) -> None:
        with self._lock:
            session = self._sessions.pop(key, None)
        if session is not None:
            session._jsparkSession.streams().removeListener(self._listener)

    def build(self, key: Key, plan: StreamingPlan, checkpoint: str | None = None) -> BuiltStream:
        return build(self.session(key), plan, table_locations(self.store, plan), checkpoint)

    def launch(self, key: Key, stream_id: str, plan: StreamingPlan, built: BuiltStream, location: str,
               checkpoint: str, trigger_seconds: float, available_now: bool,
               on_batch: Callable[[BatchWritten], None], reset_pending: bool = False,
               cdc_share: CdcShare | None = None) -> LiveQuery:
        """Start the query (continuous, or one available-now pass); releases `built` if Spark refuses. Before it
        starts: the table is emptied for a new stream id if a full refresh left that pending (`reset_pending`: a
        crash came between its catalog row and its emptying commit, see sluicegate.engine.streams.reset), the checkpoint
        is restored from the object store when it is kept there, and the state a batch 0 that never committed left
        behind is cleared. `cdc_share`: an AUTO CDC writer's shared state and fellow writers (cdc_flows.py)."""
        target = StreamTarget(stream_id, location, checkpoint, ".".join(key), cdc_share=cdc_share)
        mirror = self.checkpoint_store.mirror(checkpoint) if self.checkpoint_store is not None else None
        try:
            if reset_pending and empty_for_stream(location, built.schema, plan, stream_id, always=True):
                log.info("stream %s.%s: the table was emptied for stream %s before its first batch", *key, stream_id)
            if mirror is not None:
                mirror.restore()
            clear_uncommitted_state(checkpoint)
            query = start(built.result, plan, target, trigger_seconds, merge_keys(plan, built.result.columns),
                          on_batch=on_batch, available_now=available_now,
                          before_batch=mirror.upload if mirror is not None else None)
        except BaseException:
            built.release()
            raise
        return LiveQuery(key, stream_id, plan, built, query, str(query.runId),
                         dt.datetime.now(dt.timezone.utc).replace(tzinfo=None), available_now, mirror=mirror)

    def remove_checkpoint(self, checkpoint: str) -> None:
        """A dropped stream's checkpoint: its copy on the object store (the caller removes the local folder)."""
        if self.checkpoint_store is not None:
            self.checkpoint_store.remove(checkpoint)

    @staticmethod
    def ended(live: LiveQuery) -> tuple[bool, str | None]:
        """Whether the query has ended, and its error if it failed (a safety net for a missed listener event)."""
        if live.query.isActive:
            return False, None
        failure = live.query.exception()
        return True, str(failure) if failure is not None else None

    @staticmethod
    def halt(live: LiveQuery, wait_seconds: float) -> None:
        """Stop the query and wait for it to end. Spark's stop gives up after its timeout while a batch's Delta
        commit runs on (a commit cannot be interrupted): wait for that batch rather than pull files from under it."""
        try:
            live.query.stop()
        except Exception as exc:  # noqa: BLE001 - a query that failed while stopping has ended all the same
            log.warning("stream %s did not stop within Spark's timeout: %s", ".".join(live.key), one_line(str(exc)))
        # isActive turns false before Spark removes the query from its session's active queries; its termination
        # latch counts down after that, and only then may the stream start again in the same session
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                if live.query.awaitTermination(max(0.1, min(5.0, deadline - time.monotonic()))):
                    break
            except Exception:  # noqa: BLE001 - it ended with an error: ended is all a stop needs
                break
            if time.monotonic() >= deadline:
                raise StreamStopTimeoutError(
                    f"the stream of `{live.key[0]}`.`{live.key[1]}` is still running a micro-batch after "
                    f"{wait_seconds:g} s; nothing was removed",
                    hint="run the statement again once the batch has finished (DESCRIBE STREAMING TABLE shows it)")
        live.release()

    def static_change(self, live: LiveQuery) -> str | None:
        """The first static table the stream joins that has a version newer than the one it was started with."""
        if not live.built.static_versions:
            return None
        now = delta_versions(self.store, live.built.static_versions)
        for table, version in live.built.static_versions.items():
            if table in now and now[table] != version:
                return f"{table[0]}.{table[1]}"
        return None

    def input_versions(self, plan: StreamingPlan) -> dict[Key, int]:
        return delta_versions(self.store, input_tables(plan))

    @staticmethod
    def process_all_available(live: LiveQuery) -> None:
        live.query.processAllAvailable()
