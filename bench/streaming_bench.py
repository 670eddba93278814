"""sluicegate's streaming tables against the same queries hand-written in PySpark, in one process and one run.

    .venv/bin/python bench/streaming_bench.py                 # full size (about half an hour on 2 quiet cores)
    .venv/bin/python bench/streaming_bench.py --scale 0.02    # everything shrunk, to try it out
    .venv/bin/python bench/streaming_bench.py --only throughput --runs 1
    .venv/bin/python bench/streaming_bench.py --only throughput --object-store   # (a) also on a local S3 store

A real gateway on 127.0.0.1 (port 0) over a fresh warehouse, driven with PyHive, and beside it, on the same Spark,
the hand-written pipelines. Three figures:

(a) throughput  The Yahoo streaming benchmark query: ad events (JSON files, 100 campaigns x 10 ads) joined with the
                campaigns table, views per campaign per 10-second event-time window, watermark 10 s. A backlog of
                2,000,000 rows in 20 files of 100,000, read 2 files per micro-batch (maxFilesPerTrigger => 2) with a
                0 s trigger; rows/s = backlog rows / wall time from CREATE (or writeStream.start) to all processed
                (the StreamManager's wait_for / processAllAvailable). Five pipelines over the same files:
                  sluicegate, update mode (its default: each batch's changed windows MERGEd into Delta)
                  hand-written PySpark, foreachBatch(DeltaSink) in update mode
                  sluicegate, append mode (a window written once, when the watermark closes it)
                  hand-written PySpark, foreachBatch(DeltaSink) in append mode
                  hand-written PySpark, Spark's own Parquet file sink (append)
                Each pipeline is warmed up first on a 2-file backlog (a fresh Spark is 2-3x slower on its first
                pass); the figure is the median of --runs runs. Every result is checked against counts made while
                generating the input (update: every window exact; append: every written window exact).
(b) freshness   A plain append table (SELECT * FROM STREAM read_files(...)) with a 500 ms trigger. A small file with a
                unique marker lands about every second (written hidden, then renamed); another connection polls
                `SELECT marker FROM fresh` through the gateway. Latency = end of the first SELECT that returns the
                marker - end of the rename (so it includes up to one poll round trip, reported alongside);
                p50/p95 over 40 files.
(c) batch time  One micro-batch of 10,000 new rows into a streaming table whose Delta table already holds 1,000,000,
    vs size     then 50,000,000 rows (pre-filled with the gateway's own write path,
                sluicegate.storage.delta.commit.append, in files of 1,000,000 rows). Median of
                durationMs.triggerExecution (and .addBatch, the Delta sink's share) over 10 batches, after one
                discarded. Two tables:
                  append  SELECT k, v, s FROM STREAM read_files(...)
                  update  SELECT k, count(*), sum(v) ... GROUP BY k; each batch holds 10,000 distinct keys at the
                          recent end of the key range (half already in the table, half new), as windowed or
                          per-session aggregates touch recent keys: the MERGE cost that should not grow with the table.
                          (The stream's state does not know the pre-filled groups, so a matched row gets the stream's
                          own count: the cost is the point here, not the values.)

With --object-store, (a)'s gateway pipelines run a second time with the warehouse (tables, checkpoints' copies) and
the input files on a real S3 store (SeaweedFS `weed mini` on loopback, tests/object_store.py), through a second
gateway on the same Spark; the report gives store / local for each. The files are uploaded one by one in name order,
so later micro-batches take them in the same order as from the local folder; the store's first micro-batch is not
capped (Spark asks a Python source for its latest offset before its start), so compare with
--max-files-per-trigger 20 (the whole backlog in one micro-batch on both sides).

In (a), "start" is the part of the wall time spent in the CREATE statement (or building the query and
writeStream.start) before the first batch. --scale shrinks rows, table sizes and file rows (not the number of files,
so (a) keeps its 10 micro-batches, nor the 10,000-row batches of (c)); the counts of (b) and (c) shrink to no fewer
than 8 files and 3 batches. Do not run it at full size while others use
the machine. The table is printed; everything, raw samples included, is written as JSON to bench/out/.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from gateway_bench import finish_run, java_home, load_average, machine_info, percentile, say

DATABASE = "default"
CAMPAIGNS, ADS_PER_CAMPAIGN = 100, 10
EVENT_TYPES = ("view", "click", "purchase")
AD_TYPES = ("banner", "modal", "sponsored-search", "mail", "mobile")
EVENT_SCHEMA = ("user_id STRING, page_id STRING, ad_id STRING, ad_type STRING, event_type STRING, "
                "event_time TIMESTAMP, ip_address STRING")
BASE_EPOCH = 1767225600           # 2026-01-01 00:00:00 UTC (the gateway's Spark session time zone is UTC)
EVENT_SPAN_SECONDS = 300          # the backlog's event times cover 5 minutes: 30 windows of 10 s, whatever the scale
JITTER_MS = 2000                  # events arrive up to 2 s out of order: well inside the 10 s watermark delay

YAHOO_SQL = (
    "CREATE STREAMING TABLE {name} {columns}TBLPROPERTIES ({properties}) AS "
    "SELECT c.campaign_id, window(e.event_time, '10 seconds') AS w, count(*) AS views "
    "FROM STREAM read_files('{source}', format => 'json', schema => '{schema}', maxFilesPerTrigger => {max_files}) "
    "WATERMARK event_time DELAY OF INTERVAL 10 SECONDS AS e "
    "JOIN campaigns c ON e.ad_id = c.ad_id "
    "WHERE e.event_type = 'view' "
    "GROUP BY c.campaign_id, window(e.event_time, '10 seconds')"
)
# --pipelines gateway_update,gateway_update_expect,...: the same query guarded by three expectations every row passes
# (two warn, one DROP ROW), so the figure is their evaluation's cost and the result is still checked exactly
EXPECTATIONS = ("(CONSTRAINT has_campaign EXPECT (campaign_id IS NOT NULL), "
                "CONSTRAINT counted EXPECT (views > 0), "
                "CONSTRAINT whole_window EXPECT (w.end > w.start) ON VIOLATION DROP ROW) ")
FRESH_SQL = ("CREATE STREAMING TABLE fresh TBLPROPERTIES ('pipelines.trigger.interval' = '500 milliseconds') AS "
             "SELECT * FROM STREAM read_files('{source}', format => 'json', "
             "schema => 'marker STRING, seq INT, landed_at DOUBLE')")
SIZE_SCHEMA = "k BIGINT, v DOUBLE, s STRING"
SIZE_SQL = {
    "append": "SELECT k, v, s FROM STREAM read_files('{source}', format => 'json', schema => '{schema}', "
              "maxFilesPerTrigger => 1)",
    "update": "SELECT k, count(*) AS n, sum(v) AS total FROM STREAM read_files('{source}', format => 'json', "
              "schema => '{schema}', maxFilesPerTrigger => 1) GROUP BY k",
}
PREFILL_SQL = {
    "append": ("id AS k", "rand(7) AS v", "CAST(id AS STRING) AS s"),
    "update": ("id AS k", "CAST(1 AS BIGINT) AS n", "rand(7) AS total"),
}

PIPELINES = {
    "gateway_update": "sluicegate CREATE STREAMING TABLE, update (MERGE)",
    "hand_delta_update": "hand-written PySpark -> DeltaSink, update",
    "gateway_append": "sluicegate CREATE STREAMING TABLE, append",
    "hand_delta_append": "hand-written PySpark -> DeltaSink, append",
    "hand_parquet_append": "hand-written PySpark -> Spark Parquet sink, append",
    "gateway_update_expect": "sluicegate CREATE STREAMING TABLE, update, 3 expectations",
    "gateway_append_expect": "sluicegate CREATE STREAMING TABLE, append, 3 expectations",
}
DEFAULT_PIPELINES = ("gateway_update", "hand_delta_update", "gateway_append", "hand_delta_append",
                     "hand_parquet_append")
PARTS = ("throughput", "freshness", "size")


@dataclass(frozen=True)
class Plan:
    scale: float
    files: int                    # (a) backlog files
    rows_per_file: int
    max_files_per_trigger: int
    warmup_files: int
    runs: int
    fresh_files: int              # (b)
    fresh_interval_s: float
    sizes: tuple[int, ...]        # (c) rows already in the table
    prefill_file_rows: int
    batch_rows: int
    batches: int                  # measured, after one discarded

    @property
    def backlog_rows(self) -> int:
        return self.files * self.rows_per_file


def plan_for(args: argparse.Namespace) -> Plan:
    s = args.scale
    return Plan(scale=s, files=20, rows_per_file=max(100, int(100_000 * s)),
                max_files_per_trigger=args.max_files_per_trigger,
                warmup_files=2, runs=args.runs, fresh_files=max(8, round(40 * s)), fresh_interval_s=1.0,
                sizes=(max(1000, int(1_000_000 * s)), max(1000, int(50_000_000 * s))),
                prefill_file_rows=max(1000, int(1_000_000 * s)), batch_rows=10_000,
                batches=max(3, round(10 * s)))


# -- the Yahoo input ------------------------------------------------------------------------------------------------


@dataclass
class Backlog:
    folder: Path
    rows: int
    views: int
    expected: Counter            # (campaign_id, window start as epoch seconds) -> views
    campaigns: list[tuple[str, str]]    # (ad_id, campaign_id)


def _uuids(rng: random.Random, n: int) -> list[str]:
    return [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(n)]


def land_text(folder: Path, name: str, text: str) -> Path:
    """A file that appears at once: written under a hidden name, then renamed (what a file stream needs)."""
    hidden = folder / f".{name}"
    hidden.write_text(text, encoding="utf-8")
    os.rename(hidden, folder / name)
    return folder / name


def generate_yahoo(folder: Path, files: int, rows_per_file: int, seed: int = 4) -> Backlog:
    """Ad events as JSON lines, event time rising evenly over EVENT_SPAN_SECONDS with up to JITTER_MS of disorder,
    and the counts every correct result must hold."""
    rng = random.Random(seed)
    campaigns = _uuids(rng, CAMPAIGNS)
    ads = _uuids(rng, CAMPAIGNS * ADS_PER_CAMPAIGN)
    campaign_of = [campaigns[i // ADS_PER_CAMPAIGN] for i in range(len(ads))]
    users, pages = _uuids(rng, 1000), _uuids(rng, 1000)
    seconds = [f"2026-01-01 {s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
               for s in range(EVENT_SPAN_SECONDS + JITTER_MS // 1000 + 2)]
    total = files * rows_per_file
    span_ms = EVENT_SPAN_SECONDS * 1000
    expected: Counter = Counter()
    folder.mkdir(parents=True, exist_ok=True)
    views = 0
    for f in range(files):
        lines = []
        for i in range(rows_per_file):
            ms = (f * rows_per_file + i) * span_ms // total + rng.randrange(JITTER_MS)
            ad = rng.randrange(len(ads))
            kind = EVENT_TYPES[rng.randrange(3)]
            lines.append(
                f'{{"user_id":"{users[rng.randrange(1000)]}","page_id":"{pages[rng.randrange(1000)]}",'
                f'"ad_id":"{ads[ad]}","ad_type":"{AD_TYPES[ad % 5]}","event_type":"{kind}",'
                f'"event_time":"{seconds[ms // 1000]}.{ms % 1000:03d}","ip_address":"10.0.{ad % 256}.{i % 256}"}}\n')
            if kind == "view":
                views += 1
                expected[(campaign_of[ad], BASE_EPOCH + ms // 10_000 * 10)] += 1
        land_text(folder, f"events-{f:05d}.json", "".join(lines))
    return Backlog(folder, total, views, expected, list(zip(ads, campaign_of, strict=False)))


def copy_backlog(backlog: Backlog, folder: Path, files: int) -> Path:
    """The first `files` files of the backlog in a folder of their own (for warm-up runs)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in sorted(p.name for p in backlog.folder.iterdir())[:files]:
        shutil.copy(backlog.folder / name, folder / name)
    return folder


