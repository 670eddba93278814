"""What /metrics reads when Prometheus scrapes (gateway/metrics.py counts the rest as it happens): sessions,
operations by state, connections, the login throttle's counts, each streaming table and materialized view from the
catalog (one query) and the stream supervisor's live progress, the JVM's heap, the compactor's merges.

Reading at scrape time costs the work nothing: a micro-batch or a statement never touches a metric. A scrape never
waits long for a busy JVM: the heap is read on a thread of its own, for `metrics.jvm_timeout` seconds at most, and
left out of that scrape when it does not answer (the next scrape takes the late answer or asks again).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from sluicegate.engine.streams.lifecycle import StreamState
from sluicegate.gateway.operation.state import OperationState

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore, StreamEntry
    from sluicegate.engine.maintenance import TableMaintenance
    from sluicegate.engine.result_cache import ResultCache
    from sluicegate.engine.streams.manager import StreamManager
    from sluicegate.gateway.auth.throttle import LoginThrottle
    from sluicegate.gateway.session import SessionManager

log = logging.getLogger(__name__)

MATERIALIZED_VIEW_ROW = "MATERIALIZED_VIEW"   # the desired_state of a view's refresh row (materialized_views/refresh)
REFRESH_KINDS = ("FULL", "INCREMENTAL", "UNCHANGED")
# Spark's source metrics naming a backlog, as the event log's flow_progress reads them (engine/streams/events.py)
BACKLOG_METRICS = (("numFilesOutstanding", "files"), ("numBytesOutstanding", "bytes"),
                   ("maxOffsetsBehindLatest", "records"))


class Watched(Protocol):
    """What the collector reads: GatewayService has these."""

    sessions: SessionManager
    throttle: LoginThrottle
    streams: StreamManager
    catalog: CatalogStore
    maintenance: TableMaintenance | None
    result_cache: ResultCache | None
    spark: Any


def _seconds(moment: dt.datetime | None) -> float | None:
    """A catalog time (UTC without a zone) as seconds since the epoch."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.timestamp()


class JvmSampler:
    """The JVM's heap (Runtime's total, free and max memory), read through py4j on a daemon thread of its own so
    that a scrape waits `timeout` seconds at most. One read at a time: a scrape that finds one still pending waits
    for it instead of starting another."""

    def __init__(self, spark: Any) -> None:
        self._spark = spark
        self._lock = threading.Lock()
        self._pending: threading.Thread | None = None
        self._answer: tuple[int, int] | None = None
        self._done = threading.Event()

    def _read(self) -> None:
        try:
            runtime = self._spark._jvm.java.lang.Runtime.getRuntime()
            used = int(runtime.totalMemory()) - int(runtime.freeMemory())
            self._answer = (used, int(runtime.maxMemory()))
        except Exception as exc:  # noqa: BLE001 - a JVM gone or busy is a missing figure, never a failed scrape
            log.debug("reading the JVM's heap failed: %s", exc)
            self._answer = None
        finally:
            self._done.set()

    def sample(self, timeout: float) -> tuple[int, int] | None:
        """(heap used, heap max) in bytes, or None when the JVM did not answer within `timeout` seconds."""
        with self._lock:
            if self._pending is None or not self._pending.is_alive():
                self._done.clear()
                self._answer = None
                self._pending = threading.Thread(target=self._read, name="sluicegate-metrics-jvm", daemon=True)
                self._pending.start()
            done = self._done
        if not done.wait(timeout):
            return None
        return self._answer


def _family(kind: type[GaugeMetricFamily | CounterMetricFamily], name: str, documentation: str,
            labels: Iterable[str] = ()) -> Any:
    return kind(name, documentation, labels=list(labels))


def _result_cache_figures(cache: ResultCache) -> Iterator[Metric]:
    """The exact result cache's counts (engine/result_cache.py), read as they stand."""
    counts = cache.counts
    for name, value, documentation in (
            ("hits", counts.hits, "Queries answered from the result cache (no Spark job)"),
            ("misses", counts.misses, "Cacheable queries the result cache had no answer for (computed by Spark)"),
            ("evictions", counts.evicted, "Kept answers evicted to stay within result_cache.max_bytes"),
            ("too_large", counts.too_large, "Answers not kept for being larger than result_cache.max_entry_bytes")):
        counter = _family(CounterMetricFamily, f"sluicegate_result_cache_{name}", documentation)
        counter.add_metric([], value)
        yield counter
    kept = _family(GaugeMetricFamily, "sluicegate_result_cache_bytes", "Arrow bytes of the answers kept now")
    kept.add_metric([], cache.nbytes)
    entries = _family(GaugeMetricFamily, "sluicegate_result_cache_entries", "Answers kept now")
    entries.add_metric([], len(cache))
    yield from (kept, entries)


