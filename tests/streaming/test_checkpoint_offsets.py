"""engine/streams/checkpoint_offsets.py: a Python source learns where its next micro-batch starts from the query's
offset log. Pure parts on hand-made logs (no JVM), then on logs Spark itself wrote for a query of two tagged Kafka
sources (librdkafka's mock cluster), one untagged query (an old checkpoint) and a query not yet run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kafka_broker import MockKafka

from sluicegate.dialect.streaming.plan import SourceSpec
from sluicegate.engine.streams import kafka_lag, kafka_source
from sluicegate.engine.streams.checkpoint_offsets import (
    CHECKPOINT_OPTION,
    TAG_FIELD,
    TAG_OPTION,
    LoggedStart,
    RunStart,
    logged_start,
    newest_batch,
    tagged,
    untagged,
)
from sluicegate.engine.streams.sources import capped_python_source, run_options


def _offsets(checkpoint: Path, batch: int, *sources: str, version: str = "v1") -> None:
    folder = checkpoint / "offsets"
    folder.mkdir(parents=True, exist_ok=True)
    metadata = '{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{}}'
    (folder / str(batch)).write_text("\n".join([version, metadata, *sources]), encoding="utf-8")


def test_the_newest_logged_batch_gives_the_tagged_sources_start(tmp_path: Path) -> None:
    _offsets(tmp_path, 0, json.dumps({"mtime": 5, "names": ["a"], TAG_FIELD: "__sg_source_0"}))
    _offsets(tmp_path, 1, json.dumps({"t": {"0": 3}, TAG_FIELD: "__sg_source_1"}), "-",
             json.dumps({"mtime": 9, "names": ["b", "c"], TAG_FIELD: "__sg_source_0"}))
    (tmp_path / "offsets" / ".2.0f3a.tmp").write_text("v1\n{}\n{}")   # a write Spark had not finished
    assert newest_batch(str(tmp_path)) == 1
    assert logged_start(str(tmp_path), "__sg_source_0") == LoggedStart(1, {"mtime": 9, "names": ["b", "c"]})
    assert logged_start(str(tmp_path), "__sg_source_1") == LoggedStart(1, {"t": {"0": 3}})
    assert logged_start(str(tmp_path), "__sg_source_7") == LoggedStart(1, None)


def test_no_log_yet_an_untagged_log_or_a_foreign_format(tmp_path: Path) -> None:
    assert logged_start(str(tmp_path / "never"), "s") == LoggedStart(None, None)
    _offsets(tmp_path / "old", 4, json.dumps({"mtime": 1, "names": []}))
    assert logged_start(str(tmp_path / "old"), "s") == LoggedStart(4, None)
    _offsets(tmp_path / "v9", 0, json.dumps({"mtime": 1, "names": [], TAG_FIELD: "s"}), version="v9")
    assert logged_start(str(tmp_path / "v9"), "s") == LoggedStart(0, None)


def test_tags_are_added_last_and_removed_without_touching_the_offset() -> None:
    assert json.dumps(tagged({"mtime": 1, "names": ["x"], TAG_FIELD: "old"}, "s")) == \
        '{"mtime": 1, "names": ["x"], "@source": "s"}'
    assert tagged({"a": {"0": 1}}, None) == {"a": {"0": 1}}
    assert untagged({"a": {"0": 1}, TAG_FIELD: "s"}) == {"a": {"0": 1}}
    assert kafka_source.from_json({"a": {"0": 1}, TAG_FIELD: "s"}) == {"a": {0: 1}}


def test_describes_kafka_offsets_leave_the_tag_out(tmp_path: Path) -> None:
    _offsets(tmp_path, 0, json.dumps({"t": {"0": 3, "1": 5}, TAG_FIELD: "__sg_source_0"}),
             json.dumps({"mtime": 9, "names": ["b"], TAG_FIELD: "__sg_source_1"}))
    (tmp_path / "commits").mkdir()
    (tmp_path / "commits" / "0").write_text("v1\n{}")
    assert kafka_lag.committed_offsets(str(tmp_path)) == [{"t": {0: 3, 1: 5}}]


def test_a_runs_start_comes_from_the_checkpoint_only_when_the_gateway_gave_one(tmp_path: Path) -> None:
    def initial() -> dict[str, Any]:
        return {"mtime": -1, "names": []}

    given = {CHECKPOINT_OPTION.upper(): str(tmp_path), TAG_OPTION: "s"}   # options keep any case
    assert RunStart.of({}).start(initial, "src") is None                 # a scheduled pass: not capped
    assert RunStart.of(given).start(initial, "src") == initial()          # a new query: its initial offset
    _offsets(tmp_path, 0, json.dumps({"mtime": 3, "names": ["f"], TAG_FIELD: "s"}))
    assert RunStart.of(given).start(initial, "src") == {"mtime": 3, "names": ["f"]}
    _offsets(tmp_path, 1, json.dumps({"mtime": 3, "names": ["f"]}))
    assert RunStart.of(given).start(initial, "src") is None               # untagged: uncapped, as before


def test_only_capped_python_sources_get_the_checkpoint() -> None:
    kafka = SourceSpec("__sg_source_1", "kafka", options={"bootstrapServers": "h:1", "MAXOFFSETSPERTRIGGER": "5"})
    landing = SourceSpec("__sg_source_0", "files", path="s3://b/landing", options={"maxFilesPerTrigger": "2"})
    local = SourceSpec("__sg_source_2", "files", path="/landing", options={"maxFilesPerTrigger": "2"})  # Spark's own
    uncapped = SourceSpec("__sg_source_3", "files", path="s3://b/landing")
    assert [capped_python_source(s) for s in (kafka, landing, local, uncapped)] == [True, True, False, False]
    assert run_options(kafka, "/cp") == {CHECKPOINT_OPTION: "/cp", TAG_OPTION: "__sg_source_1"}
    assert run_options(kafka, None) == {} and run_options(local, "/cp") == {}


# -- offset logs Spark wrote -------------------------------------------------------------------------------------


def _kafka(spark: Any, kafka: MockKafka, topic: str, checkpoint: Path | None, tag: str | None) -> Any:
    kafka_source.register(spark)
    reader = spark.readStream.format(kafka_source.FORMAT_NAME).options(
        bootstrapServers=kafka.bootstrap, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger="4")
    if checkpoint is not None and tag is not None:
        reader = reader.options(**{CHECKPOINT_OPTION: str(checkpoint), TAG_OPTION: tag})
    return reader.load().select("topic", "offset")


def _run(frame: Any, checkpoint: Path) -> None:
    query = frame.writeStream.format("noop").option("checkpointLocation", str(checkpoint)).start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()


def test_offset_logs_spark_wrote(spark: Any, kafka: MockKafka, tmp_path: Path) -> None:
    kafka.produce("cp_left", [(None, b"l%d" % i) for i in range(7)])
    kafka.produce("cp_right", [(None, b"r%d" % i) for i in range(3)])
    tagged_run = tmp_path / "tagged"
    assert logged_start(str(tagged_run), "left") == LoggedStart(None, None)   # before the query's first batch
    frame = _kafka(spark, kafka, "cp_left", tagged_run, "left").union(
        _kafka(spark, kafka, "cp_right", tagged_run, "right"))
    _run(frame, tagged_run)
    newest = newest_batch(str(tagged_run))
    assert newest is not None and newest >= 1, "maxOffsetsPerTrigger => 4 takes two batches for 7 records"
    left, right = logged_start(str(tagged_run), "left"), logged_start(str(tagged_run), "right")
    assert (left.batch, right.batch) == (newest, newest)
    assert left.offset is not None and list(left.offset) == ["cp_left"] and left.offset["cp_left"]["0"] == 7
    assert right.offset is not None and list(right.offset) == ["cp_right"] and right.offset["cp_right"]["0"] == 3
    first = (tagged_run / "offsets" / "0").read_text().splitlines()
    assert first[0] == "v1" and {"cp_left": {"0": 4, "1": 0, "2": 0, "3": 0}, TAG_FIELD: "left"} in \
        [json.loads(line) for line in first[2:]], first     # Spark keeps the offset as returned: the cap held

    untagged_run = tmp_path / "untagged"      # a checkpoint written before sources were tagged
    _run(_kafka(spark, kafka, "cp_right", None, None), untagged_run)
    assert logged_start(str(untagged_run), "right") == LoggedStart(newest_batch(str(untagged_run)), None)