# -- the harness: gateway, Spark, helpers ----------------------------------------------------------------------------


class Bench:
    def __init__(self, work: Path, plan: Any, spark: Any = None, store: Any = None,
                 streams: dict[str, Any] | None = None) -> None:
        """`store` (tests/object_store.S3Store): the warehouse on that object store, its landing prefix the users'
        root; `spark`: a session to share (another Bench's), kept running at close; `streams`: settings of the
        configuration's [streams] section (bench/cdc_bench.py: a 0 s default trigger for its flows)."""
        from pyhive import hive

        from sluicegate.engine.spark import create_spark_session, warm_up
        from sluicegate.gateway.auth.providers import make_authenticator
        from sluicegate.gateway.config import load_config
        from sluicegate.gateway.server import GatewayServer
        from sluicegate.gateway.service import GatewayService, open_catalog

        self.work = work
        self.plan = plan
        self.store = store
        # The bench's sources live in its work folder: the users' landing root here (the warehouse stays protected).
        if store is None:
            self.config = load_config(port=0, warehouse=work / "warehouse",
                                      overrides={"security": {"allowed_paths": [str(work)]},
                                                 **({"streams": streams} if streams else {})})
        else:
            self.config = load_config(port=0, overrides={
                "warehouse": {"path": f"s3://{store.bucket}/warehouse", "local_state": str(work / "state")},
                "storage": {"endpoint": store.endpoint, "region": store.region, "access_key": store.access_key,
                            "secret_key": store.secret_key, "allow_http": True},
                "security": {"allowed_paths": [f"s3://{store.bucket}/warehouse/landing", str(work)]}})
        self.owns_spark = spark is None
        self.spark = spark if spark is not None else create_spark_session(self.config.spark)
        if self.owns_spark:
            warm_up(self.spark)
        self.catalog = open_catalog(self.config)
        self.service = GatewayService(self.config, self.spark,
                                      make_authenticator(self.config.auth.mode, self.config.auth.password_file),
                                      self.catalog)
        self.streams = self.service.streams
        self.server = GatewayServer(self.service, "127.0.0.1", 0, self.config.server.max_connections)
        self.server.start()
        self._connect = lambda: hive.connect("127.0.0.1", self.server.port, username="bench")
        self.connection = self._connect()
        self.cursor = self.connection.cursor()

    def connect(self) -> Any:
        return self._connect()

    def sql(self, statement: str, cursor: Any = None) -> list[tuple[Any, ...]]:
        cursor = cursor or self.cursor
        cursor.execute(statement)
        return cursor.fetchall() if cursor.description else []

    def location(self, name: str) -> str:
        entry = self.catalog.get_table(DATABASE, name)
        assert entry is not None and entry.location, f"no table {name}"
        return str(entry.location)

    def close(self) -> None:
        try:
            self.connection.close()
        finally:
            self.server.shutdown(grace=0)
            self.catalog.close()
            if self.owns_spark:
                self.spark.stop()


