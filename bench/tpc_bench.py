"""No fixed cost above Spark's (issue 28 part 3): TPC-H and TPC-DS shaped queries on sluicegate and on Spark's own
Thrift server (HiveThriftServer2, the same pyspark jars and Spark settings), both up in one run, taking turns query
by query.

    ./run bench bench/tpc_bench.py                     # TPC-H scale 0.02, TPC-DS store_sales 100,000 rows, 5 runs
    ./run bench bench/tpc_bench.py --scale 0.05 --runs 7

Both servers are started (gateway_bench.py's start-up: sluicegate with its result cache OFF, so every run is
Spark's work; the Thrift server with local[4], the same driver memory, 2 shuffle partitions), and given the same
rows by the same CTAS (bench/tpc.py: Delta on sluicegate, Parquet on the Thrift server). Every query runs once on
each as a warm-up (a fresh Spark's first pass is 2-3x slower), and the two servers' rows must be equal. Then --runs
rounds: in each, every query runs on one server then the other, the order turned round every round (a JVM keeps
getting faster for minutes; so does the machine's load move), each timed through PyHive from execute to the last
row fetched. The two servers are up together but never run a query at the same time.

Printed: per query the median of each server, sluicegate's / the Thrift server's, and the sums of the medians;
against the aim: the Thrift server's sum / sluicegate's at least 1.1, no query's ratio above 1.2. Written as JSON
(raw samples too) to bench/out/tpc_bench-<time>.json. sluicegate's pid is printed, for py-spy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any

from gateway_bench import finish_run, load_average, machine_info, pyhive_connect, running, say, servers_env
from tpc import TPCDS_QUERIES, TPCH_QUERIES, make_tables, timed, tpcds_tables, tpch_tables

SERVERS = ("sluicegate", "sts")
QUERIES = {**TPCH_QUERIES, **TPCDS_QUERIES}
AIM_SUM, AIM_EACH = 1.1, 1.2


def load(cursor: Any, key: str, scale: float) -> float:
    using = "delta" if key == "sluicegate" else "parquet"
    return (make_tables(cursor, "tpch", tpch_tables(scale), using)
            + make_tables(cursor, "tpcds", tpcds_tables(scale), using))


def measure(cursors: dict[str, Any], queries: dict[str, str], runs: int) -> dict[str, dict[str, list[float]]]:
    """Per query and server, the seconds of each run; the servers take turns, the first of a round alternating."""
    samples: dict[str, dict[str, list[float]]] = {name: {key: [] for key in SERVERS} for name in queries}
    for run in range(runs):
        order = SERVERS if run % 2 == 0 else SERVERS[::-1]
        for name, sql in queries.items():
            for key in order:
                samples[name][key].append(timed(cursors[key], sql)[0])
        say(f"round {run + 1}/{runs} done; load {load_average()}")
    return samples


def report(samples: dict[str, dict[str, list[float]]]) -> tuple[str, dict[str, Any]]:
    lines = ["| query | sluicegate ms (median) | STS ms (median) | sluicegate / STS |", "|---|---|---|---|"]
    medians = {name: {key: statistics.median(values) for key, values in by.items()} for name, by in samples.items()}
    for name, m in medians.items():
        ratio = m["sluicegate"] / m["sts"]
        flag = " **over 1.2**" if ratio > AIM_EACH else ""
        lines.append(f"| {name} | {m['sluicegate'] * 1000:,.0f} | {m['sts'] * 1000:,.0f} | {ratio:.2f}x{flag} |")
    sums = {key: sum(m[key] for m in medians.values()) for key in SERVERS}
    speedup = sums["sts"] / sums["sluicegate"]
    worst = max(medians, key=lambda n: medians[n]["sluicegate"] / medians[n]["sts"])
    worst_ratio = medians[worst]["sluicegate"] / medians[worst]["sts"]
    lines.append(f"| sum | {sums['sluicegate'] * 1000:,.0f} | {sums['sts'] * 1000:,.0f} | "
                 f"{sums['sluicegate'] / sums['sts']:.2f}x |")
    lines.append("")
    lines.append(f"aim: STS sum / sluicegate sum >= {AIM_SUM}: {speedup:.2f} "
                 f"({'met' if speedup >= AIM_SUM else 'not met'}); no query above {AIM_EACH}x: worst {worst} "
                 f"{worst_ratio:.2f}x ({'met' if worst_ratio <= AIM_EACH else 'not met'})")
    return "\n".join(lines), {"medians_s": medians, "sums_s": sums, "speedup": speedup,
                              "worst": [worst, worst_ratio]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=0.02,
                        help="scale factor (TPC-H lineitem 6,000,000 x scale, TPC-DS store_sales 2,880,000 x scale)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of every query on each server (median)")
    parser.add_argument("--queries", help="comma-separated query names (default all: q1..q19, ds3..ds96)")
    parser.add_argument("--start-timeout", type=float, default=300, help="seconds a server may take to start")
    args = parser.parse_args(argv)
    queries = {name: QUERIES[name] for name in args.queries.split(",")} if args.queries else QUERIES
    java, env = servers_env()
    machine = machine_info(java)
    load_before = load_average()
    say(f"machine: {machine['nproc']} CPUs, Python {machine['python']}, {machine['java']}, pyspark "
        f"{machine['pyspark']}; load {load_before}; scale {args.scale}, {args.runs} runs")
    started = time.perf_counter()
    with ExitStack() as stack:
        cursors: dict[str, Any] = {}
        for key in SERVERS:
            workdir = Path(tempfile.mkdtemp(prefix=f"tpc-bench-{key}-"))
            server = stack.enter_context(running(key, workdir, env, args.start_timeout))   # result cache off
            say(f"{key}: up on port {server.port} (pid {server.proc.pid}) after {server.started_in:.1f} s")
            connection = stack.enter_context(closing(pyhive_connect(server.port)))
            cursors[key] = connection.cursor()
            say(f"{key}: tables made in {load(cursors[key], key, args.scale):.1f} s")
        for name, sql in queries.items():   # warm-up, and the same answer on both
            rows = {key: timed(cursors[key], sql)[1] for key in SERVERS}
            if rows["sluicegate"] != rows["sts"]:
                raise AssertionError(f"{name}: sluicegate's rows differ from the Thrift server's: "
                                     f"{rows['sluicegate'][:3]} against {rows['sts'][:3]}")
            say(f"warm-up {name}: {len(rows['sts'])} rows, equal")
        load_measured = load_average()
        samples = measure(cursors, queries, args.runs)
    load_after = load_average()
    text, figures = report(samples)
    text += (f"\nscale {args.scale}, {args.runs} runs per query and server; load average before {load_before}, "
             f"at the first round {load_measured}, after {load_after}")
    finish_run("tpc_bench", text, machine, load_before, load_after, started,
               {"scale": args.scale, "runs": args.runs, "queries": queries, "samples_s": samples, **figures})
    return 0


if __name__ == "__main__":
    sys.exit(main())
