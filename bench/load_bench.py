"""A BI team at once (issue 28): N PyHive clients on the outside load test's mixed workload, against sluicegate and
then Spark's own Thrift server (the same pyspark jars and Spark settings: bench/gateway_bench.py starts both).

    ./run bench bench/load_bench.py [--clients 8,32] [--seconds 30] [--procs 4] [--only sluicegate|sts]

Each server in turn: started, given schema `bench` with the 1,000,000-row table `t1m` (id, k = id % 100, v, r =
rand(42), s; Delta on sluicegate, Parquet on the Thrift server, by the same CTAS), warmed (three passes of every
kind on one connection), then for each C in --clients: C clients (--procs processes of C/procs threads, one
connection each, thrift's C decoder) in a closed loop for --seconds, each picking a statement at random with the
load test's weights:

  select1 30  SELECT 1                                        describe    10  DESCRIBE bench.t1m
  agg     15  SELECT k, count(*), sum(v), avg(r) ... GROUP BY k   show_tables 10  SHOW TABLES IN bench
  fetch100k 5 SELECT id, k, v, s FROM bench.t1m LIMIT 100000  get_tables  15  Thrift GetTables(bench, %)
                                                              get_columns 15  Thrift GetColumns(bench, t1m, %)

Prints per C and kind p50 / p99 (ms) for both servers and their ratio, statements per second, and the load average
around each phase; writes everything to bench/out/load_bench-<time>.json. sluicegate runs with its result cache off
(as bench/gateway_bench.py starts it: the aggregates are Spark's work every time) and its connection caps raised
for one address (the load test's settings).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import closing
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from catalog_rpc_bench import _listing
from gateway_bench import (
    HOST,
    Server,
    finish_run,
    load_average,
    machine_info,
    percentile,
    pyhive_connect,
    running,
    say,
    servers_env,
    tree_cpu_seconds,
)
from TCLIService import TCLIService
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated

from sluicegate.gateway.thrift import enable_fast_codec

WEIGHTS = {"select1": 30, "agg": 15, "fetch100k": 5, "describe": 10, "show_tables": 10, "get_tables": 15,
           "get_columns": 15}
STATEMENTS = {
    "select1": "SELECT 1",
    "agg": "SELECT k, count(*), sum(v), avg(r) FROM bench.t1m GROUP BY k ORDER BY k",
    "fetch100k": "SELECT id, k, v, s FROM bench.t1m LIMIT 100000",
    "describe": "DESCRIBE bench.t1m",
    "show_tables": "SHOW TABLES IN bench",
}
ROWS = {"select1": 1, "agg": 100, "fetch100k": 100_000, "get_tables": 1, "get_columns": 5}
CTAS = ("CREATE TABLE bench.t1m USING {fmt} AS SELECT id, id % 100 AS k, id * 0.5D AS v, rand(42) AS r, "
        "CAST(id AS STRING) AS s FROM range(1000000)")
# The load test's raised caps: C clients from one address, one user.
LOAD_CONF = ("\n[server]\nmax_connections = 400\nmax_connections_per_address = 300\n\n"
             "[session]\nmax_per_user = 300\n")


def fast_connect(port: int) -> Any:
    """A PyHive connection whose client decodes with thrift's C decoder (PyHive's own pure-Python decoding of 100k
    rows would measure this 2-core machine's client, not the server)."""
    enable_fast_codec()
    conn = pyhive_connect(port)
    conn._client = TCLIService.Client(TBinaryProtocolAccelerated(conn._transport))
    return conn


def run_kind(conn: Any, cursor: Any, kind: str) -> None:
    """One statement of `kind`, every row fetched; raises if the row count is not the expected one."""
    if kind in ("get_tables", "get_columns"):
        rows = _listing(conn, kind)
    else:
        cursor.execute(STATEMENTS[kind])
        rows = len(cursor.fetchall())
    expected = ROWS.get(kind)
    if (rows != expected) if expected is not None else rows == 0:
        raise RuntimeError(f"{kind}: {rows} rows, expected {expected or 'some'}")


