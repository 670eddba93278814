"""Proof, before a cluster gateway serves anyone, that executors and driver see the same folders.

Executors write table files, checkpoints and state where the driver later lists, reads and commits them. If a
worker has its own disk at the warehouse's path (machines without a shared mount), its files are invisible to the
driver and every commit would silently miss them. So each folder is probed both ways: the driver writes a file that
tasks on every executor must read, and each task writes a file the driver must read. Local masters skip this: their
executors are threads of the driver.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sluicegate.engine.cluster.errors import ExecutorsUnavailableError, SharedStorageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DRIVER_FILE = "from-driver"
TASK_SECONDS = 0.3     # a task holds its slot this long, so the next tasks go to the other executors' free slots
ROUNDS = 5             # jobs tried until every registered executor ran a task
MOUNT_HINT = ("mount the folder at the same path on the gateway's machine and every Spark worker (NFS or a cluster "
              "filesystem), or point it at storage every node reaches")


@dataclass(frozen=True)
class TaskReport:
    executor: str                 # host and working folder of the executor's Python worker
    partition: int
    unseen: tuple[str, ...]       # folders whose driver file this task could not read
    code: str                     # where the executor imported the project from (the shipped archive, or an install)


@dataclass(frozen=True)
class ProbeResult:
    executors: frozenset[str]
    folders: tuple[str, ...]
    code: frozenset[str]

    def summary(self) -> str:
        return (f"{len(self.executors)} executors and the driver see the same {', '.join(self.folders)}; executors "
                f"import the project from {', '.join(sorted(self.code))}")


def executor_count(spark: SparkSession) -> int:
    """Executors registered with the driver now (the driver itself not counted)."""
    return int(spark.sparkContext._jsc.sc().getExecutorIds().size())


def wait_for_executors(spark: SparkSession, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while (count := executor_count(spark)) == 0:
        if time.monotonic() > deadline:
            raise ExecutorsUnavailableError(
                f"no executor registered with the driver within {timeout:.0f} s (master "
                f"{spark.sparkContext.master})",
                hint="check that the cluster has free cores and memory for spark.executor.memory, and that its "
                     "workers can reach the driver at spark.driver_host")
        time.sleep(0.2)
    return count


def _probe_task(folders: Sequence[str], token: str) -> Callable[[int, Iterable[int]], Iterator[TaskReport]]:
    """Runs on an executor: reads the driver's file in each folder and writes its own next to it."""

    def run(partition: int, _rows: Iterable[int]) -> Iterator[TaskReport]:
        executor = f"{socket.gethostname()}:{os.getcwd()}"
        unseen = []
        for folder in folders:
            probe = os.path.join(folder, f".sg-probe-{token}")
            try:
                with open(os.path.join(probe, DRIVER_FILE), encoding="utf-8") as handle:
                    if handle.read() != token:
                        unseen.append(folder)
            except OSError:
                unseen.append(folder)
            os.makedirs(probe, exist_ok=True)
            with open(os.path.join(probe, f"task-{partition}"), "w", encoding="utf-8") as handle:
                handle.write(token)
        time.sleep(TASK_SECONDS)
        import sluicegate  # on the executor: where its Python worker found the project (the shipped zip, or an install)

        yield TaskReport(executor, partition, tuple(unseen), os.path.dirname(os.path.dirname(sluicegate.__file__)))

    return run


def _driver_missing(folder: str, token: str, partitions: Sequence[int]) -> list[int]:
    probe = os.path.join(folder, f".sg-probe-{token}")
    missing = []
    for partition in partitions:
        try:
            with open(os.path.join(probe, f"task-{partition}"), encoding="utf-8") as handle:
                if handle.read() != token:
                    missing.append(partition)
        except OSError:
            missing.append(partition)
    return missing


def probe_shared_folders(spark: SparkSession, folders: Sequence[Path], *, executor_timeout: float = 120.0
                         ) -> ProbeResult:
    """Raise SharedStorageError naming the first folder that executors and driver do not both see."""
    paths = tuple(dict.fromkeys(str(folder) for folder in folders))
    executors = wait_for_executors(spark, executor_timeout)
    token = uuid.uuid4().hex
    for folder in paths:
        os.makedirs(os.path.join(folder, f".sg-probe-{token}"), exist_ok=True)
        Path(folder, f".sg-probe-{token}", DRIVER_FILE).write_text(token, encoding="utf-8")
    seen: set[str] = set()
    reports: list[TaskReport] = []
    try:
        for _ in range(ROUNDS):
            executors = max(executors, executor_count(spark))
            slices = 4 * executors
            job = spark.sparkContext.parallelize(range(slices), slices).mapPartitionsWithIndex(
                _probe_task(paths, token))
            try:
                round_reports = job.collect()
            except Exception as exc:
                raise ExecutorsUnavailableError(
                    f"the storage probe could not run on the executors: {str(exc).strip().splitlines()[0][:300]}",
                    hint="executors need the gateway's Python (spark.pyspark.python) with pyarrow, deltalake and "
                         "sqlglot installed") from exc
            reports.extend(round_reports)
            seen.update(report.executor for report in round_reports)
            if len(seen) >= executors:
                break
        _check(paths, token, reports)
    finally:
        for folder in paths:
            shutil.rmtree(os.path.join(folder, f".sg-probe-{token}"), ignore_errors=True)
    result = ProbeResult(frozenset(seen), paths, frozenset(report.code for report in reports))
    log.info("storage probe: %s (%s)", result.summary(), ", ".join(sorted(seen)))
    return result


def _check(paths: Sequence[str], token: str, reports: Sequence[TaskReport]) -> None:
    for folder in paths:
        blind = sorted({report.executor for report in reports if folder in report.unseen})
        missing = _driver_missing(folder, token, [report.partition for report in reports])
        if blind or missing:
            side = (f"executors {', '.join(blind)} cannot read what the driver wrote there" if blind else
                    f"the driver cannot read what {len(missing)} executor tasks wrote there")
            raise SharedStorageError(
                f"executors and the driver do not see the same files at {folder}: {side}; the gateway would lose "
                "the rows and state written there, so it does not start",
                hint=MOUNT_HINT)
