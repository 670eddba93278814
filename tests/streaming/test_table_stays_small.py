"""A streaming table fed a hundred and more micro-batches, through PyHive on real Spark and real Delta, with the
background compactor at its default settings (as `sluicegate serve` runs it): every row lands exactly once, one
Delta commit per micro-batch, and the live file count stays bounded instead of growing by one file a batch. The
full-size figures (reads against a compacted copy, commit times, the log): bench/compaction_bench.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from delta_log import txn_actions
from pyhive_helpers import database_cursor, land_named, poll_until

from sluicegate.engine.maintenance import TableMaintenance
from sluicegate.executor.streaming_tables import CREATE_WAITS

DATABASE = "st_stays_small"
BATCHES = 120              # one landed file, one micro-batch, one Delta commit each: ~0.5 s a batch on 2 quiet
                           # cores (a 1,000-batch run: bench/compaction_bench.py), several times that under load
ROWS = 4                   # per batch; ids batch*ROWS .. batch*ROWS + ROWS-1
MAX_LIVE_FILES = 40        # at any time while the stream runs; without compaction the table holds one file a batch
FEED_TIMEOUT = 300.0


@dataclass(frozen=True)
class Fed:
    location: str
    stream_id: str
    files_at_last_batch: int     # live files when the last batch had committed
    most_files: int              # the most live files seen while the stream ran


@pytest.fixture(scope="module")
def cursor(gateway: Any) -> Iterator[Any]:
    yield from database_cursor(gateway, DATABASE)


def live_files(location: str) -> int:
    from deltalake import DeltaTable

    return len(DeltaTable(location).file_uris())


def newest_txn(location: str, app_id: str) -> int:
    """The batch id in the table's newest commit if that commit is `app_id`'s, else -1: a poll reads one file."""
    entries = sorted((Path(location) / "_delta_log").glob("[0-9]*.json"))
    if not entries:
        return -1
    actions = [json.loads(line) for line in entries[-1].read_text().splitlines() if line.strip()]
    return max((a["txn"]["version"] for a in actions if "txn" in a and a["txn"]["appId"] == app_id), default=-1)


@pytest.fixture(scope="module")
def fed(cursor: Any, streams: Any, shipped_compactor: TableMaintenance,
        tmp_path_factory: pytest.TempPathFactory) -> Fed:
    """BATCHES files landed first, then a streaming table reading one per micro-batch back to back; returned once
    the stream's txn has reached the last batch (the stream is then stopped)."""
    folder: Path = tmp_path_factory.mktemp("stays_small")
    for batch in range(BATCHES):
        land_named(folder, f"batch-{batch:04d}.json",
                   [{"id": i, "batch": batch} for i in range(batch * ROWS, (batch + 1) * ROWS)])
    cursor.execute(f"SET {CREATE_WAITS}=false")   # the table is watched while the stream writes it, from batch 0
    cursor.execute("CREATE STREAMING TABLE events TBLPROPERTIES ('pipelines.trigger.interval' = '0 ms') AS "
                   f"SELECT id, batch FROM STREAM read_files('{folder}', format => 'json', "
                   "schema => 'id BIGINT, batch INT', maxFilesPerTrigger => 1)")
    table, stream = streams.store.get_table(DATABASE, "events"), streams.store.get_stream(DATABASE, "events")
    location = str(table.location)
    seen = [0]

    def done() -> bool:
        seen.append(live_files(location))
        return newest_txn(location, stream.stream_id) == BATCHES - 1

    poll_until(done, f"the stream to commit {BATCHES} micro-batches", timeout=FEED_TIMEOUT)
    files = live_files(location)
    streams.stop(DATABASE, "events")
    return Fed(location, stream.stream_id, files, max(seen))


def test_every_row_lands_once_one_commit_per_batch(cursor: Any, fed: Fed) -> None:
    batches = [version for app, version in txn_actions(fed.location) if app == fed.stream_id]
    assert batches == list(range(BATCHES))          # each batch committed once, in order: BATCHES micro-batches
    total = BATCHES * ROWS
    cursor.execute("SELECT count(*), count(DISTINCT id), min(id), max(id), count(DISTINCT batch) FROM events")
    assert cursor.fetchall() == [(total, total, 0, total - 1, BATCHES)]
    cursor.execute("SELECT batch, count(*), min(id), max(id) FROM events GROUP BY batch ORDER BY batch")
    assert cursor.fetchall() == [(b, ROWS, b * ROWS, (b + 1) * ROWS - 1) for b in range(BATCHES)]


def test_live_file_count_stays_bounded_with_auto_compaction(cursor: Any, fed: Fed,
                                                            shipped_compactor: TableMaintenance) -> None:
    assert fed.most_files <= MAX_LIVE_FILES, f"{fed.most_files} live files at one time"
    poll_until(lambda: not shipped_compactor.pending(fed.location), "the compactor to merge what is full",
               timeout=120)
    fan_in = shipped_compactor.settings.policy.fan_in
    assert live_files(fed.location) < fan_in   # a hundred tiny files: one size class, fewer than fan_in left
    total = BATCHES * ROWS
    cursor.execute("SELECT count(*), count(DISTINCT id), sum(id) FROM events")
    assert cursor.fetchall() == [(total, total, total * (total - 1) // 2)]
