"""The Yahoo streaming query fed from Kafka: sluicegate's `STREAM read_kafka(...)` against the same query
hand-written in PySpark over the same reader (the `sg_kafka` data source) and the same Delta sink, in one run.

    .venv/bin/python bench/kafka_bench.py                 # full size: 2,000,000 records
    .venv/bin/python bench/kafka_bench.py --scale 0.02    # shrunk, to try it out

It reuses bench/streaming_bench.py: its ad events and their expected counts, its gateway and hand-written pipeline
runners, its result check. The broker is librdkafka's mock cluster (tests/kafka_broker.py) in this process on
127.0.0.1. Before anything is timed the producer fills the topics with the whole backlog (each record's value the
event's JSON, its timestamp the event time), so the figure is the pipeline's, not the producer's; every run reads
them from their earliest offsets into a fresh table. The mock keeps only about 5 MB a partition (older records are
deleted, silently), so the backlog is spread over topics ad_events_<n> of 4 partitions, 15,000 records a partition
(2,000,000 records: 34 topics, 136 partitions, one Spark task each), read with subscribePattern; the producer
checks that the broker still holds every record.

The query: views per campaign per 10-second window of the record timestamp (watermark 10 s), the value parsed with
from_json and joined with the campaigns table. Spark 4.1's Python streaming API gives the reader no start offset
when it sizes a batch, so the first batch of a new stream is not capped (README, read_kafka): the whole backlog is
one micro-batch on both sides, and append mode's windows are written by the no-data batch that follows it.
rows/s = records / wall time from CREATE (or writeStream.start) to all processed; per core = that / nproc.
Pipelines are warmed up first on a small topic; the figure is the median of --runs runs, taken in turns.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent / "tests"))

from gateway_bench import finish_run, java_home, load_average, machine_info, say
from streaming_bench import (
    BASE_EPOCH,
    EVENT_SCHEMA,
    Backlog,
    Bench,
    Plan,
    copy_backlog,
    figure_table,
    generate_yahoo,
    plan_for,
    ratio,
    timed_pipelines,
)

TOPIC, WARM_TOPIC = "ad_events", "warm_events"   # prefixes: the backlog is spread over topics ad_events_<n>
KAFKA_YAHOO_SQL = (
    "CREATE STREAMING TABLE {name} {columns}TBLPROPERTIES ({properties}) AS "
    "SELECT c.campaign_id, window(e.timestamp, '10 seconds') AS w, count(*) AS views "
    "FROM (SELECT from_json(CAST(value AS STRING), '{schema}') AS j, timestamp "
    "FROM {source} WATERMARK timestamp DELAY OF INTERVAL 10 SECONDS) e "
    "JOIN campaigns c ON e.j.ad_id = c.ad_id "
    "WHERE e.j.event_type = 'view' "
    "GROUP BY c.campaign_id, window(e.timestamp, '10 seconds')"
)
READ_KAFKA = ("STREAM read_kafka(bootstrapServers => '{bootstrap}', subscribePattern => '{topic}_[0-9]+', "
              "startingOffsets => 'earliest')")
PIPELINES = {
    "gateway_update": "sluicegate read_kafka -> streaming table, update (MERGE)",
    "hand_update": "hand-written PySpark sg_kafka -> DeltaSink, update",
    "gateway_append": "sluicegate read_kafka -> streaming table, append",
    "hand_append": "hand-written PySpark sg_kafka -> DeltaSink, append",
}
EVENT_TIME_AT = len('"event_time":"')
MOCK_PARTITIONS = 4               # a topic the mock cluster creates on its first record has 4 partitions
PER_PARTITION = 15_000            # records a partition: the mock keeps about 5 MB (19,000 of these) and drops older


# -- the backlog in Kafka --------------------------------------------------------------------------------------------


def event_ms(line: str) -> int:
    """The event time of one generated JSON line as epoch milliseconds (its fixed '2026-01-01 HH:MM:SS.mmm')."""
    at = line.index('"event_time":"') + EVENT_TIME_AT
    clock = line[at + 11:at + 23]
    seconds = int(clock[0:2]) * 3600 + int(clock[3:5]) * 60 + int(clock[6:8])
    return (BASE_EPOCH + seconds) * 1000 + int(clock[9:12])


def produce_files(bootstrap: str, prefix: str, folder: Path) -> tuple[int, int]:
    """Every line of the backlog's files as one record, the event time as its timestamp, into topics <prefix>_0,
    <prefix>_1, ... (each created by its first record with the mock's default of 4 partitions, filled in turn up to
    PER_PARTITION records a partition); returns (records, partitions) once the broker acknowledged them all and
    still holds every one (the mock keeps about 5 MB a partition and deletes older records silently)."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10_000,
                         "queue.buffering.max.messages": 500_000, "enable.idempotence": True})
    lines = [line for path in sorted(folder.glob("events-*.json"))
             for line in path.read_text(encoding="utf-8").splitlines()]
    per_topic = MOCK_PARTITIONS * PER_PARTITION
    for start in range(0, len(lines), per_topic):
        topic = f"{prefix}_{start // per_topic}"
        for i, line in enumerate(lines[start:start + per_topic]):
            while True:
                try:
                    producer.produce(topic, value=line.encode(), partition=i % MOCK_PARTITIONS,
                                     timestamp=event_ms(line))
                    break
                except BufferError:      # the local queue is full: let librdkafka send some
                    producer.poll(0.05)
    if producer.flush(120) != 0:
        raise RuntimeError(f"{prefix}: records left unacknowledged by the broker")
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-check"})
    try:
        topics = {name: len(t.partitions) for name, t in consumer.list_topics(timeout=30).topics.items()
                  if name.startswith(f"{prefix}_")}
        held = 0
        for topic, partitions in topics.items():
            for partition in range(partitions):
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
                if low != 0:
                    raise RuntimeError(f"the broker deleted offsets 0-{low - 1} of {topic}[{partition}]: lower "
                                       "PER_PARTITION")
                held += high
    finally:
        consumer.close()
    if held != len(lines):
        raise RuntimeError(f"{prefix}: the broker holds {held:,} records of {len(lines):,}")
    return len(lines), sum(topics.values())


