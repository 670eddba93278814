"""The query history's recorder (no JVM): operations run through a real operation manager with the recorder as an
observer are written to a real catalog by its own thread, one row each with user, address, type, status, error class,
SQLSTATE, rows fetched and redacted text; the statement log gets one line per statement, as JSON with log.format json.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest
import sqlglot

from sluicegate.catalog import history
from sluicegate.catalog.history import HistorySettings
from sluicegate.catalog.store import CatalogStore, StreamEntry, TableEntry
from sluicegate.dialect.classify import classified
from sluicegate.dialect.errors import SqlError
from sluicegate.engine.results import ResultColumn
from sluicegate.engine.sql import ListBatchSource, StatementResult
from sluicegate.executor.materialized_views.background import recorded_refresh
from sluicegate.executor.materialized_views.refresh import RefreshOutcome
from sluicegate.executor.system_work import SCHEDULED_REFRESH, TRIGGERED_REFRESH
from sluicegate.gateway.handles import SessionHandle
from sluicegate.gateway.history import HistoryRecorder, record_restored_streams
from sluicegate.gateway.log_format import JsonFormatter, use_format
from sluicegate.gateway.operation.base import FetchOrientation, Operation, OperationType
from sluicegate.gateway.operation.manager import OperationManager


class _Statement(Operation):
    op_type = OperationType.EXECUTE_STATEMENT

    def __init__(self, session: Any, sql: str, fail: bool = False) -> None:
        super().__init__(session, sql)
        self._fails = fail

    def execute(self) -> StatementResult:
        if self._fails:
            raise SqlError("no table t", error_class="TABLE_OR_VIEW_NOT_FOUND", sqlstate="42P01")
        batch = pa.record_batch([pa.array([1, 2, 3])], names=["_c0"])
        return StatementResult([ResultColumn("x", "bigint")], lambda: ListBatchSource([batch]))


def _session(user: str) -> Any:
    return SimpleNamespace(user=user, handle=SessionHandle.new(), client="10.1.2.3:50123", touch=lambda: None,
                           forget=lambda op: None)


@pytest.fixture()
def setup(tmp_path: Path) -> Any:
    store = CatalogStore.for_warehouse(tmp_path)
    recorder = HistoryRecorder(store, HistorySettings(flush_interval=0.01))
    manager = OperationManager(background_threads=2, idle_timeout=0)
    manager.observers.add(recorder)
    yield store, recorder, manager
    manager.shutdown()
    recorder.stop()
    store.close()


def _run(manager: OperationManager, op: Operation) -> Operation:
    manager.run(op, run_async=False, timeout=None)
    return op


def test_statements_are_recorded_when_closed(setup: Any, caplog: pytest.LogCaptureFixture) -> None:
    store, recorder, manager = setup
    ok = _run(manager, _Statement(_session("alice"), "SELECT x FROM db.t WHERE name = 'Sekr1t-literal'"))
    assert ok.fetch(FetchOrientation.NEXT, 10).num_rows == 3
    failed = _run(manager, _Statement(_session("bob"), "SELECT * FROM t", fail=True))
    with caplog.at_level(logging.INFO, logger="sluicegate.statements"):
        ok.close()
        failed.close()
        assert recorder.flush(10)
    rows = {r.executed_by: r for r in history.read(store, None)}
    alice, bob = rows["alice"], rows["bob"]
    assert alice.statement_id == ok.handle.hex and alice.session_id == ok.session.handle.hex
    assert (alice.statement_type, alice.execution_status, alice.produced_rows) == ("SELECT", "FINISHED", 3)
    assert alice.client_address == "10.1.2.3" and alice.read_tables == ("db.t",)
    assert alice.statement_text == "SELECT x FROM db.t WHERE name = ?"
    assert alice.total_duration_ms is not None and alice.execution_duration_ms is not None
    assert (bob.execution_status, bob.error_class, bob.sqlstate) == ("FAILED", "TABLE_OR_VIEW_NOT_FOUND", "42P01")
    assert bob.produced_rows is None
    lines = [r for r in caplog.records if r.name == "sluicegate.statements"]
    assert len(lines) == 2
    assert all("Sekr1t-literal" not in r.getMessage() for r in lines)
    assert "user=bob" in lines[1].getMessage() and "error_class=TABLE_OR_VIEW_NOT_FOUND" in lines[1].getMessage()
    as_json = json.loads(JsonFormatter().format(lines[0]))
    assert as_json["logger"] == "sluicegate.statements" and as_json["user"] == "alice"
    assert as_json["status"] == "FINISHED" and as_json["rows"] == 3 and as_json["level"] == "INFO"


def test_a_statement_classified_as_it_ran_is_recorded_without_a_parse(setup: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer reads type and tables off the tree the statement was classified from, and redacts from tokens:
    sqlglot's parser is not called on its thread (it held the interpreter's lock from the statements served)."""
    store, recorder, manager = setup
    sql = "insert into db.sales select * from db.orders o join db.clients c on o.id = c.id where c.region = 'EU'"
    op = _Statement(_session("erin"), sql)
    op.classified = classified(sql)  # type: ignore[attr-defined]   # as ExecuteStatement notes it
    _run(manager, op)

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the writer parsed a statement that was classified")

    monkeypatch.setattr(sqlglot, "parse_one", no_parse)
    op.close()
    assert recorder.flush(10)
    (row,) = history.read(store, "erin")
    assert (row.statement_type, row.written_tables, row.read_tables) == ("INSERT", ("db.sales",),
                                                                         ("db.orders", "db.clients"))
    assert row.statement_text == "INSERT INTO db.sales SELECT * FROM db.orders o JOIN db.clients c ON o.id = c.id " \
                                 "WHERE c.region = ?"


