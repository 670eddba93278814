"""OPTIMIZE through PyHive on real Spark and Delta: small files compacted (per partition), the same rows read back
through the gateway's reader for every column type, Databricks' answer (path, metrics), DESCRIBE HISTORY and time
travel, ZORDER BY and CLUSTER BY, WHERE on partitions, and the errors for what OPTIMIZE cannot do."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from pyhive_helpers import ALL_TYPES, database_cursor, error_status, sorted_rows

from sluicegate.storage.delta.tables import open_table

DATABASE = "optimize_db"


@pytest.fixture(scope="module")
def cursor(gateway: Any) -> Iterator[Any]:
    yield from database_cursor(gateway, DATABASE)


def _files(streams: Any, name: str) -> list[str]:
    entry = streams.store.get_table(DATABASE, name)
    return sorted(open_table(entry.location).file_uris())


def _optimize(cursor: Any, sql: str) -> tuple[str, dict[str, Any]]:
    cursor.execute(sql)
    assert [d[0:2] for d in cursor.description] == [("path", "STRING_TYPE"), ("metrics", "STRUCT_TYPE")]
    (path, metrics), = cursor.fetchall()
    return path, json.loads(metrics)


def test_many_small_inserts_become_one_file_per_partition(cursor: Any, streams: Any) -> None:
    cursor.execute("CREATE TABLE events (id INT, day STRING, v STRING) PARTITIONED BY (day)")
    for i in range(6):
        cursor.execute(f"INSERT INTO events VALUES ({i}, 'd{i % 2}', 'v{i}')")
    before = sorted_rows(cursor, "SELECT * FROM events")
    assert len(_files(streams, "events")) >= 6
    version_before = open_table(streams.store.get_table(DATABASE, "events").location).version()

    path, metrics = _optimize(cursor, "OPTIMIZE events")

    assert path.endswith(f"{DATABASE}.db/events") and path.startswith("file:")
    assert len(_files(streams, "events")) == 2  # one per partition
    assert sorted_rows(cursor, "SELECT * FROM events") == before
    assert metrics["numFilesAdded"] == 2 and metrics["numFilesRemoved"] >= 6
    assert metrics["partitionsOptimized"] == 2 and metrics["zOrderStats"] is None
    assert metrics["filesRemoved"]["totalFiles"] == metrics["numFilesRemoved"]
    assert set(metrics) == {"numFilesAdded", "numFilesRemoved", "filesAdded", "filesRemoved", "partitionsOptimized",
                            "zOrderStats", "numBatches", "totalConsideredFiles", "totalFilesSkipped",
                            "preserveInsertionOrder"}
    cursor.execute("DESCRIBE HISTORY events")
    newest = cursor.fetchall()[0]
    assert newest[0] == version_before + 1 and newest[4] == "OPTIMIZE"
    assert json.loads(newest[5]) == {"predicate": "[]", "zOrderBy": "[]", "clusterBy": "[]"}
    assert sorted_rows(cursor, f"SELECT * FROM events VERSION AS OF {version_before}") == before
    # bin-packing is idempotent: a second OPTIMIZE rewrites nothing and commits nothing
    _, again = _optimize(cursor, "OPTIMIZE events")
    assert again["numFilesAdded"] == 0 and again["numFilesRemoved"] == 0
    cursor.execute("DESCRIBE HISTORY events")
    assert cursor.fetchall()[0][0] == version_before + 1


def test_where_on_a_partition_optimizes_that_partition_only(cursor: Any, streams: Any) -> None:
    cursor.execute("CREATE TABLE parts (id INT, day DATE) PARTITIONED BY (day)")
    for i in range(6):
        cursor.execute(f"INSERT INTO parts VALUES ({i}, DATE '2024-01-0{1 + i % 2}')")
    before = sorted_rows(cursor, "SELECT * FROM parts")
    _, metrics = _optimize(cursor, "OPTIMIZE parts WHERE day = DATE '2024-01-02'")
    assert metrics["numFilesAdded"] == 1 and metrics["numFilesRemoved"] == 3
    files = _files(streams, "parts")
    assert sum("day=2024-01-02" in f for f in files) == 1 and sum("day=2024-01-01" in f for f in files) == 3
    assert sorted_rows(cursor, "SELECT * FROM parts") == before
    _, metrics = _optimize(cursor, "OPTIMIZE main.optimize_db.parts WHERE day >= '2024-01-01' AND day IN "
                                   "('2024-01-01', '2024-01-05')")
    assert metrics["numFilesRemoved"] == 3 and len(_files(streams, "parts")) == 2
    assert sorted_rows(cursor, "SELECT * FROM parts") == before


def test_zorder_rewrites_and_reports_its_stats(cursor: Any, streams: Any) -> None:
    cursor.execute("CREATE TABLE points (x INT, y INT, label STRING)")
    for i in range(4):
        cursor.execute(f"INSERT INTO points VALUES ({i}, {10 - i}, 'p{i}'), ({i + 10}, {i}, 'q{i}')")
    before = sorted_rows(cursor, "SELECT * FROM points")
    written = len(_files(streams, "points"))
    _, metrics = _optimize(cursor, "optimize points zorder by (x, Y)")
    assert metrics["numFilesRemoved"] == written >= 4 and metrics["numFilesAdded"] == 1
    assert metrics["zOrderStats"]["strategyName"] == "all"
    assert metrics["zOrderStats"]["mergedFiles"]["num"] == written
    assert sorted_rows(cursor, "SELECT * FROM points") == before
    cursor.execute("DESCRIBE HISTORY points")
    assert json.loads(json.loads(cursor.fetchall()[0][5])["zOrderBy"]) == ["x", "y"]
    _optimize(cursor, "OPTIMIZE points ZORDER BY label, x")  # Databricks' form without parentheses
    assert sorted_rows(cursor, "SELECT * FROM points") == before


def test_a_clustered_table_is_zordered_by_its_clustering_columns(cursor: Any) -> None:
    cursor.execute("CREATE TABLE clustered (k INT, v STRING) CLUSTER BY (k)")
    for i in range(3):
        cursor.execute(f"INSERT INTO clustered VALUES ({i}, 'v{i}')")
    _, metrics = _optimize(cursor, "OPTIMIZE clustered")
    assert metrics["zOrderStats"] is not None and metrics["numFilesAdded"] == 1
    cursor.execute("DESCRIBE HISTORY clustered")
    assert json.loads(json.loads(cursor.fetchall()[0][5])["zOrderBy"]) == ["k"]
    status = error_status(cursor, "OPTIMIZE clustered ZORDER BY (v)")
    assert "[DELTA_CLUSTERING_WITH_ZORDER_BY]" in status.errorMessage and status.sqlState == "42613"


@pytest.mark.parametrize("partitioned", [False, True])
def test_every_column_type_reads_back_exactly(cursor: Any, streams: Any, partitioned: bool) -> None:
    name = "typed_p" if partitioned else "typed"
    cursor.execute(f"CREATE TABLE {name} {'PARTITIONED BY (day) ' if partitioned else ''}AS {ALL_TYPES}")
    for _ in range(3):
        cursor.execute(f"INSERT INTO {name} {ALL_TYPES}")
    before = sorted_rows(cursor, f"SELECT * FROM {name}")
    assert any(value is not None for value in before[0])
    _, metrics = _optimize(cursor, f"OPTIMIZE {name}")
    assert metrics["numFilesRemoved"] > metrics["numFilesAdded"] >= 1
    assert sorted_rows(cursor, f"SELECT * FROM {name}") == before
    assert sorted_rows(cursor, f"SELECT ts, day, dec, st.b, arr[1], m['k'] FROM {name} WHERE ts IS NOT NULL") == [
        (dt.datetime(2024, 1, 2, 3, 4, 5, 123456), "2024-01-02", Decimal("12.34"), "x", 2, 1)] * 4


def test_a_materialized_view_keeps_its_state_and_refreshes_incrementally(cursor: Any, streams: Any) -> None:
    cursor.execute("CREATE TABLE sales (country STRING, amount INT)")
    cursor.execute("INSERT INTO sales VALUES ('fr', 1), ('de', 2)")
    cursor.execute("CREATE MATERIALIZED VIEW totals AS SELECT country, sum(amount) AS total, count(*) AS n "
                   "FROM sales GROUP BY country")
    for i in range(3):
        cursor.execute(f"INSERT INTO sales VALUES ('fr', {i}), ('it', {i})")
        cursor.execute("REFRESH MATERIALIZED VIEW totals")
    before = sorted_rows(cursor, "SELECT * FROM totals")
    schema = open_table(streams.store.get_table(DATABASE, "totals").location).schema().to_arrow()
    _optimize(cursor, "OPTIMIZE totals")
    assert open_table(streams.store.get_table(DATABASE, "totals").location).schema().to_arrow() == schema
    assert sorted_rows(cursor, "SELECT * FROM totals") == before
    _optimize(cursor, "OPTIMIZE sales")  # its input too: the rewrite is no change to apply
    cursor.execute("INSERT INTO sales VALUES ('fr', 100)")
    cursor.execute("REFRESH MATERIALIZED VIEW totals")
    assert sorted_rows(cursor, "SELECT * FROM totals") == sorted_rows(
        cursor, "SELECT country, sum(amount), count(*) FROM sales GROUP BY country")
    refreshed = [json.loads(e.details)["create_update"] for e in streams.store.event_log(DATABASE, "totals")
                 if e.event_type == "create_update"]
    assert refreshed[-1]["technique"] == "INCREMENTAL", refreshed[-1]  # its hidden state survived the rewrite
    events = [e for e in streams.store.event_log(DATABASE, "totals") if e.event_type == "maintenance_progress"]
    assert len(events) == 1 and json.loads(events[0].details)["maintenance_progress"]["operation"] == "OPTIMIZE"


@pytest.mark.parametrize("sql, error_class, sqlstate, at", [
    ("OPTIMIZE errs ZORDER BY (day)", "DELTA_ZORDERING_ON_PARTITION_COLUMN", "42P10", "day)"),
    ("OPTIMIZE errs ZORDER BY (v, nope)", "DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST", "42703", "nope"),
    ("OPTIMIZE errs WHERE v = 'a'", "DELTA_NON_PARTITION_COLUMN_REFERENCE", "42P10", "v ="),
    ("OPTIMIZE errs WHERE nope = 'a'", "UNRESOLVED_COLUMN.WITH_SUGGESTION", "42703", "nope"),
    ("OPTIMIZE errs WHERE day = 'a' OR day = 'b'", "DELTA_UNSUPPORTED_PARTITION_PREDICATE", "0AKDC", "day ="),
    ("OPTIMIZE errs_view", "EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE", "42809", "errs_view"),
    ("OPTIMIZE spark_only", "DELTA_TABLE_ONLY_OPERATION", "0AKDD", "spark_only"),
    ("OPTIMIZE no_such_table", "TABLE_OR_VIEW_NOT_FOUND", "42P01", "no_such_table"),
    ("OPTIMIZE errs ZORDER BY", "PARSE_SYNTAX_ERROR", "42601", None),
])
def test_what_optimize_cannot_do_is_a_positioned_error(cursor: Any, streams: Any, sql: str, error_class: str,
                                                       sqlstate: str, at: str | None) -> None:
    cursor.execute("CREATE TABLE IF NOT EXISTS errs (v STRING, day STRING) PARTITIONED BY (day)")
    cursor.execute("INSERT INTO errs VALUES ('a', 'x')")
    cursor.execute("CREATE VIEW IF NOT EXISTS errs_view AS SELECT * FROM errs")
    cursor.execute("CREATE TABLE IF NOT EXISTS spark_only (v STRING) USING parquet")
    version = open_table(streams.store.get_table(DATABASE, "errs").location).version()
    status = error_status(cursor, sql)
    assert status.errorMessage.startswith(f"[{error_class}]"), status.errorMessage
    assert status.sqlState == sqlstate
    if at is not None:
        assert f"at line 1, column {sql.index(at) + 1}" in status.errorMessage, status.errorMessage
    assert open_table(streams.store.get_table(DATABASE, "errs").location).version() == version
