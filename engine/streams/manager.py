"""StreamManager: the stream supervisor. One thread takes commands from a queue and moves each streaming table's
stream through the transition table of `sluicegate.engine.streams.lifecycle`; Spark calls stay in `spark_edge`.

Commands: start (CREATE, CREATE OR REFRESH), resume (boot, a test), stop, drop, refresh (REFRESH without FULL),
reschedule (ALTER ... SCHEDULE), failure (a start the caller saw fail), terminated (the listener: a query ended),
committed (a batch is in Delta: the failures in a row are over), tick (due retries, due scheduled passes, static
tables with a new version, a missed end), stop_all. A statement that needs the outcome waits on the command's reply
(a Future); the listener and the batch never wait. Because one thread decides, there is no lock around a stream's
state: a retry never revives a dropped stream, a pass never starts under a DROP. Statements on one name still take
turns through `lifecycle()` (CREATE persists rows before it starts the stream).

Persist before start (as Flink's materialized tables): the catalog row says what should run (desired_state) and what
does (status, failures in a row, last error, next pass). At boot every stream whose desired state is RUNNING is taken
on again: a continuous one resumes from its checkpoint, a scheduled one runs a pass missed while the gateway was down.
A failure is retried after an exponential backoff, up to `streams.max_attempts` in a row; then, or at once for an
error class in NON_RETRYABLE_ERROR_CLASSES, the stream stays FAILED with its error until REFRESH, CREATE OR REFRESH or
a gateway restart (each grants a fresh set of attempts). The others never notice. Each failure is one warning line
in the server log; the full trace is logged at DEBUG.

A table with a schedule (TableEntry.schedule) runs no continuous query: each pass is the same query on the same
checkpoint with an available-now trigger (ordinary micro-batches, each one Delta commit with its txn), and between
passes the stream is SCHEDULED with `next_run_at` in the catalog.
"""

from __future__ import annotations

import datetime as dt
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.clock import utc_now
from sluicegate.catalog.errors import PathOutsideWarehouseError
from sluicegate.catalog.names import inside, name_problem, owned_table_folder, remove_folder
from sluicegate.dialect.errors import SqlError
from sluicegate.dialect.schedule import Schedule
from sluicegate.dialect.streaming.plan import StreamingPlan
from sluicegate.engine.streams import events, lifecycle, reset
from sluicegate.engine.streams.cdc_flows import FLOWS_STATE, CdcShare
from sluicegate.engine.streams.errors import RAISED_IN_BATCH, StreamError, StreamStopTimeoutError, stream_failure
from sluicegate.engine.streams.lifecycle import RetryPolicy, StreamState
from sluicegate.engine.streams.runner import sources_checkpoint
from sluicegate.engine.streams.settings import StreamSettings
from sluicegate.engine.streams.sink import BatchWritten
from sluicegate.engine.streams.spark_edge import LiveQuery, SparkEdge, error_text, one_line

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.catalog.store import CatalogStore, StreamEntry
    from sluicegate.engine.streams.runner import BuiltStream

log = logging.getLogger(__name__)

RUNNING = StreamState.RUNNING.value
STARTING = StreamState.STARTING.value
FAILED = StreamState.FAILED.value
STOPPED = StreamState.STOPPED.value
SCHEDULED = StreamState.SCHEDULED.value

# (database, table) for a streaming table's own stream, (database, table, flow) for an append flow into it
Key = tuple[str, ...]

# After Spark's own stop timeout, how long to wait for a micro-batch still committing before giving up on a stop.
STOP_WAIT_SECONDS = 300.0

# How long the tick leaves a query that has ended to the listener's own report before it handles the end itself.
LISTENER_GRACE = dt.timedelta(seconds=10)

_STREAM_ID = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class StreamStatus:
    """What DESCRIBE STREAMING TABLE shows: the catalog's row and, while a query runs, its live figures."""

    entry: StreamEntry
    plan: StreamingPlan
    active: bool
    late_rows_dropped: int
    last_progress: dict[str, Any]


@dataclass
class Supervised:
    """The supervisor's own record of one stream (only its thread changes it; statements read it)."""

    key: Key
    stream_id: str
    plan: StreamingPlan
    schedule: Schedule | None
    state: StreamState = StreamState.STOPPED
    attempts: int = 0                                  # failures in a row
    retry_at: dt.datetime | None = None                # RETRYING: when the next attempt starts
    next_run_at: dt.datetime | None = None             # SCHEDULED: when the next pass starts
    live: LiveQuery | None = None
    last_pass_at: dt.datetime | None = None
    pass_versions: dict[Key, int] = field(default_factory=dict)   # input versions when the last pass started
    pass_done: Future[None] | None = None              # the current (or last) pass's outcome, for REFRESH SYNC
    queued_pass: Future[None] | None = None            # a REFRESH came while a pass ran: one more pass after it
    restarted_from: str | None = None                  # REFRESH started it again from this state (FAILED, ...):
                                                       # its catch_up tells a failure of that start as such


@dataclass
class _Command:
    name: str
    handler: Callable[..., Any]
    args: tuple[Any, ...]
    reply: Future[Any] | None


class _Quit:
    pass