def test_a_statement_closed_while_running_is_cancelled_and_metadata_has_its_type(setup: Any) -> None:
    store, recorder, manager = setup
    never_ran = _Statement(_session("carol"), "SELECT 1")
    manager.add(never_ran)
    never_ran.close()

    class _Tables(_Statement):
        op_type = OperationType.GET_TABLES

    tables = _run(manager, _Tables(_session("carol"), None))  # type: ignore[arg-type]
    tables.close()
    assert recorder.flush(10)
    by_type = {r.statement_type: r for r in history.read(store, "carol")}
    assert by_type["SELECT"].execution_status == "CANCELED"
    assert by_type["GET_TABLES"].statement_text is None and by_type["GET_TABLES"].execution_status == "FINISHED"


def test_disabled_history_writes_nothing_but_still_logs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = CatalogStore.for_warehouse(tmp_path)
    recorder = HistoryRecorder(store, HistorySettings(enabled=False, flush_interval=0.01))
    manager = OperationManager(background_threads=1, idle_timeout=0)
    manager.observers.add(recorder)
    with caplog.at_level(logging.INFO, logger="sluicegate.statements"):
        _run(manager, _Statement(_session("dave"), "SELECT 1")).close()
        assert recorder.flush(10)
    assert history.count(store) == 0
    assert any("user=dave" in r.getMessage() for r in caplog.records if r.name == "sluicegate.statements")
    manager.shutdown()
    recorder.stop()
    store.close()


def test_system_work_is_recorded_as_user_system(setup: Any) -> None:
    store, recorder, _ = setup
    now = time.time()
    recorder.record_system("STREAM_RESTORE", "START_STREAM", "CREATE STREAMING TABLE s AS SELECT 'x'", now,
                           now + 0.25, written=("db.s",))
    assert recorder.flush(10)
    (row,) = history.read(store, None)
    assert (row.executed_by, row.source, row.execution_status, row.total_duration_ms) == \
        ("system", "STREAM_RESTORE", "FINISHED", 250)
    assert row.statement_text == "CREATE STREAMING TABLE s AS SELECT ?" and row.written_tables == ("db.s",)


def test_streams_resumed_at_start_are_recorded_as_the_gateways_own_work(setup: Any) -> None:
    store, recorder, _ = setup
    store.create_database("db")
    store.create_table(TableEntry("db", "clicks", "STREAMING_TABLE", "/w/clicks", None,
                                  "CREATE STREAMING TABLE clicks AS SELECT * FROM STREAM read_files('/in/x')"))
    store.put_stream(StreamEntry("db", "clicks", "a" * 32, "{}", "/cp", "RUNNING", "RUNNING"))
    now = time.time()
    assert record_restored_streams(recorder, store, now - 1, now) == 1
    assert recorder.flush(10)
    (row,) = history.read(store, None)
    assert (row.executed_by, row.source, row.statement_type, row.written_tables) == \
        ("system", "STREAM_RESTORE", "START_STREAM", ("db.clicks",))
    assert row.statement_text is not None and "/in/x" not in row.statement_text


def test_a_refresh_the_gateway_runs_is_recorded_with_its_source_tables_and_failure(setup: Any) -> None:
    store, recorder, _ = setup
    view = TableEntry("db", "mv", "MATERIALIZED_VIEW", "/w/mv", None, "SELECT count(*) FROM db.src")
    outcome = RefreshOutcome("FULL", "an input changed", {"db.src": 3}, 4, ("read_files",))
    assert recorded_refresh(recorder, TRIGGERED_REFRESH, view, lambda: outcome) is outcome

    def fails() -> RefreshOutcome:
        raise SqlError("the input is gone", error_class="TABLE_OR_VIEW_NOT_FOUND", sqlstate="42P01")

    with pytest.raises(SqlError):
        recorded_refresh(recorder, SCHEDULED_REFRESH, view, fails, full=True)
    recorded_refresh(None, SCHEDULED_REFRESH, view, lambda: outcome)   # no history: run only
    assert recorder.flush(10)
    failed, finished = history.read(store, "system")
    assert (finished.source, finished.statement_type, finished.execution_status) == \
        ("TRIGGERED_REFRESH", "REFRESH", "FINISHED")
    assert finished.read_tables == ("db.src", "read_files") and finished.written_tables == ("db.mv",)
    assert finished.statement_text == "REFRESH MATERIALIZED VIEW db.mv"
    assert (failed.source, failed.execution_status, failed.error_class, failed.sqlstate) == \
        ("SCHEDULED_REFRESH", "FAILED", "TABLE_OR_VIEW_NOT_FOUND", "42P01")
    assert failed.statement_text == "REFRESH MATERIALIZED VIEW db.mv FULL"


