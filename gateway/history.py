"""The query history's recorder and the statement log: an operation observer (gateway/operation/observers.py) that
notes what it needs of each statement when the client closes it, and a thread of its own that does the rest.

On the operation's thread the closed operation, the state it ended in and the time are put on a queue (no parsing,
no JVM, no I/O, no copying), so a statement is never slower for being recorded. The writer thread, in batches (it
sleeps while one gathers: one wake-up a batch): reads what it keeps of the operation (`_noted`), its type
and tables off the tree it was classified from as it ran (dialect/statement_types.py `facts_of`: a walk, no parse),
redacts its text from sqlglot's tokens (dialect/redaction.py: literals unless `history.keep_text_whole`, secrets
always), asks Spark's status store what a statement that names tables read (engine/progress.py `group_input`), logs
one INFO line per statement on `sluicegate.statements`, and appends the batch to the `query_history` table
(catalog/history.py, in a SQLite file of its own next to a SQLite catalog), which trims itself to `[history]`'s
retention. What the writer costs the statements being served is measured by bench/history_bench.py.

A statement is recorded when closed, since only then are the rows its client fetched known (`produced_rows`); the
state it ended in was noted when it ended (`ended`). Every way a session ends closes its operations, so each statement
that ran is recorded once. The gateway's own work (streams started when it restores them, scheduled refreshes) is
recorded through `record_system`, with `executed_by = 'system'` and its own `source`.
"""

from __future__ import annotations

import datetime as dt
import logging
import queue
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sluicegate.catalog import history
from sluicegate.catalog.history import CLIENT, SYSTEM_USER, HistoryRecord, HistorySettings
from sluicegate.dialect.errors import SqlError
from sluicegate.dialect.redaction import mask_secret_assignments, redact_statement
from sluicegate.dialect.statement_types import StatementFacts, facts_of, parsed, statement_facts
from sluicegate.engine.progress import group_input
from sluicegate.gateway.operation.base import OperationType
from sluicegate.gateway.operation.state import OperationState

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore
    from sluicegate.dialect.statements import Statement
    from sluicegate.gateway.operation.base import Operation

log = logging.getLogger(__name__)
statement_log = logging.getLogger("sluicegate.statements")

_STATUS = {OperationState.FINISHED: "FINISHED", OperationState.ERROR: "FAILED", OperationState.CANCELED: "CANCELED",
           OperationState.TIMEDOUT: "TIMEDOUT", OperationState.CLOSED: "CANCELED"}  # closed before it ended
MAX_MESSAGE = 4000   # characters of an error message kept
YIELD_EVERY_SECONDS = 0.001   # the writer hands the GIL back at least this often while it builds a batch
TRIM_EVERY_SECONDS = 60.0   # the retention is enforced at least this often, and every 1% of max_rows written


@dataclass(frozen=True)
class _Noted:
    """What the writer reads of a closed operation: plain values, nothing computed."""

    statement_id: str
    session_id: str | None
    user: str
    source: str
    client_application: str | None
    client_address: str | None
    op_type: str
    text: str | None
    state: OperationState
    error: BaseException | None
    started: float
    completed: float | None
    closed: float
    rows: int | None
    modified_rows: int | None
    spark_context: Any = None      # where the rows a query read are counted (its job group is the statement id)
    classified: Any = None         # (statement, sqlglot tree) as the operation classified it, None if it did not
    from_result_cache: bool | None = None   # a statement's result was a kept answer (None: no statement)


# what the operation's thread queues at close: the operation, the state it ended in (None: closed before it ended)
# and when it was closed
_Closed = tuple["Operation", "OperationState | None", float]


def _noted(operation: Operation, ended: OperationState | None, closed: float) -> _Noted:
    """What the history keeps of a closed operation, read on the writer thread."""
    if ended is None:
        state, error, modified = OperationState.CLOSED, None, None
    else:
        status = operation.status()
        state, error, modified = ended, status.error, status.modified_rows
    session = operation.session
    session_handle = getattr(session, "handle", None)
    text = operation.statement if operation.op_type is OperationType.EXECUTE_STATEMENT else None
    return _Noted(
        statement_id=operation.handle.hex, session_id=getattr(session_handle, "hex", None),
        user=getattr(session, "user", None) or "anonymous", source=CLIENT,
        client_application=getattr(session, "client_application", None),
        client_address=_address(getattr(session, "client", None)), op_type=operation.op_type.value, text=text,
        state=state, error=error, started=operation.started, completed=operation.completed, closed=closed,
        rows=operation.rows_fetched if state is OperationState.FINISHED else None,
        modified_rows=modified, spark_context=getattr(getattr(session, "spark", None), "sparkContext", None),
        classified=getattr(operation, "classified", None),
        from_result_cache=operation.from_result_cache if text is not None else None)


