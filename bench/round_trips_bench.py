"""py4j round trips per statement (issue 28): how many calls the gateway makes into the JVM for one statement of each
kind, counted, not estimated, and each kind's latency alone.

    ./run bench bench/round_trips_bench.py [--reps 7]

One gateway in this process (bench/in_process.py) on a fresh warehouse with a small Delta table `rt.small`
(100 rows), and a PyHive client on it. py4j's client class is wrapped in a counter for the whole run
(`GatewayClient.send_command`, which every py4j call goes through, pinned-thread mode or not): each call made by a
thread of the gateway's statement path (the operation pool, the connections' threads) while one statement runs
(execute, then every row fetched) counts for that statement. Background threads (history writer, metrics, the JVM
watchdog, the compactor, streams) are counted apart, so their work does not blur the figure. Each kind runs --reps
times after a warm-up pass; prints the minimum and median of its round trips, and its latency p50 / max in ms, as a
Markdown table; writes the figures to bench/out/round_trips_bench.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from in_process import in_process_gateway
from round_trips import RoundTrips

# The statements measured: what a BI tool and a pipeline send most, one of each way through the gateway.
STATEMENTS: dict[str, str] = {
    "select1": "SELECT 1",                                            # a pool's validation query (literal)
    "select_expr": "SELECT 1 + 1",                                    # a projection Spark computes, no table
    "select_delta": "SELECT id, v FROM rt.small WHERE id < 10",       # a small Delta table, filtered
    "describe": "DESCRIBE rt.small",
    "show_tables": "SHOW TABLES IN rt",
    "insert": "INSERT INTO rt.small VALUES (1000, 1.5)",
}
def measure(run: Any, counter: RoundTrips, reps: int) -> dict[str, dict[str, Any]]:
    for sql in STATEMENTS.values():  # warm-up: Spark's first pass, the gateway's first look-ups
        run(sql)
    figures: dict[str, dict[str, Any]] = {}
    for kind, sql in STATEMENTS.items():
        trips: list[int] = []
        background: list[int] = []
        times: list[float] = []
        for _ in range(reps):
            counter.take()
            start = time.perf_counter()
            run(sql)
            times.append((time.perf_counter() - start) * 1000)
            statement_trips, background_trips = counter.take()
            trips.append(statement_trips)
            background.append(background_trips)
        figures[kind] = {"sql": sql, "round_trips": trips, "background": background, "ms": times}
    return figures


def table(figures: dict[str, dict[str, Any]]) -> str:
    lines = ["| kind | statement | round trips min / median | background calls | ms p50 / max |",
             "|---|---|---|---|---|"]
    for kind, f in figures.items():
        trips, ms = f["round_trips"], f["ms"]
        lines.append(f"| {kind} | `{f['sql']}` | {min(trips)} / {statistics.median(trips):g} | {sum(f['background'])}"
                     f" | {statistics.median(ms):.1f} / {max(ms):.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=7, help="runs of each statement (after one warm-up pass)")
    parser.add_argument("--tag", default="", help="a suffix for the JSON file's name (`-before`: another tree's run)")
    parser.add_argument("--trace", choices=list(STATEMENTS), help="also print where one run of this kind calls py4j")
    args = parser.parse_args()
    counter = RoundTrips()
    with counter.installed(), in_process_gateway("sg-round-trips-") as gw:
        gw.run("CREATE DATABASE rt")
        gw.run("CREATE TABLE rt.small (id BIGINT, v DOUBLE) USING delta")
        gw.run("INSERT INTO rt.small SELECT id, id * 0.5 FROM range(100)")
        figures = measure(gw.run, counter, args.reps)
        if args.trace:
            counter.take()
            counter.tracing = True
            gw.run(STATEMENTS[args.trace])
            counter.tracing = False
    print(table(figures))
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end")
    for site, calls in counter.sites.most_common():
        print(f"{calls:4d}  {site}")
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    (out / f"round_trips_bench{args.tag}.json").write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
