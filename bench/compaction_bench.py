"""Does a streaming table stay fast after thousands of micro-batches? Reads against a compacted copy of the same rows,
commit time early and late, file count and log size, in one run (issue 25).

    .venv/bin/python bench/compaction_bench.py                     # 10,000 micro-batches of 100 rows
    .venv/bin/python bench/compaction_bench.py --batches 1000      # the short run
    .venv/bin/python bench/compaction_bench.py --batches 50 --runs 2   # to try it out

A real gateway on 127.0.0.1 (port 0), started through the product's own bootstrap (gateway/app.py) from a
configuration file the bench writes, over a fresh warehouse, driven with PyHive. The feed: N JSON files of
--rows-per-batch rows (ids 0..N*rows-1, ascending with the file) are landed first, then

    CREATE STREAMING TABLE st TBLPROPERTIES ('pipelines.trigger.interval' = '0 ms') AS
    SELECT id, v, batch FROM STREAM read_files('<landing>', format => 'json', schema => ..., maxFilesPerTrigger => 1)

reads one file per micro-batch, back to back: N micro-batches, each one Delta commit of its own (the stream's
`txn`), as a busy stream that commits small batches for hours does. The bench polls the Delta log until N stream
commits are in it, then stops the stream, and checks the commits (each batch once, in order) and the rows (every id
once). A micro-batch costs about half a second on two quiet cores whatever its rows (the sink's Spark write and
Delta commit are most of it), so 10,000 take well over an hour; `--flows K` lands the files in K folders and writes
them through K flows into one table (`CREATE STREAMING TABLE st (...)`, `CREATE FLOW fk AS INSERT INTO st ...`):
the same N micro-batches and commits, K streams committing side by side, sooner where cores are idle. Figures:

  reads        through PyHive, on the streaming table and on a compacted copy of the same rows in one file
               (CREATE TABLE st_compacted AS SELECT /*+ COALESCE(1) */ * FROM st, its file count checked):
                 count    SELECT count(*) FROM t
                 grouped  SELECT id % 10, sum(v), count(*) FROM t GROUP BY 1
                 point    SELECT id, v, batch FROM t WHERE id = <an id in the middle>
               each warmed up, then --runs turns taken by the two tables (order turned round each run); medians and
               streaming / compacted (aim: at most 1.2x)
  commits      the sink's commit seconds and the micro-batch's duration (`flow_progress` events read with
               event_log(TABLE(st))) of the first 100 and the last 100 batches, medians and last / first (aim: flat);
               batches/s over the run (CREATE to the last commit) and over the first and last 100 (Delta log
               commit timestamps); where a batch's time goes: Spark's durationMs by phase (addBatch is the sink),
               sampled from the stream's last progress at each poll
  size         the table's live files (its snapshot), Parquet files on disk, and the `_delta_log`: bytes, commit
               entries, checkpoints
  settling     with compaction on, the reads wait until the compactor has nothing left to merge in the stopped
               stream's table (`[compaction] settle`, 60 s of quiet, then the merge); the seconds it took are
               reported

Compaction: when this build's conf/sluicegate.toml has a `[compaction]` section with `enabled`, the stream runs
twice, one gateway after the other on the same Spark and warehouse, with `enabled = false` and `enabled = true`
(--compaction off|on picks one), and the report gives compaction's cost to the stream's own throughput (batches/s
and commit seconds, on against off). Without it: one run, reported as "compaction: not available in this build".
The event log is not trimmed in the bench's configuration (`[events] max_rows_per_table = 0`), so every batch's
event is there.

Do not run it while others use the machine's two cores. The table is printed; everything, raw samples included, is
written as JSON to bench/out/.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10, as gateway/config.py
    import tomli as tomllib

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from gateway_bench import finish_run, java_home, load_average, machine_info, say
from streaming_bench import land_text

DATABASE = "default"
TABLE, COPY = "st", "st_compacted"
SCHEMA = "id BIGINT, v DOUBLE, batch INT"
SOURCE = ("SELECT id, v, batch FROM STREAM read_files('{source}', format => 'json', schema => '{schema}', "
          "maxFilesPerTrigger => 1)")
CREATE_SQL = "CREATE STREAMING TABLE {table} TBLPROPERTIES ('pipelines.trigger.interval' = '0 ms') AS " + SOURCE
FLOWS_SQL = ("CREATE STREAMING TABLE {table} (" + SCHEMA + ")",
             "CREATE FLOW {flow} AS INSERT INTO {table} BY NAME " + SOURCE)
COPY_SQL = "CREATE TABLE {copy} AS SELECT /*+ COALESCE(1) */ * FROM {table}"
QUERIES = {
    "count": "SELECT count(*) FROM {table}",
    "grouped": "SELECT id % 10 AS k, sum(v), count(*) FROM {table} GROUP BY 1",
    "point": "SELECT id, v, batch FROM {table} WHERE id = {point}",
}
PHASES = ("addBatch", "latestOffset", "queryPlanning", "walCommit", "commitOffsets")   # of Spark's durationMs
EDGE = 100                 # batches at each end compared for the commit time (fewer when the run is short)
AIM_READ_RATIO = 1.2


@dataclass(frozen=True)
class Plan:
    batches: int
    rows_per_batch: int
    runs: int
    flows: int                      # 1: the table's own query; more: that many flows into a table without one
    compaction: tuple[str, ...]     # the runs' [compaction] enabled settings: ("off", "on"), one of them, or ("",)

    @property
    def rows(self) -> int:
        return self.batches * self.rows_per_batch

    @property
    def point(self) -> int:
        return self.rows // 2 + self.rows_per_batch // 3

    @property
    def edge(self) -> int:
        return min(EDGE, max(1, self.batches // 4))


def compaction_in_build() -> bool:
    """Whether this build knows `[compaction] enabled`: its conf/sluicegate.toml, the defaults the gateway loads,
    lists every key it takes."""
    from sluicegate.gateway.config import default_config_text

    section = tomllib.loads(default_config_text()).get("compaction")
    return isinstance(section, dict) and "enabled" in section


def write_config(path: Path, landing: Path, compaction: str) -> Path:
    """The bench's configuration file: the landing folder readable, the event log untrimmed, flows triggered back
    to back (a flow takes `[streams] trigger_interval`; the table's own query its '0 ms' property), and compaction
    off or on when the build has the setting (`compaction` "" leaves the section out)."""
    lines = ["[security]", f"allowed_paths = [{json.dumps(str(landing))}]", "",
             "[events]", "max_rows_per_table = 0", "",
             "[streams]", "trigger_interval = 0.001", "",
             # the reads time Spark reading the table: the exact result cache would answer the repeats from memory
             "[result_cache]", "enabled = false", ""]
    if compaction:
        lines += ["[compaction]", f"enabled = {'true' if compaction == 'on' else 'false'}", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def land_batches(landing: Path, plan: Plan) -> list[Path]:
    """One JSON file per micro-batch; file b holds ids b*rows .. (b+1)*rows-1 (names sort in batch order, and the
    file stream takes the oldest first), in `landing` or, with flows, in its folder b % flows. Returns the folders."""
    folders = [landing] if plan.flows == 1 else [landing / f"f{k}" for k in range(plan.flows)]
    for folder in folders:
        folder.mkdir(parents=True)
    rows = plan.rows_per_batch
    for b in range(plan.batches):
        land_text(folders[b % plan.flows], f"batch-{b:06d}.json",
                  "".join(f'{{"id":{i},"v":{i % 1000 / 10},"batch":{b}}}\n' for i in range(b * rows, (b + 1) * rows)))
    return folders


# -- the gateway ---------------------------------------------------------------------------------------------------


@dataclass
class Gateway:
    running: Any
    run: Callable[[str], list[Any]]

    def location(self, name: str) -> str:
        entry = self.running.service.catalog.get_table(DATABASE, name)
        assert entry is not None and entry.location, f"no table {name}"
        return str(entry.location)



REUSE_IDLE_SECONDS = 600.0


@contextmanager
def gateway(spark: Any, config_file: Path, warehouse: Path) -> Iterator[Gateway]:
    from pyhive import hive

    from sluicegate.gateway import app
    from sluicegate.gateway.config import load_config

    config = load_config(config_file, port=0, warehouse=warehouse)
    running = app.start(config, spark, host="127.0.0.1", port=0)
    connection: dict[str, Any] = {}

    def cursor() -> Any:
        """The bench's cursor, on a connection opened afresh when the last one sat idle for REUSE_IDLE_SECONDS: the
        feed leaves it unused for over an hour, and the gateway closes a session idle for `[sessions]
        idle_timeout` (an hour by default), as a BI tool's connection pool would find and replace it."""
        now = time.monotonic()
        if "cursor" not in connection or now - connection["used"] > REUSE_IDLE_SECONDS:
            if "connection" in connection:
                with contextlib.suppress(Exception):   # the gateway may have closed the session already
                    connection["connection"].close()
            connection["connection"] = hive.connect("127.0.0.1", running.port, username="bench")
            connection["cursor"] = connection["connection"].cursor()
        connection["used"] = now
        return connection["cursor"]

    try:
        def run(sql: str) -> list[Any]:
            current = cursor()
            current.execute(sql)
            result = current.fetchall() if current.description else []
            connection["used"] = time.monotonic()
            return result

        yield Gateway(running, run)
    finally:
        running.stop(grace=0)


# -- the stream ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Commit:
    app: str            # the txn's app id: the stream id of the table's query or of a flow
    batch: int          # its micro-batch
    version: int        # Delta version
    at: float           # commit timestamp, seconds


class CommitLog:
    """The commits carrying a stream's txn in a table's Delta log, in version order, read incrementally: each poll
    reads only the entries written since the last (an entry appears whole: delta-rs commits by an atomic put)."""

    def __init__(self, location: str) -> None:
        self.folder = Path(location) / "_delta_log"
        self.next_version = 0
        self.commits: list[Commit] = []

    def read(self) -> list[Commit]:
        while True:
            try:
                text = (self.folder / f"{self.next_version:020d}.json").read_text(encoding="utf-8")
            except FileNotFoundError:
                return self.commits
            actions = [json.loads(line) for line in text.splitlines() if line.strip()]
            txn = next((a["txn"] for a in actions if "txn" in a), None)
            info = next((a["commitInfo"] for a in actions if "commitInfo" in a), {})
            if txn is not None:
                self.commits.append(Commit(txn["appId"], int(txn["version"]), self.next_version,
                                           info.get("timestamp", 0) / 1000))
            self.next_version += 1


def wait_for_batches(gw: Gateway, log: CommitLog, batches: int, started: float, timeout: float,
                     phases: dict[int, dict[str, float]]) -> float:
    """Poll the Delta log until `batches` stream commits are in it; the seconds from `started` to then. It also
    keeps the table's stream's last progress (Spark's durationMs of the batch it last finished, by phase) in
    `phases`, which so holds a sample of the batches (the table's own query only: flows are not sampled)."""
    deadline = time.monotonic() + timeout
    reported = 0
    while True:
        done = len(log.read())
        if done >= batches:
            return time.perf_counter() - started
        if done >= reported + max(100, batches // 10):
            reported = done
            say(f"  {done:,} batches committed ({time.perf_counter() - started:.0f} s)")
        status = gw.running.service.streams.status(DATABASE, TABLE)
        progress = status.last_progress if status is not None else {}
        if isinstance(progress.get("batchId"), int) and progress.get("durationMs"):
            phases[progress["batchId"]] = {k: v / 1000 for k, v in progress["durationMs"].items()}
        if status is not None and status.entry.status in ("FAILED", "RETRYING"):
            raise RuntimeError(f"the stream is {status.entry.status}: {status.entry.last_error}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{batches} batches not committed within {timeout:.0f} s ({done} were)")
        time.sleep(0.5)


def check_commits(commits: list[Commit], plan: Plan) -> None:
    """`plan.batches` stream commits, from `plan.flows` streams, each stream's batches 0, 1, ... once and in order."""
    by_app: dict[str, list[int]] = {}
    for commit in commits:
        by_app.setdefault(commit.app, []).append(commit.batch)
    broken = {app: found for app, found in by_app.items() if found != list(range(len(found)))}
    if len(commits) != plan.batches or len(by_app) != plan.flows or broken:
        raise RuntimeError(f"{len(commits)} stream commits from {len(by_app)} streams (expected {plan.batches} from "
                           f"{plan.flows}); out of order or repeated: {broken}")


def batch_events(gw: Gateway) -> dict[tuple[str, int], tuple[float, float]]:
    """(stream id, batch id) -> (the sink's commit seconds, the micro-batch's duration in seconds), from the table's
    event log (a `flow_progress` event's origin names its stream as flow_id)."""
    rows = gw.run(
        f"SELECT get_json_object(origin, '$.flow_id'), "
        f"CAST(get_json_object(details, '$.flow_progress.batch_id') AS INT), "
        f"CAST(get_json_object(details, '$.flow_progress.commit_seconds') AS DOUBLE), "
        f"CAST(get_json_object(details, '$.flow_progress.duration_ms') AS DOUBLE) "
        f"FROM event_log(TABLE({TABLE})) WHERE event_type = 'flow_progress'")
    return {(app, int(b)): (float(c), float(d) / 1000) for app, b, c, d in rows
            if app is not None and b is not None and c is not None and d is not None}


def table_size(gw: Gateway, name: str) -> dict[str, int]:
    from sluicegate.storage.delta.tables import open_table

    location = gw.location(name)
    log = Path(location) / "_delta_log"
    files = [p for p in log.iterdir() if p.is_file()]
    return {"live_files": len(open_table(location).file_uris()),
            "parquet_files_on_disk": sum(1 for p in Path(location).rglob("*.parquet") if "_delta_log" not in p.parts),
            "log_bytes": sum(p.stat().st_size for p in files),
            "log_entries": sum(1 for p in files if p.suffix == ".json" and p.stem.isdigit()),
            "log_checkpoints": sum(1 for p in files if ".checkpoint" in p.name)}


def wait_settled(gw: Gateway, name: str, compacting: bool, timeout: float = 600.0) -> float | None:
    """With compaction on: seconds from the stream's stop until the compactor has nothing left to merge in the quiet
    table (no full size class, nothing its settling merges: `[compaction] settle` seconds of quiet, 60 by default,
    then the merge; a big file and a small one stay two files when merging them is not cheap), None when it still had
    within `timeout`. The reads then measure what a dashboard over a stopped stream's table pays."""
    if not compacting:
        return None
    from sluicegate.storage.delta.compaction import live_files, merge_candidates, settle_candidates
    from sluicegate.storage.delta.compaction_policy import CompactionPolicy
    from sluicegate.storage.delta.tables import open_table

    policy, location = CompactionPolicy(), gw.location(name)   # the bench runs the compactor at its defaults
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        files = live_files(open_table(location))
        if not merge_candidates(files, policy) and not settle_candidates(files, policy):
            say(f"  settled into {len(files)} file(s) {time.perf_counter() - started:.0f} s after the stop")
            return time.perf_counter() - started
        time.sleep(2.0)
    say(f"  not settled within {timeout:.0f} s: {table_size(gw, name)['live_files']} live files")
    return None


def check_exact(gw: Gateway, name: str, plan: Plan) -> None:
    """Every id once: the count, the distinct count, the ends and the sum."""
    found = tuple(gw.run(f"SELECT count(*), count(DISTINCT id), min(id), max(id), sum(id) FROM {name}")[0])
    wanted = (plan.rows, plan.rows, 0, plan.rows - 1, plan.rows * (plan.rows - 1) // 2)
    if found != wanted:
        raise RuntimeError(f"{name}: (count, distinct, min, max, sum) = {found}, expected {wanted}")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def phase_medians(phases: dict[int, dict[str, float]], commits: list[Commit]) -> dict[str, Any]:
    """Median seconds of each of Spark's phases over the sampled batches among `commits`, and how many were
    sampled."""
    sampled = [phases[c.batch] for c in commits if c.batch in phases]
    names = sorted({name for sample in sampled for name in sample})
    return {"sampled": len(sampled), **{name: median([s[name] for s in sampled if name in s]) for name in names}}


def commit_figures(plan: Plan, events: dict[tuple[str, int], tuple[float, float]], commits: list[Commit],
                   feed_s: float, phases: dict[int, dict[str, float]]) -> dict[str, Any]:
    """The first and the last `plan.edge` stream commits (in version order) against each other."""
    edge = plan.edge
    first, last = commits[:edge], commits[-edge:]
    before_last = commits[-edge - 1]

    def rate(span: list[Commit], start: float) -> float:
        seconds = span[-1].at - start
        return (len(span) - (1 if start == span[0].at else 0)) / seconds if seconds > 0 else float("nan")

    figures: dict[str, Any] = {
        "edge_batches": edge, "feed_s": feed_s, "batches_per_s": plan.batches / feed_s,
        "first_batches_per_s": rate(first, first[0].at), "last_batches_per_s": rate(last, before_last.at),
        "events": len(events), "stream_commits": len(commits), "streams": plan.flows,
        "first_phases_s": phase_medians(phases, first) if plan.flows == 1 else {},
        "last_phases_s": phase_medians(phases, last) if plan.flows == 1 else {}}
    # the commit's median in each tenth of the run, in version order: whether it grows does not hang on the first
    # window alone (a JVM warming up, or a machine slower for a while, makes the first 100 batches slow)
    tenth = max(1, len(commits) // 10)
    figures["commit_s_by_tenth"] = [
        median([events[c.app, c.batch][0] for c in commits[start:start + tenth] if (c.app, c.batch) in events])
        for start in range(0, tenth * 10, tenth) if commits[start:start + tenth]]
    for part, index in (("commit_s", 0), ("batch_s", 1)):
        early = [events[c.app, c.batch][index] for c in first if (c.app, c.batch) in events]
        late = [events[c.app, c.batch][index] for c in last if (c.app, c.batch) in events]
        figures[f"first_{part}"] = median(early)
        figures[f"last_{part}"] = median(late)
        figures[f"{part}_ratio"] = median(late) / median(early) if early and late else float("nan")
    return figures


def interleaved(run: Callable[[str], list[Any]], queries: dict[str, str], runs: int) -> dict[str, list[float]]:
    """Seconds of each query per run, taking turns (order turned round each run): a JVM keeps warming up, and the
    side measured later would win."""
    samples: dict[str, list[float]] = {name: [] for name in queries}
    names = list(queries)
    for r in range(runs):
        for name in (names if r % 2 == 0 else names[::-1]):
            started = time.perf_counter()
            run(queries[name])
            samples[name].append(time.perf_counter() - started)
    return samples


def read_figures(gw: Gateway, plan: Plan) -> dict[str, Any]:
    point_rows = {name: gw.run(QUERIES["point"].format(table=name, point=plan.point)) for name in (TABLE, COPY)}
    if not (len(point_rows[TABLE]) == 1 and point_rows[TABLE] == point_rows[COPY]):
        raise RuntimeError(f"the point query found {point_rows}")
    figures: dict[str, Any] = {}
    for query, text in QUERIES.items():
        sides = {name: text.format(table=name, point=plan.point) for name in (TABLE, COPY)}
        for sql in sides.values():           # warm-up: each side twice
            gw.run(sql)
            gw.run(sql)
        samples = interleaved(gw.run, sides, plan.runs)
        streaming, compacted = median(samples[TABLE]), median(samples[COPY])
        figures[query] = {"streaming_s": streaming, "compacted_s": compacted, "ratio": streaming / compacted,
                          "samples": samples}
        say(f"  {query}: streaming {streaming:.3f} s, compacted {compacted:.3f} s, {streaming / compacted:.2f}x")
    return figures


def one_run(spark: Any, work: Path, folders: list[Path], plan: Plan, compaction: str,
            timeout: float) -> dict[str, Any]:
    label = f"compaction {compaction}" if compaction else "this build (no compaction)"
    say(f"run: {label}, {plan.batches:,} batches of {plan.rows_per_batch} rows"
        + (f" by {plan.flows} flows" if plan.flows > 1 else ""))
    config = write_config(work / f"sluicegate-{compaction or 'build'}.toml", work / "landing", compaction)
    with gateway(spark, config, work / "warehouse") as gw:
        started = time.perf_counter()
        if plan.flows == 1:
            gw.run(CREATE_SQL.format(table=TABLE, source=folders[0], schema=SCHEMA))
        else:
            gw.run(FLOWS_SQL[0].format(table=TABLE))
            for k, folder in enumerate(folders):
                gw.run(FLOWS_SQL[1].format(flow=f"f{k}", table=TABLE, source=folder, schema=SCHEMA))
        location = gw.location(TABLE)
        log = CommitLog(location)
        phases: dict[int, dict[str, float]] = {}
        feed_s = wait_for_batches(gw, log, plan.batches, started, timeout, phases)
        size_at_end = table_size(gw, TABLE)
        if plan.flows == 1:
            gw.running.service.streams.stop(DATABASE, TABLE)
        for k in range(plan.flows if plan.flows > 1 else 0):
            gw.run(f"DROP FLOW f{k}")       # stops it; the rows it wrote stay
        say(f"  {plan.batches:,} batches in {feed_s:.1f} s ({plan.batches / feed_s:.2f} batches/s); "
            f"{size_at_end['live_files']:,} live files")
        commits = log.read()
        check_commits(commits, plan)
        check_exact(gw, TABLE, plan)
        commits_figures = commit_figures(plan, batch_events(gw), commits, feed_s, phases)
        settled_s = wait_settled(gw, TABLE, compaction == "on")
        size = table_size(gw, TABLE)        # after the stop: what a background compaction finished meanwhile
        gw.run(COPY_SQL.format(copy=COPY, table=TABLE))
        check_exact(gw, COPY, plan)
        copy_size = table_size(gw, COPY)
        say(f"  compacted copy: {copy_size['live_files']} file(s)")
        reads = read_figures(gw, plan)
        gw.run(f"DROP TABLE {COPY}")
        gw.run(f"DROP TABLE {TABLE}")
    return {"label": label, "compaction": compaction, "commits": commits_figures, "size_at_last_batch": size_at_end,
            "settled_s": settled_s, "size": size, "copy_size": copy_size, "reads": reads}


# -- the report ----------------------------------------------------------------------------------------------------


def _ratio(value: float, aim: float | None = None) -> str:
    verdict = "" if aim is None else (" (aim met)" if value <= aim else " (aim NOT met)")
    return f"{value:.2f}x{verdict}"


def report(plan: Plan, available: bool, results: list[dict[str, Any]]) -> str:
    head = ["figure", *[r["label"] for r in results]]
    rows: list[list[str]] = []

    def add(name: str, cells: Callable[[dict[str, Any]], str]) -> None:
        rows.append([name, *[cells(r) for r in results]])

    for query in QUERIES:
        add(f"{query}: streaming table / compacted copy",
            lambda r, q=query: f"{r['reads'][q]['streaming_s']:.3f} / {r['reads'][q]['compacted_s']:.3f} s = "
                               f"{_ratio(r['reads'][q]['ratio'], AIM_READ_RATIO)}")
    edge = plan.edge
    add(f"sink commit, median of first / last {edge} batches",
        lambda r: f"{r['commits']['first_commit_s'] * 1000:.0f} / {r['commits']['last_commit_s'] * 1000:.0f} ms = "
                  f"{_ratio(r['commits']['commit_s_ratio'])}")
    add("sink commit, median of each tenth of the run (ms)",
        lambda r: " ".join(f"{value * 1000:.0f}" for value in r["commits"].get("commit_s_by_tenth", [])))
    add(f"micro-batch, median of first / last {edge} batches",
        lambda r: f"{r['commits']['first_batch_s'] * 1000:.0f} / {r['commits']['last_batch_s'] * 1000:.0f} ms = "
                  f"{_ratio(r['commits']['batch_s_ratio'])}")
    add(f"Spark's phases, first / last {edge} (sampled medians, ms)",
        lambda r: ", ".join(f"{name} {r['commits']['first_phases_s'].get(name, float('nan')) * 1000:.0f} / "
                            f"{r['commits']['last_phases_s'].get(name, float('nan')) * 1000:.0f}"
                            for name in PHASES) if plan.flows == 1 else "not sampled (flows)")
    add("batches/s over the run (CREATE to last commit)",
        lambda r: f"{r['commits']['batches_per_s']:.2f} ({r['commits']['feed_s']:.0f} s)")
    add(f"batches/s over the first / last {edge}",
        lambda r: f"{r['commits']['first_batches_per_s']:.2f} / {r['commits']['last_batches_per_s']:.2f}")
    add("live files at the last batch / at the reads",
        lambda r: f"{r['size_at_last_batch']['live_files']:,} / {r['size']['live_files']:,}")
    add("settled (nothing left to merge), after the stop",
        lambda r: "not waited (compaction off)" if r["compaction"] != "on" else
        (f"{r['settled_s']:.0f} s" if r.get("settled_s") is not None else "NOT within the timeout"))
    add("Parquet files on disk", lambda r: f"{r['size']['parquet_files_on_disk']:,}")
    add("_delta_log: bytes, entries, checkpoints",
        lambda r: f"{r['size']['log_bytes']:,} B, {r['size']['log_entries']:,}, {r['size']['log_checkpoints']}")
    add("compacted copy: live files", lambda r: f"{r['copy_size']['live_files']}")
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]

    def render(row: list[str]) -> str:
        return "| " + " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) + " |"

    lines = [f"{plan.batches:,} micro-batches of {plan.rows_per_batch} rows ({plan.rows:,} rows)"
             + (f" by {plan.flows} flows" if plan.flows > 1 else "") + f", reads median of {plan.runs}",
             render(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(render, rows)]
    by = {r["compaction"]: r for r in results}
    if not available:
        lines.append("compaction: not available in this build (no [compaction] enabled in conf/sluicegate.toml)")
    elif "on" in by and "off" in by:
        on, off = by["on"]["commits"], by["off"]["commits"]
        lines.append(f"compaction's cost to the stream: batches/s on / off = "
                     f"{on['batches_per_s'] / off['batches_per_s']:.2f}x; sink commit (last {edge}) on / off = "
                     f"{on['last_commit_s'] / off['last_commit_s']:.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=10_000, help="micro-batches (Delta commits) to write")
    parser.add_argument("--rows-per-batch", type=int, default=100)
    parser.add_argument("--flows", type=int, default=1,
                        help="write through this many flows into one table (each its own stream, commits side by "
                             "side): the same number of micro-batches and commits, sooner on more cores")
    parser.add_argument("--runs", type=int, default=21,
                        help="timed runs of each read on each table (median; at 0.1-0.2 s a read, a median of 5 "
                             "moves by more than the 1.2x aim from one run to the next)")
    parser.add_argument("--compaction", choices=("off", "on", "both"), default="both",
                        help="with [compaction] in the build: run with it off, on, or both (default)")
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="seconds the feed may take")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (landing, warehouses) for a look")
    args = parser.parse_args(argv)
    if args.batches < 2 or args.rows_per_batch < 1 or args.runs < 1 or not 1 <= args.flows <= args.batches // 2:
        parser.error("--batches must be at least 2, --rows-per-batch and --runs at least 1, --flows from 1 to half "
                     "the batches")
    available = compaction_in_build()
    settings = (("off", "on") if args.compaction == "both" else (args.compaction,)) if available else ("",)
    plan = Plan(args.batches, args.rows_per_batch, args.runs, args.flows, settings)

    from sluicegate.engine.spark import create_spark_session, warm_up
    from sluicegate.gateway.config import load_config

    machine = machine_info(java_home())
    load_before = load_average()
    say(f"machine: {machine['nproc']} CPUs ({machine['cpu_model']}), {machine['memory_gib']} GiB; "
        f"Python {machine['python']}, {machine['java']}, pyspark {machine['pyspark']}; load {load_before}")
    say(f"plan: {plan}; compaction {'available' if available else 'not available in this build'}")
    work = Path(tempfile.mkdtemp(prefix="sg_compaction_bench_"))
    started = time.perf_counter()
    results = []
    try:
        folders = land_batches(work / "landing", plan)
        say(f"landed {plan.batches:,} files in {time.perf_counter() - started:.1f} s")
        spark = create_spark_session(load_config(warehouse=work / "warehouse").spark)
        warm_up(spark)
        try:
            for compaction in settings:
                results.append(one_run(spark, work, folders, plan, compaction, args.timeout))
        finally:
            spark.stop()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    load_after = load_average()
    name = f"compaction_bench-{plan.batches}" + (f"-flows{plan.flows}" if plan.flows > 1 else "")
    finish_run(name, report(plan, available, results), machine, load_before, load_after, started,
               {"plan": asdict(plan), "compaction_available": available, "results": results,
                "queries": QUERIES, "create": CREATE_SQL if plan.flows == 1 else FLOWS_SQL, "copy": COPY_SQL})
    return 0


if __name__ == "__main__":
    sys.exit(main())