def _address(peer: str | None) -> str | None:
    """The client's IP of a peer written `host:port`."""
    if not peer:
        return None
    host, _, port = peer.rpartition(":")
    return host if host and port.isdigit() else peer


def _utc(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


def _ms(start: float, end: float | None) -> int | None:
    return None if end is None else max(round((end - start) * 1000), 0)


class HistoryRecorder:
    """Observes operations; writes the history (when `settings.enabled`) and the statement log lines."""

    def __init__(self, store: CatalogStore, settings: HistorySettings, *, log_lines: bool = True) -> None:
        """Stores the statements when `settings.enabled`; logs them when `log_lines` (`log.statements`)."""
        self._store = store
        self._settings = settings
        self._write = settings.enabled
        self._described = _Described(settings.keep_text_whole)   # the writer thread's only
        self._since_trim = 0            # rows written since the table was last trimmed (the writer thread's)
        self._next_trim = 0.0           # monotonic time of the next trim due by time
        self._log_lines = log_lines
        self._queue: queue.SimpleQueue[_Closed | HistoryRecord | None] = queue.SimpleQueue()
        self._ended: dict[bytes, OperationState] = {}   # the state each operation ended in, until it closes
        self._lock = threading.Lock()
        self._progress = threading.Condition()
        self._wake = threading.Event()   # cuts the writer's wait for a batch short: a full batch, flush, stop
        self._stopping = False           # stop() was called: what is queued is written without waiting
        self._queued = 0
        self._done = 0
        self.cpu_seconds = 0.0   # the writer thread's CPU time so far: what the history costs (bench/history_bench.py)
        self._thread = threading.Thread(target=self._run, name="sluicegate-history", daemon=True)
        self._thread.start()

    # -- the observer (the operation's thread: copy and enqueue only) -----------------------------------------------

    def started(self, operation: Operation) -> None:
        pass

    def ended(self, operation: Operation) -> None:
        with self._lock:
            self._ended[operation.handle.guid] = operation.state   # after the close it reads CLOSED

    def closed(self, operation: Operation) -> None:
        with self._lock:
            state = self._ended.pop(operation.handle.guid, None)
        # the operation itself is queued and its fields read on the writer (`_noted`): once closed, nothing of what
        # the history keeps changes, and copying them here (a frozen record of 18 fields) was most of the observer's
        # 12 us a statement
        self._put((operation, state, time.time()))

    # -- the gateway's own work ---------------------------------------------------------------------------------------

    def record_system(self, source: str, statement_type: str, text: str | None, started: float, ended: float,
                      error: BaseException | None = None, written: tuple[str, ...] = (),
                      read: tuple[str, ...] = ()) -> None:
        """One piece of the gateway's own work (a stream started on restore, a scheduled refresh) as a statement of
        user `system`; `source` says which kind (STREAM_RESTORE, SCHEDULED_REFRESH ...; executor/system_work.py)."""
        error_class, sqlstate, message = _error_fields(error)
        self._put(HistoryRecord(
            statement_id=uuid.uuid4().hex, session_id=None,
            executed_by=SYSTEM_USER, source=source, client_application="sluicegate", client_address=None,
            statement_type=statement_type, execution_status="FAILED" if error is not None else "FINISHED",
            error_class=error_class, sqlstate=sqlstate, error_message=message, start_time=_utc(started),
            end_time=_utc(ended), total_duration_ms=_ms(started, ended), execution_duration_ms=_ms(started, ended),
            produced_rows=None, modified_rows=None, read_tables=read, written_tables=written,
            statement_text=redact_statement(text, keep_literals=self._settings.keep_text_whole) if text else None))

    def _put(self, item: _Closed | HistoryRecord) -> None:
        with self._progress:
            self._queued += 1
            full = self._queued - self._done >= self._settings.batch_size
        self._queue.put(item)
        if full:   # a whole batch waits: written now rather than at the end of the interval
            self._wake.set()

    # -- the writer thread --------------------------------------------------------------------------------------------

    def _run(self) -> None:
        stopping = False
        while not stopping:
            item = self._queue.get()   # asleep while nothing is noted
            # one wake-up a batch, not one a statement: the writer sleeps while the batch gathers (`flush_interval`,
            # or until `batch_size` are noted, or `flush`/`stop` ask), then takes what is queued. Woken by every
            # statement's `put`, it asked for the interpreter's lock once a statement, in the middle of the next
            # statement's work (bench/RESULTS.md, issue 26)
            if not self._stopping:
                self._wake.wait(self._settings.flush_interval)
                self._wake.clear()
            batch: list[_Closed | HistoryRecord] = []
            while True:
                if item is None:
                    stopping = True
                else:
                    batch.append(item)
                if stopping or len(batch) >= self._settings.batch_size:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            began = time.thread_time()
            self._write_batch(batch)
            self.cpu_seconds += time.thread_time() - began

    def _write_batch(self, batch: list[_Closed | HistoryRecord]) -> None:
        records: list[HistoryRecord] = []
        yielded = time.perf_counter()
        for item in batch:
            try:
                record = item if isinstance(item, HistoryRecord) else self._record(_noted(*item))
                records.append(record)
                if self._log_lines:
                    _log_line(record)
            except Exception:
                log.exception("the query history could not record a statement")
            # hand the GIL back once about a millisecond of work was done (one parse of a statement that failed
            # before its classification; 20-50 records otherwise), so that a statement's own thread waits for at
            # most that, not for Python's 5 ms switch interval; not after every record, since each hand-back is a
            # system call and a GIL round trip that can cost the statement's thread a switch
            if time.perf_counter() - yielded >= YIELD_EVERY_SECONDS:
                time.sleep(0)
                yielded = time.perf_counter()
        try:
            if self._write and records:
                history.append(self._store, records, self._settings, trim=self._trim_due(len(records)))
        except Exception:
            log.exception("the query history could not write %d statements", len(records))
        finally:
            with self._progress:
                self._done += len(batch)
                self._progress.notify_all()

    def _trim_due(self, added: int) -> bool:
        """Whether this batch trims the table to the retention: once 1% of `max_rows` was written since the last
        trim, or TRIM_EVERY_SECONDS passed (a trim is two more statements per batch: most of a batch's cost when
        it was done every time). The table holds at most 1% more than `max_rows` meanwhile."""
        self._since_trim += added
        settings = self._settings
        by_rows = settings.max_rows > 0 and self._since_trim >= max(1, settings.max_rows // 100)
        if not by_rows and time.monotonic() < self._next_trim:
            return False
        self._since_trim, self._next_trim = 0, time.monotonic() + TRIM_EVERY_SECONDS
        return True

    def _record(self, noted: _Noted) -> HistoryRecord:
        text: str | None = None
        if noted.text is not None:
            facts, text = self._described(noted.text, noted.classified)
            statement_type, reads = facts.statement_type, facts.read_tables
            written = (facts.written_table,) if facts.written_table else ()
        else:
            statement_type, reads, written = noted.op_type, (), ()
        error_class, sqlstate, message = _error_fields(noted.error)
        read_rows, read_bytes = _read(noted) if reads else (None, None)
        return HistoryRecord(
            statement_id=noted.statement_id, session_id=noted.session_id, executed_by=noted.user,
            source=noted.source, client_application=noted.client_application, client_address=noted.client_address,
            statement_type=statement_type, execution_status=_STATUS.get(noted.state, "CANCELED"),
            error_class=error_class, sqlstate=sqlstate, error_message=message, start_time=_utc(noted.started),
            end_time=_utc(noted.closed), total_duration_ms=_ms(noted.started, noted.closed),
            execution_duration_ms=_ms(noted.started, noted.completed), produced_rows=noted.rows,
            modified_rows=noted.modified_rows, read_tables=reads, written_tables=written, statement_text=text,
            read_rows=read_rows, read_bytes=read_bytes, from_result_cache=noted.from_result_cache)

    # -- life ---------------------------------------------------------------------------------------------------------

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every statement noted so far is written; False if `timeout` passed first."""
        deadline = time.monotonic() + timeout
        with self._progress:
            target = self._queued
            while self._done < target:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                # again each turn: a statement noted as the writer took its batch is in the next one, which waits
                self._wake.set()
                self._progress.wait(min(left, 0.05))
            return True

    def stop(self, timeout: float = 10.0) -> None:
        """Write what is queued, then end the writer thread (before the catalog closes)."""
        if self._thread.is_alive():
            self._stopping = True
            self._queue.put(None)
            self._wake.set()
            self._thread.join(timeout)


class _Described:
    """A statement's type, tables and stored text, kept for the 1,024 texts seen last (dashboards, schedulers and
    JDBC clients send the same text again and again). A statement that ran was classified as it ran: its type and
    tables are read off that tree (a walk), its text redacted from sqlglot's tokens, so the writer parses nothing; a
    statement that failed before its classification is parsed here (1-7 ms)."""

    SIZE = 1024

    def __init__(self, keep_literals: bool) -> None:
        self._keep = keep_literals
        self._seen: OrderedDict[str, tuple[StatementFacts, str]] = OrderedDict()

    def __call__(self, text: str, classified: tuple[Statement, Any] | None) -> tuple[StatementFacts, str]:
        found = self._seen.get(text)
        if found is not None:
            self._seen.move_to_end(text)
            return found
        if classified is not None:
            statement, tree = classified
            found = facts_of(statement, tree), redact_statement(text, keep_literals=self._keep,
                                                                 parsed=parsed(statement, tree))
        else:
            found = statement_facts(text), redact_statement(text, keep_literals=self._keep)
        self._seen[text] = found
        if len(self._seen) > self.SIZE:
            self._seen.popitem(last=False)
        return found


def _read(noted: _Noted) -> tuple[int | None, int | None]:
    """Rows and bytes a statement that names tables read, as Spark counted them in its job group (the statement's
    id); None when it did not finish, ran no Spark job, or Spark is not reachable (engine/progress.py)."""
    if noted.state is not OperationState.FINISHED or noted.spark_context is None:
        return None, None
    try:
        found = group_input(noted.spark_context, noted.statement_id)
    except Exception:  # noqa: BLE001 - a JVM gone or going: the statement is recorded without the figure
        return None, None
    return found if found is not None else (None, None)


def _error_fields(error: BaseException | None) -> tuple[str | None, str | None, str | None]:
    if error is None:
        return None, None, None
    if isinstance(error, SqlError):
        message = error.message
        error_class, sqlstate = error.error_class, error.sqlstate
    else:
        message, error_class, sqlstate = str(error), "INTERNAL_ERROR", "XX000"
    return error_class, sqlstate, mask_secret_assignments(message)[:MAX_MESSAGE]


def _log_line(record: HistoryRecord) -> None:
    """One INFO line per statement on `sluicegate.statements`: who, from where, what kind, how it ended and took;
    the text only as redacted. Its fields go to the JSON log as they are (gateway/log_format.py)."""
    if not statement_log.isEnabledFor(logging.INFO):
        return
    fields = {"statement_id": record.statement_id, "session_id": record.session_id, "user": record.executed_by,
              "address": record.client_address, "source": record.source, "type": record.statement_type,
              "status": record.execution_status, "duration_ms": record.total_duration_ms,
              "execution_ms": record.execution_duration_ms, "rows": record.produced_rows,
              "modified_rows": record.modified_rows, "error_class": record.error_class,
              "sqlstate": record.sqlstate, "from_result_cache": record.from_result_cache or None,
              "text": (record.statement_text or "")[:300] or None}
    summary = " ".join(f"{key}={value}" for key, value in fields.items()
                       if value is not None and key not in ("text", "session_id"))
    text = f' text="{fields["text"]}"' if fields["text"] else ""
    statement_log.info("statement %s%s", summary, text, extra={"fields": fields})


def record_restored_streams(recorder: HistoryRecorder, store: CatalogStore, started: float, ended: float) -> int:
    """The streams the gateway resumed as it started (those the catalog wants running), each as one statement of
    user `system` with source STREAM_RESTORE, its table written and its definition as the text; returns how many."""
    count = 0
    for entry in store.list_streams(desired_state="RUNNING"):
        table = store.get_table(entry.database, entry.name)
        recorder.record_system("STREAM_RESTORE", "START_STREAM", table.definition if table is not None else None,
                               started, ended, written=(f"{entry.database}.{entry.name}",))
        count += 1
    return count


def start_recorder(store: CatalogStore, settings: HistorySettings, log_statements: bool) -> HistoryRecorder | None:
    """The recorder the configuration asks for: None when neither the history nor the statement log is on."""
    if not settings.enabled and not log_statements:
        return None
    return HistoryRecorder(store, settings, log_lines=log_statements)

