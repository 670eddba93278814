"""The pipeline as the console shows it, read from the catalog: streaming tables (their streams, flows and event
logs), materialized views (their refresh history) and the lineage between them. Each object is shown only to a user
who may read it, by the policy's own check (`Policy.may_read`: ownership, a SELECT grant, or admin), the one
`SHOW TABLES`-style listings use; sources are shown only through a table the user may read, and by kind and name
only (a path, a topic), never with their options (Kafka options can carry credentials).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.events import FLOW_PROGRESS
from sluicegate.dialect.streaming.plan import SourceSpec, StreamingPlan
from sluicegate.gateway.console.charts import Edge, Node

if TYPE_CHECKING:
    from sluicegate.catalog.events import EventRecord, EventRetention
    from sluicegate.catalog.store import CatalogStore, StreamEntry, TableEntry
    from sluicegate.policy import Policy

log = logging.getLogger(__name__)

STREAMING_TABLE, MATERIALIZED_VIEW = "STREAMING_TABLE", "MATERIALIZED_VIEW"


@dataclass(frozen=True)
class Batch:
    """One micro-batch, from its `flow_progress` event."""

    at: float                     # epoch seconds of the event
    batch_id: int | None
    input_rows: int | None
    output_rows: int | None
    rows_per_second: float | None
    freshness: float | None       # seconds since the previous batch: how stale the table had become
    backlog: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamView:
    table: TableEntry
    stream: StreamEntry | None
    flows: list[StreamEntry]
    trigger: str
    sources: list[str]


def visible(store: CatalogStore, policy: Policy, user: str, kind: str) -> list[TableEntry]:
    principal = policy.principal(user)
    return [entry for entry in store.list_tables(kinds=[kind])  # type: ignore[list-item]
            if policy.may_read(principal, entry.database, entry.name)]


def find_visible(store: CatalogStore, policy: Policy, user: str, qualified: str, kind: str) -> TableEntry | None:
    """The object `db.name` names when it exists, is of `kind` and `user` may read it; None otherwise (the same
    answer for all three, so the page discloses nothing about objects the user may not read)."""
    database, dot, name = qualified.partition(".")
    if not dot or not database or not name:
        return None
    entry = store.get_table(database.lower(), name.lower())
    if entry is None or entry.kind != kind:
        return None
    return entry if policy.may_read(policy.principal(user), entry.database, entry.name) else None


def _plan(stream: StreamEntry) -> StreamingPlan | None:
    try:
        return StreamingPlan.from_json(stream.plan_json)
    except Exception as exc:  # noqa: BLE001 - an unreadable plan shows as no sources, never as a failed page
        log.debug("plan of %s.%s unreadable: %s", stream.database, stream.name, exc)
        return None


def source_label(source: SourceSpec) -> str:
    if source.kind == "table":
        return f"{source.database or '?'}.{source.table or '?'}"
    if source.kind == "kafka":
        topic = source.options.get("subscribe") or source.options.get("subscribePattern") or source.options.get(
            "assign") or "?"
        return f"kafka {topic}"
    if source.kind == "files":
        return f"files {source.path or '?'}"
    return source.kind


def trigger_of(table: TableEntry, plan: StreamingPlan | None) -> str:
    if table.schedule:
        try:
            schedule = json.loads(table.schedule)
            return "schedule " + ", ".join(f"{k}={v}" for k, v in sorted(schedule.items()) if v not in (None, ""))
        except ValueError:
            return "schedule"
    if plan is not None and plan.trigger_seconds is not None:
        return f"every {plan.trigger_seconds:g} s"
    return "continuous (the gateway's trigger interval)"


def stream_view(store: CatalogStore, table: TableEntry) -> StreamView:
    stream = store.get_stream(table.database, table.name)
    flows = [flow.stream for flow in store.list_flows(table.database, table.name)]
    plan = _plan(stream) if stream is not None else None
    sources = [source_label(s) for s in plan.sources] if plan is not None else []
    for flow in flows:
        flow_plan = _plan(flow)
        sources += [f"{source_label(s)} (flow {flow.flow})" for s in flow_plan.sources] if flow_plan else []
    return StreamView(table, stream, flows, trigger_of(table, plan), sources)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def batches(events: list[EventRecord], previous: float | None = None) -> list[Batch]:
    """The micro-batches of an event log (oldest first), each with the figures its `flow_progress` event holds;
    `previous`: the time of the batch before the first of `events` (when they continue a log already read)."""
    found: list[Batch] = []
    for event in events:
        if event.event_type != FLOW_PROGRESS:
            continue
        try:
            flow = json.loads(event.details).get(FLOW_PROGRESS) or {}
        except ValueError:
            continue
        metrics = flow.get("metrics") or {}
        at = event.timestamp.timestamp()
        rate = _number(flow.get("processed_rows_per_second"))
        if rate is None and _number(metrics.get("num_input_rows")) is not None and _number(flow.get("duration_ms")):
            rate = float(metrics["num_input_rows"]) / (float(flow["duration_ms"]) / 1000.0)
        backlog = {k: int(v) for k, v in metrics.items() if k.startswith("backlog_") and _number(v) is not None}
        found.append(Batch(at, flow.get("batch_id"), metrics.get("num_input_rows"), metrics.get("num_output_rows"),
                           rate, None if previous is None else at - previous, backlog))
        previous = at
    return found


def freshness_points(found: list[Batch], now: float) -> list[tuple[float, float]]:
    """Freshness over time: at each batch, how long the table had gone without one; and now, the age of the last."""
    points = [(b.at, b.freshness) for b in found if b.freshness is not None]
    if found:
        points.append((max(now, found[-1].at), max(0.0, now - found[-1].at)))
    return [(x, y) for x, y in points if y is not None]


def throughput_points(found: list[Batch]) -> list[tuple[float, float]]:
    return [(b.at, b.rows_per_second) for b in found if b.rows_per_second is not None]


NEWEST_EVENTS = 100       # the events a stream's page lists


def sequence_number(event: EventRecord) -> int:
    try:
        return int(json.loads(event.sequence)["control_plane_seq_no"])
    except (ValueError, KeyError, TypeError):
        return 0


@dataclass
class _ReadLog:
    last_sequence: int
    batches: list[Batch]
    newest: deque[EventRecord]


class EventLogs:
    """Streaming tables' event logs as their pages need them (the micro-batches' figures and the newest events),
    read incrementally: each page load reads only the events recorded since the last one, so a full log (10,000
    events by default) is read and parsed once, not at every load. What is kept follows the log's own retention
    (`[events]`: the newest `max_rows_per_table` batches, none older than `retention_days`); a table dropped and
    created again is a new log. At most `max_tables` logs are kept, the least recently shown dropped first."""

    def __init__(self, store: CatalogStore, retention: EventRetention, max_tables: int = 32) -> None:
        self._store = store
        self._retention = retention
        self._max_tables = max_tables
        self._logs: OrderedDict[tuple[str, str, dt.datetime | None], _ReadLog] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, table: TableEntry) -> tuple[list[Batch], list[EventRecord]]:
        """The table's micro-batches (oldest first) and its newest events (newest first)."""
        key = (table.database, table.name, table.created_at)
        with self._lock:
            keep = self._retention.max_rows_per_table
            log_read = self._logs.pop(key, None) or _ReadLog(
                -1, [], deque(maxlen=min(NEWEST_EVENTS, keep) if keep > 0 else NEWEST_EVENTS))
            self._logs[key] = log_read
            while len(self._logs) > self._max_tables:
                self._logs.popitem(last=False)
            new = self._store.event_log(table.database, table.name,
                                        after_sequence=log_read.last_sequence if log_read.last_sequence >= 0 else None)
            if new:
                previous = log_read.batches[-1].at if log_read.batches else None
                log_read.batches.extend(batches(new, previous))
                log_read.newest.extend(new)
                log_read.last_sequence = max(log_read.last_sequence, *(sequence_number(e) for e in new))
            self._trim(log_read)
            return list(log_read.batches), list(reversed(log_read.newest))

    def _trim(self, log_read: _ReadLog) -> None:
        keep = self._retention.max_rows_per_table
        if keep > 0 and len(log_read.batches) > keep:
            del log_read.batches[: len(log_read.batches) - keep]
        if self._retention.days > 0:
            oldest = dt.datetime.now(dt.timezone.utc).timestamp() - self._retention.days * 86400
            first_kept = next((i for i, b in enumerate(log_read.batches) if b.at >= oldest), len(log_read.batches))
            del log_read.batches[:first_kept]


