"""Operation observers (no JVM): each is told once that an operation started, ended and was closed, in that order,
whatever way it ends; one that raises does not fail the statement or keep the others from being told."""

from __future__ import annotations

import threading

import pyarrow as pa

from sluicegate.dialect.errors import SqlError
from sluicegate.engine.results import ResultColumn
from sluicegate.engine.sql import ListBatchSource, StatementResult
from sluicegate.gateway.operation.base import FetchOrientation, Operation
from sluicegate.gateway.operation.manager import OperationManager
from sluicegate.gateway.operation.state import OperationState


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, OperationState]] = []

    def started(self, operation: Operation) -> None:
        self.events.append(("started", operation.state))

    def ended(self, operation: Operation) -> None:
        self.events.append(("ended", operation.state))

    def closed(self, operation: Operation) -> None:
        self.events.append(("closed", operation.state))


class _Broken:
    def started(self, operation: Operation) -> None:
        raise RuntimeError("an observer's bug")

    ended = closed = started


class _Statement(Operation):
    def __init__(self, fail: bool = False, block: threading.Event | None = None) -> None:
        super().__init__(session=None)  # type: ignore[arg-type]
        self._fails, self._block = fail, block

    def execute(self) -> StatementResult:
        if self._block is not None:
            self._block.wait(5)
        if self._fails:
            raise SqlError("no such thing", error_class="TABLE_OR_VIEW_NOT_FOUND", sqlstate="42P01")
        batch = pa.record_batch([pa.array([1, 2, 3])], names=["_c0"])
        return StatementResult([ResultColumn("x", "bigint")], lambda: ListBatchSource([batch]))


def _manager(*observers: object) -> OperationManager:
    manager = OperationManager(background_threads=2, idle_timeout=0)
    for observer in observers:
        manager.observers.add(observer)  # type: ignore[arg-type]
    return manager


def test_a_finished_statement_is_told_started_ended_closed_once() -> None:
    recorder = _Recorder()
    manager = _manager(_Broken(), recorder)
    operation = _Statement()
    manager.run(operation, run_async=False, timeout=None)
    assert operation.state is OperationState.FINISHED
    assert operation.fetch(FetchOrientation.NEXT, 10).num_rows == 3
    operation.close()
    operation.close()
    assert recorder.events == [("started", OperationState.RUNNING), ("ended", OperationState.FINISHED),
                               ("closed", OperationState.CLOSED)]


def test_a_failed_and_a_cancelled_statement_end_once_each() -> None:
    recorder = _Recorder()
    manager = _manager(recorder)
    failed = _Statement(fail=True)
    manager.run(failed, run_async=False, timeout=None)
    assert recorder.events == [("started", OperationState.RUNNING), ("ended", OperationState.ERROR)]
    recorder.events.clear()
    gate = threading.Event()
    running = _Statement(block=gate)
    manager.run(running, run_async=True, timeout=None)
    running.cancel()
    gate.set()
    running.wait(5)
    running.close()
    assert [event for event, _ in recorder.events].count("ended") == 1
    assert ("ended", OperationState.CANCELED) in recorder.events and recorder.events[-1][0] == "closed"
    manager.shutdown()
