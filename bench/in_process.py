"""A real gateway in the benchmark's own process: 127.0.0.1, port 0, a fresh warehouse, its Spark warmed up (a fresh
Spark runs its first pass 2-3x slower), and a PyHive cursor on it; everything stopped at the end."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class InProcessGateway:
    spark: Any
    port: int
    run: Callable[[str], list[Any]]       # one statement through PyHive; its rows (none for a command)


@contextmanager
def serving(spark: Any, config: Any, catalog: Any = None,
            result_cache: bool = False) -> Iterator[tuple[int, Callable[[str], list[Any]]]]:
    """A gateway with `config` on `spark` (its catalog opened from the configuration unless given), on 127.0.0.1
    port 0: yields its port and a function running one statement through PyHive; stopped, its catalog closed, at the
    end. The result cache is off unless `result_cache`: these benchmarks time Spark's work on the same query run after
    run, which the cache would answer from memory (bench/result_cache_bench.py measures the cache)."""
    import dataclasses

    from pyhive import hive

    from sluicegate.gateway import app

    if not result_cache:
        config = dataclasses.replace(config, result_cache=dataclasses.replace(config.result_cache, enabled=False))
    running = app.start(config, spark, catalog=catalog, host="127.0.0.1", port=0)
    try:
        cursor = hive.connect("127.0.0.1", running.port, username="bench").cursor()

        def run(sql: str) -> list[Any]:
            cursor.execute(sql)
            return cursor.fetchall() if cursor.description else []

        yield running.port, run
    finally:
        running.stop(grace=0)


@contextmanager
def in_process_gateway(prefix: str) -> Iterator[InProcessGateway]:
    from sluicegate.gateway import app
    from sluicegate.gateway.config import load_config

    config = load_config(port=0, warehouse=Path(tempfile.mkdtemp(prefix=prefix)))
    spark = app.start_spark(config)
    try:
        with serving(spark, config) as (port, run):
            yield InProcessGateway(spark, port, run)
    finally:
        spark.stop()