@dataclass(frozen=True)
class Refresh:
    at: dt.datetime
    outcome: str                  # FULL, INCREMENTAL, UNCHANGED, FAILED, CREATED, ...
    full_refresh: bool | None     # asked for with FULL
    cause: str | None
    reason: str
    level: str


def refreshes(events: list[EventRecord]) -> list[Refresh]:
    """A materialized view's refresh history, newest first, from its events (create_update carries the technique
    and the reason; a failure is an ERROR event)."""
    found: list[Refresh] = []
    for event in events:
        try:
            details = json.loads(event.details)
        except ValueError:
            details = {}
        update = details.get("create_update") if isinstance(details, dict) else None
        if isinstance(update, dict) and update.get("technique"):
            found.append(Refresh(event.timestamp, str(update["technique"]), update.get("full_refresh"),
                                 update.get("cause"), str(update.get("reason") or event.message), event.level))
        elif event.level == "ERROR":
            found.append(Refresh(event.timestamp, "FAILED", None, None, event.message, event.level))
        elif isinstance(update, dict):
            found.append(Refresh(event.timestamp, "CREATED" if event.message.startswith("created") else "UPDATE",
                                 update.get("full_refresh"), update.get("cause"), event.message, event.level))
    return list(reversed(found))


def view_state(store: CatalogStore, table: TableEntry) -> dict[str, Any]:
    """The view's refresh state row as stored (executor/materialized_views/refresh.py's MaterializedViewState)."""
    stream = store.get_stream(table.database, table.name)
    if stream is None:
        return {}
    try:
        state = json.loads(stream.plan_json)
    except ValueError:
        return {}
    return {**state, "status": stream.status, "last_refresh_at": stream.last_refresh_at,
            "last_error": stream.last_error} if isinstance(state, dict) else {}


