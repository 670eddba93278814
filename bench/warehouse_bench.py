"""sluicegate's Delta warehouse path against Spark's own Parquet tables, in one process and one run.

    .venv/bin/python bench/warehouse_bench.py              # 1,000,000-row load, 10,000,000-row scan+aggregate
    .venv/bin/python bench/warehouse_bench.py --scale 0.1  # a tenth of both, to try it out

sluicegate: a real gateway on 127.0.0.1 (port 0) over a fresh warehouse, driven with PyHive:
  load   INSERT INTO t SELECT ... FROM range(N)   (Spark writes Parquet, delta-rs commits)
  scan   SELECT k, count(*), sum(v) FROM t GROUP BY k  over 10 x the load (snapshot-pinned read)
Spark: the same statements on Spark's own `USING parquet` tables, through the same gateway (the data paths compared
on equal terms) and directly in the gateway's Spark session (no gateway: what the gateway's per-statement cost adds).
Every side is warmed up first (a fresh Spark is 2-3x slower on its first pass), then the sides take turns run by
run; each figure is the median of --runs runs. Do not run it while others use the machine's two cores.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

LOAD = "SELECT id AS k, id % 1000 AS g, rand() AS v FROM range({rows})"
SCAN = "SELECT g, count(*), sum(v) FROM {table} GROUP BY g"


def seconds(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def interleaved(actions: dict[str, Callable[[], Any]], runs: int) -> dict[str, float]:
    """Median seconds of each action, the sides taking turns (and turning the order round each run): a JVM keeps
    getting faster for minutes, so running one side's repetitions after the other's favours the later side."""
    samples: dict[str, list[float]] = {name: [] for name in actions}
    names = list(actions)
    for run in range(runs):
        for name in (names if run % 2 == 0 else names[::-1]):
            samples[name].append(seconds(actions[name]))
    return {name: statistics.median(values) for name, values in samples.items()}


def rows_and_runs(description: str, default_runs: int) -> tuple[int, int, int]:
    """The command line of the load and scan+aggregate benchmarks (this one, object_storage_bench, cluster_bench):
    --scale and --runs; returns the rows of the load (1,000,000 x scale), of the scan (10 x the load), and the runs."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=default_runs,
                        help="timed runs per side and figure (median reported)")
    args = parser.parse_args()
    load_rows = int(1_000_000 * args.scale)
    return load_rows, 10 * load_rows, args.runs


def print_figures(figures: dict[str, tuple[float, float]], load_rows: int, scan_rows: int) -> None:
    """Each side's median seconds of the load and of the scan+aggregate, and its rows per second."""
    width = max(map(len, figures))
    print(f"{'':{width}} {'load ' + format(load_rows, ','):>22} {'scan+agg ' + format(scan_rows, ','):>26}")
    for side, (load, scan) in figures.items():
        print(f"{side:{width}} {load:>10.2f} s {load_rows / load:>10,.0f} r/s "
              f"{scan:>12.2f} s {scan_rows / scan:>10,.0f} r/s")


def main() -> None:
    load_rows, scan_rows, runs = rows_and_runs(__doc__.splitlines()[0], default_runs=7)

    from in_process import in_process_gateway

    with in_process_gateway("sg_bench_") as started:
        spark, gateway = started.spark, started.run

        def direct(sql: str) -> list[Any]:
            return spark.sql(sql).collect()

        sides = (("sluicegate Delta, via gateway", gateway, "DELTA", "bench_delta"),
                 ("Spark Parquet, via gateway", gateway, "parquet", "bench_parquet_gw"),
                 ("Spark Parquet, in-process", direct, "parquet", "bench_parquet"))
        for _, run, using, table in sides:
            run(f"DROP TABLE IF EXISTS {table}")
            run(f"CREATE TABLE {table} (k BIGINT, g BIGINT, v DOUBLE) USING {using}")
            for _ in range(3):                                          # warm-up
                run(f"INSERT INTO {table} {LOAD.format(rows=load_rows // 10)}")
                run(SCAN.format(table=table))

        def action(run: Callable[[str], Any], sql: str) -> Callable[[], Any]:
            return lambda: run(sql)

        loads = interleaved({side: action(run, f"INSERT INTO {table} {LOAD.format(rows=load_rows)}")
                             for side, run, _, table in sides}, runs)
        for _, run, _, table in sides:
            run(f"INSERT OVERWRITE {table} {LOAD.format(rows=scan_rows)}")
        scans = interleaved({side: action(run, SCAN.format(table=table)) for side, run, _, table in sides}, runs)
        figures = {side: (loads[side], scans[side]) for side, _, _, _ in sides}
        print_figures(figures, load_rows, scan_rows)
        delta_load, delta_scan = figures[sides[0][0]]
        for side, (load, scan) in list(figures.items())[1:]:
            print(f"Delta path / {side}: load {load / delta_load:.2f}x, scan+agg {scan / delta_scan:.2f}x "
                  "(>1: the Delta path is faster)")


if __name__ == "__main__":
    main()
