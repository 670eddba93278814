"""The Delta data path against real Spark and real Delta logs, checked from the outside with delta-rs."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest
from delta_writes import write_dataframe
from deltalake import DeltaTable

from sluicegate.storage.delta.errors import DeltaVersionNotFoundError
from sluicegate.storage.delta.read import snapshot_dataframe
from sluicegate.storage.delta.snapshots import load_snapshot
from sluicegate.storage.delta.write import AppTransaction, committed_version


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_append_and_overwrite_commit_once_each(spark, tmp_path):
    path = str(tmp_path / "t")
    first = spark.sql("SELECT id, CAST(id AS STRING) AS s, TIMESTAMP'2024-01-02 03:04:05' AS ts FROM range(5)")
    assert write_dataframe(first, path) == 0
    assert write_dataframe(spark.sql("SELECT 5L AS id, '5' AS s, TIMESTAMP'2024-01-02 03:04:05' AS ts"), path) == 1
    table = DeltaTable(path)
    assert table.version() == 1
    assert len(table.history()) == 2  # one commit per write, nothing else
    outside = table.to_pyarrow_table().sort_by("id")
    assert outside.column("id").to_pylist() == [0, 1, 2, 3, 4, 5]
    assert outside.column("ts").to_pylist()[0] == datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    inside = snapshot_dataframe(spark, load_snapshot(path))
    assert _rows(inside) == sorted(
        (i, str(i), datetime.datetime(2024, 1, 2, 3, 4, 5)) for i in range(6)
    )

    assert write_dataframe(spark.sql("SELECT 42L AS id, 'x' AS s, TIMESTAMP'2024-01-01' AS ts"), path,
                           mode="overwrite") == 2
    assert DeltaTable(path).to_pyarrow_table().column("id").to_pylist() == [42]


def test_a_pinned_version_never_sees_later_commits(spark, tmp_path):
    path = str(tmp_path / "pinned")
    write_dataframe(spark.range(3), path)
    pinned = load_snapshot(path)
    write_dataframe(spark.range(3, 10), path)
    assert _rows(snapshot_dataframe(spark, pinned)) == [(0,), (1,), (2,)]
    assert len(_rows(snapshot_dataframe(spark, load_snapshot(path)))) == 10
    assert _rows(snapshot_dataframe(spark, load_snapshot(path, version=0))) == [(0,), (1,), (2,)]


def test_time_travel_to_a_missing_version_says_which_exist(spark, tmp_path):
    path = str(tmp_path / "tt")
    write_dataframe(spark.range(1), path)
    with pytest.raises(DeltaVersionNotFoundError) as raised:
        load_snapshot(path, version=7)
    assert raised.value.sqlstate == "22023"
    assert "versions 0 to 0 exist" in raised.value.hint


def test_partitioned_table_restores_partition_values(spark, tmp_path):
    path = str(tmp_path / "parted")
    df = spark.sql("SELECT id, CAST(id % 3 AS STRING) AS bucket, DATE'2024-05-01' AS day FROM range(9)")
    write_dataframe(df, path, partition_by=["bucket", "day"])
    table = DeltaTable(path)
    assert table.metadata().partition_columns == ["bucket", "day"]
    outside = table.to_pyarrow_table()
    assert sorted(zip(outside.column("id").to_pylist(), outside.column("bucket").to_pylist(), strict=True)) == [
        (i, str(i % 3)) for i in range(9)
    ]
    inside = snapshot_dataframe(spark, load_snapshot(path))
    assert inside.columns == ["id", "bucket", "day"]
    first_of_may = datetime.date(2024, 5, 1)
    assert _rows(inside.where("bucket = '1'")) == [(1, "1", first_of_may), (4, "1", first_of_may),
                                                   (7, "1", first_of_may)]


def test_statistics_let_readers_skip_files(spark, tmp_path):
    path = str(tmp_path / "stats")
    write_dataframe(spark.range(0, 100, 1, 2), path)
    actions = DeltaTable(path).get_add_actions(flatten=True)
    table = pa.table(actions)
    assert sum(table.column("num_records").to_pylist()) == 100
    assert sorted(table.column("min.id").to_pylist()) == [0, 50]
    assert sorted(table.column("max.id").to_pylist()) == [49, 99]


def test_app_transaction_marks_a_batch_as_committed(spark, tmp_path):
    path = str(tmp_path / "txn")
    assert committed_version(path, "stream-1") is None
    write_dataframe(spark.range(2), path, app_transaction=AppTransaction("stream-1", 0))
    write_dataframe(spark.range(2), path, app_transaction=AppTransaction("stream-1", 1))
    assert committed_version(path, "stream-1") == 1
    assert committed_version(path, "another-stream") is None


def test_empty_table_reads_as_empty_with_its_schema(spark, tmp_path):
    path = str(tmp_path / "empty")
    write_dataframe(spark.sql("SELECT 1 AS a, 'x' AS b WHERE false"), path)
    df = snapshot_dataframe(spark, load_snapshot(path))
    assert df.columns == ["a", "b"]
    assert df.collect() == []
