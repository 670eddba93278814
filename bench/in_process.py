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
def in_process_gateway(prefix: str) -> Iterator[InProcessGateway]:
    from pyhive import hive

    from gateway.auth.providers import make_authenticator
    from gateway.config import load_config
    from gateway.server import GatewayServer
    from gateway.service import GatewayService, open_catalog
    from runtime.spark import create_spark_session, warm_up

    config = load_config(port=0, warehouse=Path(tempfile.mkdtemp(prefix=prefix)))
    spark = create_spark_session(config.spark)
    warm_up(spark)
    catalog = open_catalog(config)
    service = GatewayService(config, spark, make_authenticator(config.auth.mode, config.auth.password_file), catalog)
    server = GatewayServer(service, "127.0.0.1", 0, config.server.max_connections)
    server.start()
    try:
        cursor = hive.connect("127.0.0.1", server.port, username="bench").cursor()

        def run(sql: str) -> list[Any]:
            cursor.execute(sql)
            return cursor.fetchall() if cursor.description else []

        yield InProcessGateway(spark, server.port, run)
    finally:
        server.shutdown(grace=0)
        catalog.close()
        spark.stop()
