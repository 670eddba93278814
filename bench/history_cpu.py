"""Where the query history's CPU goes, per statement, without a JVM or a client (so the figures hold on a busy
machine, unlike latency): real operations of `SELECT 1` (the same text) and `SELECT <n>` (a new text each), classified
as ExecuteStatement classifies them, told to a real HistoryRecorder writing a real SQLite history file. Measured with
`time.thread_time()` (CPU of the thread measured only):
- the request path: the observer's `ended` + `closed` on the operation's thread;
- the writer thread, in its parts, run synchronously on this thread over the same kind of items: describing a
  statement and building its record (`_noted` + `_record`), the statement log line (`_log_line`, with the log at
  INFO into a handler that drops it: the formatting is paid, the terminal is not), and the batch insert
  (`history.append`);
- the writer's whole work (`_write_batch`: records, log lines, the GIL hand-backs, insert and commit) on this thread
  in batches of `--batch` (40: what 0.5 s of `flush_interval` gathers of ~12 ms statements from one client);
- the writer thread as it runs (`HistoryRecorder.cpu_seconds`, batches as large as the queue allows);
- with --profile, a cProfile of the batch insert, top entries.

    ./run bench bench/history_cpu.py [--n 5000] [--batch 40] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import logging
import pstats
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa

from sluicegate.catalog import history
from sluicegate.catalog.history import HistorySettings
from sluicegate.catalog.store import CatalogStore
from sluicegate.dialect.classify import classified
from sluicegate.engine.results import ResultColumn
from sluicegate.engine.sql import ListBatchSource, StatementResult
from sluicegate.gateway import history as recorder_module
from sluicegate.gateway.handles import SessionHandle
from sluicegate.gateway.history import HistoryRecorder
from sluicegate.gateway.operation.base import Operation, OperationType

_numbers = itertools.count(2)


class _Select(Operation):
    """A statement that returns one row without Spark, noted as ExecuteStatement notes its classification."""

    op_type = OperationType.EXECUTE_STATEMENT

    def execute(self) -> StatementResult:
        self.classified = classified(self.statement)
        batch = pa.record_batch([pa.array([1])], names=["_c0"])
        return StatementResult([ResultColumn("x", "int")], lambda: ListBatchSource([batch]))


def _operations(n: int, distinct: bool) -> list[Operation]:
    session = SimpleNamespace(user="bench", handle=SessionHandle.new(), client="127.0.0.1:1", touch=lambda: None,
                              forget=lambda op: None, client_application="PyHive")
    operations = []
    for _ in range(n):
        operation = _Select(session, f"SELECT {next(_numbers)}" if distinct else "SELECT 1")  # type: ignore[arg-type]
        operation.run()
        operations.append(operation)
    return operations


def _us(seconds: float, n: int) -> str:
    return f"{seconds / n * 1e6:8.1f} us"


def _measure(store: CatalogStore, n: int, distinct: bool, batch_size: int, profile: bool) -> None:
    label = "SELECT <n> (new text)" if distinct else "SELECT 1 (same text)"
    settings = HistorySettings()
    # the request path, and the writer as it runs on its own thread
    recorder = HistoryRecorder(store, settings)
    operations = _operations(n, distinct)
    assert recorder.flush(60)
    before_writer = recorder.cpu_seconds
    began = time.thread_time()
    for operation in operations:
        recorder.ended(operation)
        recorder.closed(operation)
    observer = time.thread_time() - began
    assert recorder.flush(120)
    writer = recorder.cpu_seconds - before_writer
    recorder.stop()
    # the writer's parts, synchronously on this thread, over items noted the same way
    parts = HistoryRecorder(store, settings)
    noted: list[Any] = []
    parts._put = noted.append  # type: ignore[method-assign]   # keep the items instead of queueing them
    for operation in _operations(n, distinct):
        parts.ended(operation)
        parts.closed(operation)
    parts.stop()
    whole = [noted[i:i + batch_size] for i in range(0, len(noted), batch_size)]
    began = time.thread_time()
    for each in whole:
        parts._write_batch(each)
    whole_cpu = time.thread_time() - began
    began = time.thread_time()
    # read off the closed operation, then described, as the writer does
    records = [parts._record(recorder_module._noted(*item)) for item in noted]
    record_cpu = time.thread_time() - began
    began = time.thread_time()
    for record in records:
        recorder_module._log_line(record)
    log_cpu = time.thread_time() - began
    batches = [records[i:i + settings.batch_size] for i in range(0, len(records), settings.batch_size)]
    profiler = cProfile.Profile() if profile else None
    began = time.thread_time()
    if profiler is not None:
        profiler.enable()
    for batch in batches:
        history.append(store, batch, settings, trim=False)
    if profiler is not None:
        profiler.disable()
    append_cpu = time.thread_time() - began
    print(f"{label}, {n} statements (parts: batches of {settings.batch_size}):")
    print(f"  request path, observer ended + closed:      {_us(observer, n)}")
    print(f"  writer's work, batches of {batch_size:<4} (_write_batch): {_us(whole_cpu, n)}")
    print(f"  writer thread as it runs (cpu_seconds):     {_us(writer, n)}")
    print(f"    describe + build the record (_noted + _record): {_us(record_cpu, n)}")
    print(f"    the statement log line (_log_line):    {_us(log_cpu, n)}")
    print(f"    the batch insert (history.append):     {_us(append_cpu, n)}")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=40, help="statements per batch of the writer's whole work")
    parser.add_argument("--profile", action="store_true", help="a cProfile of the batch insert")
    args = parser.parse_args()
    # the statement log at INFO (the default) into a handler that drops the line: formatting paid, no terminal
    statements = logging.getLogger("sluicegate.statements")
    statements.setLevel(logging.INFO)
    statements.propagate = False
    statements.addHandler(logging.NullHandler())
    with tempfile.TemporaryDirectory(prefix="history-cpu-") as warehouse:
        store = CatalogStore.for_warehouse(Path(warehouse))
        try:
            for distinct in (False, True):
                _measure(store, args.n, distinct, args.batch, args.profile)
        finally:
            store.close()


if __name__ == "__main__":
    main()
