"""read_files over a landing folder on an object store (weed mini): which files each micro-batch takes (pure logic),
and the records Spark reads from them, compared with the same files read from a local folder by Spark's own file
source (the rescued data column included)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from object_store import S3Store, seaweed_s3

from sluicegate.engine.streams import object_files
from sluicegate.engine.streams.errors import SourceSchemaError
from sluicegate.engine.streams.object_files import START, ObjectFile, between, next_offset, taken
from sluicegate.storage.settings import ObjectStoreSettings


def _file(name: str, mtime: int) -> ObjectFile:
    return ObjectFile(f"lake/landing/{name}", name, mtime, 10)


def test_files_are_taken_in_time_then_name_order_each_once() -> None:
    files = [_file("b.json", 1000), _file("a.json", 2000), _file("c.json", 2000)]
    end = next_offset(files, START, None)
    assert end == {"mtime": 2000, "names": ["a.json", "c.json"]}
    assert [f.name for f in between(files, START, end)] == ["b.json", "a.json", "c.json"]
    assert next_offset(files, end, None) is None                       # nothing new: no batch


def test_a_file_landing_in_the_same_second_with_a_smaller_name_is_not_passed_over() -> None:
    first = [_file("m.json", 5000)]
    end = next_offset(first, START, None)
    later = [*first, _file("a.json", 5000)]                            # same listed second, smaller name
    after = next_offset(later, end, None)
    assert after == {"mtime": 5000, "names": ["a.json", "m.json"]}
    assert [f.name for f in between(later, end, after)] == ["a.json"]
    assert not taken(_file("a.json", 5000), end) and taken(_file("a.json", 5000), after)


def test_max_files_per_trigger_caps_each_batch_past_a_known_position() -> None:
    files = [_file(f"{i:02d}.json", 1000 * (i // 2)) for i in range(7)]
    position, batches = dict(START), []
    while (end := next_offset(files, position, 3)) is not None:
        batches.append([f.name for f in between(files, position, end)])
        position = end
    assert batches == [["00.json", "01.json", "02.json"], ["03.json", "04.json", "05.json"], ["06.json"]]
    assert next_offset(files, None, 3) == {"mtime": 3000, "names": ["06.json"]}   # unknown start: not capped


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Store]:
    with seaweed_s3(tmp_path_factory.mktemp("weed")) as running:
        yield running


def _settings(store: S3Store) -> ObjectStoreSettings:
    return ObjectStoreSettings(endpoint=store.endpoint, region=store.region, access_key=store.access_key,
                               secret_key=store.secret_key, allow_http=True)


def _put(store: S3Store, key: str, data: bytes) -> None:
    with store.filesystem().open_output_stream(f"{store.bucket}/{key}") as out:
        out.write(data)


def test_listing_leaves_out_hidden_files_and_applies_the_glob(store: S3Store) -> None:
    for name in ("landing/l1/a.json", "landing/l1/.b.json", "landing/l1/_c.json", "landing/l1/d.csv"):
        _put(store, name, b"{}\n")
    fs = store.filesystem()
    assert [f.name for f in object_files.list_files(fs, f"{store.bucket}/landing/l1", {})] in (
        ["a.json", "d.csv"], ["d.csv", "a.json"])
    assert [f.name for f in object_files.list_files(fs, f"{store.bucket}/landing/l1",
                                                    {"pathGlobFilter": "*.json"})] == ["a.json"]


JSON_LINES = '{"id": 1, "s": "a"}\n{"id": "x", "s": "b"}\nnot json\n\n{"id": 3}\r\n'
CSV_TEXT = 'id,s\n1,a\nx,b\n3\n4,"q,r"\n'


def _read(spark: Any, frame: Any, name: str) -> list[tuple[Any, ...]]:
    query = frame.writeStream.format("memory").queryName(name).outputMode("append").start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    return sorted((tuple(row) for row in spark.table(name).collect()), key=repr)


@pytest.mark.parametrize(("file_format", "text", "options"), [
    ("json", JSON_LINES, {}),
    ("csv", CSV_TEXT, {"header": "true"}),
])
def test_records_and_rescued_text_match_a_local_folder(spark: Any, store: S3Store, tmp_path: Path,
                                                       file_format: str, text: str, options: dict[str, str]) -> None:
    from pyspark.sql.types import StructType

    schema = StructType.fromDDL("id INT, s STRING, _rescued_data STRING")
    spec_options = {**options, "mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_rescued_data"}
    local = tmp_path / file_format
    local.mkdir()
    (local / f"one.{file_format}").write_text(text)
    _put(store, f"landing/same_{file_format}/one.{file_format}", text.encode())
    expected = _read(spark, spark.readStream.format(file_format).schema(schema).options(**spec_options)
                     .load(str(local)), f"local_{file_format}")
    uri = f"s3://{store.bucket}/landing/same_{file_format}"
    got = _read(spark, object_files.stream_dataframe(spark, uri, file_format, schema, spec_options,
                                                     _settings(store)), f"object_{file_format}")
    assert got == expected
    assert any(row[2] is not None for row in got) and any(row[2] is None for row in got)


def test_parquet_is_read_by_name_and_the_schema_inferred(spark: Any, store: S3Store) -> None:
    import io

    buffer = io.BytesIO()
    pq.write_table(pa.table({"s": ["x", "y"], "id": pa.array([1, 2], pa.int64())}), buffer)
    _put(store, "landing/pq/part-0.parquet", buffer.getvalue())
    uri = f"s3://{store.bucket}/landing/pq"
    schema = object_files.infer_schema(spark, uri, "parquet", {}, _settings(store))
    assert [(f.name, f.dataType.simpleString()) for f in schema.fields] == [("s", "string"), ("id", "bigint")]
    from pyspark.sql.types import StructType

    rows = _read(spark, object_files.stream_dataframe(spark, uri, "parquet", StructType.fromDDL("id INT, t STRING"),
                                                      {}, _settings(store)), "object_parquet")
    assert rows == [(1, None), (2, None)]


def test_json_schema_is_inferred_from_the_first_files_and_multiline_is_refused(spark: Any, store: S3Store) -> None:
    _put(store, "landing/infer/a.json", json.dumps({"id": 1, "s": "a"}).encode() + b"\n")
    _put(store, "landing/infer/b.json", json.dumps({"id": 2, "t": 1.5}).encode() + b"\n")
    uri = f"s3://{store.bucket}/landing/infer"
    schema = object_files.infer_schema(spark, uri, "json", {}, _settings(store))
    assert sorted(f.name for f in schema.fields) == ["id", "s", "t"]
    with pytest.raises(SourceSchemaError, match="multiLine"):
        object_files.infer_schema(spark, uri, "json", {"multiLine": "true"}, _settings(store))
    with pytest.raises(SourceSchemaError, match="holds no files"):
        object_files.infer_schema(spark, f"s3://{store.bucket}/landing/none", "json", {}, _settings(store))


def test_each_session_registers_the_source_under_a_name_of_its_own(spark: Any, store: S3Store) -> None:
    """Spark refuses to register a data source name that the thread's active session already has: each stream has
    its own session, so each registration takes a fresh name."""
    first, second = spark.newSession(), spark.newSession()
    spark.sparkContext._jvm.SparkSession.setActiveSession(first._jsparkSession)
    try:
        names = [object_files.register(session, _settings(store)) for session in (first, second, first)]
    finally:
        spark.sparkContext._jvm.SparkSession.setActiveSession(spark._jsparkSession)
    assert len(set(names)) == 3 and all(name.startswith(object_files.FORMAT_NAME) for name in names)
