"""maxFilesPerTrigger on an object store's landing prefix holds for the first micro-batch of every run of the query,
through PyHive with the warehouse on a real S3 store (weed mini): files landed before CREATE, and files landed while
the stream was stopped and its local checkpoint cache lost (the run's start then comes from the checkpoint restored
from the store), are read in capped batches (each batch's rows from the Delta commits carrying the stream's txn),
each row once."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from object_store import S3Store
from pyhive_helpers import database_cursor, poll_until, sorted_rows

from sluicegate.engine.streams.delta_source import _log_lines, latest_version

DATABASE = "s3firstcap"
LANDING = "warehouse/landing"
ROWS_PER_FILE = 3
FILES_PER_BATCH = 2


@pytest.fixture(scope="module")
def cursor(s3_gateway: Any) -> Iterator[Any]:
    yield from database_cursor(s3_gateway, DATABASE)


def _land(store: S3Store, folder: str, files: range) -> None:
    """Each file one whole object of ROWS_PER_FILE rows, ids from the file's index."""
    for index in files:
        path = f"{store.bucket}/{LANDING}/{folder}/part-{uuid.uuid4().hex}.json"
        with store.filesystem().open_output_stream(path) as out:
            rows = range(index * ROWS_PER_FILE, (index + 1) * ROWS_PER_FILE)
            out.write("".join(json.dumps({"id": i}) + "\n" for i in rows).encode())


def _batch_sizes(s3_gateway: Any, name: str) -> list[int]:
    """The rows of each micro-batch the table's stream committed, in commit order (its files' numRecords)."""
    catalog = s3_gateway.service.catalog
    stream_id, location = catalog.get_stream(DATABASE, name).stream_id, catalog.get_table(DATABASE, name).location
    sizes = []
    for version in range(latest_version(location) + 1):
        actions = [json.loads(line) for line in _log_lines(location, version) if line.strip()]
        if any(action.get("txn", {}).get("appId") == stream_id for action in actions):
            sizes.append(sum(json.loads(a["add"]["stats"])["numRecords"] for a in actions if "add" in a))
    return sizes


def _count(cursor: Any) -> int:
    cursor.execute("SELECT count(*) FROM landed")
    return int(cursor.fetchall()[0][0])


def test_the_first_batch_after_create_and_after_a_restart_is_capped(cursor: Any, s3: S3Store,
                                                                    s3_gateway: Any) -> None:
    cap = FILES_PER_BATCH * ROWS_PER_FILE
    _land(s3, "capped", range(5))                        # there before the table
    cursor.execute(f"CREATE STREAMING TABLE landed AS SELECT id FROM STREAM read_files('s3://{s3.bucket}/{LANDING}/"
                   f"capped', format => 'json', schema => 'id INT', maxFilesPerTrigger => {FILES_PER_BATCH})")
    poll_until(lambda: _count(cursor) == 15, "the files landed before CREATE")
    before = _batch_sizes(s3_gateway, "landed")
    assert sum(before) == 15 and max(before) <= cap, before
    streams, catalog = s3_gateway.service.streams, s3_gateway.service.catalog
    streams.stop(DATABASE, "landed", desired=None)
    shutil.rmtree(Path(catalog.get_stream(DATABASE, "landed").checkpoint))   # the store keeps the checkpoint
    _land(s3, "capped", range(5, 12))                   # landed while the stream was down
    streams.resume(catalog.get_stream(DATABASE, "landed"))
    poll_until(lambda: _count(cursor) == 36, "the files landed while the stream was stopped")
    after = _batch_sizes(s3_gateway, "landed")[len(before):]
    assert sum(after) == 21 and max(after) <= cap, after
    assert sorted_rows(cursor, "SELECT id FROM landed") == sorted([(i,) for i in range(36)], key=repr)  # once each