def delta_rows(spark: Any, location: str) -> Any:
    from sluicegate.storage.delta.read import snapshot_dataframe
    from sluicegate.storage.delta.snapshots import load_snapshot

    return snapshot_dataframe(spark, load_snapshot(location))


def window_counts(frame: Any) -> list[tuple[str, int, int]]:
    rows = frame.selectExpr("campaign_id", "CAST(w.start AS BIGINT) AS start", "views").collect()
    return [(r[0], r[1], r[2]) for r in rows]


def check_windows(found: list[tuple[str, int, int]], backlog: Backlog, mode: str) -> dict[str, Any]:
    """update: the table is the whole result (every window of every campaign, exact). append: only windows the
    watermark closed are written, each once and exact."""
    keys = [(c, s) for c, s, _ in found]
    if len(set(keys)) != len(keys):
        raise RuntimeError(f"{len(keys) - len(set(keys))} windows written more than once")
    wrong = [(c, s, n, backlog.expected.get((c, s))) for c, s, n in found if backlog.expected.get((c, s)) != n]
    if wrong:
        raise RuntimeError(f"{len(wrong)} windows with wrong counts, e.g. (campaign, start, found, expected) "
                           f"{wrong[:3]}")
    if mode == "update" and len(found) != len(backlog.expected):
        raise RuntimeError(f"update mode wrote {len(found)} windows; the result has {len(backlog.expected)}")
    if not found:
        raise RuntimeError("no window was written")
    return {"windows": len(found), "of_windows": len(backlog.expected), "views": sum(n for _, _, n in found),
            "of_views": backlog.views}


