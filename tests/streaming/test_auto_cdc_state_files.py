"""SCD 1's batch on the driver (engine/streams/cdc_sink.py, issue 29): each key's winner picked in Arrow with the tie
the driver writes, and the state committed as a rewrite of the files the batch looked its keys up in. Both must
give what Spark's aggregate and the state's MERGE give: the sinks run on a real Spark and real Delta tables, called
as foreachBatch calls them."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from sluicegate.dialect.streaming.plan import CdcSpec
from sluicegate.engine.streams import cdc_sink
from sluicegate.engine.streams.cdc_sink import SEQ, TIE, Scd1Sink, state_location
from sluicegate.storage.delta.write import commit_files

pytestmark = pytest.mark.jvm

SPEC = CdcSpec(keys=("id",), sequence_sql="seq", sequence_columns=("seq",), delete_sql="op = 'D'")
EVENTS = "id INT, op STRING, seq BIGINT, name STRING, amount INT"
COLUMNS = ["id", "seq", "name", "amount"]
NAMES = ["ann", 'a"b', "c\\d", "e\nf", "g\x01h", "é", "", None]


def _sink(tmp_path: Path, name: str) -> Scd1Sink:
    location = str(tmp_path / name)
    commit_files(location, [], pa.schema([("id", pa.int32()), ("seq", pa.int64()), ("name", pa.string()),
                                          ("amount", pa.int32())]), "append", create=True)
    return Scd1Sink(location, "s1", SPEC, COLUMNS)


def _table(location: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(row.values()) for row in DeltaTable(location).to_pyarrow_table().to_pylist()), key=repr)


def _state(sink: Scd1Sink) -> list[tuple[Any, ...]]:
    rows = DeltaTable(state_location(sink.location, "s1")).to_pyarrow_table().to_pylist()
    return sorted(((row["id"], row[SEQ], row[cdc_sink.DELETE], row[TIE], row[cdc_sink.DELETED_AT] is None)
                   for row in rows), key=repr)


def _events(rng: random.Random, count: int, keys: int) -> list[tuple[Any, ...]]:
    """Upserts and deletes with sequences that repeat (equal sequences of other values, exact duplicates)."""
    events = []
    for _ in range(count):
        event = (rng.randrange(keys), "D" if rng.random() < 0.15 else "U", rng.randrange(count // 3),
                 rng.choice(NAMES), rng.choice([None, rng.randint(-5, 5)]))
        events.append(event)
        if rng.random() < 0.1:
            events.append(event)
    return events


def test_the_driver_and_spark_rank_and_remember_alike(spark: Any, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """One sink ranks every batch on the driver and rewrites the state's files, the other ranks in Spark (a batch
    above DRIVER_RANKING_BYTES) and MERGEs into the state (its files above STATE_SLICE_BYTES): after every batch
    both tables hold the same rows and both states the same ranks, ties (the values as JSON, escapes and NULLs
    among them) included."""
    driver, grouped = _sink(tmp_path, "driver"), _sink(tmp_path, "grouped")
    rng = random.Random(29)
    for batch_id in range(8):
        events = _events(rng, 120, keys=25)
        frame = spark.createDataFrame(events, EVENTS)
        monkeypatch.setattr(cdc_sink, "DRIVER_RANKING_BYTES", 1 << 30)
        monkeypatch.setattr(cdc_sink, "STATE_SLICE_BYTES", 1 << 30)
        driver(frame, batch_id)
        monkeypatch.setattr(cdc_sink, "DRIVER_RANKING_BYTES", -1)
        monkeypatch.setattr(cdc_sink, "STATE_SLICE_BYTES", -1)
        grouped(frame, batch_id)
        assert _table(driver.location) == _table(grouped.location), f"batch {batch_id}"
        assert _state(driver) == _state(grouped), f"batch {batch_id}"
    assert len(_table(driver.location)) > 5
    assert any("\\n" in row[3] or "\\u0001" in row[3] for row in _state(driver))   # escaped ties were kept


def test_a_batch_rewrites_only_the_state_files_of_its_keys(spark: Any, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The state is kept sorted by key in files of about STATE_FILE_BYTES: a batch over a few keys replaces the
    files of their range and leaves the others as they were, and the state's rows are each key's latest rank."""
    monkeypatch.setattr(cdc_sink, "STATE_FILE_BYTES", 4096)
    sink = _sink(tmp_path, "t")
    state = state_location(sink.location, "s1")

    def batch(batch_id: int, events: list[tuple[Any, ...]]) -> None:
        sink(spark.createDataFrame(events, EVENTS), batch_id)

    batch(0, [(key, "U", 1, f"n{key}", key) for key in range(1000)])
    batch(1, [(key, "U", 2, f"m{key}", key) for key in range(1000)])   # a rewrite of every file: now cut by key
    files = pa.table(DeltaTable(state).get_add_actions(flatten=True)).to_pylist()
    assert len(files) > 3
    ranges = {row["path"]: (row["min.id"], row["max.id"]) for row in files}
    assert sorted(ranges.values()) == sorted(ranges.values(), key=lambda r: r[0])
    assert all(low <= high for low, high in ranges.values())

    batch(2, [(500, "U", 3, "x", 1), (501, "D", 3, None, None)])
    after = {row["path"]: (row["min.id"], row["max.id"])
             for row in pa.table(DeltaTable(state).get_add_actions(flatten=True)).to_pylist()}
    untouched = {path for path, (low, high) in ranges.items() if high < 500 or low > 501}
    assert untouched and untouched <= set(after)                   # the other files are the same files
    assert set(ranges) - untouched - set(after) == set(ranges) - untouched   # the files of 500-501 were replaced
    ranks = {row[0]: row[1:3] for row in _state(sink)}
    assert len(ranks) == 1000
    assert ranks[500] == (3, False) and ranks[501] == (3, True) and ranks[0] == (2, False)
    table = {row[0]: row for row in _table(sink.location)}
    assert len(table) == 999 and 501 not in table and table[500] == (500, 3, "x", 1)
    assert DeltaTable(state).transaction_version("s1") == 2        # the rewrite carries the batch's txn