def client_process(port: int, threads: int, seconds: float, seed: int) -> dict[str, Any]:
    """`threads` clients of one process, started together, each in a closed loop until `seconds` have passed:
    latencies (ms) per kind of the statements that finished in the window, and errors."""
    samples: dict[str, list[float]] = {kind: [] for kind in WEIGHTS}
    errors: list[str] = []
    lock = threading.Lock()
    conns = [fast_connect(port) for _ in range(threads)]
    barrier = threading.Barrier(threads)
    kinds, weights = list(WEIGHTS), list(WEIGHTS.values())

    def loop(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        conn = conns[index]
        cursor = conn.cursor()
        cursor.arraysize = 10_000
        barrier.wait()
        end = time.perf_counter() + seconds
        while True:
            kind = rng.choices(kinds, weights)[0]
            t0 = time.perf_counter()
            try:
                run_kind(conn, cursor, kind)
            except Exception as exc:  # noqa: BLE001 - counted and shown: an error is a result of a load test
                with lock:
                    errors.append(f"{kind}: {type(exc).__name__}: {str(exc)[:200]}")
                time.sleep(0.05)
                continue
            t1 = time.perf_counter()
            if t1 > end:
                return
            with lock:
                samples[kind].append((t1 - t0) * 1000)

    workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for conn in conns:
        try:
            conn.close()
        except Exception as exc:  # noqa: BLE001 - STS-from-pip fails some CloseSession (a missing hive-llap class)
            errors.append(f"close: {type(exc).__name__}: {str(exc)[:200]}")
    return {"samples": samples, "errors": errors}


def setup(server: Server) -> None:
    """Schema `bench` and `t1m`, then three passes of every kind on one connection."""
    with closing(fast_connect(server.port)) as conn, closing(conn.cursor()) as cursor:
        cursor.execute("CREATE DATABASE IF NOT EXISTS bench")
        cursor.execute(CTAS.format(fmt="delta" if server.key == "sluicegate" else "parquet"))
        cursor.arraysize = 10_000
        for _ in range(3):
            for kind in WEIGHTS:
                run_kind(conn, cursor, kind)


def phase(server: Server, clients: int, procs: int, seconds: float) -> dict[str, Any]:
    """C clients for `seconds`: samples, errors, statements per second, the server's CPU and the load average."""
    procs = max(1, min(procs, clients))
    split = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    load_before = load_average()
    cpu0 = tree_cpu_seconds(server.proc.pid)
    with ProcessPoolExecutor(procs, mp_context=get_context("spawn")) as pool:
        parts = [pool.submit(client_process, server.port, n, seconds, clients * 100 + i) for i, n in enumerate(split)]
        results = [part.result() for part in parts]
    cpu = tree_cpu_seconds(server.proc.pid) - cpu0
    samples = {kind: [ms for r in results for ms in r["samples"][kind]] for kind in WEIGHTS}
    done = sum(len(v) for v in samples.values())
    return {"samples": samples, "errors": [e for r in results for e in r["errors"]], "stmt_per_s": done / seconds,
            "statements": done, "server_cpu_s": cpu, "load_before": load_before, "load_after": load_average()}


def bench_server(key: str, clients: list[int], procs: int, seconds: float, env: dict[str, str],
                 start_timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"load-{key}-") as tmp, \
            running(key, Path(tmp), env, start_timeout, extra_conf=LOAD_CONF) as server:
        say(f"{key} up in {server.started_in:.1f} s on port {server.port}; creating bench.t1m and warming")
        setup(server)
        phases = {}
        for c in clients:
            say(f"{key}: {c} clients for {seconds:g} s (load {load_average()})")
            phases[c] = phase(server, c, procs, seconds)
            p = phases[c]
            say(f"{key}: C={c}: {p['stmt_per_s']:.1f} stmt/s, {len(p['errors'])} errors, "
                f"select1 p50 {percentile(p['samples']['select1'], 50) if p['samples']['select1'] else 0:.0f} ms")
        return {"server_pid": server.proc.pid, "phases": phases}


def _cell(values: list[float]) -> str:
    return f"{percentile(values, 50):,.0f} / {percentile(values, 99):,.0f} ({len(values)})" if values else "-"


def _ratio(a: list[float], b: list[float], p: float) -> str:
    return f"{percentile(a, p) / percentile(b, p):.2f}x" if a and b else "-"


def table(results: dict[str, dict[str, Any]], clients: list[int]) -> str:
    """Per C: a row per kind, p50 / p99 ms (n) per server, sluicegate / STS ratios; stmt/s and load last."""
    sg, sts = results.get("sluicegate"), results.get("sts")
    head = "| C | kind | sluicegate p50 / p99 ms (n) | STS p50 / p99 ms (n) | p50 ratio | p99 ratio |"
    lines = [head, "|---|---|---|---|---|---|"]
    for c in clients:
        a = sg["phases"][c] if sg else None
        b = sts["phases"][c] if sts else None
        for kind in WEIGHTS:
            sa = a["samples"][kind] if a else []
            sb = b["samples"][kind] if b else []
            lines.append(f"| {c} | {kind} | {_cell(sa)} | {_cell(sb)} | {_ratio(sa, sb, 50)} | {_ratio(sa, sb, 99)} |")
        rate_a = f"{a['stmt_per_s']:.1f}" if a else "-"
        rate_b = f"{b['stmt_per_s']:.1f}" if b else "-"
        ratio = f"{a['stmt_per_s'] / b['stmt_per_s']:.2f}x" if a and b else "-"
        lines.append(f"| {c} | stmt/s | {rate_a} | {rate_b} | {ratio} | |")
        for key, p in (("sluicegate", a), ("STS", b)):
            if p:
                lines.append(f"| {c} | {key}: errors, server CPU-s, load before / after | {len(p['errors'])}, "
                             f"{p['server_cpu_s']:.0f} s, {p['load_before'][0]} / {p['load_after'][0]} | | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="8,32", help="concurrencies, comma-separated (default 8,32)")
    parser.add_argument("--seconds", type=float, default=30, help="seconds per concurrency (default 30)")
    parser.add_argument("--procs", type=int, default=4, help="client processes the clients are spread over")
    parser.add_argument("--only", choices=["sluicegate", "sts"], help="one server only")
    parser.add_argument("--start-timeout", type=float, default=300, help="seconds a server may take to start")
    args = parser.parse_args(argv)
    clients = [int(c) for c in args.clients.split(",")]
    java, env = servers_env()
    machine = machine_info(java)
    load_before = load_average()
    started = time.perf_counter()
    say(f"clients {clients}, {args.seconds:g} s each, {args.procs} client processes; load {load_before}")
    results = {key: bench_server(key, clients, args.procs, args.seconds, env, args.start_timeout)
               for key in ([args.only] if args.only else ["sluicegate", "sts"])}
    for key, result in results.items():
        for c, p in result["phases"].items():
            for error in sorted(set(p["errors"]))[:5]:
                print(f"  {key} C={c} error: {error}")
    finish_run("load_bench", table(results, clients), machine, load_before, load_average(), started,
               {"clients": clients, "seconds": args.seconds, "procs": args.procs, "host": HOST,
                "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
