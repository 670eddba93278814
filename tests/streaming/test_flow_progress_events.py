"""flow_progress events without a JVM: the details built from Spark's progress and the sink's BatchWritten, the row
counts read off real Delta commits (delta-rs), and the pairing of the two halves of one batch into one event."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from sluicegate.catalog.store import CatalogStore, StreamEntry, TableEntry
from sluicegate.engine.streams import events
from sluicegate.engine.streams.sink import BatchWritten

QUALITY = {"dropped_records": 2, "expectations": [
    {"name": "positive", "dataset": "default.clicks", "passed_records": 8, "failed_records": 2}]}


def _progress(batch_id: int, rows: int = 10) -> dict:
    """The fields of Spark's StreamingQueryProgress JSON the event reads."""
    return {"id": "q-1", "runId": "r-1", "batchId": batch_id, "numInputRows": rows, "inputRowsPerSecond": 5.0,
            "processedRowsPerSecond": 20.0, "durationMs": {"triggerExecution": 480, "addBatch": 300},
            "eventTime": {"watermark": "2026-01-01T00:00:05.000Z"},
            "stateOperators": [{"numRowsDroppedByWatermark": 3}],
            "sources": [{"description": "FileStreamSource[file:/landing/clicks]", "startOffset": {"logOffset": 0},
                         "endOffset": {"logOffset": 1}, "latestOffset": None, "numInputRows": rows,
                         "metrics": {"numFilesOutstanding": "4", "numBytesOutstanding": "1000"}}],
            "sink": {"description": "ForeachBatchSink", "numOutputRows": -1}}


def test_details_in_databricks_shape():
    written = BatchWritten(3, False, 7, 0.25, QUALITY)
    details = events.flow_progress_details(_progress(3), written, {"num_output_rows": 8})
    flow = details["flow_progress"]
    assert flow["status"] == "RUNNING" and flow["batch_id"] == 3
    assert flow["metrics"] == {"num_output_rows": 8, "num_input_rows": 10, "backlog_files": 4, "backlog_bytes": 1000,
                               "num_rows_dropped_by_watermark": 3}
    assert flow["data_quality"] == QUALITY
    assert (flow["duration_ms"], flow["watermark"], flow["delta_version"]) == (480, "2026-01-01T00:00:05.000Z", 7)
    assert flow["sources"][0]["end_offset"] == {"logOffset": 1}
    json.dumps(details)  # what is stored must be JSON


def test_a_replayed_batch_wrote_nothing_and_no_expectations_means_no_data_quality():
    flow = events.flow_progress_details(_progress(2), BatchWritten(2, True, None, 0.1), None)["flow_progress"]
    assert flow["metrics"]["num_output_rows"] == 0 and flow["replayed"] is True
    assert "data_quality" not in flow
    unknown = events.flow_progress_details(_progress(2), None, None)["flow_progress"]
    assert "num_output_rows" not in unknown["metrics"]  # Spark's foreachBatch sink reports -1: not a count


def test_commit_metrics_of_appends_and_merges(tmp_path: Path):
    location = str(tmp_path / "t")
    write_deltalake(location, pa.table({"k": [1, 2, 3], "v": [1, 1, 1]}))
    assert events.commit_metrics(location, 0) == {"num_output_rows": 3}
    (DeltaTable(location).merge(pa.table({"k": [3, 4], "v": [2, 2]}), "t.k = s.k", source_alias="s",
                                target_alias="t").when_matched_update_all().when_not_matched_insert_all().execute())
    assert events.commit_metrics(location, 1) == {"num_output_rows": 2, "num_upserted_rows": 2,
                                                  "num_deleted_rows": 0}
    assert events.commit_metrics(location, 9) == {}


@pytest.fixture()
def store(tmp_path: Path) -> CatalogStore:
    found = CatalogStore.for_warehouse(tmp_path)
    location = str(tmp_path / "default.db" / "clicks")
    write_deltalake(location, pa.table({"k": [1, 2, 3, 4, 5]}))
    found.create_table(TableEntry("default", "clicks", "STREAMING_TABLE", location, None, "SELECT 1"))
    found.put_stream(StreamEntry("default", "clicks", "b" * 32, "{}", "/c", "RUNNING", "RUNNING", query_id="q-1"))
    return found


def test_one_event_per_batch_pairs_the_sink_and_spark(store):
    events.batch_written("b" * 32, BatchWritten(0, False, 0, 0.2, QUALITY))
    events.batch_progress(store, ("default", "clicks"), "b" * 32, _progress(0, rows=5))
    events.batch_progress(store, ("default", "clicks"), "b" * 32, _progress(1, rows=0))  # no sink half: still one
    first, second = store.event_log("default", "clicks")
    assert (first.event_type, first.level) == ("flow_progress", "METRICS")
    details = json.loads(first.details)["flow_progress"]
    assert details["metrics"]["num_output_rows"] == 5 and details["data_quality"]["dropped_records"] == 2
    assert json.loads(first.origin)["batch_id"] == 0 and json.loads(first.origin)["update_id"] == "q-1"
    assert "batch 0: 5 rows in, 5 rows written" in first.message
    assert json.loads(second.details)["flow_progress"]["batch_id"] == 1
    assert json.loads(first.origin)["flow_id"] == "b" * 32 and json.loads(first.origin)["flow_name"] == "default.clicks"
    events.batch_progress(store, ("default", "clicks"), "e" * 32, _progress(0), flow_name="backfill")
    assert json.loads(store.event_log("default", "clicks")[-1].origin)["flow_name"] == "backfill"
    assert store.events("default", "clicks") == []  # METRICS events stay out of DESCRIBE's rows


def test_pending_halves_are_bounded():
    for batch in range(events.MAX_PENDING + 10):
        events.batch_written("c" * 32, BatchWritten(batch, False, batch, 0.0))
    assert events._take("c" * 32, 0) is None  # the oldest went
    assert events._take("c" * 32, events.MAX_PENDING + 9) is not None
