"""The registry of live operations and the pool that runs asynchronous statements."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from sluicegate.gateway.errors import OperationNotFoundError
from sluicegate.gateway.handles import OperationHandle
from sluicegate.gateway.operation.base import Operation
from sluicegate.gateway.operation.state import TERMINAL

log = logging.getLogger(__name__)


class OperationManager:
    def __init__(self, background_threads: int, idle_timeout: float) -> None:
        self._operations: dict[bytes, Operation] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=background_threads, thread_name_prefix="sluicegate-op")
        self._idle_timeout = idle_timeout

    def add(self, operation: Operation) -> None:
        with self._lock:
            self._operations[operation.handle.guid] = operation

    def get(self, handle: OperationHandle) -> Operation:
        with self._lock:
            operation = self._operations.get(handle.guid)
        if operation is None or operation.handle.secret != handle.secret:
            raise OperationNotFoundError(
                f"operation {handle.hex} does not exist (closed, timed out, or its session ended)"
            )
        return operation

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
            self.remove(operation.handle)
        return len(idle)

    def count(self) -> int:
        with self._lock:
            return len(self._operations)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
