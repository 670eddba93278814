"""The exact result cache (issue 28 part 4): TPC-H queries run twice on sluicegate and on Spark's own Thrift server
(HiveThriftServer2, same pyspark jars and Spark settings), one server at a time.

    ./run bench bench/result_cache_bench.py                 # scale 0.05: 300,000 lineitems, 8 queries
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


def tables(scale: float) -> dict[str, tuple[int, str]]:
    """Each table's rows and the projection over `range(rows)` (column `id`) that makes them."""
    lineitems = max(int(6_000_000 * scale), 1000)
    orders = max(lineitems // 4, 250)
    customers = max(orders // 10, 25)
    parts = max(customers // 8, 10)
    suppliers = max(parts // 20, 5)
    money = "CAST({} AS DECIMAL(15,2))"
    return {
        "region": (5, "id AS r_regionkey, element_at(array('AFRICA','AMERICA','ASIA','EUROPE','MIDDLE EAST'), "
                      "CAST(id AS INT) + 1) AS r_name"),
        "nation": (25, "id AS n_nationkey, concat('NATION', id) AS n_name, id % 5 AS n_regionkey"),
        "supplier": (suppliers, f"id AS s_suppkey, concat('Supplier#', id) AS s_name, id % 25 AS s_nationkey, "
                                f"{money.format('(id * 37) % 10000 - 999')} AS s_acctbal"),
        "customer": (customers, f"id AS c_custkey, concat('Customer#', id) AS c_name, id % 25 AS c_nationkey, "
                                f"{money.format('(id * 53) % 10000 - 999')} AS c_acctbal, "
                                "element_at(array('AUTOMOBILE','BUILDING','FURNITURE','HOUSEHOLD','MACHINERY'), "
                                "CAST(id % 5 AS INT) + 1) AS c_mktsegment"),
        "part": (parts, "id AS p_partkey, concat('Part#', id) AS p_name, "
                        "element_at(array('PROMO BRUSHED', 'STANDARD POLISHED', 'ECONOMY ANODIZED', 'PROMO PLATED'), "
                        "CAST(id % 4 AS INT) + 1) AS p_type, concat('Brand#', id % 5) AS p_brand, "
                        "CAST(id % 50 + 1 AS INT) AS p_size"),
        "orders": (orders, f"id AS o_orderkey, id % {customers} AS o_custkey, "
                           "element_at(array('F','O','P'), CAST(id % 3 AS INT) + 1) AS o_orderstatus, "
                           f"{money.format('(id * 97) % 500000 / 1.0')} AS o_totalprice, "
                           "date_add(DATE'1992-01-01', CAST((id * 7) % 2400 AS INT)) AS o_orderdate, "
                           "concat(CAST(id % 5 + 1 AS STRING), '-PRIORITY') AS o_orderpriority"),
        "lineitem": (lineitems, f"id DIV 4 AS l_orderkey, (id * 13) % {parts} AS l_partkey, "
                                f"(id * 7) % {suppliers} AS l_suppkey, CAST(id % 4 + 1 AS INT) AS l_linenumber, "
                                f"{money.format('(id % 50) + 1')} AS l_quantity, "
                                f"{money.format('((id * 31) % 100000) / 1.0 + 900')} AS l_extendedprice, "
                                f"{money.format('(id % 11) / 100.0')} AS l_discount, "
                                f"{money.format('(id % 9) / 100.0')} AS l_tax, "
                                "element_at(array('A','N','R'), CAST(id % 3 AS INT) + 1) AS l_returnflag, "
                                "element_at(array('F','O'), CAST(id % 2 AS INT) + 1) AS l_linestatus, "
                                "date_add(DATE'1992-01-02', CAST((id * 11) % 2500 AS INT)) AS l_shipdate, "
                                "date_add(DATE'1992-01-30', CAST((id * 11) % 2500 AS INT)) AS l_commitdate, "
                                "date_add(DATE'1992-02-10', CAST((id * 17) % 2500 AS INT)) AS l_receiptdate, "
                                "element_at(array('MAIL','SHIP','AIR','TRUCK','RAIL'), CAST(id % 5 AS INT) + 1) "
                                "AS l_shipmode"),
    }


QUERIES = {
    "q1": """SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
  sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
  sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, avg(l_quantity) AS avg_qty,
  avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, count(*) AS count_order
FROM tpch.lineitem WHERE l_shipdate <= date_sub(DATE'1998-12-01', 90)
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus""",
    "q3": """SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate
FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.lineitem ON l_orderkey = o_orderkey
WHERE c_mktsegment = 'BUILDING' AND o_orderdate < DATE'1995-03-15' AND l_shipdate > DATE'1995-03-15'
GROUP BY l_orderkey, o_orderdate ORDER BY revenue DESC, o_orderdate, l_orderkey LIMIT 10""",
    "q5": """SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.lineitem ON l_orderkey = o_orderkey
  JOIN tpch.supplier ON l_suppkey = s_suppkey AND c_nationkey = s_nationkey
  JOIN tpch.nation ON s_nationkey = n_nationkey JOIN tpch.region ON n_regionkey = r_regionkey
WHERE r_name = 'ASIA' AND o_orderdate >= DATE'1994-01-01' AND o_orderdate < DATE'1995-01-01'
GROUP BY n_name ORDER BY revenue DESC, n_name""",
    "q6": """SELECT sum(l_extendedprice * l_discount) AS revenue FROM tpch.lineitem
WHERE l_shipdate >= DATE'1994-01-01' AND l_shipdate < DATE'1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07
  AND l_quantity < 24""",
    "q10": """SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal, n_name
FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.lineitem ON l_orderkey = o_orderkey
  JOIN tpch.nation ON c_nationkey = n_nationkey
WHERE o_orderdate >= DATE'1993-10-01' AND o_orderdate < DATE'1994-01-01' AND l_returnflag = 'R'
GROUP BY c_custkey, c_name, c_acctbal, n_name ORDER BY revenue DESC, c_custkey LIMIT 20""",
    "q12": """SELECT l_shipmode,
  sum(CASE WHEN o_orderpriority = '1-PRIORITY' OR o_orderpriority = '2-PRIORITY' THEN 1 ELSE 0 END) AS high,
  sum(CASE WHEN o_orderpriority <> '1-PRIORITY' AND o_orderpriority <> '2-PRIORITY' THEN 1 ELSE 0 END) AS low
FROM tpch.orders JOIN tpch.lineitem ON o_orderkey = l_orderkey
WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_receiptdate >= DATE'1994-01-01' AND l_receiptdate < DATE'1995-01-01'
GROUP BY l_shipmode ORDER BY l_shipmode""",
    "q14": """SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END)
  / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM tpch.lineitem JOIN tpch.part ON l_partkey = p_partkey
WHERE l_shipdate >= DATE'1995-09-01' AND l_shipdate < DATE'1995-10-01'""",
    "q19": """SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM tpch.lineitem JOIN tpch.part ON p_partkey = l_partkey
WHERE (p_brand = 'Brand#1' AND l_quantity BETWEEN 1 AND 11 AND p_size BETWEEN 1 AND 5
       AND l_shipmode IN ('AIR', 'MAIL'))
   OR (p_brand = 'Brand#2' AND l_quantity BETWEEN 10 AND 20 AND p_size BETWEEN 1 AND 10
       AND l_shipmode IN ('AIR', 'TRUCK'))""",
}


def timed(cursor: Any, sql: str) -> tuple[float, list[tuple[Any, ...]], str]:
    started = time.perf_counter()
    cursor.execute(sql)
    rows = cursor.fetchall()
    return time.perf_counter() - started, rows, cursor._operationHandle.operationId.guid.hex()


def make_tables(cursor: Any, scale: float, using: str) -> float:
    started = time.perf_counter()
    cursor.execute("CREATE DATABASE IF NOT EXISTS tpch")
    for name, (rows, projection) in tables(scale).items():
        cursor.execute(f"CREATE TABLE tpch.{name} USING {using} AS SELECT {projection} FROM range({rows})")
    return time.perf_counter() - started


def bench_server(key: str, scale: float, env: dict[str, str], start_timeout: float) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"result-cache-bench-{key}-"))
    say(f"{key}: starting")
    with running(key, workdir, env, start_timeout, result_cache=True) as server:   # the gateway's default: on
        connection = pyhive_connect(server.port)
        cursor = connection.cursor()
        loaded = make_tables(cursor, scale, "delta" if key == "sluicegate" else "parquet")
        say(f"{key}: tables made in {loaded:.1f} s")
        timed(cursor, "SELECT count(*), sum(l_quantity) FROM tpch.lineitem")   # warm-up (not a measured query)
        runs: dict[str, dict[str, Any]] = {}
        for name, sql in QUERIES.items():
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


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Decimal) else value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=0.05, help="TPC-H scale factor (0.05: 300,000 lineitems)")
    parser.add_argument("--start-timeout", type=float, default=300, help="seconds a server may take to start")
    args = parser.parse_args(argv)
    java, env = servers_env()
    machine = machine_info(java)
    load_before = load_average()
    say(f"machine: {machine['nproc']} CPUs, Python {machine['python']}, {machine['java']}, pyspark "
        f"{machine['pyspark']}; load {load_before}; scale {args.scale}")
    started = time.time()
    results = {key: bench_server(key, args.scale, env, args.start_timeout) for key in ("sluicegate", "sts")}
    load_after = load_average()
    sg, sts = results["sluicegate"]["queries"], results["sts"]["queries"]
    lines = [f"{'query':6} {'sg first ms':>12} {'sg second ms':>13} {'sts first ms':>13} {'sts second ms':>14} "
             f"{'sts 2nd / sg 2nd':>17} {'equal':>6}"]
    for name in QUERIES:
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
    out.write_text(json.dumps({"machine": machine, "scale": args.scale, "load_before": load_before,
                               "load_after": load_after, "table": text, "sums": sums, "results": results},
                              indent=1, default=str))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
