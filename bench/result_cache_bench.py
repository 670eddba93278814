"""The exact result cache (issue 28 part 4): TPC-H and TPC-DS queries run twice on sluicegate and on Spark's own
Thrift server (HiveThriftServer2, same pyspark jars and Spark settings), one server at a time.

    ./run bench bench/result_cache_bench.py                 # scale 0.05: 300,000 lineitems, 144,000 store_sales
    ./run bench bench/result_cache_bench.py --suite tpcds   # the TPC-DS queries only (the issue's aim names them)
    ./run bench bench/result_cache_bench.py --scale 0.01    # to try it out

Each server is started (gateway_bench.py's start-up: sluicegate with its default settings, so the cache on; the
Thrift server with local[4], 2 GB, 2 shuffle partitions as sluicegate), the TPC-H tables are made on it by CTAS from
`range()` with deterministic values (Delta on sluicegate, Parquet on the Thrift server; the same rows), a warm-up
query runs, then every query runs once (the first run) and again (the second run), through PyHive, each timed from
execute to the last row fetched. Money is DECIMAL(15,2), so the answers are exact and must be equal row for row:
each server's first run against its second, and sluicegate's against the Thrift server's. sluicegate's query
history must say the second run was served from the cache and the first was not.

Printed, and written as JSON to bench/out/: per query the first and second run of each server, and the sums.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from gateway_bench import OUT_DIR, load_average, machine_info, pyhive_connect, running, say, servers_env
from tpc import TPCDS_QUERIES, TPCH_QUERIES, make_tables, timed, tpcds_tables, tpch_tables

SUITES = {"tpch": (TPCH_QUERIES, tpch_tables, "SELECT count(*), sum(l_quantity) FROM tpch.lineitem"),
          "tpcds": (TPCDS_QUERIES, tpcds_tables, "SELECT count(*), sum(ss_quantity) FROM tpcds.store_sales")}


def bench_server(key: str, suites: list[str], scale: float, env: dict[str, str],
                 start_timeout: float) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"result-cache-bench-{key}-"))
    say(f"{key}: starting")
    with running(key, workdir, env, start_timeout, result_cache=True) as server:   # the gateway's default: on
        connection = pyhive_connect(server.port)
        cursor = connection.cursor()
        using = "delta" if key == "sluicegate" else "parquet"
        loaded = sum(make_tables(cursor, suite, SUITES[suite][1](scale), using) for suite in suites)
        say(f"{key}: tables made in {loaded:.1f} s")
        for suite in suites:
            timed(cursor, SUITES[suite][2])   # warm-up (not a measured query)
        runs: dict[str, dict[str, Any]] = {}
        for name, sql in queries(suites).items():
            first, first_rows, first_id = timed(cursor, sql)
            second, second_rows, second_id = timed(cursor, sql)
            if first_rows != second_rows:
                raise AssertionError(f"{key} {name}: the second run's rows differ from the first's")
            runs[name] = {"first_s": first, "second_s": second, "rows": first_rows, "ids": [first_id, second_id]}
            say(f"{key} {name}: first {first * 1000:.0f} ms, second {second * 1000:.1f} ms, {len(first_rows)} rows")
        if key == "sluicegate":
            cursor.close()   # the statements are closed, so the history records them
            cursor = connection.cursor()
            wanted = {each for run in runs.values() for each in run["ids"]}
            deadline = time.monotonic() + 30
            served: dict[str, Any] = {}
            while not wanted <= served.keys() and time.monotonic() < deadline:   # the writer lands within ~0.5 s
                cursor.execute("SELECT statement_id, from_result_cache FROM system.query.history "
                               "WHERE statement_type = 'SELECT' AND executed_by = 'bench'")
                served = dict(cursor.fetchall())
            for name, run in runs.items():
                run["from_result_cache"] = [served.get(each) for each in run["ids"]]
                if run["from_result_cache"] != [False, True]:
                    raise AssertionError(f"sluicegate {name}: the history says {run['from_result_cache']} for the "
                                         "first and second run (expected False, True)")
        connection.close()
    return {"load_s": loaded, "queries": runs}


def queries(suites: list[str]) -> dict[str, str]:
    return {name: sql for suite in suites for name, sql in SUITES[suite][0].items()}


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Decimal) else value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=0.05,
                        help="scale factor (0.05: 300,000 lineitems, 144,000 store_sales)")
    parser.add_argument("--suite", choices=["both", *SUITES], default="both", help="which queries run (default both)")
    parser.add_argument("--start-timeout", type=float, default=300, help="seconds a server may take to start")
    args = parser.parse_args(argv)
    suites = list(SUITES) if args.suite == "both" else [args.suite]
    java, env = servers_env()
    machine = machine_info(java)
    load_before = load_average()
    say(f"machine: {machine['nproc']} CPUs, Python {machine['python']}, {machine['java']}, pyspark "
        f"{machine['pyspark']}; load {load_before}; scale {args.scale}, {', '.join(suites)}")
    started = time.time()
    results = {key: bench_server(key, suites, args.scale, env, args.start_timeout) for key in ("sluicegate", "sts")}
    load_after = load_average()
    sg, sts = results["sluicegate"]["queries"], results["sts"]["queries"]
    lines = [f"{'query':6} {'sg first ms':>12} {'sg second ms':>13} {'sts first ms':>13} {'sts second ms':>14} "
             f"{'sts 2nd / sg 2nd':>17} {'equal':>6}"]
    for name in queries(suites):
        equal = sg[name]["rows"] == sts[name]["rows"]
        if not equal:
            raise AssertionError(f"{name}: sluicegate's rows differ from the Thrift server's: "
                                 f"{sg[name]['rows'][:3]} against {sts[name]['rows'][:3]}")
        lines.append(f"{name:6} {sg[name]['first_s'] * 1000:12.0f} {sg[name]['second_s'] * 1000:13.1f} "
                     f"{sts[name]['first_s'] * 1000:13.0f} {sts[name]['second_s'] * 1000:14.0f} "
                     f"{sts[name]['second_s'] / sg[name]['second_s']:16.0f}x {equal!s:>6}")
    sums = {f"{key}_{run}": sum(q[f"{run}_s"] for q in results[key]["queries"].values())
            for key in ("sluicegate", "sts") for run in ("first", "second")}
    lines.append(f"{'sum':6} {sums['sluicegate_first'] * 1000:12.0f} {sums['sluicegate_second'] * 1000:13.1f} "
                 f"{sums['sts_first'] * 1000:13.0f} {sums['sts_second'] * 1000:14.0f} "
                 f"{sums['sts_second'] / sums['sluicegate_second']:16.0f}x")
    text = "\n".join(lines)
    print(text)
    print(f"load average before {load_before}, after {load_after}; {time.time() - started:.0f} s")
    OUT_DIR.mkdir(exist_ok=True)
    out = OUT_DIR / f"result_cache_bench-{time.strftime('%Y%m%d-%H%M%S')}.json"
    for result in results.values():
        for run in result["queries"].values():
            run["rows"] = [[_plain(value) for value in row] for row in run["rows"]]
    out.write_text(json.dumps({"machine": machine, "scale": args.scale, "suites": suites, "load_before": load_before,
                               "load_after": load_after, "table": text, "sums": sums, "results": results},
                              indent=1, default=str))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
