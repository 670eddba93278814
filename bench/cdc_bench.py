"""AUTO CDC (issue 29) through the gateway against a hand-written PySpark foreachBatch MERGE, in one process and run.

    .venv/bin/python bench/cdc_bench.py --scale 0.2     # 200,000 events over 20,000 keys; tables of 100k and 1M rows
    .venv/bin/python bench/cdc_bench.py                 # the issue's 1,000,000 events over 100,000 keys
    .venv/bin/python bench/cdc_bench.py --sizes 1000000,20000000   # (b) at the issue's table sizes (long)
    .venv/bin/python bench/cdc_bench.py --scd 2 ...      # the gateway's SCD type 2 alone (TRACK HISTORY ON * EXCEPT
                                                         # (seq): each upsert a version), checked the same way

A real gateway on 127.0.0.1 (port 0) over a fresh warehouse, driven with PyHive, and beside it, on the same Spark (a
new session of it: the same settings), the pipeline one writes by hand. Change events (id INT, op 'I' / 'U' / 'D',
seq BIGINT, name STRING, amount INT: tests/cdc_reference.py's schema) land as JSON files, one micro-batch each
(maxFilesPerTrigger 1, a 0 s trigger on both sides). Sequences are unique; 10% of the events arrive late, up to two
files after their place, so a later batch holds events older than what the table already has.

  gateway       CREATE STREAMING TABLE t (id INT, seq BIGINT, name STRING, amount INT);
                CREATE FLOW f AS AUTO CDC INTO t FROM STREAM read_files(...) KEYS (id) APPLY AS DELETE WHEN op = 'D'
                  SEQUENCE BY seq COLUMNS * EXCEPT (op, _rescued_data) STORED AS SCD TYPE 1
                (--form table: CREATE STREAMING TABLE t FLOW AUTO CDC ..., the table's own stream)
  hand-written  readStream.json -> foreachBatch: per id the event of the highest seq (max_by), to Arrow, one
                delta-rs MERGE on id into a Delta table with a `deleted` flag: a matched row is replaced only by a
                higher seq, a delete keeps its row as a tombstone (so a late older upsert cannot bring it back), the
                commit carries txn(query id, batch id) and a batch already in the log is skipped (exactly once).
                Readers filter `NOT deleted`; nothing drops old tombstones (the gateway keeps them apart, in its
                state table, and drops them after the threshold).

(a) throughput  --events events over --keys keys in --batches files; events/s = events / wall time from CREATE FLOW
                (writeStream.start) to everything processed; --runs runs of each side, taking turns, median counts.
                Batch time = the interval between the sink table's consecutive commits (one per micro-batch on both
                sides): its median over the first and the last tenth of the batches (does it grow as the table
                fills?).
(b) table size  A table that already holds N rows (a first micro-batch of N inserts, through each side's own path),
                then 1 + --size-batches batches of --size-batch-events events over the most recent keys (updates of
                the table's last keys, inserts of new ones, a few deletes; 10% late): the median batch time of the
                last --size-batches (the first also waited for its file), for each N in --sizes.
Every table is checked at its end against the reference computed in Python while generating the events, and (a)'s
also against tests/cdc_reference.py's batch SQL over the events' folder: both sides must hold exactly those rows.
Do not run it at full size while others use the machine. The table is printed; everything as JSON to bench/out/.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent / "tests"))

from cdc_reference import EVENT_SCHEMA, scd1_reference, scd2_reference
from gateway_bench import finish_run, java_home, load_average, machine_info, say
from streaming_bench import DATABASE, Bench, delta_rows, figure_table, land_text, ratio

LATE_SHARE = 0.10        # events that arrive late
LATE_FILES = 2           # ... by up to this many files
DELETE_SHARE = 0.05      # of the events of a live key

COLUMNS = "id INT, seq BIGINT, name STRING, amount INT"
SCD2_COLUMNS = COLUMNS + ", __START_AT BIGINT, __END_AT BIGINT"   # a table SCD type 2 flows write declares both
FLOW_SQL = ("AUTO CDC INTO {name} FROM STREAM read_files('{source}', format => 'json', schema => '{schema}', "
            "maxFilesPerTrigger => 1) KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq "
            "COLUMNS * EXCEPT (op, _rescued_data) STORED AS {stored}")
TABLE_SQL = ("CREATE STREAMING TABLE {name} TBLPROPERTIES ('pipelines.trigger.interval' = '0 seconds') "
             "FLOW AUTO CDC FROM STREAM read_files('{source}', format => 'json', schema => '{schema}', "
             "maxFilesPerTrigger => 1) KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq "
             "COLUMNS * EXCEPT (op, _rescued_data) STORED AS {stored}")
STORED = {1: "SCD TYPE 1", 2: "SCD TYPE 2 TRACK HISTORY ON * EXCEPT (seq)"}
Row = tuple[Any, ...]      # id, seq, name, amount (SCD type 2: and __START_AT, __END_AT)


@dataclass(frozen=True)
class Plan:
    events: int
    keys: int
    batches: int
    runs: int
    sizes: tuple[int, ...]
    size_batches: int
    size_batch_events: int
    form: str
    scd: int = 1


# -- the events -------------------------------------------------------------------------------------------------


@dataclass
class History:
    """Change events of a source table, generated in sequence order, and per id the event of the highest sequence so
    far (the Python reference: the table holds the id's row when that event is not a delete)."""

    rng: random.Random
    next_seq: int = 0
    latest: dict[int, tuple[str, Row]] = field(default_factory=dict)

    def event(self, key: int) -> dict[str, Any]:
        seq = self.next_seq
        self.next_seq += 1
        known = key in self.latest and self.latest[key][0] != "D"
        op = ("D" if self.rng.random() < DELETE_SHARE else "U") if known else "I"
        row: Row = (key, seq, f"n{key}-{seq}", self.rng.randrange(1_000_000))
        self.latest[key] = (op, row)
        return {"id": key, "op": op, "seq": seq, "name": None if op == "D" else row[2],
                "amount": None if op == "D" else row[3]}

    def expected(self) -> list[Row]:
        return sorted(row for op, row in self.latest.values() if op != "D")


def scd2_expected(events: list[dict[str, Any]]) -> list[Row]:
    """The SCD type 2 table of `events` (sequences unique; each upsert's name is new, so each upsert is a version):
    per id, every upsert a version from its sequence to the id's next event's (NULL for the last)."""
    by_id: dict[int, list[dict[str, Any]]] = {}
    for event in events:
        by_id.setdefault(event["id"], []).append(event)
    rows: list[Row] = []
    for key, mine in by_id.items():
        mine.sort(key=lambda e: e["seq"])
        for event, after in zip(mine, [*mine[1:], None], strict=True):
            if event["op"] != "D":
                rows.append((key, event["seq"], event["name"], event["amount"], event["seq"],
                             None if after is None else after["seq"]))
    return sorted(rows, key=repr)


def late_files(events: list[dict[str, Any]], files: int, rng: random.Random) -> list[list[dict[str, Any]]]:
    """`events` (in sequence order) cut into `files` equal parts, LATE_SHARE of them each moved up to LATE_FILES
    files later (into the last file at most), appended there: that batch holds them after newer events of theirs."""
    size = -(-len(events) // files)
    parts: list[list[dict[str, Any]]] = [[] for _ in range(files)]
    for index, event in enumerate(events):
        place = index // size
        if rng.random() < LATE_SHARE:
            place = min(files - 1, place + rng.randint(1, LATE_FILES))
        parts[place].append(event)
    return parts


def land_events(folder: Path, parts: list[list[dict[str, Any]]], first: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for index, part in enumerate(parts, start=first):
        land_text(folder, f"events-{index:05d}.json", "".join(json.dumps(e, separators=(",", ":")) + "\n"
                                                           for e in part))


# -- the two sides ----------------------------------------------------------------------------------------------


class HandMerge:
    """The foreachBatch one writes by hand: per id the event of the highest seq in the batch, one delta-rs MERGE
    on id where a higher seq wins, deletes kept as tombstone rows (`deleted`), txn(app id, batch id) on the commit."""

    def __init__(self, location: str) -> None:
        from sluicegate.storage.delta.kept import KeptTable

        self.location = location
        self.app_id = uuid.uuid4().hex
        self.kept = KeptTable(location)

    def __call__(self, batch: Any, batch_id: int) -> None:
        from pyspark.sql import functions as F

        from sluicegate.engine.streams.sink import batch_done
        from sluicegate.storage.delta.commit import commit_properties
        from sluicegate.storage.delta.write import AppTransaction

        if batch_done(self.kept, self.app_id, batch_id):
            return
        latest = batch.groupBy("id").agg(F.max_by(F.struct("seq", "op", "name", "amount"), "seq").alias("e"))
        rows = latest.select("id", "e.seq", "e.name", "e.amount", (F.col("e.op") == "D").alias("deleted")).toArrow()
        table = self.kept.existing()
        (table.merge(rows, "t.id = s.id", source_alias="s", target_alias="t", streamed_exec=False,
                     commit_properties=commit_properties("STREAMING UPDATE", {"epochId": str(batch_id)},
                                                         AppTransaction(self.app_id, batch_id)))
         .when_matched_update_all(predicate="s.seq > t.seq").when_not_matched_insert_all().execute())


class Side:
    """One pipeline over a folder of event files: start it, wait until it processed what is there, its rows."""

    label = ""

    def __init__(self, bench: Bench, name: str, folder: Path) -> None:
        self.bench, self.name, self.folder = bench, name, folder

    def start(self) -> None:
        raise NotImplementedError

    def wait(self) -> None:
        raise NotImplementedError

    def location(self) -> str:
        raise NotImplementedError

    def rows(self) -> list[Row]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def commit_times(self) -> list[float]:
        """The sink table's commits' times in seconds, in version order (version 0, its creation, left out)."""
        from deltalake import DeltaTable

        history = sorted(DeltaTable(self.location()).history(), key=lambda c: c["version"])
        return [c["timestamp"] / 1000 for c in history if c["version"] > 0]


class GatewaySide(Side):
    label = "sluicegate AUTO CDC (SCD 1)"

    def __init__(self, bench: Bench, name: str, folder: Path) -> None:
        super().__init__(bench, name, folder)
        self.scd = bench.plan.scd
        self.label = side_label("gateway", self.scd)

    def start(self) -> None:
        schema, bench, stored = EVENT_SCHEMA, self.bench, STORED[self.scd]
        if bench.plan.form == "table":
            bench.sql(TABLE_SQL.format(name=self.name, source=self.folder, schema=schema, stored=stored))
            self.flow = None
            return
        bench.sql(f"CREATE STREAMING TABLE {self.name} ({SCD2_COLUMNS if self.scd == 2 else COLUMNS})")
        self.flow = f"{self.name}_flow"
        bench.sql(f"CREATE FLOW {self.flow} AS " + FLOW_SQL.format(name=self.name, source=self.folder, schema=schema,
                                                                   stored=stored))

    def wait(self) -> None:
        self.bench.streams.wait_for(DATABASE, self.name, flow=self.flow)
        status = self.bench.streams.status(DATABASE, self.name)
        if status is not None and status.entry.last_error:
            raise RuntimeError(f"{self.name} failed: {status.entry.last_error}")

    def location(self) -> str:
        return self.bench.location(self.name)

    def rows(self) -> list[Row]:
        if self.scd == 2:
            return sorted((tuple(r) for r in self.bench.sql(
                f"SELECT id, seq, name, amount, __START_AT, __END_AT FROM {self.name}")), key=repr)
        return sorted(tuple(r) for r in self.bench.sql(f"SELECT id, seq, name, amount FROM {self.name}"))

    def close(self) -> None:
        self.bench.streams.stop(DATABASE, self.name, flow=self.flow)
        self.bench.sql(f"DROP TABLE {self.name}")


class HandSide(Side):
    label = "hand-written foreachBatch MERGE"

    def start(self) -> None:
        import pyarrow as pa

        from sluicegate.storage.delta.write import commit_files

        self.output = self.bench.work / "hand" / self.name
        self.checkpoint = self.bench.work / "hand" / f"{self.name}_checkpoint"
        self.output.mkdir(parents=True)
        schema = pa.schema([("id", pa.int32()), ("seq", pa.int64()), ("name", pa.string()), ("amount", pa.int32()),
                            ("deleted", pa.bool_())])
        commit_files(str(self.output), [], schema, "append", create=True)
        session = self.bench.spark.newSession()
        events = (session.readStream.format("json").schema(EVENT_SCHEMA).option("maxFilesPerTrigger", 1)
                  .load(str(self.folder)))
        self.query = (events.writeStream.foreachBatch(HandMerge(str(self.output)))
                      .option("checkpointLocation", str(self.checkpoint)).queryName(self.name)
                      .trigger(processingTime="0 seconds").start())

    def wait(self) -> None:
        self.query.processAllAvailable()

    def location(self) -> str:
        return str(self.output)

    def rows(self) -> list[Row]:
        frame = delta_rows(self.bench.spark, str(self.output)).where("NOT deleted")
        return sorted(tuple(r) for r in frame.select("id", "seq", "name", "amount").collect())

    def close(self) -> None:
        self.query.stop()
        shutil.rmtree(self.output, ignore_errors=True)
        shutil.rmtree(self.checkpoint, ignore_errors=True)


SIDES: dict[str, type[Side]] = {"gateway": GatewaySide, "hand": HandSide}


def side_label(key: str, scd: int) -> str:
    return "sluicegate AUTO CDC (SCD 2)" if key == "gateway" and scd == 2 else SIDES[key].label


def intervals(times: list[float], since: float) -> list[float]:
    """Each commit's distance from the one before (the first's from `since`)."""
    return [b - a for a, b in zip([since, *times[:-1]], times, strict=True)]


def tenth_medians(batch_s: list[float]) -> tuple[float, float]:
    tenth = max(1, len(batch_s) // 10)
    return statistics.median(batch_s[:tenth]), statistics.median(batch_s[-tenth:])


def check(found: list[Row], expected: list[Row], what: str) -> None:
    if found != expected:
        missing, extra = set(expected) - set(found), set(found) - set(expected)
        raise RuntimeError(f"{what}: {len(found):,} rows, expected {len(expected):,}; {len(missing)} missing "
                           f"(e.g. {sorted(missing)[:2]}), {len(extra)} unexpected (e.g. {sorted(extra)[:2]})")


# -- (a) throughput ---------------------------------------------------------------------------------------------


def bench_throughput(bench: Bench) -> dict[str, Any]:
    plan = bench.plan
    rng = random.Random(29)
    history = History(rng)
    say(f"(a) generating {plan.events:,} events over {plan.keys:,} keys in {plan.batches} files")
    events = [history.event(rng.randrange(plan.keys)) for _ in range(plan.events)]
    folder = bench.work / "events"
    land_events(folder, late_files(events, plan.batches, rng))
    if plan.scd == 2:
        expected = scd2_expected(events)
        reference = scd2_reference(bench.cursor, folder, tracked=("name", "amount"))
        check(sorted((tuple(r) for r in reference), key=repr), expected,
              "tests/cdc_reference.py's SQL against the Python reference")
    else:
        expected = history.expected()
        reference = [tuple(r) for r in scd1_reference(bench.cursor, folder)]
        check(sorted(reference), expected, "tests/cdc_reference.py's SQL against the Python reference")
    warm = bench.work / "warm"
    warming_events = History(random.Random(1))
    land_events(warm, late_files([warming_events.event(rng.randrange(100)) for _ in range(1000)], 2, rng))
    chosen = {key: SIDES[key] for key in bench.sides}
    for key, side in chosen.items():
        warming = side(bench, f"{key}_warm", warm)
        say(f"(a) warm-up: {warming.label}")
        warming.start()
        warming.wait()
        warming.close()
    results: dict[str, Any] = {key: {"label": side_label(key, plan.scd), "runs": []} for key in chosen}
    for index in range(plan.runs):
        order = list(chosen) if index % 2 == 0 else list(reversed(chosen))   # turns: neither always goes first
        for key in order:
            side = chosen[key](bench, f"{key}_{index}", folder)
            started_at = time.time()
            started = time.perf_counter()
            side.start()
            side.wait()
            seconds = time.perf_counter() - started
            try:
                commits = side.commit_times()
                check(side.rows(), expected, side.label)
            finally:
                side.close()
            batch_s = intervals(commits, started_at)
            first, last = tenth_medians(batch_s)
            run = {"seconds": seconds, "events_per_s": plan.events / seconds, "commits": len(commits),
                   "batch_s": batch_s, "first_tenth_s": first, "last_tenth_s": last}
            results[key]["runs"].append(run)
            say(f"(a) run {index + 1}/{plan.runs} {side.label}: {seconds:.1f} s, {run['events_per_s']:,.0f} "
                f"events/s, {len(commits)} commits, batch median first tenth {first:.2f} s, last {last:.2f} s")
    for entry in list(results.values()):
        for figure in ("events_per_s", "seconds", "first_tenth_s", "last_tenth_s"):
            entry[figure] = statistics.median(r[figure] for r in entry["runs"])
    results["rows"] = len(expected)
    return results


# -- (b) batch time against the table's size --------------------------------------------------------------------


def bench_size(bench: Bench, size: int) -> dict[str, Any]:
    """Each side: a first file of `size` inserts, then batches over the most recent keys (half updates of the
    table's last keys, half new keys, a few deletes, 10% late); the median batch time after the first of them."""
    plan = bench.plan
    rng = random.Random(size)
    history = History(rng)
    say(f"(b) generating {size:,} inserts and {plan.size_batches + 1} batches of {plan.size_batch_events:,} events")
    prefill = [history.event(k) for k in range(size)]
    recent, files = plan.size_batch_events, plan.size_batches + 1
    changes = []
    for batch in range(files):
        low = size - recent // 2 + batch * recent // 2
        changes += [history.event(low + rng.randrange(recent)) for _ in range(recent)]
    parts = late_files(changes, files, rng)
    expected = scd2_expected(prefill + changes) if plan.scd == 2 else history.expected()
    result: dict[str, Any] = {"table_rows": size}
    for key in bench.sides:
        kind = SIDES[key]
        folder = bench.work / f"size_{size}_{key}"
        land_events(folder, [prefill])
        side = kind(bench, f"{key}_size_{size}", folder)
        started = time.perf_counter()
        side.start()
        side.wait()
        prefill_s = time.perf_counter() - started
        prefilled = time.time()
        land_events(folder, parts, first=1)
        side.wait()
        try:
            commits = side.commit_times()
            check(side.rows(), expected, f"{side.label}, table of {size:,}")
        finally:
            side.close()
            shutil.rmtree(folder, ignore_errors=True)
        if len(commits) != files + 1:
            raise RuntimeError(f"{side.label}: {len(commits)} commits, expected {files + 1} (one per micro-batch)")
        batch_s = intervals(commits[1:], prefilled)[1:]   # the first after the pre-fill also waited for its file
        result[key] = {"label": side.label, "prefill_s": prefill_s, "batch_s": batch_s,
                       "batch_s_median": statistics.median(batch_s)}
        say(f"(b) {side.label}, table of {size:,} rows: pre-fill {prefill_s:.1f} s, median batch "
            f"{result[key]['batch_s_median']:.2f} s")
    return result


# -- the report -------------------------------------------------------------------------------------------------


def report(plan: Plan, results: dict[str, Any]) -> str:
    rows: list[list[str]] = []
    if "throughput" in results:
        found = results["throughput"]
        rows.append([f"**(a) {plan.events:,} events over {plan.keys:,} keys, {plan.batches} micro-batches, "
                     f"median of {plan.runs}**", "", ""])
        for key in (k for k in SIDES if k in found):
            entry = found[key]
            both = key == "gateway" and "hand" in found
            rows.append([entry["label"], f"{entry['events_per_s']:,.0f} events/s ({entry['seconds']:.1f} s)",
                         f"gateway / hand-written: {ratio(entry['events_per_s'], found['hand']['events_per_s'])}"
                         if both else ""])
            rows.append([f"{entry['label']}: batch time, first / last tenth",
                         f"{entry['first_tenth_s']:.2f} s / {entry['last_tenth_s']:.2f} s",
                         f"last / first: {ratio(entry['last_tenth_s'], entry['first_tenth_s'])}"])
    if "size" in results:
        rows.append([f"**(b) a micro-batch of {plan.size_batch_events:,} events over recent keys vs rows in the "
                     f"table (median of {plan.size_batches})**", "", ""])
        small = results["size"][str(plan.sizes[0])]
        for size in plan.sizes:
            entry = results["size"][str(size)]
            for key in (k for k in SIDES if k in entry):
                note = "" if size == plan.sizes[0] else (
                    f"{size / plan.sizes[0]:g}x the rows: "
                    f"{ratio(entry[key]['batch_s_median'], small[key]['batch_s_median'])} the batch time")
                rows.append([f"{entry[key]['label']}, table of {size:,}", f"{entry[key]['batch_s_median']:.2f} s",
                             note])
    return figure_table(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="shrinks --events, --keys and --sizes' defaults")
    parser.add_argument("--events", type=int, help="(a) events (default 1,000,000 x scale)")
    parser.add_argument("--keys", type=int, help="(a) keys (default 100,000 x scale)")
    parser.add_argument("--batches", type=int, default=20, help="(a) files, one micro-batch each")
    parser.add_argument("--runs", type=int, default=1, help="(a) runs of each side, taking turns; the median counts")
    parser.add_argument("--sizes", help="(b) rows already in the table, comma-separated (default 1M,20M x scale; "
                                        "the issue's: 1000000,20000000)")
    parser.add_argument("--size-batches", type=int, default=6, help="(b) batches after the pre-fill")
    parser.add_argument("--size-batch-events", type=int, default=10_000)
    parser.add_argument("--only", choices=("throughput", "size"), action="append")
    parser.add_argument("--sides", default=",".join(SIDES),
                        help="(a) the sides to run, comma-separated (one alone: to profile it)")
    parser.add_argument("--scd", type=int, choices=(1, 2), default=1,
                        help="the gateway's SCD type; 2: the gateway alone (no hand-written SCD type 2 here)")
    parser.add_argument("--form", choices=("flow", "table"), default="flow",
                        help="gateway: CREATE FLOW ... AS AUTO CDC INTO (default), or the table's own FLOW AUTO CDC")
    args = parser.parse_args(argv)
    s = args.scale
    sizes = (tuple(int(v) for v in args.sizes.split(",")) if args.sizes
             else (int(1_000_000 * s), int(20_000_000 * s)))
    plan = Plan(events=args.events or int(1_000_000 * s), keys=args.keys or int(100_000 * s), batches=args.batches,
                runs=args.runs, sizes=sizes, size_batches=max(3, args.size_batches),
                size_batch_events=args.size_batch_events, form=args.form, scd=args.scd)
    parts = tuple(args.only or ("throughput", "size"))
    sides = tuple(v.strip() for v in args.sides.split(",") if v.strip())
    if not sides or set(sides) - set(SIDES):
        parser.error(f"--sides takes {', '.join(SIDES)}")
    if args.scd == 2:
        sides = ("gateway",)

    machine = machine_info(java_home())
    load_before = load_average()
    say(f"machine: {machine['nproc']} CPUs, {machine['memory_gib']} GiB; load {load_before}; plan: {plan}")
    work = Path(tempfile.mkdtemp(prefix="sg_cdc_bench_"))
    started = time.perf_counter()
    results: dict[str, Any] = {}
    bench = Bench(work, plan, streams={"trigger_interval": 0.0})
    bench.sides = sides
    try:
        if "throughput" in parts:
            results["throughput"] = bench_throughput(bench)
        if "size" in parts:
            results["size"] = {str(size): bench_size(bench, size) for size in plan.sizes}
    finally:
        bench.close()
        shutil.rmtree(work, ignore_errors=True)
    name = f"cdc_bench{'' if args.scd == 1 else '-scd2'}{'' if s == 1 else f'-scale{s:g}'}"
    finish_run(name, report(plan, results), machine, load_before,
               load_average(), started, {"plan": asdict(plan), "parts": parts, "results": results,
                                         "queries": {"flow": FLOW_SQL, "table": TABLE_SQL}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
