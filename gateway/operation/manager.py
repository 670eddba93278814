"""The registry of live operations and the pool that runs asynchronous statements."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

from sluicegate.gateway.errors import OperationNotFoundError
from sluicegate.gateway.handles import OperationHandle
from sluicegate.gateway.operation.base import Operation
from sluicegate.gateway.operation.observers import Observers
from sluicegate.gateway.operation.state import TERMINAL

log = logging.getLogger(__name__)

REMEMBERED_IDLE_CLOSES = 10_000
"""How many operations closed for idling are remembered, so their client's own CloseOperation still succeeds."""


class OperationManager:
    def __init__(self, background_threads: int, idle_timeout: float) -> None:
        self._operations: dict[bytes, Operation] = {}
        # guid -> secret of operations this gateway closed for idling: a client that comes back to its cursor
        # later first closes the old operation (PyHive does, before its next statement), and that must not fail.
        self._closed_idle: OrderedDict[bytes, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=background_threads, thread_name_prefix="sluicegate-op")
        self._idle_timeout = idle_timeout
        self.observers = Observers()

    def add(self, operation: Operation) -> None:
        operation.observers = self.observers
        with self._lock:
            self._operations[operation.handle.guid] = operation

    def get(self, handle: OperationHandle) -> Operation:
        with self._lock:
            operation = self._operations.get(handle.guid)
        if operation is None or operation.handle.secret != handle.secret:
            if self._was_closed_idle(handle):
                raise OperationNotFoundError(
                    f"operation {handle.hex} was closed after {self._idle_timeout:g} s without a fetch or close "
                    "([operation] idle_timeout)", hint="run the statement again")
            raise OperationNotFoundError(
                f"operation {handle.hex} does not exist (closed, timed out, or its session ended)"
            )
        return operation

    def close(self, handle: OperationHandle) -> None:
        """The client's CloseOperation: ends the operation and forgets it. Closing one the gateway already closed
        for idling succeeds (it is closed, as asked); any other unknown handle is an error."""
        if self._was_closed_idle(handle):
            with self._lock:
                self._closed_idle.pop(handle.guid, None)
            return
        operation = self.get(handle)
        operation.session.forget(operation)
        operation.close()
        self.remove(handle)

    def _was_closed_idle(self, handle: OperationHandle) -> bool:
        with self._lock:
            return handle.guid not in self._operations and self._closed_idle.get(handle.guid) == handle.secret

    def remove(self, handle: OperationHandle) -> None:
        with self._lock:
            self._operations.pop(handle.guid, None)

    def run(self, operation: Operation, run_async: bool, timeout: float | None) -> None:
        self.add(operation)
        if run_async:
            operation.mark_pending(timeout)
            self._pool.submit(operation.run)
        else:
            operation.run(timeout)

    def close_idle(self) -> int:
        """Close finished operations nobody fetched or closed within the idle timeout; returns how many."""
        if self._idle_timeout <= 0:
            return 0
        now = time.monotonic()
        with self._lock:
            idle = [op for op in self._operations.values()
                    if op.state in TERMINAL and now - op.last_access > self._idle_timeout]
        for operation in idle:
            log.info("closing idle operation %s", operation.handle.hex)
            operation.session.forget(operation)
            operation.close()
            with self._lock:
                self._operations.pop(operation.handle.guid, None)
                self._closed_idle[operation.handle.guid] = operation.handle.secret
                while len(self._closed_idle) > REMEMBERED_IDLE_CLOSES:
                    self._closed_idle.popitem(last=False)
        return len(idle)

    def count(self) -> int:
        with self._lock:
            return len(self._operations)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