class GatewayCollector(Collector):
    """The figures read at scrape time (registered on the gateway's own registry by metrics.GatewayMetrics.watch)."""

    def __init__(self, watched: Watched, connection_counts: dict[str, Callable[[], int]], jvm_timeout: float) -> None:
        """`connection_counts`: transport -> how many of its connections are open (the servers add theirs)."""
        self._watched = watched
        self._connection_counts = connection_counts
        self._jvm_timeout = jvm_timeout
        self._jvm = JvmSampler(watched.spark)

    def jvm_heap(self, timeout: float) -> tuple[int, int] | None:
        return self._jvm.sample(timeout)

    def collect(self) -> Iterator[Metric]:
        yield from self._sessions_and_operations()
        yield from self._connections()
        yield from self._authentication()
        yield from self._tables()
        yield from self._jvm_figures()
        maintenance = self._watched.maintenance
        if maintenance is not None:
            merges = _family(CounterMetricFamily, "sluicegate_compactions",
                             "Small-file merges the background compactor committed")
            merges.add_metric([], maintenance.merges_committed)
            yield merges
        if self._watched.result_cache is not None:
            yield from _result_cache_figures(self._watched.result_cache)

    # -- sessions, operations, connections, logins -----------------------------------------------------------------

    def _sessions_and_operations(self) -> Iterator[Metric]:
        sessions = self._watched.sessions.list()
        open_sessions = _family(GaugeMetricFamily, "sluicegate_sessions_open", "Sessions open now")
        open_sessions.add_metric([], len(sessions))
        yield open_sessions
        states = dict.fromkeys((s.value for s in OperationState if s is not OperationState.CLOSED), 0)
        for session in sessions:
            for operation in session.operations():
                state = operation.state.value
                if state in states:
                    states[state] += 1
        operations = _family(GaugeMetricFamily, "sluicegate_operations",
                             "Operations held now (not closed yet), by state", ["state"])
        for state, count in states.items():
            operations.add_metric([state], count)
        yield operations

    def _connections(self) -> Iterator[Metric]:
        family = _family(GaugeMetricFamily, "sluicegate_connections_open",
                         "Client connections open now, by transport (binary Thrift, HTTP)", ["transport"])
        for transport, count in sorted(self._connection_counts.items()):
            family.add_metric([transport], float(count()))
        yield family

    def _authentication(self) -> Iterator[Metric]:
        throttle = self._watched.throttle
        failures = _family(CounterMetricFamily, "sluicegate_authentication_failures",
                           "Failed logins (wrong password, unknown user, bad token) on every port")
        failures.add_metric([], throttle.failures_total)
        yield failures
        lockouts = _family(CounterMetricFamily, "sluicegate_authentication_lockouts",
                           "Lockouts begun after repeated failed logins, by what was locked (user, address)",
                           ["scope"])
        for scope, count in sorted(throttle.lockouts_total.items()):
            lockouts.add_metric([scope], count)
        yield lockouts
        refused = _family(CounterMetricFamily, "sluicegate_authentication_refused_locked",
                          "Login attempts refused without a password check because a lockout was running")
        refused.add_metric([], throttle.refused_total)
        yield refused

    # -- streaming tables and materialized views -------------------------------------------------------------------

    def _tables(self) -> Iterator[Metric]:
        try:
            rows = self._watched.catalog.list_streams()
        except Exception as exc:  # noqa: BLE001 - a catalog that does not answer leaves these out; /ready says why
            log.warning("metrics: the catalog did not list the streams: %s", exc)
            return
        now = dt.datetime.now(dt.timezone.utc).timestamp()
        streams = [row for row in rows if row.desired_state != MATERIALIZED_VIEW_ROW]
        views = [row for row in rows if row.desired_state == MATERIALIZED_VIEW_ROW]
        yield from self._stream_figures(streams, now)
        yield from self._view_figures(views)

    def _stream_figures(self, rows: list[StreamEntry], now: float) -> Iterator[Metric]:
        labels = ["database", "table", "flow"]
        state = _family(GaugeMetricFamily, "sluicegate_stream_state",
                        "1 for the state a streaming table's stream is in, 0 for the others", [*labels, "state"])
        last_batch = _family(GaugeMetricFamily, "sluicegate_stream_last_batch_timestamp_seconds",
                             "When the stream last committed a micro-batch, in seconds since the epoch", labels)
        batch_id = _family(GaugeMetricFamily, "sluicegate_stream_last_batch_id",
                           "The id of the last micro-batch the stream committed", labels)
        freshness = _family(GaugeMetricFamily, "sluicegate_stream_freshness_seconds",
                            "Seconds since the stream last committed a micro-batch (at scrape time)", labels)
        rate = _family(GaugeMetricFamily, "sluicegate_stream_processed_rows_per_second",
                       "Rows per second the last micro-batch processed (Spark's processedRowsPerSecond)", labels)
        failures = _family(GaugeMetricFamily, "sluicegate_stream_consecutive_failures",
                           "Failures in a row of the stream (retries under way; 0 once a batch commits)", labels)
        backlog = _family(GaugeMetricFamily, "sluicegate_stream_backlog",
                          "What the stream's sources have not read yet, as its last progress reported it: files and "
                          "bytes (file sources), records (Kafka offsets behind the latest)", [*labels, "unit"])
        for row in rows:
            key = [row.database, row.name, row.flow or ""]
            for value in StreamState:
                state.add_metric([*key, value.value], 1.0 if row.status == value.value else 0.0)
            at = _seconds(row.last_batch_at)
            if at is not None:
                last_batch.add_metric(key, at)
                freshness.add_metric(key, max(0.0, now - at))
            if row.last_batch_id is not None:
                batch_id.add_metric(key, row.last_batch_id)
            if row.rows_per_second is not None:
                rate.add_metric(key, row.rows_per_second)
            failures.add_metric(key, row.failures)
            for unit, outstanding in self._backlog(row).items():
                backlog.add_metric([*key, unit], outstanding)
        yield from (state, last_batch, batch_id, freshness, rate, failures, backlog)

    def _backlog(self, row: StreamEntry) -> dict[str, float]:
        """The backlog a running stream's last progress reported (no broker is asked: a scrape stays cheap)."""
        if row.flow is not None or row.status != StreamState.RUNNING.value:
            return {}
        try:
            status = self._watched.streams.status(row.database, row.name)
        except Exception as exc:  # noqa: BLE001 - a stream dropped meanwhile
            log.debug("metrics: no status of %s.%s: %s", row.database, row.name, exc)
            return {}
        totals: dict[str, float] = {}
        for source in (status.last_progress.get("sources") or []) if status is not None else []:
            figures = source.get("metrics") or {}
            for spark_name, unit in BACKLOG_METRICS:
                if figures.get(spark_name) not in (None, ""):
                    try:
                        totals[unit] = totals.get(unit, 0.0) + float(figures[spark_name])
                    except (TypeError, ValueError):
                        continue
        return totals

    def _view_figures(self, rows: list[StreamEntry]) -> Iterator[Metric]:
        labels = ["database", "view"]
        last = _family(GaugeMetricFamily, "sluicegate_materialized_view_last_refresh_timestamp_seconds",
                       "When the view's last refresh ended, in seconds since the epoch", labels)
        duration = _family(GaugeMetricFamily, "sluicegate_materialized_view_last_refresh_duration_seconds",
                           "How long the view's last successful refresh took", labels)
        kind = _family(GaugeMetricFamily, "sluicegate_materialized_view_last_refresh_kind",
                       "1 for how the last successful refresh ran (FULL recompute, INCREMENTAL, UNCHANGED: nothing "
                       "to do), 0 for the others", [*labels, "kind"])
        failed = _family(GaugeMetricFamily, "sluicegate_materialized_view_last_refresh_failed",
                         "1 when the view's last refresh failed (the previous result stays), else 0", labels)
        for row in rows:
            key = [row.database, row.name]
            at = _seconds(row.last_refresh_at)
            if at is not None:
                last.add_metric(key, at)
            failed.add_metric(key, 1.0 if row.last_refresh_status == "FAILED" else 0.0)
            try:
                state = json.loads(row.plan_json) if row.plan_json else {}
            except ValueError:
                state = {}
            last_kind = state.get("last_kind")
            if last_kind:
                for value in REFRESH_KINDS:
                    kind.add_metric([*key, value], 1.0 if last_kind == value else 0.0)
            seconds = state.get("last_duration_seconds")
            if isinstance(seconds, (int, float)):
                duration.add_metric(key, float(seconds))
        yield from (last, duration, kind, failed)

    # -- the JVM --------------------------------------------------------------------------------------------------

    def _jvm_figures(self) -> Iterator[Metric]:
        heap = self.jvm_heap(self._jvm_timeout)
        up = _family(GaugeMetricFamily, "sluicegate_jvm_up",
                     "1 when the JVM answered this scrape within metrics.jvm_timeout, else 0")
        up.add_metric([], 1.0 if heap is not None else 0.0)
        yield up
        if heap is None:
            return
        used = _family(GaugeMetricFamily, "sluicegate_jvm_memory_heap_used_bytes", "The JVM's heap in use")
        used.add_metric([], heap[0])
        maximum = _family(GaugeMetricFamily, "sluicegate_jvm_memory_heap_max_bytes",
                          "The most heap the JVM may use (its -Xmx, spark.driver.memory)")
        maximum.add_metric([], heap[1])
        yield from (used, maximum)


def readiness(watched: Watched, collector: GatewayCollector | None, streams_restored: bool, stopping: bool,
              timeout: float = 2.0) -> dict[str, str]:
    """Each readiness check's answer: "ok" or why not (the JVM answers, the catalog answers a query, the streams
    were restored and the gateway is not stopping)."""
    checks: dict[str, str] = {}
    heap = collector.jvm_heap(timeout) if collector is not None else None
    checks["jvm"] = "ok" if heap is not None else f"the JVM did not answer within {timeout:g} s"
    try:
        watched.catalog.list_databases()
        checks["catalog"] = "ok"
    except Exception as exc:  # noqa: BLE001 - the answer is the check's outcome
        checks["catalog"] = f"the catalog did not answer: {type(exc).__name__}: {exc}"[:300]
    checks["streams"] = ("the gateway is stopping" if stopping else "ok" if streams_restored
                         else "the streams are not restored yet")
    return checks
