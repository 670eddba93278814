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
(b) table size  A table that already holds N rows (--prefill direct, the default for SCD type 1 flows: written with
                delta-rs in 32 MiB files sorted by key, the gateway's state too, in seconds even for 20M rows;
                --prefill stream: a first micro-batch of N inserts through each side's own path), then
                1 + --size-batches batches of --size-batch-events events over the most recent keys (updates of the
                table's last keys, inserts of new ones, a few deletes; 10% late): the median batch time of the last
                --size-batches (the first also waited for its file), for each N in --sizes. With --prefill direct
                the check reads the touched keys' rows exactly and the totals of the keys below them.
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
from typing import TYPE_CHECKING, Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent / "tests"))

from cdc_reference import EVENT_SCHEMA, scd1_reference, scd2_reference
from gateway_bench import finish_run, java_home, load_average, machine_info, say
from streaming_bench import DATABASE, Bench, delta_rows, figure_table, land_text, ratio

if TYPE_CHECKING:
    import pyarrow as pa

LATE_SHARE = 0.10        # events that arrive late
PREFILL_FILE_BYTES = 32 << 20   # (b) --prefill direct: the pre-filled tables' files, each a range of keys
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
    prefill: str = "direct"


# -- the events -------------------------------------------------------------------------------------------------


@dataclass
class History:
    """Change events of a source table, generated in sequence order, and per id the event of the highest sequence so
    far (the Python reference: the table holds the id's row when that event is not a delete)."""

    rng: random.Random
    next_seq: int = 0
    latest: dict[int, tuple[str, Row]] = field(default_factory=dict)
    prefilled: int = 0   # keys 0 .. prefilled - 1 hold their `prefill_rows` row (not kept in `latest`)

    def event(self, key: int) -> dict[str, Any]:
        seq = self.next_seq
        self.next_seq += 1
        known = self.latest[key][0] != "D" if key in self.latest else key < self.prefilled
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


def prefill_rows(size: int) -> pa.Table:
    """The rows of keys 0 .. size - 1 as inserted by their events of sequences 0 .. size - 1 (id = seq = k, name
    `n{k}-{k}`, amount a function of k), built in Arrow: 20M rows in seconds, where a Python event each took minutes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = np.arange(size, dtype=np.int64)
    text = pc.cast(pa.array(ids), pa.string())
    return pa.table({"id": pa.array(ids.astype(np.int32)), "seq": pa.array(ids),
                     "name": pc.binary_join_element_wise("n", text, "-", text, ""),
                     "amount": pa.array(((ids * 7919 + 13) % 1_000_000).astype(np.int32))})


def prefill_totals(rows: pa.Table, below: int) -> tuple[int, int, int]:
    """count, sum(seq), sum(amount) of `rows`' keys below `below` (the pre-filled rows no change touches)."""
    import pyarrow.compute as pc

    kept = rows.slice(0, below)
    return kept.num_rows, pc.sum(kept.column("seq")).as_py() or 0, pc.sum(kept.column("amount")).as_py() or 0