# -- (a) throughput ----------------------------------------------------------------------------------------------


def progress_summary(progress: list[dict[str, Any]]) -> dict[str, Any]:
    """Micro-batches that read rows, and the median of their triggerExecution."""
    with_rows = [p for p in progress if (p.get("numInputRows") or 0) > 0]
    durations = [p["durationMs"]["triggerExecution"] / 1000 for p in with_rows]
    return {"batches_with_rows": len(with_rows),
            "batch_s_median": statistics.median(durations) if durations else None}


def run_gateway_yahoo(bench: Bench, source: Path | str, mode: str, name: str, expectations: bool = False,
                      template: str = YAHOO_SQL) -> dict[str, Any]:
    """`template` is YAHOO_SQL or a variant over another source (bench/kafka_bench.py): `source` fills it in."""
    from sluicegate.storage.delta.tables import open_table

    properties = ["'pipelines.trigger.interval' = '0 seconds'"]
    if mode == "append":
        properties.append("'sluicegate.output_mode' = 'append'")
    statement = template.format(name=name, properties=", ".join(properties), source=source, schema=EVENT_SCHEMA,
                                max_files=bench.plan.max_files_per_trigger,
                                columns=EXPECTATIONS if expectations else "")
    start = time.perf_counter()
    bench.sql(statement)
    started = time.perf_counter() - start
    bench.streams.wait_for(DATABASE, name)
    seconds = time.perf_counter() - start
    bench.streams.stop(DATABASE, name)
    location = bench.location(name)
    found = window_counts(delta_rows(bench.spark, location))
    commits = open_table(location).version()  # version 0 is the empty table CREATE made
    bench.sql(f"DROP STREAMING TABLE {name}")
    return {"seconds": seconds, "start_s": started, "commits": commits, "found": found}


def yahoo_dataframe(session: Any, source: Path, campaigns_location: str, max_files: int) -> tuple[Any, Any]:
    """The query as one writes it by hand: the campaigns table read from its Delta snapshot and cached, as the
    gateway's runner does for a static join side."""
    from pyspark.sql.functions import col, count, lit, window

    campaigns = delta_rows(session, campaigns_location).cache()
    events = (session.readStream.format("json").schema(EVENT_SCHEMA).option("maxFilesPerTrigger", max_files)
              .load(str(source)).withWatermark("event_time", "10 seconds"))
    result = (events.alias("e").join(campaigns.alias("c"), col("e.ad_id") == col("c.ad_id"))
              .where(col("e.event_type") == "view")
              .groupBy(col("c.campaign_id"), window(col("e.event_time"), "10 seconds").alias("w"))
              .agg(count(lit(1)).alias("views")))
    return result, campaigns