# -- the pipelines ---------------------------------------------------------------------------------------------------


def kafka_yahoo_dataframe(session: Any, campaigns_location: str, bootstrap: str, topic: str) -> tuple[Any, Any]:
    """The query as one writes it by hand over the same reader the gateway uses (sg_kafka, read_kafka's options)."""
    from pyspark.sql.functions import col, count, from_json, lit, window
    from streaming_bench import delta_rows

    from sluicegate.engine.streams import kafka_source

    kafka_source.register(session)
    campaigns = delta_rows(session, campaigns_location).cache()
    raw = (session.readStream.format(kafka_source.FORMAT_NAME)
           .options(bootstrapServers=bootstrap, subscribePattern=f"{topic}_[0-9]+", startingOffsets="earliest").load())
    events = (raw.withWatermark("timestamp", "10 seconds")
              .select(from_json(col("value").cast("string"), EVENT_SCHEMA).alias("j"), col("timestamp")))
    result = (events.alias("e").join(campaigns.alias("c"), col("e.j.ad_id") == col("c.ad_id"))
              .where(col("e.j.event_type") == "view")
              .groupBy(col("c.campaign_id"), window(col("e.timestamp"), "10 seconds").alias("w"))
              .agg(count(lit(1)).alias("views")))
    return result, campaigns


def run_kafka_pipeline(bench: Bench, key: str, bootstrap: str, topic: str, name: str) -> dict[str, Any]:
    from streaming_bench import run_gateway_yahoo, run_hand_yahoo

    mode = "update" if key.endswith("update") else "append"
    if key.startswith("gateway"):
        source = READ_KAFKA.format(bootstrap=bootstrap, topic=topic)
        return run_gateway_yahoo(bench, source, mode, name, template=KAFKA_YAHOO_SQL)
    build = partial(kafka_yahoo_dataframe, bootstrap=bootstrap, topic=topic)
    return run_hand_yahoo(bench, bench.work, "delta", mode, name, build=build)


