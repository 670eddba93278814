"""Data skipping (issue 25): a table of many small files, read through PyHive with skipping on, off, and over the same
rows compacted into one file.

    .venv/bin/python bench/skipping_bench.py               # 3,000 files in 1,500 commits of 2 x 100 rows
    .venv/bin/python bench/skipping_bench.py --commits 150  # a tenth, to try it out

The files come from the product's write path (Spark writes the Parquet files and their statistics are read from the
footers, storage/delta/write.py; delta-rs commits): all of them in one Spark job, then committed two by two in
increasing id order, as a stream's micro-batches would have. Queries, each the median of --runs runs, the sides
taking turns:
  point   SELECT * FROM t WHERE id = v          (a new v each run: a new file list, a new DataFrame to build)
  range   SELECT count(*), sum(v) FROM t WHERE id BETWEEN a AND a + 999
  count   SELECT count(*) FROM t                (nothing to skip: what the statistics cost when unused)
Then the parts of binding a point query, in the gateway's process: the snapshot (log replay), the add actions with
their statistics, the pruning, and the DataFrame over the files left.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

OFF = {"spark.sluicegate.dataSkipping.enabled": "false"}


def seconds(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def location_of(run: Callable[[str], list[Any]], table: str) -> str:
    rows = run(f"DESCRIBE TABLE EXTENDED {table}")
    return next(str(row[1]) for row in rows if row[0] == "Location").removeprefix("file:")


def write_many(spark: Any, location: str, commits: int, rows_per_file: int) -> int:
    """2 x `commits` files of `rows_per_file` rows, ids increasing, in `commits` commits; returns the file count."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from sluicegate.storage.delta.write import commit_files, write_files

    files = 2 * commits
    df = spark.range(0, files * rows_per_file, 1, files).selectExpr("id", "id * 0.5D AS v", "concat('s', id) AS s")
    written = sorted(write_files(df, location), key=lambda f: json.loads(f.stats)["minValues"]["id"])
    schema = to_arrow_schema(df.schema)
    for i in range(0, len(written), 2):
        commit_files(location, written[i:i + 2], schema, "append")
    return len(written)


def write_one(spark: Any, location: str, rows: int) -> None:
    from pyspark.sql.pandas.types import to_arrow_schema

    from sluicegate.storage.delta.write import commit_files, write_files

    df = spark.range(0, rows, 1, 1).selectExpr("id", "id * 0.5D AS v", "concat('s', id) AS s")
    commit_files(location, write_files(df, location), to_arrow_schema(df.schema), "append")