def run_hand_yahoo(bench: Bench, source: Path, sink: str, mode: str, name: str,
                   build: Callable[[Any, str], tuple[Any, Any]] | None = None) -> dict[str, Any]:
    """`build(session, campaigns location)` makes the query over another source (bench/kafka_bench.py); by default
    yahoo_dataframe over the files in `source`."""
    from deltalake import DeltaTable
    from pyspark.sql.pandas.types import to_arrow_schema

    from sluicegate.engine.streams.sink import DeltaSink
    from sluicegate.storage.delta.write import commit_files

    checkpoint = bench.work / "hand" / "checkpoints" / name
    output = bench.work / "hand" / "tables" / name
    start = time.perf_counter()
    session = bench.spark.newSession()
    if build is None:
        result, campaigns = yahoo_dataframe(session, source, bench.location("campaigns"),
                                            bench.plan.max_files_per_trigger)
    else:
        result, campaigns = build(session, bench.location("campaigns"))
    writer = (result.writeStream.outputMode(mode).option("checkpointLocation", str(checkpoint))
              .queryName(name).trigger(processingTime="0 seconds"))
    if sink == "delta":
        output.mkdir(parents=True)
        commit_files(str(output), [], to_arrow_schema(result.schema), "append", create=True)
        keys = ("campaign_id", "w") if mode == "update" else ()
        query = writer.foreachBatch(DeltaSink(str(output), uuid.uuid4().hex, mode, keys)).start()
    else:
        query = writer.format("parquet").option("path", str(output)).start()
    started = time.perf_counter() - start
    try:
        query.processAllAvailable()
        seconds = time.perf_counter() - start
        progress = [json.loads(p.json) if hasattr(p, "json") else p for p in query.recentProgress]
    finally:
        query.stop()
        campaigns.unpersist()
    if sink == "delta":
        found = window_counts(delta_rows(bench.spark, str(output)))
        commits = DeltaTable(str(output)).version()
    else:
        found = window_counts(bench.spark.read.parquet(str(output)))
        commits = None
    shutil.rmtree(output, ignore_errors=True)
    shutil.rmtree(checkpoint, ignore_errors=True)
    return {"seconds": seconds, "start_s": started, "commits": commits, "found": found,
            **progress_summary(progress)}


def run_pipeline(bench: Bench, key: str, source: Path | str, name: str) -> dict[str, Any]:
    mode = "update" if "update" in key else "append"
    if key.startswith("gateway"):
        return run_gateway_yahoo(bench, source, mode, name, expectations=key.endswith("_expect"))
    assert isinstance(source, Path), "hand-written pipelines read local files only"
    return run_hand_yahoo(bench, source, "parquet" if "parquet" in key else "delta", mode, name)


def timed_pipelines(bench: Bench, backlog: Backlog, labels: dict[str, str], warm_up: Callable[[str, str], Any],
                    run: Callable[[str, str], dict[str, Any]], warm_input: str, say_as: str = "") -> dict[str, Any]:
    """Each of the bench's pipelines warmed up once, then `plan.runs` rounds of one run each, every run's windows
    checked against the backlog; per pipeline its label, its runs and their medians of rows/s, seconds and start-up.
    `warm_up` and `run` take the pipeline's key and a fresh table name (this file's input, bench/kafka_bench.py's)."""
    results: dict[str, Any] = {}
    for key in bench.pipelines:
        say(f"{say_as}warm-up: {labels[key]} over {warm_input}")
        warm_up(key, f"{key}_warm")
        results[key] = {"label": labels[key], "runs": []}
    for index in range(bench.plan.runs):
        for key in bench.pipelines:
            done = run(key, f"{key}_{index}")
            check = check_windows(done.pop("found"), backlog, "update" if "update" in key else "append")
            done.update(check, rows=backlog.rows, rows_per_s=backlog.rows / done["seconds"])
            results[key]["runs"].append(done)
            commits = "" if done.get("commits") is None else f", {done['commits']} commits"
            say(f"{say_as}run {index + 1}/{bench.plan.runs} {labels[key]}: {done['seconds']:.2f} s, "
                f"{done['rows_per_s']:,.0f} rows/s, {check['windows']} windows{commits}")
    for entry in results.values():
        for figure in ("rows_per_s", "seconds", "start_s"):
            entry[figure] = statistics.median(r[figure] for r in entry["runs"])
    return results


def upload_folder(store: Any, folder: Path, prefix: str) -> str:
    """The files of `folder` uploaded to `prefix` of the store, one by one in name order; returns the prefix's URI."""
    fs = store.filesystem()
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        with fs.open_output_stream(f"{store.bucket}/{prefix}/{path.name}") as out:
            out.write(path.read_bytes())
    return f"s3://{store.bucket}/{prefix}"


def bench_throughput(bench: Bench) -> dict[str, Any]:
    """On a store bench, the input is uploaded to the warehouse's landing prefix and only the gateway runs."""
    plan = bench.plan
    say(f"(a) generating {plan.files} files x {plan.rows_per_file:,} ad events")
    started = time.perf_counter()
    backlog = generate_yahoo(bench.work / "yahoo", plan.files, plan.rows_per_file)
    say(f"(a) {backlog.rows:,} rows ({backlog.views:,} views, {len(backlog.expected)} windows) in "
        f"{time.perf_counter() - started:.1f} s")
    warm: Path | str = copy_backlog(backlog, bench.work / "yahoo_warm", plan.warmup_files)
    source: Path | str = backlog.folder
    if bench.store is not None:
        started = time.perf_counter()
        source = upload_folder(bench.store, backlog.folder, "warehouse/landing/yahoo")
        warm = upload_folder(bench.store, Path(warm), "warehouse/landing/yahoo_warm")
        say(f"(a) uploaded to {source} in {time.perf_counter() - started:.1f} s")
    bench.sql("CREATE TABLE campaigns (ad_id STRING, campaign_id STRING) USING DELTA")
    bench.sql("INSERT INTO campaigns VALUES " + ", ".join(f"('{a}', '{c}')" for a, c in backlog.campaigns))
    explain = [row[0] for row in bench.sql("EXPLAIN " + YAHOO_SQL.format(
        name="yahoo", columns="", properties="'pipelines.trigger.interval' = '0 seconds'", source=source,
        schema=EVENT_SCHEMA, max_files=plan.max_files_per_trigger))]
    results = timed_pipelines(bench, backlog, PIPELINES, lambda key, name: run_pipeline(bench, key, warm, name),
                              lambda key, name: run_pipeline(bench, key, source, name),
                              f"{plan.warmup_files} files", say_as="(a) ")
    bench.sql("DROP TABLE campaigns")
    return {"pipelines": results, "backlog_rows": backlog.rows, "views": backlog.views,
            "windows": len(backlog.expected), "explain": explain}