def write_cut_by_key(location: str, rows: pa.Table) -> None:
    """Append `rows` (sorted by id) to the Delta table at `location` in files of PREFILL_FILE_BYTES, so each file
    holds a range of keys, cast to the table's schema."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    schema = pa.schema(DeltaTable(location).schema().to_arrow())
    write_deltalake(location, rows.select(schema.names).cast(schema), mode="append",
                    target_file_size=PREFILL_FILE_BYTES)


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

    def start(self, prefill: pa.Table | None = None) -> None:
        """Start the pipeline; `prefill` (`prefill_rows`): rows written into its table first, directly."""
        raise NotImplementedError

    def wait(self) -> None:
        raise NotImplementedError

    def location(self) -> str:
        raise NotImplementedError

    def rows(self) -> list[Row]:
        raise NotImplementedError

    def rows_from(self, low: int) -> list[Row]:
        """The live rows of keys from `low` on (id, seq, name, amount), sorted."""
        raise NotImplementedError

    def totals(self, below: int) -> tuple[int, int, int]:
        """count, sum(seq), sum(amount) of the live rows of keys below `below`."""
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

    def start(self, prefill: pa.Table | None = None) -> None:
        schema, bench, stored = EVENT_SCHEMA, self.bench, STORED[self.scd]
        if bench.plan.form == "table":
            assert prefill is None, "a direct pre-fill needs the flow form (its state's folder is known)"
            bench.sql(TABLE_SQL.format(name=self.name, source=self.folder, schema=schema, stored=stored))
            self.flow = None
            return
        bench.sql(f"CREATE STREAMING TABLE {self.name} ({SCD2_COLUMNS if self.scd == 2 else COLUMNS})")
        if prefill is not None:
            self.prefill(prefill)
        self.flow = f"{self.name}_flow"
        bench.sql(f"CREATE FLOW {self.flow} AS " + FLOW_SQL.format(name=self.name, source=self.folder, schema=schema,
                                                                   stored=stored))

    def prefill(self, rows: pa.Table) -> None:
        """SCD type 1 `rows` (the inserts of `prefill_rows`) into the table and into the state its AUTO CDC flows
        share, as the sink would have written them (each key's rank: sequence, not deleted, its kept values as
        Spark's to_json), both in files cut by key, before the flow starts."""
        import pyarrow as pa
        import pyarrow.compute as pc
        from deltalake import write_deltalake

        from sluicegate.engine.streams.cdc_flows import FLOWS_STATE
        from sluicegate.engine.streams.cdc_sink import (
            DELETE,
            DELETED_AT,
            FILE_SIZE_PROPERTY,
            SEQ,
            STATE_FILE_BYTES,
            TIE,
            state_location,
        )
        from sluicegate.storage.delta.retention import CDC_STATE_FOLDER

        write_cut_by_key(self.location(), rows)
        text = {name: pc.cast(rows.column(name), pa.string()) for name in ("id", "seq", "amount")}
        tie = pc.binary_join_element_wise('{"id":', text["id"], ',"seq":', text["seq"], ',"name":"',
                                          rows.column("name"), '","amount":', text["amount"], "}", "")
        state = pa.table({"id": rows.column("id"), SEQ: rows.column("seq"),
                          DELETE: pa.array([False] * rows.num_rows, pa.bool_()), TIE: tie,
                          DELETED_AT: pa.nulls(rows.num_rows, pa.int64())})
        write_deltalake(state_location(self.location(), FLOWS_STATE), state, name=CDC_STATE_FOLDER,
                        configuration={FILE_SIZE_PROPERTY: str(STATE_FILE_BYTES)}, target_file_size=STATE_FILE_BYTES)

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

    def rows_from(self, low: int) -> list[Row]:
        return sorted(tuple(r) for r in self.bench.sql(
            f"SELECT id, seq, name, amount FROM {self.name} WHERE id >= {low}"))

    def totals(self, below: int) -> tuple[int, int, int]:
        ((count, seqs, amounts),) = self.bench.sql(
            f"SELECT count(*), coalesce(sum(seq), 0), coalesce(sum(amount), 0) FROM {self.name} WHERE id < {below}")
        return int(count), int(seqs), int(amounts)

    def close(self) -> None:
        self.bench.streams.stop(DATABASE, self.name, flow=self.flow)
        self.bench.sql(f"DROP TABLE {self.name}")


class HandSide(Side):
    label = "hand-written foreachBatch MERGE"

    def start(self, prefill: pa.Table | None = None) -> None:
        import pyarrow as pa

        from sluicegate.storage.delta.write import commit_files

        self.output = self.bench.work / "hand" / self.name
        self.checkpoint = self.bench.work / "hand" / f"{self.name}_checkpoint"
        self.output.mkdir(parents=True)
        schema = pa.schema([("id", pa.int32()), ("seq", pa.int64()), ("name", pa.string()), ("amount", pa.int32()),
                            ("deleted", pa.bool_())])
        commit_files(str(self.output), [], schema, "append", create=True)
        if prefill is not None:
            write_cut_by_key(str(self.output), prefill.append_column(
                "deleted", pa.array([False] * prefill.num_rows, pa.bool_())))
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
        return sorted(tuple(r) for r in self._live().select("id", "seq", "name", "amount").collect())

    def _live(self) -> Any:
        return delta_rows(self.bench.spark, str(self.output)).where("NOT deleted")

    def rows_from(self, low: int) -> list[Row]:
        return sorted(tuple(r) for r in self._live().where(f"id >= {low}").select("id", "seq", "name", "amount")
                      .collect())

    def totals(self, below: int) -> tuple[int, int, int]:
        (row,) = self._live().where(f"id < {below}").selectExpr(
            "count(*)", "coalesce(sum(seq), 0)", "coalesce(sum(amount), 0)").collect()
        return int(row[0]), int(row[1]), int(row[2])

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
    """Each side: a table of `size` rows (keys 0 .. size - 1), then batches over the most recent keys (half updates
    of the table's last keys, half new keys, a few deletes, 10% late); the median batch time after the first of them.
    The table is pre-filled directly (`--prefill direct`, SCD type 1 flows: its rows, and the gateway's state,
    written with delta-rs in files cut by key) or by a first micro-batch of `size` inserts through each side's
    own path (`--prefill stream`)."""
    plan = bench.plan
    rng = random.Random(size)
    direct = plan.prefill == "direct" and plan.scd == 1 and plan.form == "flow"
    recent, files = plan.size_batch_events, plan.size_batches + 1
    low = size - recent // 2   # the lowest key a change touches
    say(f"(b) generating {size:,} rows ({'direct' if direct else 'inserts'}) and {plan.size_batches + 1} batches "
        f"of {plan.size_batch_events:,} events")
    table = prefill_rows(size) if direct else None
    history = History(rng, next_seq=size, prefilled=size) if direct else History(rng)
    prefill = [] if direct else [history.event(k) for k in range(size)]
    changes = []
    for batch in range(files):
        start = low + batch * recent // 2
        changes += [history.event(start + rng.randrange(recent)) for _ in range(recent)]
    parts = late_files(changes, files, rng)
    if plan.scd == 2:
        expected = scd2_expected(prefill + changes)
    elif table is not None:   # the rows from `low` on exactly; below it, the pre-filled rows' totals
        latest = history.latest
        columns = [c.to_pylist() for c in table.slice(low).columns]   # ids in order: keys from `low` on
        merged = {row[0]: row for row in zip(*columns, strict=True)}
        merged.update((k, row) for k, (_, row) in latest.items())
        expected = sorted(row for k, row in merged.items() if k not in latest or latest[k][0] != "D")
        totals = prefill_totals(table, low)
    else:
        expected = history.expected()
    result: dict[str, Any] = {"table_rows": size, "prefill": "direct" if direct else "stream"}
    for key in bench.sides:
        kind = SIDES[key]
        folder = bench.work / f"size_{size}_{key}"
        folder.mkdir(parents=True, exist_ok=True)
        if not direct:
            land_events(folder, [prefill])
        side = kind(bench, f"{key}_size_{size}", folder)
        started = time.perf_counter()
        side.start(table)
        side.wait()
        prefill_s = time.perf_counter() - started
        prefilled = time.time()
        land_events(folder, parts, first=1)
        side.wait()
        try:
            commits = side.commit_times()
            if table is not None:
                check(side.rows_from(low), expected, f"{side.label}, table of {size:,}, keys from {low:,}")
                found = side.totals(low)
                if found != totals:
                    raise RuntimeError(f"{side.label}, table of {size:,}: keys below {low:,} total {found}, "
                                       f"expected {totals} (count, sum(seq), sum(amount))")
            else:
                check(side.rows(), expected, f"{side.label}, table of {size:,}")
        finally:
            side.close()
            shutil.rmtree(folder, ignore_errors=True)
        if len(commits) != files + 1:   # the pre-fill's commit (or micro-batch), then one per file
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
    parser.add_argument("--prefill", choices=("direct", "stream"), default="direct",
                        help="(b) the table's rows written directly with delta-rs, files cut by key (SCD type 1 "
                             "flows; default), or a first micro-batch of inserts through each side's path")
    parser.add_argument("--form", choices=("flow", "table"), default="flow",
                        help="gateway: CREATE FLOW ... AS AUTO CDC INTO (default), or the table's own FLOW AUTO CDC")
    args = parser.parse_args(argv)
    s = args.scale
    sizes = (tuple(int(v) for v in args.sizes.split(",")) if args.sizes
             else (int(1_000_000 * s), int(20_000_000 * s)))
    plan = Plan(events=args.events or int(1_000_000 * s), keys=args.keys or int(100_000 * s), batches=args.batches,
                runs=args.runs, sizes=sizes, size_batches=max(3, args.size_batches),
                size_batch_events=args.size_batch_events, form=args.form, scd=args.scd,
                prefill=args.prefill)
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
