"""Streaming tables with PARTITIONED BY and CLUSTER BY, as Databricks (and dbt-databricks' `partition_by` and
`liquid_clustered_by`) declare them: the Delta table is partitioned, every micro-batch lands in its partitions
(append and update mode), the partition values come back on read, and a change of partitioning is a full refresh."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deltalake import DeltaTable
from pyhive_helpers import error_status, sorted_rows


def _location(streams: Any, database: str, name: str) -> str:
    entry = streams.store.get_table(database, name)
    assert entry is not None and entry.location
    return str(entry.location)


def test_append_and_update_streams_write_their_partitions(stream_cursor: Any, landing_root: Path, streams: Any,
                                                           land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": 1, "region": "eu", "amount": 10}, {"id": 2, "region": "us", "amount": 5}])
    source = f"STREAM read_files('{folder}', format => 'json', schema => 'id INT, region STRING, amount INT')"
    cur.execute(f"CREATE STREAMING TABLE orders PARTITIONED BY (REGION) AS SELECT id, region, amount FROM {source}")
    cur.execute(f"CREATE STREAMING TABLE totals PARTITIONED BY (region) AS SELECT region, sum(amount) AS total "
                f"FROM {source} GROUP BY region")
    land(folder, [{"id": 3, "region": "eu", "amount": 1}, {"id": 4, "region": "apac", "amount": 7}])
    cur.execute("REFRESH STREAMING TABLE orders")
    cur.execute("REFRESH STREAMING TABLE totals")
    assert sorted_rows(cur, "SELECT id, region, amount FROM orders") == [
        (1, "eu", 10), (2, "us", 5), (3, "eu", 1), (4, "apac", 7)]
    assert sorted_rows(cur, "SELECT region, total FROM totals") == [("apac", 7), ("eu", 11), ("us", 5)]
    for name in ("orders", "totals"):
        table = DeltaTable(_location(streams, database, name))
        assert table.metadata().partition_columns == ["region"]      # the query's spelling, not the clause's
        assert {p["region"] for p in table.partitions()} == {"eu", "us", "apac"}
    assert sorted_rows(cur, "SELECT id FROM orders WHERE region = 'eu'") == [(1,), (3,)]
    cur.execute("SHOW CREATE TABLE orders")
    assert "PARTITIONED BY (region)" in cur.fetchall()[0][0]


def test_cluster_by_is_kept_and_a_new_partitioning_rewrites_the_table(stream_cursor: Any, landing_root: Path,
                                                                       streams: Any, land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": 1, "day": "d1"}, {"id": 2, "day": "d2"}])
    query = f"SELECT id, day FROM STREAM read_files('{folder}', format => 'json', schema => 'id INT, day STRING')"
    cur.execute(f"CREATE OR REFRESH STREAMING TABLE events CLUSTER BY (id) AS {query}")
    cur.execute("DESCRIBE DETAIL events")
    (detail,) = cur.fetchall()
    assert "id" in str(detail[8]) and detail[7] in ("[]", None, [])   # clusteringColumns, no partitions
    cur.execute(f"CREATE OR REFRESH STREAMING TABLE events PARTITIONED BY (day) AS {query}")
    cur.execute("REFRESH STREAMING TABLE events")   # the full refresh reads the files again
    assert sorted_rows(cur, "SELECT id, day FROM events") == [(1, "d1"), (2, "d2")]
    assert DeltaTable(_location(streams, database, "events")).metadata().partition_columns == ["day"]
    status = error_status(cur, f"CREATE STREAMING TABLE wrong PARTITIONED BY (nope) AS {query}")
    assert status.sqlState == "42703" and "COLUMN_NOT_DEFINED_IN_TABLE" in status.errorMessage
    assert "`nope`" in status.errorMessage
    assert "wrong" not in {row[1] for row in sorted_rows(cur, "SHOW TABLES")}