def bench_on_store(local: Bench, work: Path, plan: Plan) -> dict[str, Any]:
    """(a)'s gateway pipelines through a second gateway whose warehouse is on weed mini, on the same Spark."""
    sys.path.insert(0, str(BENCH_DIR.parent / "tests"))
    from object_store import seaweed_s3

    with seaweed_s3(work / "weed") as store:
        bench = Bench(work / "on_store", plan, spark=local.spark, store=store)
        bench.pipelines = tuple(key for key in local.pipelines if key.startswith("gateway"))
        try:
            say(f"(a) on the store: gateway on 127.0.0.1:{bench.server.port}, warehouse {bench.config.warehouse}")
            return bench_throughput(bench)
        finally:
            bench.close()


# -- (b) freshness -------------------------------------------------------------------------------------------------


def bench_freshness(bench: Bench) -> dict[str, Any]:
    plan = bench.plan
    folder = bench.work / "fresh"
    folder.mkdir()
    bench.sql(FRESH_SQL.format(source=folder))

    def land(marker: str, seq: int) -> float:
        land_text(folder, f"{marker}.json", json.dumps({"marker": marker, "seq": seq, "landed_at": time.time()}) + "\n")
        return time.perf_counter()

    poller = bench.connect()
    cursor = poller.cursor()
    round_trips: list[float] = []

    def poll(wanted: set[str], seen: dict[str, float], deadline: float) -> None:
        """SELECT until every wanted marker was returned once; `seen` gets the end time of that first SELECT."""
        while not wanted <= seen.keys():
            if time.monotonic() > deadline:
                raise RuntimeError(f"markers not visible in time: {sorted(wanted - seen.keys())}")
            begun = time.perf_counter()
            markers = [row[0] for row in bench.sql("SELECT marker FROM fresh", cursor)]
            ended = time.perf_counter()
            round_trips.append(ended - begun)
            for marker in markers:
                seen.setdefault(marker, ended)
            time.sleep(0.02)

    try:
        say("(b) warm-up: 2 files")
        warm_seen: dict[str, float] = {}
        for i in range(2):
            land(f"warm{i}", -1)
        poll({"warm0", "warm1"}, warm_seen, time.monotonic() + 120)
        round_trips.clear()
        landed: dict[str, float] = {}

        def lander() -> None:
            first = time.perf_counter()
            for i in range(plan.fresh_files):
                wait = first + i * plan.fresh_interval_s - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                landed[f"m{i:04d}"] = land(f"m{i:04d}", i)

        say(f"(b) landing {plan.fresh_files} files, one every {plan.fresh_interval_s:g} s, polling the table")
        thread = threading.Thread(target=lander, name="lander", daemon=True)
        seen: dict[str, float] = {}
        thread.start()
        poll({f"m{i:04d}" for i in range(plan.fresh_files)}, seen,
             time.monotonic() + plan.fresh_files * plan.fresh_interval_s + 120)
        thread.join()
    finally:
        poller.close()
    latencies = [seen[m] - landed[m] for m in sorted(landed)]
    bench.streams.stop(DATABASE, "fresh")
    bench.sql("DROP STREAMING TABLE fresh")
    return {"files": len(latencies), "p50_s": statistics.median(latencies), "p95_s": percentile(latencies, 95),
            "max_s": max(latencies), "samples_s": latencies, "trigger_s": 0.5,
            "poll_round_trip_p50_s": statistics.median(round_trips), "polls": len(round_trips)}


# -- (c) batch time vs table size ----------------------------------------------------------------------------------


def batch_rows_text(mode: str, size: int, batch: int, rows: int, rng: random.Random) -> str:
    """append: new keys after the table's; update: `rows` distinct keys at the recent end of the key range, the
    lower half already in the table (from the pre-fill or the previous batch), the upper half new."""
    low = size + batch * rows if mode == "append" else size + (batch - 1) * rows // 2
    return "".join(f'{{"k":{k},"v":{rng.random():.6f},"s":"{k}"}}\n' for k in range(low, low + rows))


def wait_for_batch(bench: Bench, name: str, batch_id: int, rows: int, timeout: float = 600) -> dict[str, Any]:
    """The progress of micro-batch `batch_id` (the listener reports it shortly after the batch ends)."""
    deadline = time.monotonic() + timeout
    while True:
        status = bench.streams.status(DATABASE, name)
        progress = status.last_progress if status is not None else {}
        if progress.get("batchId") == batch_id and progress.get("numInputRows") == rows:
            return progress
        if progress.get("batchId", -1) > batch_id or time.monotonic() > deadline:
            raise RuntimeError(f"{name}: no progress for batch {batch_id} of {rows} rows; last: "
                               f"batch {progress.get('batchId')}, {progress.get('numInputRows')} rows")
        time.sleep(0.05)


