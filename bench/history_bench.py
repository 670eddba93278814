"""What the query history costs a statement: `SELECT 1` (execute + fetchall, through PyHive) on two gateways of one
Spark, one with the history and the statement log on (the default), one with both off (no observer at all),
measured in short alternating rounds so that the machine's drift falls on both alike. Two workloads: the same text
again and again (`SELECT 1`: the writer's cache of described texts hits) and a new text each time (`SELECT <n>`:
every statement's facts read and its text redacted anew). Prints p50, p99 and mean of each side, the median over
rounds of the on/off ratio of the round's medians and of their p99s (paired: each round's two halves ran back to
back), the machine's load average, and what the history costs in CPU time, which the machine's load does not inflate
as it does latency: the writer thread's CPU per statement (`HistoryRecorder.cpu_seconds`) and the time the
observer's two calls take on the statement's own thread (timed directly, on operations that do nothing). Writes the
samples to bench/out/history_bench.json.

    ./run bench bench/history_bench.py [--rounds 20] [--per-round 50]
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from pyhive import hive

from sluicegate.gateway import app
from sluicegate.gateway.config import load_config


def _load(values: tuple[float, float, float]) -> str:
    return "/".join(f"{value:.1f}" for value in values)


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def _round(cursor: Any, n: int, distinct: bool = False) -> list[float]:
    times = []
    for _ in range(n):
        sql = f"SELECT {next(_numbers)}" if distinct else "SELECT 1"
        start = time.perf_counter()
        cursor.execute(sql)
        cursor.fetchall()
        times.append((time.perf_counter() - start) * 1000)
    return times


_numbers = itertools.count(2)


def _observer_cost(recorder: Any, n: int = 2000) -> float:
    """Microseconds the recorder's `ended` and `closed` take on an operation's thread (operations that did
    nothing, run to FINISHED without the recorder, then told of their end and close directly)."""
    from types import SimpleNamespace

    import pyarrow as pa

    from sluicegate.engine.results import ResultColumn
    from sluicegate.engine.sql import ListBatchSource, StatementResult
    from sluicegate.gateway.handles import SessionHandle
    from sluicegate.gateway.operation.base import Operation, OperationType

    class _Nothing(Operation):
        op_type = OperationType.EXECUTE_STATEMENT

        def execute(self) -> StatementResult:
            batch = pa.record_batch([pa.array([1])], names=["_c0"])
            return StatementResult([ResultColumn("x", "int")], lambda: ListBatchSource([batch]))

    session = SimpleNamespace(user="bench", handle=SessionHandle.new(), client="127.0.0.1:1", touch=lambda: None,
                              forget=lambda op: None)
    operations = []
    for _ in range(n):
        operation = _Nothing(session, "SELECT 1")  # type: ignore[arg-type]
        operation.run()
        operations.append(operation)
    start = time.perf_counter()
    for operation in operations:
        recorder.ended(operation)
        recorder.closed(operation)
    took = time.perf_counter() - start
    recorder.flush(60)
    return took / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--per-round", type=int, default=50)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)   # the statement log at INFO would measure the terminal
    warehouse = Path(tempfile.mkdtemp(prefix="history-bench-"))
    on_config = load_config(port=0, warehouse=warehouse)
    off_config = load_config(port=0, warehouse=warehouse, overrides={
        "history": {"enabled": False}, "log": {"statements": False}})
    spark = app.start_spark(on_config)
    # the side without the history owns the warehouse's background work (streams, scheduler, compaction): if
    # anything, that is charged to the side the history is compared with, not to the history
    off = app.start(off_config, spark, host="127.0.0.1", port=0)
    on = app.start(on_config, spark, catalog=off.service.catalog, streams=off.service.streams, host="127.0.0.1",
                   port=0)
    assert on.history is not None and off.history is None
    try:
        cursors = {name: hive.connect("127.0.0.1", gw.port, username="bench").cursor()
                   for name, gw in (("on", on), ("off", off))}
        for cursor in cursors.values():
            _round(cursor, 50)   # warm-up, both sides
        samples: dict[str, dict[str, list[list[float]]]] = {
            workload: {"on": [], "off": []} for workload in ("same", "distinct")}
        writer_cpu: dict[str, float] = {}
        started = time.time()
        load_before = os.getloadavg()
        for workload in ("same", "distinct"):
            assert on.history.flush(60)
            before = on.history.cpu_seconds
            for number in range(args.rounds):
                order = ("on", "off") if number % 2 == 0 else ("off", "on")
                for name in order:
                    samples[workload][name].append(_round(cursors[name], args.per_round, workload == "distinct"))
            assert on.history.flush(60)
            writer_cpu[workload] = on.history.cpu_seconds - before
        elapsed = time.time() - started
        load_after = os.getloadavg()
        observer_us = _observer_cost(on.history)
        assert on.history.flush(60)
        from sluicegate.catalog import history

        stored = history.count(on.service.catalog)
    finally:
        on.server.shutdown(0)
        on.history.stop()
        off.stop(grace=0)
        spark.stop()
    print(f"SELECT through PyHive, {args.rounds} alternating rounds of {args.per_round} per side and workload, "
          f"{elapsed:.0f} s; {stored} statements stored by the history; load average (1, 5, 15 min) "
          f"{_load(load_before)} before, {_load(load_after)} after on {os.cpu_count()} CPUs")
    print(f"{'workload':24} {'history':8} {'n':>6} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for workload, label in (("same", "SELECT 1 (same text)"), ("distinct", "SELECT <n> (new text)")):
        for name in ("off", "on"):
            data = [x for each in samples[workload][name] for x in each]
            print(f"{label:24} {name:8} {len(data):>6} {statistics.median(data):>8.2f} "
                  f"{_percentile(data, 0.99):>8.2f} {statistics.fmean(data):>8.2f}")
        ratios = [statistics.median(with_history) / statistics.median(without)
                  for with_history, without in zip(samples[workload]["on"], samples[workload]["off"], strict=True)]
        print(f"{label:24} cost of the history, median over rounds of the paired p50 ratio: "
              f"{100 * (statistics.median(ratios) - 1):+.1f}% (rounds' ratios {min(ratios):.2f}-{max(ratios):.2f})")
        tails = [_percentile(with_history, 0.99) / _percentile(without, 0.99)
                 for with_history, without in zip(samples[workload]["on"], samples[workload]["off"], strict=True)]
        print(f"{label:24} cost of the history, median over rounds of the paired p99 ratio: "
              f"{100 * (statistics.median(tails) - 1):+.1f}% (rounds' ratios {min(tails):.2f}-{max(tails):.2f})")
        # the statements of the on side, and the one that closed each round's previous statement
        per = 1000 * writer_cpu[workload] / (args.rounds * args.per_round)
        print(f"{label:24} the writer thread's CPU per statement: {per:.3f} ms")
    print(f"the observer on the statement's thread (ended + closed): {observer_us:.1f} us per statement")
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    result = {"samples_ms": samples, "writer_cpu_s": writer_cpu, "observer_us": observer_us, "stored": stored,
              "load": [load_before, load_after]}
    (out / "history_bench.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
