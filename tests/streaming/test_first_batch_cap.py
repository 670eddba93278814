"""maxOffsetsPerTrigger holds for the first micro-batch of every run of a continuous query, through PyHive on real
Spark, real Delta and librdkafka's mock cluster: a backlog produced before CREATE, and one produced while the stream
was stopped, are read in capped batches (each batch's size from the Delta commits carrying the stream's txn), every
record once. A scheduled pass is one batch (Spark 4.1 runs a Python source's available-now trigger as a single
batch) and reads everything there. The same for read_files on an object store: tests/object_storage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kafka_broker import MockKafka
from pyhive_helpers import drop_database, sorted_rows

from sluicegate.engine.streams.checkpoint_offsets import TAG_FIELD, logged_start

CAP = 5


@pytest.fixture(autouse=True)
def _streams_stopped_before_the_broker(stream_cursor: Any, gateway: Any) -> Any:
    yield
    drop_database(gateway, stream_cursor.database)


def batch_sizes(streams: Any, database: str, name: str) -> list[int]:
    """The rows of each micro-batch the table's stream committed, in commit order (its files' numRecords)."""
    entry, table = streams.store.get_stream(database, name), streams.store.get_table(database, name)
    sizes = []
    for commit in sorted((Path(table.location) / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in commit.read_text().splitlines() if line.strip()]
        if any(action.get("txn", {}).get("appId") == entry.stream_id for action in actions):
            sizes.append(sum(json.loads(a["add"]["stats"])["numRecords"] for a in actions if "add" in a))
    return sizes


def _produce(kafka: MockKafka, topic: str, ids: range) -> None:
    kafka.produce(topic, [(None, json.dumps({"id": i}).encode()) for i in ids])


def _create(cursor: Any, kafka: MockKafka, topic: str, schedule: str = "") -> None:
    cursor.execute(f"CREATE STREAMING TABLE {topic} {schedule} AS SELECT from_json(CAST(value AS STRING), 'id INT').id "
                   f"AS id FROM STREAM read_kafka(bootstrapServers => '{kafka.bootstrap}', subscribe => '{topic}', "
                   f"startingOffsets => 'earliest', maxOffsetsPerTrigger => {CAP})")


def test_the_first_batch_after_create_and_after_a_restart_is_capped(stream_cursor: Any, streams: Any,
                                                                    kafka: MockKafka) -> None:
    cur, database = stream_cursor, stream_cursor.database
    _produce(kafka, "backlog", range(12))               # there before the table
    _create(cur, kafka, "backlog")
    streams.wait_for(database, "backlog")
    before = batch_sizes(streams, database, "backlog")
    assert sum(before) == 12 and max(before) <= CAP, before
    streams.stop(database, "backlog", desired=None)     # down for a while: a backlog builds up
    _produce(kafka, "backlog", range(12, 40))
    streams.resume(streams.store.get_stream(database, "backlog"))
    streams.wait_for(database, "backlog")
    after = batch_sizes(streams, database, "backlog")[len(before):]
    assert sum(after) == 28 and max(after) <= CAP, after
    assert sorted_rows(cur, "SELECT id FROM backlog") == sorted([(i,) for i in range(40)], key=repr)   # once each
    checkpoint = streams.store.get_stream(database, "backlog").checkpoint
    logged = logged_start(checkpoint, "__sg_source_0")   # the source's tag: its place in the definition
    assert logged.offset is not None and logged.offset["backlog"]["0"] == 40 and TAG_FIELD not in logged.offset


def test_a_scheduled_pass_is_one_batch_that_reads_everything(stream_cursor: Any, streams: Any,
                                                             kafka: MockKafka) -> None:
    cur, database = stream_cursor, stream_cursor.database
    _produce(kafka, "passes", range(12))
    _create(cur, kafka, "passes", "SCHEDULE EVERY 1 HOUR")
    _produce(kafka, "passes", range(12, 20))
    cur.execute("REFRESH STREAMING TABLE passes")        # SYNC: waits for a pass over what is there now
    assert sorted_rows(cur, "SELECT id FROM passes") == sorted([(i,) for i in range(20)], key=repr)
    sizes = batch_sizes(streams, database, "passes")   # CREATE's pass, and REFRESH's (if CREATE's had not seen all)
    assert sum(sizes) == 20 and len(sizes) <= 2, sizes