def bench_size(bench: Bench, mode: str, size: int) -> dict[str, Any]:
    from sluicegate.storage.delta import commit

    plan = bench.plan
    name = f"{mode}_{size}"
    folder = bench.work / "size" / name
    folder.mkdir(parents=True)
    bench.sql(f"CREATE STREAMING TABLE {name} TBLPROPERTIES ('pipelines.trigger.interval' = '200 milliseconds') "
              f"AS {SIZE_SQL[mode].format(source=folder, schema=SIZE_SCHEMA)}")
    location = bench.location(name)
    files = max(1, size // plan.prefill_file_rows)
    say(f"(c) {name}: pre-filling {size:,} rows in {files} files")
    started = time.perf_counter()
    commit.append(location, bench.spark.range(0, size, 1, files).selectExpr(*PREFILL_SQL[mode]))
    prefill_s = time.perf_counter() - started
    rng = random.Random(size)
    progress = []
    for batch in range(plan.batches + 1):
        land_text(folder, f"batch-{batch:04d}.json", batch_rows_text(mode, size, batch, plan.batch_rows, rng))
        bench.streams.wait_for(DATABASE, name)
        progress.append(wait_for_batch(bench, name, batch, plan.batch_rows))
    bench.streams.stop(DATABASE, name)
    count = bench.sql(f"SELECT count(*) FROM {name}")[0][0]
    landed = plan.batches + 1
    if mode == "append":
        expected = size + landed * plan.batch_rows
    else:  # keys [0, size) from the pre-fill, and [size - rows/2, size + landed * rows/2) from the batches
        expected = size + landed * plan.batch_rows // 2 - min(0, size - plan.batch_rows // 2)
    if count != expected:
        raise RuntimeError(f"{name} holds {count:,} rows, expected {expected:,}")
    bench.sql(f"DROP STREAMING TABLE {name}")
    measured = progress[1:]  # the first batch of a new stream pays for its start
    trigger = [p["durationMs"]["triggerExecution"] / 1000 for p in measured]
    add_batch = [p["durationMs"].get("addBatch", 0) / 1000 for p in measured]
    result = {"table_rows": size, "prefill_files": files, "prefill_s": prefill_s, "final_rows": count,
              "batch_s_median": statistics.median(trigger), "add_batch_s_median": statistics.median(add_batch),
              "batch_s": trigger, "add_batch_s": add_batch,
              "first_batch_s": progress[0]["durationMs"]["triggerExecution"] / 1000}
    say(f"(c) {name}: median batch {result['batch_s_median']:.3f} s (addBatch {result['add_batch_s_median']:.3f} s)")
    return result


def bench_sizes(bench: Bench, modes: tuple[str, ...]) -> dict[str, Any]:
    return {mode: {str(size): bench_size(bench, mode, size) for size in bench.plan.sizes} for mode in modes}


# -- the report ------------------------------------------------------------------------------------------------------


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def report(plan: Plan, results: dict[str, Any]) -> str:
    rows: list[list[str]] = []
    if "throughput" in results:
        pipelines = results["throughput"]["pipelines"]
        rate = {key: entry["rows_per_s"] for key, entry in pipelines.items()}
        rows.append([f"**(a) Yahoo query, {plan.backlog_rows:,}-row backlog, "
                     f"{plan.files // plan.max_files_per_trigger} micro-batches, median of {plan.runs}**", "", ""])
        rate = dict.fromkeys(PIPELINES, 0.0) | rate
        notes = {
            "gateway_update": f"gateway / hand-written: {ratio(rate['gateway_update'], rate['hand_delta_update'])}",
            "gateway_append": f"gateway / hand-written: {ratio(rate['gateway_append'], rate['hand_delta_append'])}; "
                              f"gateway / Parquet sink: {ratio(rate['gateway_append'], rate['hand_parquet_append'])}",
            "hand_delta_append": "DeltaSink / Parquet sink: "
                                 f"{ratio(rate['hand_delta_append'], rate['hand_parquet_append'])}",
            "gateway_update_expect": "with / without expectations: "
                                     f"{ratio(rate['gateway_update_expect'], rate['gateway_update'])}",
            "gateway_append_expect": "with / without expectations: "
                                     f"{ratio(rate['gateway_append_expect'], rate['gateway_append'])}",
        }
        for key, entry in pipelines.items():
            rows.append([entry["label"], f"{entry['rows_per_s']:,.0f} rows/s ({entry['seconds']:.2f} s, "
                                         f"start {entry['start_s']:.2f} s)", notes.get(key, "")])
    if "throughput_store" in results:
        rows.append(["**(a) the same, warehouse and input on a local S3 store (weed mini)**", "", ""])
        for key, entry in results["throughput_store"]["pipelines"].items():
            local = results.get("throughput", {}).get("pipelines", {}).get(key, {}).get("rows_per_s", 0.0)
            rows.append([entry["label"], f"{entry['rows_per_s']:,.0f} rows/s ({entry['seconds']:.2f} s, "
                                         f"start {entry['start_s']:.2f} s)",
                         f"store / local disk: {ratio(entry['rows_per_s'], local)}"])
    if "freshness" in results:
        fresh = results["freshness"]
        rows.append([f"**(b) freshness, 500 ms trigger, {fresh['files']} files ~{plan.fresh_interval_s:g} s apart**",
                     "", ""])
        rows.append(["landed -> visible to a gateway SELECT, p50", f"{fresh['p50_s'] * 1000:.0f} ms",
                     f"poll round trip p50 {fresh['poll_round_trip_p50_s'] * 1000:.0f} ms"])
        rows.append(["landed -> visible to a gateway SELECT, p95", f"{fresh['p95_s'] * 1000:.0f} ms",
                     f"max {fresh['max_s'] * 1000:.0f} ms"])
    if "size" in results:
        rows.append([f"**(c) one micro-batch of {plan.batch_rows:,} rows vs rows already in the table "
                     f"(median of {plan.batches})**", "", ""])
        small_size, large_size = plan.sizes
        for mode, by_size in results["size"].items():
            small, large = by_size[str(small_size)], by_size[str(large_size)]
            for size, entry in ((small_size, small), (large_size, large)):
                note = "" if entry is small else (f"{large_size / small_size:g}x the rows: "
                                                  f"{ratio(large['batch_s_median'], small['batch_s_median'])} "
                                                  "the batch time")
                value = f"{entry['batch_s_median'] * 1000:.0f} ms (sink {entry['add_batch_s_median'] * 1000:.0f} ms)"
                rows.append([f"{mode} mode, table of {size:,} rows", value, note])
    return figure_table(rows)


def figure_table(rows: list[list[str]]) -> str:
    """RESULTS.md's table of figures: (figure, value, ratio / note) rows, aligned."""
    head = ["figure", "value", "ratio / note"]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]

    def render(row: list[str]) -> str:
        return "| " + " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) + " |"

    return "\n".join([render(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(render, rows)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="shrink rows and sizes (0.02 to try it out)")
    parser.add_argument("--runs", type=int, default=3, help="measured runs of each (a) pipeline; the median counts")
    parser.add_argument("--only", choices=PARTS, action="append", help="run only this part (repeatable)")
    parser.add_argument("--size-modes", default="append,update",
                        help="tables of (c): append, update or both (comma-separated)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (input, warehouse) for a look")
    parser.add_argument("--pipelines", default=",".join(DEFAULT_PIPELINES),
                        help=f"(a) pipelines to run, comma-separated, of: {', '.join(PIPELINES)}")
    parser.add_argument("--max-files-per-trigger", type=int, default=2,
                        help="(a) files per micro-batch (20 = the whole backlog in one; read_files on an object store "
                             "takes everything in its first micro-batch whatever the cap)")
    parser.add_argument("--object-store", action="store_true",
                        help="(a) also with the warehouse and input on a local S3 store (weed mini): the gateway "
                             "pipelines only, store / local printed")
    args = parser.parse_args(argv)
    pipelines = tuple(p.strip() for p in args.pipelines.split(",") if p.strip())
    if not pipelines or set(pipelines) - set(PIPELINES):
        parser.error(f"--pipelines takes {', '.join(PIPELINES)}")
    plan = plan_for(args)
    parts = tuple(args.only or PARTS)
    size_modes = tuple(m.strip() for m in args.size_modes.split(",") if m.strip())
    if set(size_modes) - set(SIZE_SQL):
        parser.error(f"--size-modes takes {', '.join(SIZE_SQL)}")

    java = java_home()
    machine = machine_info(java)
    load_before = load_average()
    say(f"machine: {machine['nproc']} CPUs ({machine['cpu_model']}), {machine['memory_gib']} GiB; "
        f"Python {machine['python']}, {machine['java']}, pyspark {machine['pyspark']}; load {load_before}")
    say(f"plan: {plan}")
    work = Path(tempfile.mkdtemp(prefix="sg_stream_bench_"))
    started = time.perf_counter()
    results: dict[str, Any] = {}
    bench = Bench(work, plan)
    bench.pipelines = pipelines
    try:
        say(f"gateway on 127.0.0.1:{bench.server.port}, warehouse {work / 'warehouse'}")
        if "throughput" in parts:
            results["throughput"] = bench_throughput(bench)
        if "throughput" in parts and args.object_store:
            results["throughput_store"] = bench_on_store(bench, work, plan)
        if "freshness" in parts:
            results["freshness"] = bench_freshness(bench)
        if "size" in parts:
            results["size"] = bench_sizes(bench, size_modes)
    finally:
        bench.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    load_after = load_average()

    finish_run(f"streaming_bench{'' if plan.scale == 1 else f'-scale{plan.scale:g}'}", report(plan, results),
               machine, load_before, load_after, started,
               {"plan": asdict(plan), "parts": parts, "results": results,
                "queries": {"yahoo": YAHOO_SQL, "fresh": FRESH_SQL, "size": SIZE_SQL}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
