"""py4j round trips counted: every call the gateway makes into the JVM goes through py4j's
`GatewayClient.send_command` (pinned-thread mode or not), which this wraps in a counter while installed. It measures
the real client and changes nothing of what it sends or returns (bench/round_trips_bench.py, tests/test_round_trips.py).
"""

from __future__ import annotations

import threading
import traceback
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_PROJECT = Path(__file__).resolve().parents[1]
# Threads that serve clients' statements: each connection's own and the operation pool's (gateway/server.py,
# gateway/operation/manager.py). Every other thread's py4j calls belong to no statement: the gateway's background
# work, and, in a test process, whatever earlier tests left running on the shared Spark (a stream's batches).
STATEMENT_THREADS = ("sluicegate-conn-", "sluicegate-op")


class RoundTrips:
    """Counts py4j calls by the calling thread's kind while installed: measures the real client, changes nothing of
    what it sends or returns."""

    def __init__(self) -> None:
        self.statement = 0
        self.background = 0
        self.tracing = False
        self.sites: Counter[str] = Counter()   # while tracing: the project line each statement call came from
        self.methods: Counter[str] = Counter()   # while tracing: the JVM method each statement call named
        self._lock = threading.Lock()

    @contextmanager
    def installed(self) -> Iterator[RoundTrips]:
        from py4j.java_gateway import GatewayClient

        original = GatewayClient.send_command
        counter = self

        def counted(client: Any, command: str, *args: Any, **kwargs: Any) -> Any:
            background = not threading.current_thread().name.startswith(STATEMENT_THREADS)
            with counter._lock:
                if background:
                    counter.background += 1
                else:
                    counter.statement += 1
                    if counter.tracing:
                        counter.sites[_project_site()] += 1
                        counter.methods[_method(command)] += 1
            return original(client, command, *args, **kwargs)

        GatewayClient.send_command = counted  # type: ignore[method-assign]
        try:
            yield self
        finally:
            GatewayClient.send_command = original  # type: ignore[method-assign]

    def take(self) -> tuple[int, int]:
        with self._lock:
            taken = (self.statement, self.background)
            self.statement = self.background = 0
            self.sites.clear()
            self.methods.clear()
        return taken


def _method(command: str) -> str:
    """The method a py4j call command names (`c`, the target object, the method, ...), or the command's kind."""
    lines = command.split("\n")
    return lines[2] if lines[0] == "c" and len(lines) > 2 else lines[0]


def _project_site() -> str:
    """The innermost frame of the project's own code on the calling stack (py4j and pyspark frames skipped)."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        path = Path(frame.filename)
        if path.is_relative_to(_PROJECT) and not path.is_relative_to(_PROJECT / ".venv") \
                and not path.is_relative_to(_PROJECT / "tests"):
            return f"{Path(frame.filename).parent.name}/{Path(frame.filename).name}:{frame.lineno} {frame.name}"
    return "(outside the project)"


