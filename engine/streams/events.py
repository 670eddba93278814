"""One `flow_progress` event per micro-batch, in Databricks' event-log shape (catalog/events.py has the columns).

A batch's figures come from two places at two moments. The Delta sink, inside the batch, knows what it committed:
the batch id, the Delta version, whether the batch was a replay, and the expectations' counts (`BatchWritten`). Spark's
listener, a little later on its own thread, knows the rest: input rows, duration, watermark, sources' offsets and
backlog. `batch_written` only parks the sink's half in memory (no I/O inside the batch); `batch_progress` pairs it
with Spark's half and writes the one event, reading the commit's row count off its Delta log entry: the cost lands on
the listener's thread, not on the batch. A batch whose progress never arrives (the process died in between) has no
event; its Delta commit and the checkpoint are the record.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.events import FLOW_PROGRESS

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore
    from sluicegate.engine.streams.sink import BatchWritten

log = logging.getLogger(__name__)

__all__ = ["FLOW_PROGRESS", "batch_progress", "batch_written", "commit_metrics", "flow_progress_details"]

MAX_PENDING = 256  # batches written whose progress has not come yet (a crash between the two leaves one behind)

_pending: OrderedDict[tuple[str, int], BatchWritten] = OrderedDict()
_pending_lock = threading.Lock()


def batch_written(stream_id: str, written: BatchWritten) -> None:
    """The sink's half of a batch's figures, kept until Spark reports the batch (called inside the batch)."""
    with _pending_lock:
        _pending[(stream_id, written.batch_id)] = written
        while len(_pending) > MAX_PENDING:
            _pending.popitem(last=False)


def _take(stream_id: str, batch_id: int) -> BatchWritten | None:
    with _pending_lock:
        return _pending.pop((stream_id, batch_id), None)


def commit_metrics(location: str, version: int) -> dict[str, int]:
    """What Delta version `version` of the table at `location` wrote: `num_output_rows` (rows added by an append or
    overwrite, rows inserted or updated by a MERGE), and for a MERGE `num_upserted_rows` and `num_deleted_rows`.
    Read off the commit's log entry (one small JSON file); empty when the entry is gone."""
    entry = Path(location) / "_delta_log" / f"{version:020d}.json"
    try:
        lines = entry.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    added = 0
    operation_metrics: dict[str, Any] = {}
    for line in lines:
        action = json.loads(line) if line.strip() else {}
        if "commitInfo" in action and action["commitInfo"].get("operation") == "MERGE":
            operation_metrics = action["commitInfo"].get("operationMetrics") or {}
        elif "add" in action:
            stats = action["add"].get("stats")
            added += int(json.loads(stats).get("numRecords", 0)) if stats else 0
    if operation_metrics:
        upserted = int(operation_metrics.get("num_target_rows_inserted", 0)) + \
            int(operation_metrics.get("num_target_rows_updated", 0))
        return {"num_output_rows": upserted, "num_upserted_rows": upserted,
                "num_deleted_rows": int(operation_metrics.get("num_target_rows_deleted", 0))}
    return {"num_output_rows": added}


def _backlog(sources: list[dict[str, Any]]) -> dict[str, int]:
    """Databricks' backlog metrics where Spark's sources report them (file sources: files and bytes not yet read;
    Kafka: offsets behind the latest)."""
    totals: dict[str, int] = {}
    for source in sources:
        metrics = source.get("metrics") or {}
        for spark_name, name in (("numFilesOutstanding", "backlog_files"), ("numBytesOutstanding", "backlog_bytes"),
                                 ("maxOffsetsBehindLatest", "backlog_records")):
            if metrics.get(spark_name) not in (None, ""):
                totals[name] = totals.get(name, 0) + int(float(metrics[spark_name]))
    return totals


def flow_progress_details(progress: dict[str, Any], written: BatchWritten | None,
                          committed: dict[str, int] | None) -> dict[str, Any]:
    """Databricks' `details` of a `flow_progress` event for one micro-batch: status, metrics (output rows from the
    Delta commit, input rows, backlog), data_quality (when the table has expectations), and Spark's figures: batch
    id, duration, watermark, rows per second, sources' offsets."""
    sources = progress.get("sources") or []
    metrics: dict[str, Any] = {"num_output_rows": 0 if written is not None and written.replayed else None}
    metrics.update(committed or {})
    if metrics["num_output_rows"] is None:
        sink_rows = (progress.get("sink") or {}).get("numOutputRows")
        metrics["num_output_rows"] = sink_rows if isinstance(sink_rows, int) and sink_rows >= 0 else None
    metrics["num_input_rows"] = progress.get("numInputRows")
    metrics.update(_backlog(sources))
    late = sum(int(op.get("numRowsDroppedByWatermark") or 0) for op in progress.get("stateOperators") or [])
    if late:
        metrics["num_rows_dropped_by_watermark"] = late
    flow: dict[str, Any] = {"status": "RUNNING", "batch_id": progress.get("batchId"),
                            "metrics": {k: v for k, v in metrics.items() if v is not None}}
    if written is not None and written.quality is not None:
        flow["data_quality"] = written.quality
    durations = progress.get("durationMs") or {}
    flow["duration_ms"] = durations.get("triggerExecution")
    watermark = (progress.get("eventTime") or {}).get("watermark")
    if watermark:
        flow["watermark"] = watermark
    for key in ("inputRowsPerSecond", "processedRowsPerSecond"):
        if progress.get(key) is not None:
            flow[_snake(key)] = progress[key]
    if written is not None:
        flow["delta_version"] = written.version
        flow["replayed"] = written.replayed
        flow["commit_seconds"] = round(written.seconds, 3)
    flow["sources"] = [{"description": s.get("description"), "start_offset": s.get("startOffset"),
                        "end_offset": s.get("endOffset"), "latest_offset": s.get("latestOffset"),
                        "num_input_rows": s.get("numInputRows")} for s in sources]
    return {FLOW_PROGRESS: flow}


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _message(qualified: str, flow: dict[str, Any]) -> str:
    metrics = flow["metrics"]
    written = metrics.get("num_output_rows")
    wrote = f"{written} rows written" if written is not None else "rows written unknown"
    replay = " (a replay: committed before a restart)" if flow.get("replayed") else ""
    return (f"Flow '{qualified}' batch {flow['batch_id']}: {metrics.get('num_input_rows', 0)} rows in, "
            f"{wrote}{replay}")


def batch_progress(store: CatalogStore, key: tuple[str, str], stream_id: str, progress: dict[str, Any],
                   flow_name: str | None = None) -> None:
    """Write the `flow_progress` event of the batch Spark just reported (on the listener's thread), with the sink's
    figures of the same batch when it wrote one. `flow_name`: the flow's, when several flows write the table (the
    origin names the table otherwise); `stream_id` is the flow's id."""
    batch_id = progress.get("batchId")
    if not isinstance(batch_id, int):
        return
    written = _take(stream_id, batch_id)
    committed = None
    if written is not None and written.version is not None and not written.replayed:
        table = store.get_table(*key)
        committed = commit_metrics(table.location, written.version) if table and table.location else None
    details = flow_progress_details(progress, written, committed)
    flow = details[FLOW_PROGRESS]
    origin: dict[str, Any] = {"batch_id": batch_id, "flow_id": stream_id}
    if flow_name:
        origin["flow_name"] = flow_name
    if progress.get("id"):
        origin["update_id"] = str(progress["id"])
    store.record_event(*key, "FLOW_PROGRESS", _message(f"{key[0]}.{key[1]}", flow), event_type=FLOW_PROGRESS,
                       level="METRICS", details=details, origin=origin)
