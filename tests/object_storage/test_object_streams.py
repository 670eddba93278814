"""Streaming tables with the warehouse on a real S3 store (weed mini), through PyHive: files landed on the store's
landing prefix stream into tables on the store (append, update, complete), STREAM(table) reads a table on the store,
a restart with the local checkpoint cache wiped resumes from the store's copy, REFRESH FULL recomputes, and the
policy refuses every other object prefix."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from object_store import S3Store
from pyarrow.fs import FileSelector, FileType
from pyhive_helpers import database_cursor, error_status, poll_until, sorted_rows

DATABASE = "s3streams"
LANDING = "warehouse/landing"


@pytest.fixture(scope="module")
def cursor(s3_gateway: Any) -> Iterator[Any]:
    yield from database_cursor(s3_gateway, DATABASE)


def _land(store: S3Store, folder: str, lines: list[str]) -> None:
    """One whole object (an upload appears at once, as a renamed local file does)."""
    with store.filesystem().open_output_stream(f"{store.bucket}/{LANDING}/{folder}/part-{uuid.uuid4().hex}.json") \
            as out:
        out.write("".join(line + "\n" for line in lines).encode())


def _rows(ids: range, key: int = 3) -> list[str]:
    return [json.dumps({"id": i, "k": f"k{i % key}"}) for i in ids]


def _uri(store: S3Store, folder: str) -> str:
    return f"s3://{store.bucket}/{LANDING}/{folder}"


def _objects(store: S3Store, prefix: str) -> list[str]:
    infos = store.filesystem().get_file_info(FileSelector(f"{store.bucket}/{prefix}", recursive=True,
                                                          allow_not_found=True))
    return [info.path for info in infos if info.type == FileType.File]


def _count(cursor: Any, table: str) -> int:
    cursor.execute(f"SELECT count(*) FROM {table}")
    return int(cursor.fetchall()[0][0])


def test_files_on_the_store_stream_into_tables_on_the_store(cursor: Any, s3: S3Store, s3_gateway: Any) -> None:
    source = f"STREAM read_files('{_uri(s3, 'orders')}', format => 'json', schema => 'id INT, k STRING')"
    _land(s3, "orders", [*_rows(range(5)), '{"id": "not a number", "k": "bad"}'])
    cursor.execute(f"CREATE STREAMING TABLE appended AS SELECT * FROM {source}")
    cursor.execute(f"CREATE STREAMING TABLE per_key AS SELECT k, count(*) AS n FROM {source} GROUP BY k")
    cursor.execute("CREATE STREAMING TABLE ranked TBLPROPERTIES ('sluicegate.output_mode' = 'complete') AS "
                   f"SELECT k, count(*) AS n FROM {source} GROUP BY k ORDER BY k")
    _land(s3, "orders", _rows(range(5, 12)))
    poll_until(lambda: _count(cursor, "appended") == 13, "13 rows in appended")
    assert sorted_rows(cursor, "SELECT id, k FROM appended WHERE _rescued_data IS NOT NULL") == [(None, "bad")]
    expected = sorted([("bad", 1), *[(f"k{r}", len([i for i in range(12) if i % 3 == r])) for r in range(3)]])
    poll_until(lambda: sorted_rows(cursor, "SELECT k, n FROM per_key") == expected, "per_key's counts")
    poll_until(lambda: sorted_rows(cursor, "SELECT k, n FROM ranked") == expected, "ranked's counts")
    # the tables' files and the streams' checkpoints are on the store, nothing of them in the local state folder
    assert any(path.endswith(".parquet") for path in _objects(s3, f"warehouse/{DATABASE}.db/appended"))
    stream_id = s3_gateway.service.catalog.get_stream(DATABASE, "appended").stream_id
    copied = _objects(s3, f"warehouse/_checkpoints/{stream_id}")
    assert any("/offsets/" in path for path in copied) and any(path.endswith("/metadata") for path in copied)
    assert not (s3_gateway.config.local_state / f"{DATABASE}.db").exists()
    # the store's secret rides on the pickled sources, never in what Spark or the gateway shows
    shown = json.dumps(s3_gateway.service.streams.status(DATABASE, "appended").last_progress)
    cursor.execute(f"EXPLAIN CREATE STREAMING TABLE shown AS SELECT * FROM {source}")
    shown += repr(cursor.fetchall())
    cursor.execute("DESCRIBE STREAMING TABLE appended")
    shown += repr(cursor.fetchall())
    assert "orders" in shown and s3.secret_key not in shown


def test_stream_of_a_table_on_the_store(cursor: Any, s3: S3Store) -> None:
    _land(s3, "events", _rows(range(100, 104)))
    cursor.execute("CREATE STREAMING TABLE raw_events AS SELECT * FROM STREAM read_files("
                   f"'{_uri(s3, 'events')}', format => 'json', schema => 'id INT, k STRING')")
    cursor.execute("CREATE STREAMING TABLE doubled AS SELECT id * 2 AS twice, k FROM STREAM(raw_events)")
    _land(s3, "events", _rows(range(104, 110)))
    poll_until(lambda: _count(cursor, "doubled") == 10, "10 rows read from raw_events on the store")
    assert sorted_rows(cursor, "SELECT twice FROM doubled") == [(2 * i,) for i in range(100, 110)]


def test_a_restart_with_the_local_cache_wiped_resumes_from_the_stores_copy(cursor: Any, s3: S3Store,
                                                                            s3_gateway: Any) -> None:
    source = f"STREAM read_files('{_uri(s3, 'resumed')}', format => 'json', schema => 'id INT, k STRING')"
    _land(s3, "resumed", _rows(range(6)))
    cursor.execute(f"CREATE STREAMING TABLE kept AS SELECT * FROM {source}")
    cursor.execute(f"CREATE STREAMING TABLE kept_counts AS SELECT k, count(*) AS n FROM {source} GROUP BY k")
    poll_until(lambda: _count(cursor, "kept") == 6 and _count(cursor, "kept_counts") == 3, "the first batch")
    streams, catalog = s3_gateway.service.streams, s3_gateway.service.catalog
    for table in ("kept", "kept_counts"):
        streams.stop(DATABASE, table, desired=None)
        local = Path(catalog.get_stream(DATABASE, table).checkpoint)
        shutil.rmtree(local)                         # the local disk is lost; the store keeps the checkpoint
    _land(s3, "resumed", _rows(range(6, 9)))
    for table in ("kept", "kept_counts"):
        streams.resume(catalog.get_stream(DATABASE, table))
    poll_until(lambda: _count(cursor, "kept") == 9, "the rows landed while the stream was stopped")
    assert sorted_rows(cursor, "SELECT id FROM kept") == [(i,) for i in range(9)]   # none read twice
    poll_until(lambda: sorted_rows(cursor, "SELECT k, n FROM kept_counts") == [("k0", 3), ("k1", 3), ("k2", 3)],
               "counts over all nine rows, the state restored from the store")
    cursor.execute("REFRESH STREAMING TABLE kept FULL")
    poll_until(lambda: _count(cursor, "kept") == 9, "the full refresh reading every file again")
    assert sorted_rows(cursor, "SELECT id FROM kept") == [(i,) for i in range(9)]


def test_an_inferred_schema_comes_from_the_first_files_on_the_store(cursor: Any, s3: S3Store) -> None:
    _land(s3, "inferred", [json.dumps({"id": 1, "name": "a"})])
    cursor.execute(f"CREATE STREAMING TABLE inferred AS SELECT * FROM STREAM read_files('{_uri(s3, 'inferred')}', "
                   "format => 'json')")
    poll_until(lambda: _count(cursor, "inferred") == 1, "the inferred table's row")
    cursor.execute("DESCRIBE inferred")
    assert [row[0] for row in cursor.fetchall()][:3] == ["id", "name", "_rescued_data"]


@pytest.mark.parametrize("uri", [
    "s3://lake/elsewhere/orders",                         # another prefix of the bucket
    "s3://other-lake/warehouse/landing/orders",           # another bucket
    f"s3://lake/warehouse/{DATABASE}.db/appended",        # the warehouse's own table
    "s3://lake/warehouse/_checkpoints",                   # the streams' checkpoints
    "s3://lake/warehouse/landing/../s3streams.db/kept",   # climbing out
])
def test_other_object_prefixes_are_refused(s3_connect: Any, uri: str) -> None:
    cursor = s3_connect(username="mallory").cursor()
    cursor.execute("CREATE DATABASE IF NOT EXISTS mallory_s3")
    status = error_status(cursor, f"CREATE STREAMING TABLE mallory_s3.stolen AS SELECT * FROM STREAM "
                                  f"read_files('{uri}', format => 'json', schema => 'line STRING')")
    assert status.sqlState == "42501" and "PATH_NOT_ALLOWED" in status.errorMessage
    cursor.execute("SHOW TABLES IN mallory_s3")
    assert cursor.fetchall() == []


def test_batch_read_files_on_the_store_reads_as_the_stream_does(cursor: Any, s3: S3Store) -> None:
    _land(s3, "batch", [*_rows(range(3)), '{"id": "x", "k": "bad"}'])
    rows = sorted_rows(cursor, f"SELECT id, k, _rescued_data IS NULL FROM read_files('{_uri(s3, 'batch')}', "
                               "format => 'json', schema => 'id INT, k STRING')")
    assert rows == sorted([(0, "k0", True), (1, "k1", True), (2, "k2", True), (None, "bad", False)], key=repr)
    inferred = sorted_rows(cursor, f"SELECT count(*) FROM read_files('{_uri(s3, 'batch')}', format => 'json')")
    assert inferred == [(4,)]