def binding_parts(spark: Any, location: str, point: int) -> dict[str, float]:
    """Seconds of each part of binding `WHERE id = point` over the table at `location` (fresh objects each time)."""
    from sluicegate.dialect.filters import Comparison, Value
    from sluicegate.storage.delta.read import snapshot_dataframe
    from sluicegate.storage.delta.skipping import prune
    from sluicegate.storage.delta.snapshots import load_snapshot

    parts: dict[str, float] = {}
    start = time.perf_counter()
    snapshot = load_snapshot(location)
    parts["load_snapshot (log replay, file list)"] = time.perf_counter() - start
    start = time.perf_counter()
    assert snapshot.add_actions is not None
    snapshot.add_actions()
    parts["add actions with statistics"] = time.perf_counter() - start
    start = time.perf_counter()
    pruned = prune(snapshot, [Comparison("id", "=", (Value(point, "integer"),))])
    parts["prune"] = time.perf_counter() - start
    start = time.perf_counter()
    snapshot_dataframe(spark, pruned.snapshot)
    parts[f"DataFrame over the {len(pruned.snapshot.files)} file(s) left"] = time.perf_counter() - start
    start = time.perf_counter()
    snapshot_dataframe(spark, snapshot)
    parts[f"DataFrame over all {len(snapshot.files)} files"] = time.perf_counter() - start
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1500)
    parser.add_argument("--rows-per-file", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per side and query (median reported)")
    args = parser.parse_args()

    from in_process import in_process_gateway
    from pyhive import hive

    with in_process_gateway("sg_skip_bench_") as started:
        spark, run = started.spark, started.run
        run("CREATE TABLE many (id BIGINT, v DOUBLE, s STRING) USING delta")
        run("CREATE TABLE one (id BIGINT, v DOUBLE, s STRING) USING delta")
        begin = time.perf_counter()
        files = write_many(spark, location_of(run, "many"), args.commits, args.rows_per_file)
        written = time.perf_counter() - begin
        rows = files * args.rows_per_file
        write_one(spark, location_of(run, "one"), rows)
        print(f"{files:,} files in {args.commits:,} commits ({rows:,} rows) written in {written:.1f} s")

        off_connection = hive.connect("127.0.0.1", started.port, username="bench", configuration=OFF)
        off = off_connection.cursor()

        def run_off(sql: str) -> list[Any]:
            off.execute(sql)
            return off.fetchall()

        sides = {"skipping on": (run, "many"), "skipping off": (run_off, "many"), "one file": (run, "one")}
        rng = random.Random(25)

        def ranged(table: str) -> str:
            low = rng.randrange(rows)
            return f"SELECT count(*), sum(v) FROM {table} WHERE id BETWEEN {low} AND {low + 999}"

        queries: dict[str, Callable[[str], str]] = {
            "point": lambda table: f"SELECT * FROM {table} WHERE id = {rng.randrange(rows)}",
            "range": ranged,
            "count": lambda table: f"SELECT count(*) FROM {table}",
        }
        for execute, table in sides.values():  # warm up every side and query
            for make in queries.values():
                execute(make(table))
        samples: dict[str, dict[str, list[float]]] = {q: {s: [] for s in sides} for q in queries}
        for i in range(args.runs):
            for query, make in queries.items():
                order = list(sides) if i % 2 == 0 else list(sides)[::-1]
                for side in order:
                    execute, table = sides[side]
                    sql = make(table)
                    samples[query][side].append(seconds(lambda execute=execute, sql=sql: execute(sql)))
        repeated = [seconds(lambda: run("SELECT * FROM many WHERE id = 12345")) for _ in range(args.runs + 1)][1:]
        # a new v each time, skipping on alone (not between the other sides' scans of 3,000 files)
        alone = [seconds(lambda: run(queries["point"]("many"))) for _ in range(args.runs)]
        explained = run("EXPLAIN SELECT * FROM many WHERE id = 12345")[0][0].split("\n\n")[0]
        parts = binding_parts(spark, location_of(run, "many"), rows // 2)
        off_connection.close()

    medians = {q: {s: statistics.median(v) for s, v in by_side.items()} for q, by_side in samples.items()}
    print(f"\nmedian of {args.runs} runs, seconds (execute + fetchall through PyHive)")
    print(f"{'query':8} {'skipping on':>12} {'skipping off':>13} {'one file':>10} {'off / on':>9}")
    for query, by_side in medians.items():
        print(f"{query:8} {by_side['skipping on']:>12.3f} {by_side['skipping off']:>13.3f} "
              f"{by_side['one file']:>10.3f} {by_side['skipping off'] / by_side['skipping on']:>8.1f}x")
    print(f"point query, skipping on, a new v each run, run alone: {statistics.median(alone):.3f} s")
    print(f"point query, the same v again (its DataFrame cached): {statistics.median(repeated):.3f} s")
    print(explained)
    print("\nbinding a point query, in process:")
    for part, value in parts.items():
        print(f"  {part:45} {value * 1000:>9.1f} ms")
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    (out / "skipping_bench.json").write_text(json.dumps(
        {"files": files, "commits": args.commits, "rows": rows, "write_seconds": written, "samples": samples,
         "repeated_point": repeated, "alone_point": alone, "binding_parts": parts, "load": os.getloadavg()}, indent=1))


if __name__ == "__main__":
    main()
