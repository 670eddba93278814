"""Refreshing a gold materialized view (a join and an aggregate) after a 1% change of its 10,000,000-row input:
incremental against a full recompute, in one run, and the result checked equal to the query.

    .venv/bin/python bench/mv_bench.py               # 10,000,000 sales rows, 1% changes
    .venv/bin/python bench/mv_bench.py --scale 0.1   # a tenth, to try it out

A real gateway on 127.0.0.1 (port 0) over a fresh warehouse, driven with PyHive, as a dbt model or a BI refresh
would drive it:
  sales      id, customer, units INT, amount DECIMAL(12,2): loaded by 20 INSERTs (a table of a few dozen files)
  customers  10,000 rows, customer -> region
  gold       SELECT c.region, count(*), sum(s.units), avg(s.amount), max(s.id) FROM sales s JOIN customers c ...
             GROUP BY c.region
Each run makes two changes of 1% of the rows, one refreshed with REFRESH MATERIALIZED VIEW (incremental: checked
in DESCRIBE) and one with REFRESH ... FULL (a recompute, what a view without incremental refresh costs):
  append   1% new sales rows (INSERT)
  update   1% of the rows changed in place (UPDATE of an id range: the files holding it are rewritten)
Everything is warmed up first; each figure is the median of --runs runs. After the last run the view is compared
with the query at the same input versions (EXCEPT ALL both ways: no difference allowed). Do not run it while
others use the machine's two cores.
"""

from __future__ import annotations

import argparse
import statistics
import time

GOLD = ("SELECT c.region, count(*) AS orders, sum(s.units) AS units, avg(s.amount) AS mean_amount, "
        "max(s.id) AS last_id FROM sales s JOIN customers c ON s.customer = c.customer GROUP BY c.region")
LOADS = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per figure (median reported)")
    args = parser.parse_args()
    rows = int(10_000_000 * args.scale)
    change = rows // 100

    from in_process import in_process_gateway

    with in_process_gateway("sg_mv_bench_") as started:
        run = started.run

        def timed(sql: str) -> float:
            start = time.perf_counter()
            run(sql)
            return time.perf_counter() - start

        def refresh_type() -> str:
            return {r[0]: r[1] for r in run("DESCRIBE EXTENDED gold")}["Last Refresh Type"]

        next_id = rows
        def insert(count: int) -> None:
            nonlocal next_id
            run(f"INSERT INTO sales SELECT id, CAST(id * 7919 % 10000 AS INT), CAST(id % 97 AS INT), "
                f"CAST(id % 100000 / 100.0 AS DECIMAL(12,2)) FROM range({next_id}, {next_id + count})")
            next_id += count

        start = time.perf_counter()
        run("CREATE TABLE customers (customer INT, region STRING)")
        run("INSERT INTO customers SELECT CAST(id AS INT), concat('r', CAST(id % 50 AS STRING)) FROM range(10000)")
        run("CREATE TABLE sales (id BIGINT, customer INT, units INT, amount DECIMAL(12,2))")
        next_id = 0
        for _ in range(LOADS):
            insert(rows // LOADS)
        load_seconds = time.perf_counter() - start
        start = time.perf_counter()
        run(f"CREATE MATERIALIZED VIEW gold AS {GOLD}")
        create_seconds = time.perf_counter() - start
        print(f"loaded {rows:,} sales rows in {load_seconds:.1f} s; CREATE MATERIALIZED VIEW in {create_seconds:.1f} s")

        low = 0

        def update() -> None:
            nonlocal low
            run(f"UPDATE sales SET units = units + 1 WHERE id >= {low} AND id < {low + change}")
            low += change

        samples: dict[str, list[float]] = {}
        for kind, make_change in (("append", lambda: insert(change)), ("update", update)):
            make_change()   # warm-up of both paths for this kind of change
            run("REFRESH MATERIALIZED VIEW gold")
            make_change()
            run("REFRESH MATERIALIZED VIEW gold FULL")
            for _ in range(args.runs):
                make_change()
                samples.setdefault(f"{kind} incremental", []).append(timed("REFRESH MATERIALIZED VIEW gold"))
                kind_seen = refresh_type()
                if kind_seen != "INCREMENTAL":
                    reason = {r[0]: r[1] for r in run("DESCRIBE EXTENDED gold")}["Last Refresh Reason"]
                    raise SystemExit(f"the {kind} refresh was {kind_seen}: {reason}")
                make_change()
                samples.setdefault(f"{kind} full", []).append(timed("REFRESH MATERIALIZED VIEW gold FULL"))
        run("INSERT INTO sales VALUES (-1, 1, 1, 1.00)")
        run("REFRESH MATERIALIZED VIEW gold")
        versions = {r[0]: r[1] for r in run("DESCRIBE EXTENDED gold")}["Input Versions"]
        pinned = {name.split(".")[1]: int(v) for name, v in (p.split("@v") for p in versions.split(", "))}
        query = GOLD.replace("FROM sales s", f"FROM sales VERSION AS OF {pinned['sales']} s").replace(
            "JOIN customers c", f"JOIN customers VERSION AS OF {pinned['customers']} c")
        differ = run(f"SELECT count(*) FROM ((SELECT * FROM gold EXCEPT ALL {query}) UNION ALL "
                     f"({query} EXCEPT ALL SELECT * FROM gold))")[0][0]
        medians = {name: statistics.median(values) for name, values in samples.items()}
        print(f"gold view refresh after a 1% change ({change:,} rows) of {rows:,} rows, median of {args.runs}:")
        for kind in ("append", "update"):
            incremental, full = medians[f"{kind} incremental"], medians[f"{kind} full"]
            print(f"  {kind:7s} incremental {incremental:6.2f} s   full recompute {full:6.2f} s   "
                  f"{full / incremental:5.1f}x faster")
        print(f"view equal to the query at its input versions: {'yes' if differ == 0 else f'NO ({differ} rows)'}")


if __name__ == "__main__":
    main()
