"""The metadata RPCs under load (issue 28, part 2): GetTables and GetColumns latency at 1, 8 and 32 clients while
other clients run an aggregate, against DESCRIBE's, and against the listing as it was (Spark's `spark.catalog`
APIs, whose Datasets run Spark jobs).

    ./run bench bench/catalog_rpc_bench.py [--seconds 30] [--load 4] [--clients 1,8,32]

One gateway in this process on a fresh warehouse: schema `bench` with a 1,000,000-row Delta table `t1m` (id, k, v,
r, s), a dozen small tables and a view. `--load` clients run `SELECT k, count(*), sum(v), avg(r) FROM bench.t1m
GROUP BY k ORDER BY k` back to back the whole time (the load test's aggregate), so Spark's task slots are busy. Then,
for each concurrency C, C clients each loop over `GetTables(schema=bench, table=%)` (all rows fetched),
`GetColumns(schema=bench, table=t1m)` and `DESCRIBE bench.t1m` (execute + fetchall) for --seconds, once with the
gateway's listing ("now") and once with the old one put in its place ("before", the oracle of
tests/test_metadata_catalog.py), the two taking turns at each C. Every client is a PyHive connection of its own on
its own thread. Prints p50 / p95 / p99 per kind and side and the Spark jobs the JVM counted during each phase;
writes the samples to bench/out/catalog_rpc_bench.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyhive import hive
from TCLIService import ttypes as T

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from in_process import serving
from test_metadata_catalog import as_before

KINDS = ("get_tables", "get_columns", "describe")
AGGREGATE = "SELECT k, count(*), sum(v), avg(r) FROM bench.t1m GROUP BY k ORDER BY k"


def _centile(samples: list[float], q: int) -> float:
    """The q-th percentile (1..99), interpolated."""
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] if len(samples) > 1 else samples[0]


def _fetch_all(client: Any, handle: Any) -> int:
    rows = 0
    while True:
        resp = client.FetchResults(T.TFetchResultsReq(operationHandle=handle, orientation=0, maxRows=10_000))
        assert resp.status.statusCode == T.TStatusCode.SUCCESS_STATUS, resp.status
        got = len(resp.results.columns[0].stringVal.values) if resp.results.columns else len(resp.results.rows or [])
        if got == 0 or not resp.hasMoreRows:
            rows += got
            break
        rows += got
    client.CloseOperation(T.TCloseOperationReq(operationHandle=handle))
    return rows


def _listing(conn: Any, kind: str) -> int:
    """One metadata RPC, all its rows fetched, closed: the rows it listed."""
    client, session = conn._client, conn._sessionHandle
    if kind == "get_tables":
        resp = client.GetTables(T.TGetTablesReq(sessionHandle=session, schemaName="bench", tableName="%"))
    else:
        resp = client.GetColumns(T.TGetColumnsReq(sessionHandle=session, schemaName="bench", tableName="t1m",
                                                  columnName="%"))
    assert resp.status.statusCode == T.TStatusCode.SUCCESS_STATUS, resp.status
    return _fetch_all(client, resp.operationHandle)


def _measured_client(port: int, stop: threading.Event, offset: int, samples: dict[str, list[float]],
                     lock: threading.Lock) -> None:
    conn = hive.connect("127.0.0.1", port, username="bench")
    cursor = conn.cursor()
    try:
        turn = offset
        while not stop.is_set():
            kind = KINDS[turn % len(KINDS)]
            turn += 1
            start = time.perf_counter()
            if kind == "describe":
                cursor.execute("DESCRIBE bench.t1m")
                assert len(cursor.fetchall()) == 5
            else:
                assert _listing(conn, kind) == (14 if kind == "get_tables" else 5)
            took = (time.perf_counter() - start) * 1000
            if not stop.is_set():
                with lock:
                    samples[kind].append(took)
    finally:
        conn.close()


def _load_client(port: int, stop: threading.Event, done: list[int]) -> None:
    cursor = hive.connect("127.0.0.1", port, username="bench").cursor()
    while not stop.is_set():
        cursor.execute(AGGREGATE)
        assert len(cursor.fetchall()) == 100
        done.append(1)


def _jobs(spark: Any) -> int:
    return int(spark.sparkContext._jsc.sc().dagScheduler().numTotalJobs())


@contextlib.contextmanager
def _listing_as(side: str) -> Iterator[None]:
    """The gateway's listing ("now"), or the old one in its place ("before")."""
    with as_before() if side == "before" else contextlib.nullcontext():
        yield


