"""The AUTO CDC state drops a tombstone once it is older than the threshold, and only then (engine/streams/cdc_sink.py
`tombstones_before`: the state's MERGE carries the dropping clause only when a file's statistics say one may be due).
The sink runs on a real Spark and real Delta tables, called as foreachBatch calls it, with its clock given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable

from sluicegate.dialect.streaming.plan import CdcSpec
from sluicegate.engine.streams.cdc_sink import DELETE, Scd1Sink, state_location, tombstones_before
from sluicegate.storage.delta.write import commit_files

SPEC = CdcSpec(keys=("id",), sequence_sql="seq", sequence_columns=("seq",), delete_sql="op = 'D'")
THRESHOLD_S = 3600.0


class Clock:
    """The sink's clock, set by the test (seconds)."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _rows(location: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(row.values()) for row in DeltaTable(location).to_pyarrow_table().to_pylist())


def _tombstones(state: str) -> list[int]:
    return sorted(row["id"] for row in DeltaTable(state).to_pyarrow_table().to_pylist() if row[DELETE])


def test_a_tombstone_holds_until_the_threshold_then_goes(spark: Any, tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    commit_files(location, [], pa.schema([("id", pa.int32()), ("seq", pa.int64()), ("name", pa.string())]),
                 "append", create=True)
    clock = Clock()
    sink = Scd1Sink(location, "s1", SPEC, ["id", "seq", "name"], tombstone_seconds=THRESHOLD_S, clock=clock)
    state = state_location(location, "s1")

    def batch(batch_id: int, *events: tuple[int, str, int, str | None]) -> None:
        sink(spark.createDataFrame(list(events), "id INT, op STRING, seq BIGINT, name STRING"), batch_id)

    batch(0, (1, "I", 1, "a"), (2, "I", 1, "b"))
    batch(1, (1, "D", 5, None))
    assert _rows(location) == [(2, 1, "b")]
    kept = DeltaTable(state)
    assert not tombstones_before(kept, int(clock.now * 1000))      # made now: not before now
    assert tombstones_before(kept, int(clock.now * 1000) + 1)

    clock.now += THRESHOLD_S / 2                                     # within the threshold: the tombstone holds
    batch(2, (1, "U", 3, "late"), (2, "U", 2, "b2"))
    assert _rows(location) == [(2, 2, "b2")]
    assert _tombstones(state) == [1]                                 # id 1's tombstone still there

    clock.now += THRESHOLD_S                                         # past it: the next batch's MERGE drops it
    batch(3, (2, "U", 3, "b3"))
    assert _tombstones(state) == []
    assert 1 not in [row["id"] for row in DeltaTable(state).to_pyarrow_table().to_pylist()]
    assert not tombstones_before(DeltaTable(state), int(clock.now * 1000))
    batch(4, (1, "U", 4, "later"))                                   # older than the delete, applied now
    assert _rows(location) == [(1, 4, "later"), (2, 3, "b3")]