class StreamManager:
    def __init__(self, spark: SparkSession | None, store: CatalogStore, settings: StreamSettings,
                 warehouse: Path | None = None, edge: Any = None,
                 clock: Callable[[], dt.datetime] = utc_now) -> None:
        """`warehouse`: where the streaming tables' folders must lie; when given, a catalog row whose table folder
        is elsewhere is not resumed at boot. `edge` and `clock` replace Spark and the time in unit tests."""
        self.spark = spark
        self.store = store
        self.settings = settings
        self.warehouse = warehouse
        self.edge = edge if edge is not None else SparkEdge(spark, store, self._progress, self._terminated,
                                                            settings.checkpoint_store)
        self.clock = clock
        self._records: dict[Key, Supervised] = {}
        self._by_run: dict[str, Key] = {}       # by run id: a restart on the same checkpoint keeps the query id
        self._statement_locks: dict[Key, threading.RLock] = {}
        self._locks_lock = threading.Lock()
        self._queue: queue.Queue[_Command | _Quit] = queue.Queue()
        self._stopping = False
        self._closed = False
        self._next_input_check = clock()
        self._thread = threading.Thread(target=self._run, name="sluicegate-stream-supervisor", daemon=True)
        self._thread.start()

    # -- the command loop ----------------------------------------------------------------------------------------

    def _run(self) -> None:
        next_tick = time.monotonic() + self.settings.tick_seconds
        while True:
            try:
                command = self._queue.get(timeout=max(0.0, next_tick - time.monotonic()))
            except queue.Empty:
                command = None
            if isinstance(command, _Quit):
                return
            if command is not None:
                self._execute(command)
            if time.monotonic() >= next_tick:
                self._execute(_Command("tick", self._on_tick, (), None))
                next_tick = time.monotonic() + self.settings.tick_seconds

    def _execute(self, command: _Command) -> None:
        try:
            result = command.handler(*command.args)
        except BaseException as exc:
            if command.reply is not None:
                command.reply.set_exception(exc)
            else:
                log.exception("stream supervisor: command %s failed", command.name)
            return
        if command.reply is not None:
            command.reply.set_result(result)

    def _post(self, name: str, handler: Callable[..., Any], *args: Any) -> None:
        """A command nobody waits for (the listener, a batch)."""
        if not self._closed:
            self._queue.put(_Command(name, handler, args, None))

    def _call(self, name: str, handler: Callable[..., Any], *args: Any) -> Any:
        """A command whose outcome the caller waits for (run at once when the supervisor itself asks)."""
        if threading.current_thread() is self._thread:
            return handler(*args)
        if self._closed:
            raise StreamError("the stream supervisor has stopped (the gateway is shutting down)",
                              error_class="STREAM_SUPERVISOR_STOPPED", sqlstate="55000",
                              hint="run the statement again once the gateway has restarted")
        reply: Future[Any] = Future()
        self._queue.put(_Command(name, handler, args, reply))
        return reply.result()

    def tick(self) -> None:
        """Run one tick now (tests with a fake clock; the loop ticks every `streams.tick_interval` by itself)."""
        self._call("tick", self._on_tick)

    # -- what the statements call --------------------------------------------------------------------------------

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
        problem = name_problem(entry.database, "database") or name_problem(entry.name, "streaming table") or (
            name_problem(entry.flow, "flow") if entry.flow is not None else None)
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
        """Statements on one name take turns (a CREATE persists rows before it starts the stream; a concurrent
        CREATE or DROP of that name waits for it). The supervisor itself never takes this lock."""
        with self._locks_lock:
            lock = self._statement_locks.setdefault((database, name), threading.RLock())
        with lock:
            yield

    def build(self, plan: StreamingPlan, flow: str | None = None) -> BuiltStream:
        """The stream's query, analysed by Spark but not started: for CREATE to learn the table's schema."""
        return self.edge.build(stream_key((plan.database or "").lower(), plan.name.lower(), flow), plan)

    def start(self, entry: StreamEntry, built: BuiltStream | None = None) -> StreamEntry:
        """Start a persisted stream (a scheduled table: its first pass); raises when it cannot start (CREATE undoes
        what it persisted, CREATE OR REFRESH records the failure)."""
        return self._call("start", self._on_start, entry, built)

    def resume(self, entry: StreamEntry) -> None:
        """Take a stream on at boot (or in a test): resume it, or wait for its next pass; a failure to start is the
        stream's, recorded and retried, not the caller's."""
        self._call("resume", self._on_resume, entry)

    def stop(self, database: str, name: str, desired: str | None = STOPPED,
             wait_seconds: float = STOP_WAIT_SECONDS, flow: str | None = None) -> None:
        """Stop the stream if it runs. `desired` None keeps the desired state (a restart or shutdown).

        Returns only once the query has ended: nothing may remove a checkpoint or table under a batch still
        committing. Raises StreamStopTimeoutError (and forgets nothing) if it does not end within `wait_seconds`
        after Spark's own stop timeout."""
        self._call("stop", self._on_stop, stream_key(database, name, flow), desired, wait_seconds)

    def drop(self, database: str, name: str, keep_session: bool = False, flow: str | None = None) -> None:
        """Stop the stream (the table's own, or `flow`'s) and remove its checkpoint (the caller drops the table or
        the flow's row). A full refresh keeps the stream's session: the new definition was built in it."""
        self._call("drop", self._on_drop, stream_key(database, name, flow), keep_session)

    def remove_checkpoint(self, database: str, name: str, checkpoint: str) -> None:
        """Remove the checkpoint of a stream the table's row no longer names (a full refresh's old stream, once the
        row with the new stream id is durable); refuses the one the row names."""
        self._call("remove_checkpoint", self._on_remove_checkpoint, (database, name), checkpoint)

    def refresh(self, database: str, name: str, flow: str | None = None) -> Future[None] | None:
        """REFRESH without FULL: a scheduled table runs one pass now (or right after the one under way, which may
        have started before the input the statement must see); a failed, retrying or stopped stream starts again
        with a fresh set of attempts; a running one goes on. Returns the pass to wait for (catch_up's `until`)."""
        return self._call("refresh", self._on_refresh, stream_key(database, name, flow))

    def reschedule(self, database: str, name: str) -> None:
        """After ALTER STREAMING TABLE ... ADD | ALTER | DROP SCHEDULE changed the table row: switch the stream
        between continuous and scheduled (or to its new schedule) on the same checkpoint."""
        self._call("reschedule", self._on_reschedule, (database, name))

    def record_failure(self, key: Key, stream_id: str, message: str) -> None:
        """Mark the stream failed with its error and an event; retried after the backoff while attempts remain."""
        self._call("failure", self._on_failure, key, stream_id, message)

    def status(self, database: str, name: str) -> StreamStatus | None:
        entry = self.store.get_stream(database, name)
        if entry is None:
            return None
        record = self._records.get((database, name))
        live = record.live if record is not None and record.stream_id == entry.stream_id else None
        active = live is not None and not self.edge.ended(live)[0]
        return StreamStatus(entry, StreamingPlan.from_json(entry.plan_json), active,
                            live.late_rows_dropped if live else 0, dict(live.last_progress) if live else {})

    def schedule_of(self, database: str, name: str) -> Schedule | None:
        record = self._records.get((database, name))
        return record.schedule if record is not None else None

    def wait_for(self, database: str, name: str, flow: str | None = None) -> None:
        """Process everything available now (tests): returns when the stream caught up, or its pass ended."""
        record = self._records.get(stream_key(database, name, flow))
        live = record.live if record is not None else None
        if live is None:
            return
        if live.available_now and record is not None and record.pass_done is not None:
            try:
                record.pass_done.result()
            except StreamError:
                pass  # the stream's failure is on its row; waiting is all this asks
            return
        self.edge.process_all_available(live)

    def catch_up(self, database: str, name: str, cancelled: Callable[[], bool], until: Future[None] | None = None,
                 poll_seconds: float = 0.2, flow: str | None = None) -> None:
        """REFRESH STREAMING TABLE SYNC: return once the stream has processed the input that was there when called
        (a scheduled table: once its pass has ended; a continuous one: Spark's processAllAvailable, run aside so
        that a cancel or timeout of the statement ends the wait; a stream of time-driven sources only, which never
        runs out of input, once a batch planned after the call has committed). Raises StreamError if the stream is
        not running, or fails meanwhile."""
        key = stream_key(database, name, flow)
        record = self._records.get(key)
        restarted_from = record.restarted_from if record is not None else None
        if record is not None:
            record.restarted_from = None
        try:
            self._catch_up(key, record, cancelled, until, poll_seconds)
        except StreamError as exc:
            if restarted_from is None or exc.error_class != "STREAM_NOT_RUNNING":
                raise
            raise self._failed_again(key, restarted_from, exc.detail) from None

    def first_update(self, database: str, name: str, cancelled: Callable[[], bool], timeout_seconds: float,
                     poll_seconds: float = 0.2) -> str:
        """CREATE [OR REFRESH] STREAMING TABLE waits here for the new stream's first update, as Databricks' CREATE
        runs one: COMPLETED once the stream has processed what its sources held (catch_up's wait: a source with
        nothing yet is done as soon as the stream runs; a scheduled table's first pass ended). A failed attempt is
        retried by the supervisor as any other; once the stream is FAILED, this raises the stream's error (its
        class and SQLSTATE, read off its text). TIMED_OUT after `timeout_seconds`, CANCELED when the statement was:
        the stream goes on either way."""
        key = stream_key(database, name)
        deadline = time.monotonic() + timeout_seconds

        def waited_out() -> bool:
            return cancelled() or time.monotonic() >= deadline

        while True:
            try:
                self.catch_up(database, name, waited_out, poll_seconds=poll_seconds)
            except StreamError:
                if not self._attempt_again(key, waited_out, poll_seconds):
                    break
                continue
            break
        if cancelled():
            return "CANCELED"
        return "TIMED_OUT" if time.monotonic() >= deadline else "COMPLETED"

    def _attempt_again(self, key: Key, waited_out: Callable[[], bool], poll_seconds: float) -> bool:
        """After a failed attempt of a first update: True once the supervisor runs the stream again (its retry);
        False when the wait is over first. Raises the stream's error once it is FAILED (or gone, or stopped)."""
        while not waited_out():
            entry = self.store.get_stream(*key)
            if entry is None or entry.status in (FAILED, STOPPED):
                error = entry.last_error if entry is not None else None
                raise stream_failure(error) if error else self._not_running(key)
            record = self._records.get(key)
            live = record.live if record is not None else None
            if live is not None and not self.edge.ended(live)[0]:
                return True
            time.sleep(poll_seconds)
        return False

    def _catch_up(self, key: Key, record: Supervised | None, cancelled: Callable[[], bool],
                  until: Future[None] | None, poll_seconds: float) -> None:
        live = record.live if record is not None else None
        if until is not None or (record is not None and (live.available_now if live is not None
                                                         else record.schedule is not None)):
            self._wait_for_pass(key, until or (record.pass_done if record is not None else None), cancelled,
                                poll_seconds)
            return
        self._note_refresh(key, "RUNNING", at=utc_now())
        try:
            outcome = self._catch_up_continuous(key, cancelled, poll_seconds)
        except StreamError:
            self._note_refresh(key, "FAILED")
            raise
        self._note_refresh(key, outcome)

    def _note_refresh(self, key: Key, status: str, at: dt.datetime | None = None) -> None:
        """A continuous stream's REFRESH SYNC in the row's last refresh (a pass records its own)."""
        changes: dict[str, Any] = {"last_refresh_status": status}
        if at is not None:
            changes["last_refresh_at"] = at
        try:
            self.store.update_stream(*key, **changes)
        except SqlError:  # dropped meanwhile: nothing to note
            pass

    def _catch_up_continuous(self, key: Key, cancelled: Callable[[], bool], poll_seconds: float) -> str:
        """Wait until the continuous stream has caught up: COMPLETED, or CANCELED when the statement was."""
        called = dt.datetime.now(dt.timezone.utc)
        while True:
            record = self._records.get(key)
            live = record.live if record is not None else None
            if live is None or self.edge.ended(live)[0]:
                raise self._not_running(key)
            drained = threading.Event()
            failures: list[BaseException] = []

            def drain(current: LiveQuery = live, failures: list[BaseException] = failures,
                      drained: threading.Event = drained) -> None:
                try:
                    self.edge.process_all_available(current)
                except BaseException as exc:  # noqa: BLE001 - reported below, after a restart check
                    failures.append(exc)
                finally:
                    drained.set()

            threading.Thread(target=drain, name=f"sluicegate-refresh-{key[1]}", daemon=True).start()
            while not drained.wait(poll_seconds):
                if cancelled():
                    return "CANCELED"  # the statement was cancelled or timed out: the stream runs on, as before
                if all(s.kind == "rate" for s in live.plan.sources) and _batch_after(live.last_progress, called):
                    return "COMPLETED"
            if not failures:
                return "COMPLETED"
            record = self._records.get(key)
            current = record.live if record is not None else None
            if current is None or current.run_id == live.run_id:
                raise self._not_running(key, error_text(str(failures[0])))
            # restarted meanwhile on the same checkpoint (a static table changed): wait on the new query

    def _wait_for_pass(self, key: Key, done: Future[None] | None, cancelled: Callable[[], bool],
                       poll_seconds: float) -> None:
        if done is None:
            raise self._not_running(key)
        while True:
            try:
                done.result(timeout=poll_seconds)
                return
            except TimeoutError:
                if cancelled():
                    return  # the pass runs on; DESCRIBE shows how it ends
            except StreamError as exc:
                raise self._not_running(key, exc.message) from None

    def _not_running(self, key: Key, error: str | None = None) -> StreamError:
        entry = self.store.get_stream(*key)
        status = entry.status if entry is not None else "DROPPED"
        error = error or (entry.last_error if entry is not None else None)
        return StreamError(
            f"the stream of `{key[0]}`.`{key[1]}` is not running ({status}{f': {error}' if error else ''})",
            error_class="STREAM_NOT_RUNNING", sqlstate="55000", detail=error,
            hint="DESCRIBE STREAMING TABLE shows its last error and attempts; fix the cause and REFRESH STREAMING "
                 "TABLE (it starts a failed stream again), or REFRESH STREAMING TABLE ... FULL")

    def _failed_again(self, key: Key, restarted_from: str, error: str | None) -> StreamError:
        """What REFRESH of a stream that was not running tells when the start it made failed too: it did start it,
        and the failure is this start's (not "is not running", which reads as if nothing had been tried)."""
        entry = self.store.get_stream(*key)
        status = entry.status if entry is not None else "DROPPED"
        error = error or (entry.last_error if entry is not None else None)
        then = "it is retrying" if status == StreamState.RETRYING.value else f"it is {status}"
        return StreamError(
            f"REFRESH started the stream of `{key[0]}`.`{key[1]}` again (it was {restarted_from}) and it failed "
            f"again; {then}{f': {error}' if error else ''}",
            error_class="STREAM_FAILED_AGAIN", sqlstate="55000",
            hint="a failed micro-batch is replayed on every start, so the same input fails the same way: fix the "
                 "cause (the input or the table's definition) first, or REFRESH STREAMING TABLE ... FULL to start "
                 "over from the input as it is now; DESCRIBE STREAMING TABLE shows the attempts and events")

    def restart_all(self) -> int:
        """Take on every stream that should run (at boot); returns how many were found."""
        entries = self.store.list_streams(desired_state=RUNNING)
        for entry in entries:
            problem = self.boot_problem(entry)
            if problem is not None:
                log.warning("not resuming the stream of the catalog row %r.%r: %s; DROP TABLE it, or correct the "
                            "row in the catalog database and restart", entry.database, entry.name, problem)
                continue
            try:
                self.resume(entry)
            except Exception:
                log.exception("resuming stream %s.%s failed", entry.database, entry.name)
        return len(entries)

    def stop_all(self) -> None:
        """Stop every stream, keeping its desired state: the next boot resumes it from its checkpoint. Ends the
        supervisor's thread."""
        if self._closed:
            return
        self._stopping = True
        try:
            self._call("stop_all", self._on_stop_all)
        finally:
            self._closed = True
            self._queue.put(_Quit())
            self._thread.join(timeout=60)

    def running(self) -> list[Key]:
        """The streams with a query running now (a continuous query or a pass)."""
        return sorted(key for key, record in list(self._records.items()) if record.live is not None)

    # -- handlers: only the supervisor's thread runs these ---------------------------------------------------------

    def _event(self, key: Key, kind: str, message: str) -> None:
        """One event in the table's log (a flow's names the flow in its origin)."""
        self.store.record_event(key[0], key[1], kind, message, flow=key[2] if len(key) > 2 else None)

    def _policy(self) -> RetryPolicy:
        return RetryPolicy(self.settings.retry_initial, self.settings.retry_max, self.settings.max_attempts)

    def _move(self, record: Supervised, state: StreamState, **changes: Any) -> None:
        """One transition: checked against the table, then written to the catalog row."""
        if state != record.state:
            lifecycle.check_transition(record.state, state)
        record.state = state
        if self.store.get_stream(*record.key) is not None:
            self.store.update_stream(*record.key, status=state.value, **changes)

    def _record_for(self, entry: StreamEntry) -> Supervised:
        """The record of the catalog row's stream (a new one when the row has a new stream id)."""
        record = self._records.get(entry.key)
        table = self.store.get_table(entry.database, entry.name)
        # a flow runs continuously: the table's schedule is its own stream's
        schedule = Schedule.from_json(table.schedule) if table is not None and entry.flow is None else None
        plan = StreamingPlan.from_json(entry.plan_json)
        if record is None or record.stream_id != entry.stream_id:
            record = Supervised(entry.key, entry.stream_id, plan, schedule,
                                next_run_at=entry.next_run_at)
            self._records[record.key] = record
        else:
            record.plan, record.schedule = plan, schedule
        return record

    def _on_start(self, entry: StreamEntry, built: BuiltStream | None) -> StreamEntry:
        key = entry.key
        if key in self._records:
            self._halt(self._records[key], STOP_WAIT_SECONDS)
        record = self._record_for(entry)
        record.attempts, record.retry_at = 0, None
        try:
            self._launch(record, built, pass_now=record.schedule is not None)
        except BaseException:
            if record.state != StreamState.STOPPED:
                self._move(record, StreamState.STOPPED)
            raise
        return self.store.get_stream(*key) or entry

    def _on_resume(self, entry: StreamEntry) -> None:
        current = self.store.get_stream(*entry.key)
        if current is None or current.stream_id != entry.stream_id:
            return
        record = self._record_for(current)
        if record.live is not None:
            return
        record.attempts, record.retry_at = 0, None     # a boot grants a fresh set of attempts
        if record.schedule is not None:
            first = lifecycle.first_pass_at(record.schedule, current.next_run_at, self.clock())
            if first > self.clock():
                self._wait_for_next_pass(record, first)
                return
        self._start_or_fail(record, pass_now=record.schedule is not None)

    def _launch(self, record: Supervised, built: BuiltStream | None, pass_now: bool) -> None:
        """Start the query: continuous, or one available-now pass of a scheduled table. Raises if Spark refuses."""
        self._move(record, StreamState.STARTING)
        entry = self.store.get_stream(*record.key)
        table = self.store.require_table(*record.key[:2])
        if entry is None or entry.stream_id != record.stream_id:
            raise self._not_running(record.key)
        plan = StreamingPlan.from_json(entry.plan_json)
        record.plan = plan
        if pass_now:
            record.pass_versions = self.edge.input_versions(plan)
        checkpoint = sources_checkpoint(plan, entry.checkpoint, pass_now)
        if built is not None and built.checkpoint != checkpoint:
            built.release()   # built by CREATE before the stream had its checkpoint: its sources must read this one
            built = None
        built = built if built is not None else self.edge.build(record.key, plan, checkpoint)
        trigger = plan.trigger_seconds if plan.trigger_seconds is not None else self.settings.trigger_seconds
        key, stream_id = record.key, record.stream_id
        # only a full refresh marks its new row so: a flow's or a new table's stream never empties a table that other
        # writers (flows) may already have filled
        reset_pending = entry.flow is None and entry.last_refresh_status == reset.RESET_PENDING
        share = self._cdc_share(entry, plan)
        live = self.edge.launch(key, stream_id, plan, built, str(table.location), entry.checkpoint, trigger,
                                pass_now, lambda written: self._batch_written(key, stream_id, written),
                                reset_pending=reset_pending, **({"cdc_share": share} if share is not None else {}))
        if reset_pending:  # the table is emptied for this stream id now: the refresh is under way
            self.store.update_stream(*key, last_refresh_status="RUNNING")
        record.live = live
        self._by_run[live.run_id] = key
        kept = {} if record.attempts else {"last_error": None, "failures": 0}
        if pass_now:
            record.last_pass_at, record.next_run_at = self.clock(), None
            record.pass_done, record.queued_pass = record.queued_pass or Future(), None
            self._move(record, StreamState.REFRESHING, query_id=str(live.query.id) if live.query else None,
                       next_run_at=None, last_refresh_at=record.last_pass_at, last_refresh_status="RUNNING", **kept)
            self._event(key, "STARTED", f"a refresh pass from checkpoint {entry.checkpoint}")
        else:
            self._move(record, StreamState.RUNNING, query_id=str(live.query.id) if live.query else None, **kept)
            self._event(key, "STARTED", f"query {live.query.id if live.query else live.run_id} from "
                                                     f"checkpoint {entry.checkpoint}")

    def _cdc_share(self, entry: StreamEntry, plan: StreamingPlan) -> CdcShare | None:
        """An AUTO CDC stream's share of its table (engine/streams/cdc_flows.py): the table's own AUTO CDC stream's
        state, or the flows' when it has none, and the table's other writers as the catalog has them at each batch."""
        if plan.cdc is None:
            return None
        database, name, mine = entry.database, entry.name, entry.stream_id
        own = self.store.get_stream(database, name)
        own_cdc = own is not None and StreamingPlan.from_json(own.plan_json).cdc is not None
        state_id = own.stream_id if own is not None and own_cdc else FLOWS_STATE

        def others() -> list[str]:
            writers = [flow.stream.stream_id for flow in self.store.list_flows(database, name)]
            current = self.store.get_stream(database, name)
            writers += [current.stream_id] if current is not None else []
            return [writer for writer in writers if writer != mine]

        return CdcShare(state_id, others)

    def _start_or_fail(self, record: Supervised, pass_now: bool) -> None:
        try:
            self._launch(record, None, pass_now)
        except Exception as exc:  # noqa: BLE001 - recorded on the stream and retried
            if self.store.get_stream(*record.key) is not None:
                self._fail(record, getattr(exc, "message", None) or str(exc))

    def _wait_for_next_pass(self, record: Supervised, at: dt.datetime | None) -> None:
        record.next_run_at = at
        self._move(record, StreamState.SCHEDULED, next_run_at=at)
        when = f"next pass at {at.replace(microsecond=0).isoformat(sep=' ')} UTC" if at is not None else \
            "next pass when an input table changes"
        self._event(record.key, "SCHEDULED", f"{when} ({record.schedule.describe()})"
                                if record.schedule is not None else when)

    def _halt(self, record: Supervised, wait_seconds: float) -> bool:
        """Stop the record's query if it has one (its end is this stop's: the listener's report is ignored)."""
        live = record.live
        if live is None:
            return False
        self._by_run.pop(live.run_id, None)
        try:
            self.edge.halt(live, wait_seconds)
        except StreamStopTimeoutError:
            self._by_run[live.run_id] = record.key
            raise
        record.live = None
        if live.available_now:
            self._end_pass(record, "CANCELED", StreamError("the refresh pass was stopped before it ended",
                                                           error_class="STREAM_REFRESH_CANCELED", sqlstate="57014"))
        return True

    def _end_pass(self, record: Supervised, status: str, failure: StreamError | None) -> None:
        if self.store.get_stream(*record.key) is not None:
            self.store.update_stream(*record.key, last_refresh_status=status)
        ending = [record.pass_done]
        if failure is not None and (status == "CANCELED" or record.state == StreamState.FAILED):
            ending.append(record.queued_pass)      # no pass follows: a REFRESH waiting for one learns why
            record.queued_pass = None
        for done in ending:
            if done is not None and not done.done():
                if failure is None:
                    done.set_result(None)
                else:
                    done.set_exception(failure)

    def _on_stop(self, key: Key, desired: str | None, wait_seconds: float) -> None:
        record = self._records.get(key)
        halted = self._halt(record, wait_seconds) if record is not None else False
        if self.store.get_stream(*key) is None:
            return
        changes: dict[str, Any] = {} if desired is None else {"desired_state": desired}
        if record is not None:
            record.retry_at = None
            if record.state != StreamState.STOPPED:
                self._move(record, StreamState.STOPPED, **changes)
            elif changes:
                self.store.update_stream(*key, **changes)
        else:
            self.store.update_stream(*key, status=STOPPED, **changes)
        if halted:
            self._event(key, "STOPPED", "stopped" if desired else "stopped with the gateway")

    def _on_drop(self, key: Key, keep_session: bool) -> None:
        entry = self.store.get_stream(*key)
        self._on_stop(key, STOPPED, STOP_WAIT_SECONDS)
        checkpoint = self._owned_checkpoint(entry.checkpoint) if entry is not None else None
        if checkpoint is not None:
            self._remove_checkpoint_copy(checkpoint)
            remove_folder(checkpoint, "the checkpoint of a dropped stream")
        record = self._records.pop(key, None)
        if record is not None:
            lifecycle.check_transition(record.state, StreamState.DROPPED)
            record.state = StreamState.DROPPED
            self._end_pass(record, "CANCELED", StreamError("the table was dropped", error_class="STREAM_DROPPED",
                                                           sqlstate="55000"))
        if not keep_session:
            self.edge.forget_session(key)

    def _on_remove_checkpoint(self, key: Key, checkpoint: str) -> None:
        entry = self.store.get_stream(*key)
        if entry is not None and entry.checkpoint == checkpoint:
            raise ValueError(f"the checkpoint {checkpoint} is the one the stream of {key[0]}.{key[1]} uses")
        folder = self._owned_checkpoint(checkpoint)
        if folder is not None:
            self._remove_checkpoint_copy(folder)
            remove_folder(folder, "the checkpoint of a replaced stream")

    def _remove_checkpoint_copy(self, checkpoint: Path) -> None:
        """The checkpoint's copy on the object store goes first: a local folder without it is only a cache."""
        self.edge.remove_checkpoint(str(checkpoint))

    def _on_refresh(self, key: Key) -> Future[None] | None:
        entry = self.store.get_stream(*key)
        if entry is None:
            raise self._not_running(key)
        record = self._record_for(entry)
        record.restarted_from = None
        if record.live is not None and record.live.available_now:   # one more pass once this one has ended
            record.queued_pass = record.queued_pass or Future()
            return record.queued_pass
        if record.live is not None:
            return None  # a running continuous stream: catch_up waits until it has caught up
        record.restarted_from = record.state.value if record.schedule is None else None
        record.attempts, record.retry_at = 0, None      # REFRESH grants a fresh set of attempts
        if entry.desired_state != RUNNING:
            self.store.update_stream(*key, desired_state=RUNNING)
        self._event(key, "REFRESH", "a refresh pass, now" if record.schedule is not None else
                                "REFRESH of a stream that was not running: started again")
        try:
            self._launch(record, None, pass_now=record.schedule is not None)
        except Exception as exc:
            self._fail(record, getattr(exc, "message", None) or str(exc))
            raise
        return record.pass_done if record.schedule is not None else None

    def _on_reschedule(self, key: Key) -> None:
        """Decided by what runs, not by what the record knew: any command may have read the new row first."""
        entry = self.store.get_stream(*key)
        if entry is None:
            return
        record = self._records.get(key)
        old = record.schedule if record is not None else None
        record = self._record_for(entry)
        new, live = record.schedule, record.live
        if new != old:
            self._event(key, "SCHEDULE", new.describe() if new is not None else "continuous")
        if new is None:
            self.store.update_stream(*key, next_run_at=None)
            if record.state == StreamState.SCHEDULED:          # scheduled -> continuous, on the same checkpoint
                self._start_or_fail(record, pass_now=False)
            # a pass under way goes continuous when it ends; a retry or a REFRESH starts what the row says
        elif live is not None and not live.available_now:     # continuous -> scheduled, on the same checkpoint
            self._halt(record, STOP_WAIT_SECONDS)
            record.pass_versions = self.edge.input_versions(record.plan)
            self._wait_for_next_pass(record, lifecycle.next_pass_at(new, self.clock()))
        elif record.state == StreamState.SCHEDULED and new != old:   # another schedule: the next pass by it
            self._wait_for_next_pass(record, lifecycle.next_pass_at(new, self.clock()))

    def _on_failure(self, key: Key, stream_id: str, message: str) -> None:
        entry = self.store.get_stream(*key)
        if entry is None or entry.stream_id != stream_id:
            return
        record = self._record_for(entry)
        if record.live is None:
            self._fail(record, message)

    def _fail(self, record: Supervised, message: str) -> None:
        """A failed attempt: RETRYING after the backoff, or FAILED for good; one warning line in the log."""
        text = error_text(message)
        now = self.clock()
        outcome = lifecycle.after_failure(record.attempts, text, now, self._policy(),
                                          RAISED_IN_BATCH.take(record.stream_id))
        record.attempts, record.retry_at = outcome.attempts, outcome.retry_at
        state = outcome.state
        if self._stopping and state == StreamState.RETRYING:
            state = StreamState.FAILED  # no retries while the gateway stops; the next boot resumes it
        log.warning("stream %s failed (%s): %s", named(record.key), outcome.reason, one_line(text))
        log.debug("stream %s failure in full:\n%s", named(record.key), message)
        self._move(record, state, last_error=text, failures=outcome.attempts)
        self._event(record.key, "FAILED", f"{text} ({outcome.reason})")
        if record.schedule is not None:
            self._end_pass(record, "FAILED", StreamError(text, error_class="STREAM_REFRESH_FAILED",
                                                         sqlstate="XX000"))

    def _on_terminated(self, run_id: str, exception: str | None) -> None:
        key = self._by_run.pop(run_id, None)
        record = self._records.get(key) if key is not None else None
        if record is None or record.live is None or record.live.run_id != run_id:
            return  # stopped on purpose, or already handled
        live, record.live = record.live, None
        live.release()
        if exception:
            self._fail(record, exception)
        elif live.available_now:
            record.attempts = 0
            self.store.update_stream(*record.key, failures=0, last_error=None)
            self._event(record.key, "REFRESH_COMPLETED", "the refresh pass processed all available "
                                                                      "input")
            self._end_pass(record, "COMPLETED", None)
            if record.schedule is None:               # rescheduled to continuous while the pass ran
                if record.queued_pass is not None:
                    record.queued_pass.set_result(None)
                    record.queued_pass = None
                self._start_or_fail(record, pass_now=False)
            elif record.queued_pass is not None:      # a REFRESH asked for a pass while this one ran
                self._start_or_fail(record, pass_now=True)
            else:
                self._wait_for_next_pass(record, lifecycle.next_pass_at(record.schedule, self.clock()))
        else:
            self._move(record, StreamState.STOPPED)
            self._event(record.key, "STOPPED", "the query ended")

    def _on_committed(self, key: Key, stream_id: str) -> None:
        record = self._records.get(key)
        if record is None or record.stream_id != stream_id or not record.attempts:
            return
        record.attempts = 0                           # a batch went through: the failures in a row are over
        self.store.update_stream(*key, failures=0, last_error=None)

    def _on_tick(self) -> None:
        now = self.clock()
        check_inputs = now >= self._next_input_check
        if check_inputs:
            interval = self.settings.static_check_interval or self.settings.tick_seconds
            self._next_input_check = now + dt.timedelta(seconds=interval)
        for record in list(self._records.values()):
            if self._stopping:
                return
            try:
                self._tick_one(record, now, check_inputs)
            except Exception:
                log.exception("stream supervisor: the tick of %s failed", named(record.key))

    def _tick_one(self, record: Supervised, now: dt.datetime, check_inputs: bool) -> None:
        live = record.live
        if live is not None:
            ended, failure = self.edge.ended(live)
            if ended:   # a safety net: the listener's report of the end was lost
                # The listener reports the last batch's progress (its flow_progress event) before the end, but it
                # runs behind the query: act only once it had time to, or the last batch's event is dropped.
                live.ended_seen_at = live.ended_seen_at or now
                if now - live.ended_seen_at >= LISTENER_GRACE:
                    self._on_terminated(live.run_id, failure)
            elif record.state == StreamState.RUNNING and check_inputs and self.settings.static_check_interval > 0:
                changed = self.edge.static_change(live)
                if changed is not None:
                    self._restart_for_static(record, changed)
            return
        if record.state == StreamState.RETRYING and lifecycle.retry_due(record.retry_at, now):
            self._event(record.key, "RETRY", f"attempt {record.attempts + 1} of "
                                                          f"{self.settings.max_attempts}")
            self._start_or_fail(record, pass_now=record.schedule is not None)
        elif record.state == StreamState.SCHEDULED and record.schedule is not None:
            changed = False
            if record.schedule.kind == "on_update" and check_inputs:
                changed = self.edge.input_versions(record.plan) != record.pass_versions
            if lifecycle.pass_due(record.schedule, record.next_run_at, now, changed, record.last_pass_at):
                self._start_or_fail(record, pass_now=True)

    def _restart_for_static(self, record: Supervised, changed: str) -> None:
        """Spark fixes a static table's file list when the stream starts; Databricks' stream-static join reads the
        table's latest version at each batch. A new version restarts the stream on its checkpoint (nothing lost or
        repeated), so the batches after it join with the new rows."""
        log.info("stream %s: static table %s changed; restarting it on its checkpoint", named(record.key), changed)
        self._event(record.key, "RESTART", f"static table {changed} has a new version")
        self._halt(record, STOP_WAIT_SECONDS)
        self._start_or_fail(record, pass_now=False)

    def _on_stop_all(self) -> None:
        for key, record in list(self._records.items()):
            try:
                # no wait past Spark's stop timeout: the process may end mid-batch, its checkpoint and the batch's
                # txn make the next boot redo that batch exactly once
                if self._halt(record, 0):
                    self._move(record, StreamState.STOPPED)
                    self._event(key, "STOPPED", "stopped with the gateway")
            except StreamStopTimeoutError as exc:
                log.warning("%s", exc.message)

    # -- what Spark calls: the batch and the listener (they never wait for the supervisor) ------------------------

    def _batch_written(self, key: Key, stream_id: str, written: BatchWritten) -> None:
        """Called in the batch itself, once its commit is in the Delta log: the catalog's last batch is exact."""
        events.batch_written(stream_id, written)  # its flow_progress event is written with Spark's progress
        self.store.update_stream(*key, last_batch_id=written.batch_id, last_batch_at=utc_now())
        self._post("committed", self._on_committed, key, stream_id)

    def _progress(self, run_id: str, progress: dict[str, Any]) -> None:
        key = self._by_run.get(run_id)
        record = self._records.get(key) if key is not None else None
        live = record.live if record is not None else None
        if key is None or live is None or live.run_id != run_id:
            return
        dropped = sum(int(op.get("numRowsDroppedByWatermark") or 0) for op in progress.get("stateOperators", []))
        live.late_rows_dropped += dropped
        live.last_progress = progress
        self.store.update_stream(*key, rows_per_second=progress.get("processedRowsPerSecond"))
        if dropped:
            self._event(key, "LATE_ROWS_DROPPED",
                                    f"batch {progress['batchId']}: {dropped} rows arrived after the watermark")
        events.batch_progress(self.store, key[:2], live.stream_id, progress,  # the batch's flow_progress event
                              flow_name=f"{key[0]}.{key[2]}" if len(key) > 2 else None)

    def _terminated(self, run_id: str, exception: str | None) -> None:
        self._post("terminated", self._on_terminated, run_id, exception)


def stream_key(database: str, name: str, flow: str | None = None) -> Key:
    """The supervisor's key of a table's own stream, or of an append flow into the table."""
    return (database, name) if flow is None else (database, name, flow)


def named(key: Key) -> str:
    """A stream's name for the server log: `db.table`, or `db.table (flow f)`."""
    return f"{key[0]}.{key[1]}" + (f" (flow {key[2]})" if len(key) > 2 else "")


def _batch_after(progress: dict[str, Any], moment: dt.datetime) -> bool:
    """Whether the last reported batch was planned at or after `moment` (its trigger's start)."""
    stamp = progress.get("timestamp")
    if not stamp:
        return False
    started = dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    return started >= moment


def new_stream_id() -> str:
    import uuid

    return uuid.uuid4().hex