def _phase(spark: Any, port: int, clients: int, seconds: float) -> tuple[dict[str, list[float]], int]:
    samples: dict[str, list[float]] = {kind: [] for kind in KINDS}
    lock, stop = threading.Lock(), threading.Event()
    threads = [threading.Thread(target=_measured_client, args=(port, stop, i, samples, lock), daemon=True)
               for i in range(clients)]
    jobs = _jobs(spark)
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(120)
    return samples, _jobs(spark) - jobs


def _setup(run: Any) -> None:
    run("CREATE DATABASE bench")
    run("CREATE TABLE bench.t1m USING delta AS SELECT id, id % 100 AS k, id * 0.5D AS v, rand(42) AS r, "
        "CAST(id AS STRING) AS s FROM range(1000000)")
    for i in range(12):
        run(f"CREATE TABLE bench.small_{i:02d} (id BIGINT, name STRING COMMENT 'a name', amount DECIMAL(10,2)) "
            "USING delta")
    run("CREATE VIEW bench.v AS SELECT k, count(*) AS n FROM bench.t1m GROUP BY k")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--load", type=int, default=4)
    parser.add_argument("--clients", default="1,8,32")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    from sluicegate.gateway import app
    from sluicegate.gateway.config import load_config

    config = load_config(port=0, warehouse=Path(tempfile.mkdtemp(prefix="catalog-rpc-bench-")),
                         overrides={"log": {"statements": False}})
    spark = app.start_spark(config)
    results: dict[str, Any] = {"args": vars(args), "phases": []}
    started = time.time()
    try:
        with serving(spark, config) as (port, run):
            _setup(run)
            for side in ("now", "before"):   # warm-up: each listing's first pass, and a DESCRIBE
                with _listing_as(side):
                    _phase(spark, port, 1, 3)
            stop, aggregates = threading.Event(), []
            loaders = [threading.Thread(target=_load_client, args=(port, stop, aggregates), daemon=True)
                       for _ in range(args.load)]
            for thread in loaders:
                thread.start()
            time.sleep(5)
            for clients in (int(c) for c in args.clients.split(",")):
                order = ("now", "before") if clients % 2 == 0 else ("before", "now")
                for side in order:
                    with _listing_as(side):
                        before = len(aggregates)
                        samples, jobs = _phase(spark, port, clients, args.seconds)
                    results["phases"].append({"clients": clients, "side": side, "samples_ms": samples,
                                              "jobs": jobs, "aggregates": len(aggregates) - before})
            stop.set()
            for thread in loaders:
                thread.join(300)
    finally:
        spark.stop()
    print(f"GetTables(bench, %) [14 rows], GetColumns(bench, t1m) [5 rows] and DESCRIBE bench.t1m, each client "
          f"looping over the three for {args.seconds:g} s per phase, while {args.load} clients run the aggregate; "
          f"{time.time() - started:.0f} s in all")
    print(f"{'C':>3} {'listing':8} {'kind':12} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}  jobs  aggregates")
    for phase in results["phases"]:
        for kind in KINDS:
            data = phase["samples_ms"][kind]
            if not data:
                continue
            print(f"{phase['clients']:>3} {phase['side']:8} {kind:12} {len(data):>6} {statistics.median(data):>8.1f} "
                  f"{_centile(data, 95):>8.1f} {_centile(data, 99):>8.1f}  {phase['jobs']:>4}  "
                  f"{phase['aggregates']:>10}")
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    (out / "catalog_rpc_bench.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
