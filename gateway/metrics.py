"""A gateway's Prometheus metrics: its own registry (several gateways in one process never share a series), the
figures that move as work happens, and the collector that reads the rest when Prometheus scrapes.

Two kinds of figure, so that a statement pays almost nothing:
- counted as it happens, in memory, by the operation observer (`started`/`ended`: statements by type and outcome,
  their latency histogram) and by two calls on the request path that only add integers (sessions opened, rows and
  bytes fetched);
- read at scrape time (`metrics_collector.py`): sessions and operations open, connections, login failures and
  lockouts (the throttle's own counts), per streaming table and materialized view from the catalog and the stream
  supervisor, the JVM's heap. Nothing is pushed per micro-batch.

Names follow Prometheus' conventions: the `sluicegate_` prefix, base units (`_seconds`, `_bytes`), `_total` for
counters (prometheus-client appends it).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.process_collector import ProcessCollector

from sluicegate.gateway.metrics_collector import GatewayCollector, Watched
from sluicegate.gateway.operation.base import OperationType

if TYPE_CHECKING:
    from sluicegate.gateway.operation.base import Operation

CONTENT_TYPE = CONTENT_TYPE_LATEST

# Statement latency buckets (seconds): `SELECT 1` takes about 5 ms, a dashboard query 0.1-2 s, a refresh minutes.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)

# The statement types a label may take (the statement's first keyword): a bounded set, so that no text a user types
# becomes a series of its own.
STATEMENT_TYPES = frozenset({
    "SELECT", "INSERT", "MERGE", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "REFRESH", "DESCRIBE", "SHOW",
    "SET", "RESET", "USE", "EXPLAIN", "OPTIMIZE", "VACUUM", "GRANT", "REVOKE", "CALL", "TRUNCATE", "COPY", "ANALYZE",
    "CACHE", "UNCACHE", "RESTORE", "COMMENT", "MSCK", "REPAIR", "LIST", "ADD",
})
_AS_SELECT = frozenset({"WITH", "VALUES", "FROM", "TABLE", "("})
_FIRST_WORD = re.compile(r"\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*([A-Za-z]+|\()", re.DOTALL)


def statement_type(operation: Operation) -> str:
    """The label of an operation: its statement's first keyword (WITH, VALUES, FROM: SELECT; anything else:
    OTHER), or the metadata request (GET_TABLES, ...)."""
    if operation.op_type is not OperationType.EXECUTE_STATEMENT:
        return operation.op_type.value
    found = _FIRST_WORD.match(operation.statement or "")
    if found is None:
        return "OTHER"
    word = found.group(1).upper()
    if word in _AS_SELECT:
        return "SELECT"
    return word if word in STATEMENT_TYPES else "OTHER"


class GatewayMetrics:
    """The registry of one gateway and its counted figures. The service creates it, adds `observer` to its operation
    manager and calls `watch` once it is built; servers add their connection counts with `count_connections`."""

    def __init__(self, jvm_timeout: float = 0.5) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.started_at = time.time()
        self.jvm_timeout = jvm_timeout
        self.sessions_opened = Counter(
            "sluicegate_sessions_opened", "Sessions opened since the gateway started (all ports)",
            registry=self.registry)
        self.statements = Counter(
            "sluicegate_statements", "Operations that ended, by statement type and final state (FINISHED, ERROR, "
            "CANCELED, TIMEDOUT; CLOSED when closed before it ended)", ["type", "status"], registry=self.registry)
        self.statement_seconds = Histogram(
            "sluicegate_statement_duration_seconds", "Time from an operation's start to its final state (results "
            "fetched afterwards not included), by statement type", ["type"], buckets=LATENCY_BUCKETS,
            registry=self.registry)
        self.rows_fetched = Counter(
            "sluicegate_fetched_rows", "Result rows sent to clients (FetchResults)", registry=self.registry)
        self.bytes_fetched = Counter(
            "sluicegate_fetched_bytes", "Result data sent to clients, as the size of its Arrow buffers in bytes",
            registry=self.registry)
        Gauge("sluicegate_start_time_seconds", "When the gateway started, in seconds since the epoch",
              registry=self.registry).set(self.started_at)
        ProcessCollector(namespace="sluicegate", registry=self.registry)
        self.observer = StatementObserver(self)
        self.connection_counts: dict[str, Callable[[], int]] = {}
        self.collector: GatewayCollector | None = None

    def watch(self, watched: Watched) -> None:
        """Read the rest at scrape time from `watched` (the service: sessions, operations, streams, catalog, JVM)."""
        self.collector = GatewayCollector(watched, self.connection_counts, self.jvm_timeout)
        self.registry.register(self.collector)

    def count_connections(self, transport: str, count: Callable[[], int]) -> None:
        """`count`: a callable answering how many connections of `transport` (binary, http, status) are open."""
        self.connection_counts[transport] = count

    def session_opened(self) -> None:
        self.sessions_opened.inc()

    def fetched(self, rows: int, nbytes: int) -> None:
        if rows:
            self.rows_fetched.inc(rows)
            self.bytes_fetched.inc(nbytes)

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format (version 0.0.4)."""
        return generate_latest(self.registry)


class StatementObserver:
    """An operation observer (gateway/operation/observers.py): counts each operation once, when it ends. A counter
    increment and a histogram observation: no lock held beyond prometheus-client's own, no I/O."""

    def __init__(self, metrics: GatewayMetrics) -> None:
        self._metrics = metrics
        # (type, state) -> its counter and histogram children: `labels()` takes a lock and builds keys each call
        self._children: dict[tuple[str, str], tuple[Any, Any]] = {}

    def started(self, operation: Operation) -> None:
        pass

    def ended(self, operation: Operation) -> None:
        kind = statement_type(operation)
        key = (kind, operation.state.value)
        children = self._children.get(key)
        if children is None:  # a bounded set of keys: statement types x final states
            children = self._children[key] = (self._metrics.statements.labels(*key),
                                              self._metrics.statement_seconds.labels(kind))
        ended = operation.completed or time.time()
        children[0].inc()
        children[1].observe(max(0.0, ended - operation.started))

    def closed(self, operation: Operation) -> None:
        pass
