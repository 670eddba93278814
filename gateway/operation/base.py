"""The operation: runs once (inline or on a background thread), then serves its result incrementally.

Two locks, for two jobs: `_state_lock` guards the state machine and is only ever held for a moment, so cancel and
close never wait behind a long fetch; `_fetch_lock` serialises fetches (which may wait while Spark computes the next
partition). Cancel and close are idempotent, and a failure that arrives after a cancel is dropped, not reported.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa

from sluicegate.dialect.errors import SqlError
from sluicegate.engine.results import TEXT, ResultColumn, WireTypes
from sluicegate.engine.sql import BatchSource, StatementResult
from sluicegate.gateway.errors import (
    FeatureNotSupportedError,
    InternalError,
    InvalidOperationStateError,
    OperationCanceledError,
    QueryTimeoutError,
)
from sluicegate.gateway.handles import OperationHandle
from sluicegate.gateway.operation.state import TERMINAL, OperationState, check_transition

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.engine.sessions import CurrentDatabase
    from sluicegate.executor.binding.session_views import SessionViews

log = logging.getLogger(__name__)


class Watcher(Protocol):
    """What an operation tells of its life (gateway/operation/observers.py's `Observers`, set by the manager)."""

    def started(self, operation: Operation) -> None: ...

    def ended(self, operation: Operation) -> None: ...

    def closed(self, operation: Operation) -> None: ...


class _Unwatched:
    def started(self, operation: Operation) -> None:
        pass

    def ended(self, operation: Operation) -> None:
        pass

    def closed(self, operation: Operation) -> None:
        pass


class Session(Protocol):
    """What an operation needs of the session that started it (gateway/session.py's Session, which tracks its
    operations: the session sits above them, as Kyuubi's does)."""

    user: str
    protocol: int
    spark: SparkSession
    views: SessionViews
    database: CurrentDatabase   # `spark`'s current database, kept in Python

    def touch(self) -> None: ...

    def forget(self, operation: Operation) -> None: ...


class OperationType(Enum):
    EXECUTE_STATEMENT = "EXECUTE_STATEMENT"
    GET_TYPE_INFO = "GET_TYPE_INFO"
    GET_CATALOGS = "GET_CATALOGS"
    GET_SCHEMAS = "GET_SCHEMAS"
    GET_TABLES = "GET_TABLES"
    GET_TABLE_TYPES = "GET_TABLE_TYPES"
    GET_COLUMNS = "GET_COLUMNS"
    GET_FUNCTIONS = "GET_FUNCTIONS"
    UNKNOWN = "UNKNOWN"


class FetchOrientation(Enum):
    NEXT = "NEXT"
    FIRST = "FIRST"
    OTHER = "OTHER"


@dataclass(frozen=True)
class ResultFormat:
    """How the client reads the result: HiveServer2 columns (the default), or Arrow batches, LZ4-framed when it can
    decompress them, with the type families of `types` kept as Arrow types instead of text."""

    arrow: bool = False
    lz4: bool = False
    types: WireTypes = TEXT


COLUMNS = ResultFormat()


@dataclass
class ArrowBlock:
    """A slice of a result as the Arrow batches it was produced in (sliced, never copied), from row start_offset."""

    start_offset: int
    schema: pa.Schema
    batches: list[pa.RecordBatch]
    has_more: bool

    @property
    def num_rows(self) -> int:
        return sum(batch.num_rows for batch in self.batches)


@dataclass
class RowBlock:
    """A slice of a result: `arrays[i]` holds column i's values for rows start_offset .. start_offset+num_rows."""

    start_offset: int
    columns: list[ResultColumn]
    arrays: list[pa.Array]
    has_more: bool

    @property
    def num_rows(self) -> int:
        return len(self.arrays[0]) if self.arrays else 0


@dataclass
class OperationLog:
    """Log lines a client reads with FetchResults(fetchType=1): FETCH_NEXT returns the unread ones."""

    lines: list[str] = field(default_factory=list)
    read: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, line: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        with self._lock:
            self.lines.append(f"{stamp} {line}")

    def fetch(self, orientation: FetchOrientation, max_rows: int) -> list[str]:
        with self._lock:
            if orientation is FetchOrientation.FIRST:
                self.read = 0
            chunk = self.lines[self.read : self.read + max_rows]
            self.read += len(chunk)
            return chunk


@dataclass(frozen=True)
class OperationStatus:
    state: OperationState
    error: BaseException | None
    started: float
    completed: float | None
    has_result_set: bool
    modified_rows: int | None = None   # a DML statement's count of rows inserted, updated or deleted


class Operation(ABC):
    """Subclasses say what to run (`execute`) and how to stop it (`cancel_work`)."""

    op_type: OperationType = OperationType.UNKNOWN

    def __init__(self, session: Session, statement: str | None = None, result_format: ResultFormat = COLUMNS) -> None:
        self.handle = OperationHandle.new()
        self.session = session
        self.statement = statement
        self.result_format = result_format
        self.log = OperationLog()
        self._state = OperationState.INITIALIZED
        self._state_lock = threading.Lock()
        self._fetch_lock = threading.Lock()
        self._done = threading.Event()
        self._error: BaseException | None = None
        self._result: StatementResult | None = None
        self._source: BatchSource | None = None
        self._schema: pa.Schema | None = None  # of the batches, named by position
        self._batches: Iterator[pa.RecordBatch] | None = None
        self._pending: pa.RecordBatch | None = None
        self._exhausted = False
        self._row_offset = 0
        self._timer: threading.Timer | None = None
        self.started = time.time()
        self.completed: float | None = None
        self.last_access = time.monotonic()
        self.observers: Watcher = _Unwatched()   # the manager's observers once it runs the operation

    # -- what subclasses provide -------------------------------------------------------------------------------

    @abstractmethod
    def execute(self) -> StatementResult:
        """Do the work; return the result's columns and a way to open its batches."""

    def cancel_work(self) -> None:  # noqa: B027 - a no-op unless the operation runs Spark jobs
        """Stop work in flight (Spark jobs). Called at most once per cancel, without locks held."""

    # -- state ---------------------------------------------------------------------------------------------------

    @property
    def state(self) -> OperationState:
        return self._state

    def _transition(self, new: OperationState) -> bool:
        """Move to `new` if allowed; False (and no change) if the operation already ended."""
        with self._state_lock:
            if self._state in TERMINAL and new not in (OperationState.CLOSED,):
                return False
            if self._state is OperationState.CLOSED:
                return False
            check_transition(self._state, new)
            ended_now = new in TERMINAL and self._state not in TERMINAL
            self._state = new
            if new in TERMINAL and self.completed is None:
                self.completed = time.time()
        if new in TERMINAL:
            self._done.set()
            if self._timer is not None:
                self._timer.cancel()
            if ended_now:
                self.observers.ended(self)
        return True

    def status(self) -> OperationStatus:
        self.last_access = time.monotonic()
        with self._state_lock:
            return OperationStatus(
                self._state, self._error, self.started, self.completed, bool(self._result and self._result.columns),
                self._result.modified_rows if self._result is not None else None,
            )

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    @property
    def rows_fetched(self) -> int:
        """The rows the client has fetched so far (the offset of the next fetch; the query history's
        `produced_rows`, read at close, and system.runtime.queries' rows)."""
        return self._row_offset

    @property
    def from_result_cache(self) -> bool:
        """Whether the result is a kept answer of an earlier run (the query history's `from_result_cache`)."""
        result = self._result
        return result is not None and result.from_result_cache

    # -- running -------------------------------------------------------------------------------------------------

    def mark_pending(self, timeout: float | None) -> None:
        self._transition(OperationState.PENDING)
        self._arm_timeout(timeout)

    def _arm_timeout(self, timeout: float | None) -> None:
        if timeout and timeout > 0:
            self._timer = threading.Timer(timeout, self._time_out, args=(timeout,))
            self._timer.daemon = True
            self._timer.start()

    def run(self, timeout: float | None = None) -> None:
        """Run to FINISHED or ERROR (or stop early if cancelled meanwhile). Never raises."""
        if self._timer is None:
            self._arm_timeout(timeout)
        if not self._transition(OperationState.RUNNING):
            return
        self.observers.started(self)
        if self.statement is not None:
            self.log.add(f"Running: {self.statement.strip()[:500]}")
        result: StatementResult | None = None
        try:
            result = self.execute()
            if self._state in TERMINAL:
                result.close()
                return  # cancelled or timed out during analysis: start no job
            schema, source = result.open(self.result_format.types)
            batches = iter(source)
            # The first batch is read here, so that most failures show in the status rather than at fetch.
            pending = next(batches, None)
        except SqlError as exc:
            if result is not None:
                result.close()
            self._fail(exc)
            return
        except Exception as exc:
            if result is not None:
                result.close()
            log.exception("operation %s failed inside the gateway", self.handle.hex)
            self._fail(InternalError(f"internal error in the gateway: {type(exc).__name__}: {exc}"))
            return
        with self._state_lock:
            ended = self._state in TERMINAL
            if not ended:
                self._result, self._source, self._batches, self._pending = result, source, batches, pending
                self._schema = schema
                self._exhausted = pending is None
        if ended:
            source.close()
            result.close()
            return
        self._transition(OperationState.FINISHED)
        self.log.add("Finished")

    def _fail(self, exc: BaseException) -> None:
        with self._state_lock:
            if self._state in TERMINAL:
                # after a cancel, close or timeout the statement's own error is that end's echo (Spark's "Job n
                # cancelled by the client"): nothing an operator acts on, so DEBUG; after anything else, INFO
                echo = self._state in (OperationState.CANCELED, OperationState.CLOSED, OperationState.TIMEDOUT)
                log.log(logging.DEBUG if echo else logging.INFO,
                        "ignoring an error of operation %s that already ended (%s): %s", self.handle.hex,
                        self._state.name, exc)
                return
            self._error = exc
        self.log.add(f"Failed: {getattr(exc, 'message', exc)}")
        self._transition(OperationState.ERROR)

    def _time_out(self, timeout: float) -> None:
        with self._state_lock:
            if self._state in TERMINAL:
                return
            self._error = QueryTimeoutError(
                f"the statement ran longer than its query timeout of {timeout:g} s and was cancelled",
                hint="raise the timeout (JDBC Statement.setQueryTimeout) or make the query cheaper",
            )
        if self._transition(OperationState.TIMEDOUT):
            self.log.add("Timed out")
            self._stop_work()

    def cancel(self) -> None:
        if self._transition(OperationState.CANCELED):
            self.log.add("Cancelled")
            self._stop_work()

    def kill(self, error: SqlError) -> bool:
        """Cancel what runs on someone's order (`CALL system.runtime.kill_query`): the operation ends in ERROR with
        `error`, so that every client shows who killed it and why (HiveServer2 clients show no message for a
        CANCELED state), as Trino fails a killed query. False when it had already ended."""
        with self._state_lock:
            if self._state in TERMINAL:
                return False
            self._error = error
        if not self._transition(OperationState.ERROR):
            return False
        self.log.add(f"Killed: {error.message}")
        self._stop_work()
        return True

    def close(self) -> None:
        """Cancel what runs, release the result; idempotent."""
        if self._state is OperationState.CLOSED:
            return
        running = self._state not in TERMINAL
        closing = self._transition(OperationState.CLOSED)
        if running:
            self._stop_work()
        # A fetch in flight ends soon after its jobs are cancelled; the result is released after it.
        if self._fetch_lock.acquire(timeout=30):
            try:
                self._release()
            finally:
                self._fetch_lock.release()
        else:
            log.warning("operation %s: a fetch did not end within 30 s of close", self.handle.hex)
        if self._result is not None:
            self._result.close()
        if closing:
            self.observers.closed(self)

    def _stop_work(self) -> None:
        try:
            self.cancel_work()
        except Exception:
            log.exception("cancelling the work of operation %s failed", self.handle.hex)

    def _release(self) -> None:
        source, self._source, self._batches, self._pending = self._source, None, None, None
        if source is not None:
            try:
                source.close()
            except Exception:
                log.exception("releasing the result of operation %s failed", self.handle.hex)

    # -- results -------------------------------------------------------------------------------------------------

    def result_columns(self) -> list[ResultColumn]:
        self._require_finished()
        assert self._result is not None
        return self._result.columns

    def _require_finished(self) -> None:
        self.last_access = time.monotonic()
        state = self._state
        if state is OperationState.FINISHED:
            return
        if state is OperationState.ERROR and self._error is not None:
            raise self._error
        if state is OperationState.CANCELED:
            raise OperationCanceledError("the operation was cancelled; its results are gone")
        if state is OperationState.TIMEDOUT and self._error is not None:
            raise self._error
        if state is OperationState.CLOSED:
            raise InvalidOperationStateError("the operation is closed")
        raise InvalidOperationStateError(
            f"the operation is {state.value}; poll GetOperationStatus until it is FINISHED before fetching"
        )

    def result_schema(self) -> pa.Schema:
        """The Arrow schema of the result's batches (named by position), once the operation finished."""
        self._require_finished()
        assert self._schema is not None
        return self._schema

    def fetch(self, orientation: FetchOrientation, max_rows: int, max_bytes: int = 0) -> RowBlock:
        """The next rows as one array per column (HiveServer2's columns); `max_bytes` > 0 bounds their size too."""
        start, slices, schema = self._fetch_slices(orientation, max_rows, max_bytes)
        assert self._result is not None
        if slices:
            table = pa.Table.from_batches(slices)
            arrays = [table.column(i).combine_chunks() for i in range(table.num_columns)]
        else:
            arrays = [pa.array([], type=field.type) for field in schema]
        return RowBlock(start, self._result.columns, arrays, has_more=not self._exhausted)

    def fetch_batches(self, orientation: FetchOrientation, max_rows: int, max_bytes: int = 0) -> ArrowBlock:
        """The next rows as the Arrow batches they came in (for Arrow results: no copy, no per-column work)."""
        start, slices, schema = self._fetch_slices(orientation, max_rows, max_bytes)
        return ArrowBlock(start, schema, slices, has_more=not self._exhausted)

    def _fetch_slices(self, orientation: FetchOrientation, max_rows: int,
                      max_bytes: int) -> tuple[int, list[pa.RecordBatch], pa.Schema]:
        if orientation is FetchOrientation.OTHER:
            raise FeatureNotSupportedError(
                "only FETCH_NEXT and FETCH_FIRST are supported; results are read forward",
                hint="read the result again from its start with FETCH_FIRST",
            )
        self._require_finished()
        with self._fetch_lock:
            self._require_finished()
            assert self._result is not None and self._schema is not None
            if orientation is FetchOrientation.FIRST and self._row_offset > 0:
                self._restart()
            start = self._row_offset
            try:
                slices = self._take(max_rows, max_bytes)
            except SqlError:
                self._require_finished()  # a cancel or timeout explains the failure better than Spark's message
                raise
            self._row_offset += sum(batch.num_rows for batch in slices)
            return start, slices, self._schema

    def _restart(self) -> None:
        assert self._result is not None
        self._release()
        self._schema, self._source = self._result.open(self.result_format.types)
        self._batches = iter(self._source)
        self._pending = None
        self._exhausted = False
        self._row_offset = 0

    def _take(self, max_rows: int, max_bytes: int = 0) -> list[pa.RecordBatch]:
        """Up to `max_rows` rows and, when `max_bytes` > 0, about that many bytes of Arrow buffers (at least one
        row, so that a client always progresses), as slices of the produced batches."""
        slices: list[pa.RecordBatch] = []
        wanted = max_rows
        budget = float(max_bytes) if max_bytes > 0 else None
        while wanted > 0 and not self._exhausted:
            if self._pending is None:
                assert self._batches is not None
                self._pending = next(self._batches, None)
                if self._pending is None:
                    self._exhausted = True
                    break
            batch = self._pending
            if batch.num_rows == 0:
                self._pending = None
                continue
            rows = min(batch.num_rows, wanted)
            if budget is not None:
                row_bytes = batch.nbytes / batch.num_rows
                fitting = max(int(budget // row_bytes), 0) if row_bytes else rows
                rows = min(rows, fitting if slices else max(fitting, 1))
                if rows == 0:
                    break
                budget -= rows * row_bytes
            if rows == batch.num_rows:
                slices.append(batch)
                self._pending = None
            else:
                slices.append(batch.slice(0, rows))
                self._pending = batch.slice(rows)
            wanted -= rows
        return slices