def lineage(store: CatalogStore, policy: Policy, user: str) -> tuple[list[Node], list[Edge]]:
    """sources -> flows -> streaming tables -> materialized views, over the objects `user` may read."""
    principal = policy.principal(user)
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    kinds = {STREAMING_TABLE: "streaming table", MATERIALIZED_VIEW: "materialized view", "TABLE": "table",
             "VIEW": "table"}
    readable = {f"{e.database}.{e.name}": e for e in store.list_tables()
                if e.kind in (STREAMING_TABLE, MATERIALIZED_VIEW)
                and policy.may_read(principal, e.database, e.name)}

    def input_node(name: str) -> str:
        """A table read by a stream or view: shown as what it is when the user may read it, else as a source."""
        entry = readable.get(name)
        if entry is not None:
            node_id = f"{entry.kind}:{name}"
            nodes.setdefault(node_id, Node(node_id, name, kinds[entry.kind]))
            return node_id
        database, _, table = name.partition(".")
        other = store.get_table(database, table) if table else None
        if other is not None and policy.may_read(principal, other.database, other.name):
            node_id = f"{other.kind}:{name}"
            nodes.setdefault(node_id, Node(node_id, name, kinds.get(other.kind, "table")))
            return node_id
        node_id = f"source:{name}"
        nodes.setdefault(node_id, Node(node_id, name, "source"))
        return node_id

    def source_node(source: SourceSpec) -> str:
        if source.kind == "table" and source.table:
            return input_node(f"{source.database or 'default'}.{source.table}".lower())
        label = source_label(source)
        node_id = f"source:{label}"
        nodes.setdefault(node_id, Node(node_id, label, "source"))
        return node_id

    for name, entry in readable.items():
        node_id = f"{entry.kind}:{name}"
        nodes.setdefault(node_id, Node(node_id, name, kinds[entry.kind]))
        if entry.kind == STREAMING_TABLE:
            stream = store.get_stream(entry.database, entry.name)
            plan = _plan(stream) if stream is not None else None
            for source in plan.sources if plan is not None else ():
                edges.append(Edge(source_node(source), node_id))
            for flow in store.list_flows(entry.database, entry.name):
                flow_id = f"flow:{entry.database}.{flow.stream.flow}"
                nodes.setdefault(flow_id, Node(flow_id, f"{entry.database}.{flow.stream.flow}", "flow"))
                edges.append(Edge(flow_id, node_id))
                flow_plan = _plan(flow.stream)
                for source in flow_plan.sources if flow_plan is not None else ():
                    edges.append(Edge(source_node(source), flow_id))
        else:
            state = view_state(store, entry)
            for input_name in sorted(state.get("input_versions") or {}):
                edges.append(Edge(input_node(str(input_name).lower()), node_id))
            for foreign in state.get("foreign_inputs") or ():
                source_id = f"source:{foreign}"
                nodes.setdefault(source_id, Node(source_id, str(foreign), "source"))
                edges.append(Edge(source_id, node_id))
    unique = list(dict.fromkeys(edges))
    return list(nodes.values()), unique
