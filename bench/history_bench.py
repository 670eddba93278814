"""What the query history and the metrics cost a statement (execute + fetchall, through PyHive) on three gateways of
one Spark: `on` with the history, the statement log and the metrics (the default), `off` with the history and the
statement log off (the metrics on), `bare` with the metrics' statement observer removed too; measured in short
alternating rounds so that the machine's drift falls on all alike. The history's cost is on/off, the metrics' share
off/bare (what is left of the metrics on `bare`: two integer adds per fetch). Four workloads: `SELECT 1` (the same
text again and again: the writer's cache of described texts hits) and `SELECT <n>` (a new text each time: every
statement's facts read and its text redacted anew), both answered by the gateway without the JVM
(engine/literal_results.py), and the same two through Spark (`SELECT abs(1)`, `SELECT abs(<n>)`: a function is not
answered by the gateway, and a statement without a table is not kept by the result cache). Prints p50, p99 and mean
of each side, the median over rounds of the on/off and off/bare ratios of the round's medians and of their p99s
(paired: each round's sides ran back to back, in turns), the machine's load average, and what the history costs in
CPU time, which the machine's load does not inflate as it does latency: the writer thread's CPU per statement
(`HistoryRecorder.cpu_seconds`) and the time the observer's two calls take on the statement's own thread (timed
directly, on operations that do nothing). Writes the samples to bench/out/history_bench.json.

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


# workload -> (its label, the text of its n-th statement)
WORKLOADS: dict[str, tuple[str, Any]] = {
    "same": ("SELECT 1 (same text)", lambda n: "SELECT 1"),
    "distinct": ("SELECT <n> (new text)", lambda n: f"SELECT {n}"),
    "spark_same": ("SELECT abs(1) (Spark)", lambda n: "SELECT abs(1)"),
    "spark_distinct": ("SELECT abs(<n>) (Spark)", lambda n: f"SELECT abs({n})"),
}
SIDES = ("on", "off", "bare")


def _round(cursor: Any, n: int, workload: str = "same") -> list[float]:
    times = []
    text = WORKLOADS[workload][1]
    for _ in range(n):
        sql = text(next(_numbers))
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
    # a fourth gateway, not measured, owns the warehouse's background work (streams, scheduler, compaction) and the
    # others share its catalog: when the `off` side owned it, its `SELECT 1` was 1.4-2.5x slower than `on`'s and
    # `bare`'s on a busy machine (bench/RESULTS.md, issue 26), which charged the owner's work to the comparison
    owner = app.start(off_config, spark, host="127.0.0.1", port=0)
    off = app.start(off_config, spark, catalog=owner.service.catalog, streams=owner.service.streams,
                    host="127.0.0.1", port=0)
    on = app.start(on_config, spark, catalog=owner.service.catalog, streams=owner.service.streams,
                   host="127.0.0.1", port=0)
    bare = app.start(off_config, spark, catalog=owner.service.catalog, streams=owner.service.streams,
                     host="127.0.0.1", port=0)
    bare.service.operations.observers.remove(bare.service.metrics.observer)   # no metrics per statement either
    assert on.history is not None and off.history is None and bare.history is None
    try:
        cursors = {name: hive.connect("127.0.0.1", gw.port, username="bench").cursor()
                   for name, gw in (("on", on), ("off", off), ("bare", bare))}
        for cursor in cursors.values():
            for workload in WORKLOADS:
                _round(cursor, 20, workload)   # warm-up, every side
        samples: dict[str, dict[str, list[list[float]]]] = {
            workload: {side: [] for side in SIDES} for workload in WORKLOADS}
        writer_cpu: dict[str, float] = {}
        started = time.time()
        load_before = os.getloadavg()
        for workload in WORKLOADS:
            assert on.history.flush(60)
            before = on.history.cpu_seconds
            for number in range(args.rounds):
                turn = number % len(SIDES)   # each side first, second and last in turn
                for name in SIDES[turn:] + SIDES[:turn]:
                    samples[workload][name].append(_round(cursors[name], args.per_round, workload))
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
        bare.server.shutdown(0)
        off.server.shutdown(0)
        owner.stop(grace=0)
        spark.stop()
    print(f"SELECT through PyHive, {args.rounds} alternating rounds of {args.per_round} per side and workload, "
          f"{elapsed:.0f} s; {stored} statements stored by the history; load average (1, 5, 15 min) "
          f"{_load(load_before)} before, {_load(load_after)} after on {os.cpu_count()} CPUs")
    print(f"{'workload':24} {'side':8} {'n':>6} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for workload, (label, _) in WORKLOADS.items():
        for name in ("bare", "off", "on"):
            data = [x for each in samples[workload][name] for x in each]
            print(f"{label:24} {name:8} {len(data):>6} {statistics.median(data):>8.2f} "
                  f"{_percentile(data, 0.99):>8.2f} {statistics.fmean(data):>8.2f}")
        for what, upper, lower in (("the history (on/off)", "on", "off"), ("the metrics (off/bare)", "off", "bare")):
            ratios = [statistics.median(a) / statistics.median(b)
                      for a, b in zip(samples[workload][upper], samples[workload][lower], strict=True)]
            tails = [_percentile(a, 0.99) / _percentile(b, 0.99)
                     for a, b in zip(samples[workload][upper], samples[workload][lower], strict=True)]
            print(f"{label:24} cost of {what}, median over rounds of the paired p50 ratio: "
                  f"{100 * (statistics.median(ratios) - 1):+.1f}% (rounds' ratios {min(ratios):.2f}-{max(ratios):.2f})"
                  f"; of the p99 ratio: {100 * (statistics.median(tails) - 1):+.1f}%")
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