def bench_kafka(bench: Bench, kafka: Any) -> dict[str, Any]:
    plan = bench.plan
    say(f"generating {plan.files} files x {plan.rows_per_file:,} ad events")
    backlog: Backlog = generate_yahoo(bench.work / "yahoo", plan.files, plan.rows_per_file)
    warm = copy_backlog(backlog, bench.work / "yahoo_warm", plan.warmup_files)
    say(f"{backlog.rows:,} events ({backlog.views:,} views, {len(backlog.expected)} windows); producing them to "
        f"{TOPIC}")
    started = time.perf_counter()
    produced, partitions = produce_files(kafka.bootstrap, TOPIC, backlog.folder)
    produce_s = time.perf_counter() - started
    if produced != backlog.rows:
        raise RuntimeError(f"produced {produced:,} records of {backlog.rows:,}")
    say(f"produced {produced:,} records to {partitions} partitions in {produce_s:.1f} s "
        f"({produced / produce_s:,.0f} records/s)")
    produce_files(kafka.bootstrap, WARM_TOPIC, warm)
    bench.sql("CREATE TABLE campaigns (ad_id STRING, campaign_id STRING) USING DELTA")
    bench.sql("INSERT INTO campaigns VALUES " + ", ".join(f"('{a}', '{c}')" for a, c in backlog.campaigns))
    explain = [row[0] for row in bench.sql("EXPLAIN " + KAFKA_YAHOO_SQL.format(
        name="yahoo", columns="", properties="'pipelines.trigger.interval' = '0 seconds'", schema=EVENT_SCHEMA,
        source=READ_KAFKA.format(bootstrap=kafka.bootstrap, topic=TOPIC)))]
    results = timed_pipelines(bench, backlog, PIPELINES,
                              lambda key, name: run_kafka_pipeline(bench, key, kafka.bootstrap, WARM_TOPIC, name),
                              lambda key, name: run_kafka_pipeline(bench, key, kafka.bootstrap, TOPIC, name),
                              WARM_TOPIC)
    cores = os.cpu_count() or 1
    for entry in results.values():
        entry["rows_per_s_per_core"] = entry["rows_per_s"] / cores
        entry["best_rows_per_s"] = max(r["rows_per_s"] for r in entry["runs"])
    bench.sql("DROP TABLE campaigns")
    return {"pipelines": results, "records": backlog.rows, "views": backlog.views, "windows": len(backlog.expected),
            "partitions": partitions, "produce_s": produce_s, "cores": cores, "explain": explain}


# -- the report ------------------------------------------------------------------------------------------------------


def report(plan: Plan, result: dict[str, Any]) -> str:
    pipelines = result["pipelines"]
    rate = dict.fromkeys(PIPELINES, 0.0) | {key: entry["rows_per_s"] for key, entry in pipelines.items()}
    notes = {"gateway_update": f"gateway / hand-written: {ratio(rate['gateway_update'], rate['hand_update'])}",
             "gateway_append": f"gateway / hand-written: {ratio(rate['gateway_append'], rate['hand_append'])}"}
    title = (f"**Yahoo query from Kafka, {result['records']:,} records in {result['partitions']} partitions "
             f"(produced first: {result['produce_s']:.1f} s), median of {plan.runs}**")
    rows = [[title, "", ""]]
    for key, entry in pipelines.items():
        value = (f"{entry['rows_per_s']:,.0f} rows/s ({entry['seconds']:.2f} s, start {entry['start_s']:.2f} s); "
                 f"{entry['rows_per_s_per_core']:,.0f} per core")
        rows.append([entry["label"], value, notes.get(key, "")])
    return figure_table(rows)


def main(argv: list[str] | None = None) -> int:
    from kafka_broker import MockKafka

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="shrink the records (0.02 to try it out)")
    parser.add_argument("--runs", type=int, default=3, help="measured runs of each pipeline; the median counts")
    parser.add_argument("--pipelines", default=",".join(PIPELINES),
                        help=f"pipelines to run, comma-separated, of: {', '.join(PIPELINES)}")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (input, warehouse) for a look")
    args = parser.parse_args(argv)
    pipelines = tuple(p.strip() for p in args.pipelines.split(",") if p.strip())
    if not pipelines or set(pipelines) - set(PIPELINES):
        parser.error(f"--pipelines takes {', '.join(PIPELINES)}")
    plan = plan_for(argparse.Namespace(scale=args.scale, runs=args.runs))

    java = java_home()
    machine = machine_info(java)
    load_before = load_average()
    say(f"machine: {machine['nproc']} CPUs ({machine['cpu_model']}), {machine['memory_gib']} GiB; "
        f"Python {machine['python']}, {machine['java']}, pyspark {machine['pyspark']}; load {load_before}")
    work = Path(tempfile.mkdtemp(prefix="sg_kafka_bench_"))
    started = time.perf_counter()
    kafka = MockKafka()
    bench = Bench(work, plan)
    bench.pipelines = pipelines
    try:
        say(f"gateway on 127.0.0.1:{bench.server.port}, mock Kafka on {kafka.bootstrap}, warehouse {work}")
        result = bench_kafka(bench, kafka)
    finally:
        bench.close()
        kafka.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    load_after = load_average()
    finish_run(f"kafka_bench{'' if plan.scale == 1 else f'-scale{plan.scale:g}'}", report(plan, result), machine,
               load_before, load_after, started,
               {"plan": asdict(plan), "results": result,
                "queries": {"gateway": KAFKA_YAHOO_SQL, "source": READ_KAFKA}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
