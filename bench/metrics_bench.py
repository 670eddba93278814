"""What the Prometheus metrics cost a statement, and what a scrape costs (issue 26's aim: under 2% on `SELECT 1`).

    ./run bench bench/metrics_bench.py [--rounds 1200] [--per-round 1]

One gateway in this process (a fresh warehouse), one PyHive connection. Rounds of `SELECT 1` (execute + fetchall)
alternate between the metrics on (the gateway as it runs) and off (the statement observer removed and the fetch
counter a no-op), so that drift of a shared machine falls on both alike (`--per-round 1`: every other statement);
p50 and mean per side. Then the in-process
cost of what a statement pays directly (the observer's `ended` and the fetch counter), timed over 100,000 calls, and
the time of a /metrics scrape (the exposition, JVM heap included).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1200)
    parser.add_argument("--per-round", type=int, default=1)
    args = parser.parse_args()

    from pyhive import hive

    from sluicegate.gateway import app
    from sluicegate.gateway.config import load_config
    from sluicegate.gateway.operation.base import OperationType
    from sluicegate.gateway.operation.state import OperationState

    config = load_config(port=0, warehouse=Path(tempfile.mkdtemp(prefix="metrics-bench-")))
    spark = app.start_spark(config)
    running = app.start(config, spark, host="127.0.0.1", port=0)
    service = running.service
    metrics = service.metrics
    counting_fetch = metrics.fetched
    try:
        cursor = hive.connect("127.0.0.1", running.port, username="bench").cursor()
        for _ in range(100):  # warm-up
            cursor.execute("SELECT 1")
            cursor.fetchall()
        samples: dict[str, list[float]] = {"on": [], "off": []}
        for round_ in range(args.rounds):
            for side in (("on", "off") if round_ % 2 == 0 else ("off", "on")):
                if side == "off":
                    service.operations.observers.remove(metrics.observer)
                    metrics.fetched = lambda rows, nbytes: None  # type: ignore[method-assign]
                else:
                    service.operations.observers.add(metrics.observer)
                    metrics.fetched = counting_fetch  # type: ignore[method-assign]
                for _ in range(args.per_round):
                    t0 = time.perf_counter()
                    cursor.execute("SELECT 1")
                    cursor.fetchall()
                    samples[side].append(time.perf_counter() - t0)
        service.operations.observers.remove(metrics.observer)
        service.operations.observers.add(metrics.observer)
        metrics.fetched = counting_fetch  # type: ignore[method-assign]
        for side, values in samples.items():
            print(f"SELECT 1, metrics {side:3}: p50 {statistics.median(values) * 1000:.3f} ms, "
                  f"mean {statistics.fmean(values) * 1000:.3f} ms ({len(values)} statements)")
        on, off = statistics.median(samples["on"]), statistics.median(samples["off"])
        print(f"difference of the p50s: {(on - off) * 1e6:+.1f} us ({(on - off) / off * 100:+.2f}%)")

        fake = SimpleNamespace(op_type=OperationType.EXECUTE_STATEMENT, statement="SELECT 1",
                               state=OperationState.FINISHED, started=time.time() - 0.004, completed=time.time())
        calls = 100_000
        t0 = time.perf_counter()
        for _ in range(calls):
            metrics.observer.ended(fake)  # type: ignore[arg-type]
            metrics.fetched(1, 8)
        direct = (time.perf_counter() - t0) / calls
        print(f"per statement, the observer's ended() + the fetch counter: {direct * 1e6:.2f} us "
              f"({direct / off * 100:.3f}% of the p50 with metrics off)")

        scrapes = []
        for _ in range(20):
            t0 = time.perf_counter()
            body = metrics.exposition()
            scrapes.append(time.perf_counter() - t0)
        print(f"a /metrics exposition: p50 {statistics.median(scrapes) * 1000:.2f} ms, {len(body)} bytes")
    finally:
        running.stop(grace=0)
        spark.stop()


if __name__ == "__main__":
    main()