def test_log_format_json_puts_a_json_formatter_on_the_root_handlers() -> None:
    root = logging.getLogger()
    handler = logging.StreamHandler()
    root.addHandler(handler)
    before = {each: each.formatter for each in root.handlers}
    try:
        use_format("text")
        assert not isinstance(handler.formatter, JsonFormatter)
        use_format("json")
        assert isinstance(handler.formatter, JsonFormatter)
        record = logging.LogRecord("sluicegate.x", logging.WARNING, __file__, 1, "a %s line", ("plain",), None)
        assert json.loads(handler.format(record))["message"] == "a plain line"
    finally:
        for each, formatter in before.items():
            each.setFormatter(formatter)   # pytest's own handlers too
        root.removeHandler(handler)


def _voluntary_switches(thread_id: int | None) -> int:
    """How often a thread gave up the CPU to wait (Linux counts it per thread)."""
    status = Path(f"/proc/self/task/{thread_id}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("voluntary_ctxt_switches")).split()[1])


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts the writer's switches in /proc")
def test_the_writer_wakes_once_a_batch_not_once_a_statement(tmp_path: Path) -> None:
    """Woken by every statement noted, the writer asked for the interpreter's lock once a statement, amid the next
    statement's work (bench/RESULTS.md, issue 26). It sleeps while a batch gathers: 40 statements closed 5 ms apart
    within one interval wake it a few times, not 40, and each is written with its user and status."""
    store = CatalogStore.for_warehouse(tmp_path)
    recorder = HistoryRecorder(store, HistorySettings(flush_interval=2.0))
    manager = OperationManager(background_threads=1, idle_timeout=0)
    manager.observers.add(recorder)
    try:
        _run(manager, _Statement(_session("warm"), "SELECT 1")).close()
        assert recorder.flush(10)
        operations = [_run(manager, _Statement(_session(f"u{i}"), "SELECT 1", fail=i % 2 == 1)) for i in range(40)]
        before = _voluntary_switches(recorder._thread.native_id)
        for operation in operations:
            operation.close()
            time.sleep(0.005)
        woken = _voluntary_switches(recorder._thread.native_id) - before
        assert woken < 10, f"the writer was woken {woken} times for 40 statements"
        assert recorder.flush(1.0)   # flush does not wait for the interval's end
        rows = {r.executed_by: r for r in history.read(store, None)}
        assert all(rows[f"u{i}"].execution_status == ("FAILED" if i % 2 else "FINISHED") for i in range(40))
    finally:
        manager.shutdown()
        recorder.stop()
        store.close()


def test_a_full_batch_is_written_at_once_and_stop_writes_what_is_queued(tmp_path: Path) -> None:
    """The writer's wait for a batch is cut short by `batch_size` statements noted, and by `stop`: neither waits for
    a long `flush_interval`, and nothing queued is lost (more than one batch's worth at stop)."""
    store = CatalogStore.for_warehouse(tmp_path)
    recorder = HistoryRecorder(store, HistorySettings(flush_interval=30.0, batch_size=5))
    manager = OperationManager(background_threads=1, idle_timeout=0)
    manager.observers.add(recorder)
    try:
        for i in range(5):
            _run(manager, _Statement(_session(f"a{i}"), "SELECT 1")).close()
        deadline = time.monotonic() + 5
        while history.count(store) < 5 and time.monotonic() < deadline:   # no flush: the full batch alone
            time.sleep(0.02)
        assert history.count(store) == 5
        for i in range(12):
            _run(manager, _Statement(_session(f"b{i}"), "SELECT 1")).close()
        began = time.monotonic()
        recorder.stop()
        assert time.monotonic() - began < 5 and not recorder._thread.is_alive()
        assert {r.executed_by for r in history.read(store, None)} == {f"a{i}" for i in range(5)} | \
            {f"b{i}" for i in range(12)}
    finally:
        manager.shutdown()
        recorder.stop()
        store.close()


def test_the_record_is_read_off_the_operation_on_the_writer_not_on_the_request_path(setup: Any) -> None:
    """`closed` queues the operation; its session's user and address are read on the writer's thread, once the
    operation is closed (nothing the history keeps changes then), and the row is the same."""
    store, recorder, manager = setup
    readers: list[str] = []

    class _Watched(SimpleNamespace):
        @property
        def user(self) -> str:
            readers.append(threading.current_thread().name)
            return "frank"

    session = _Watched(handle=SessionHandle.new(), client="10.9.8.7:4000", touch=lambda: None, forget=lambda op: None)
    op = _run(manager, _Statement(session, "SELECT 1"))
    assert op.fetch(FetchOrientation.NEXT, 10).num_rows == 3
    op.close()
    assert readers == []   # nothing read as the client closed it
    assert recorder.flush(10)
    assert readers == ["sluicegate-history"]
    (row,) = history.read(store, "frank")
    assert (row.execution_status, row.produced_rows, row.client_address) == ("FINISHED", 3, "10.9.8.7")
