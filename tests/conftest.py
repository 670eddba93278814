"""Fixtures: a real Spark session and real gateways on 127.0.0.1, port 0 (the bound port is read back)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sluicegate.engine.spark import create_spark_session, warm_up
from sluicegate.gateway.auth.providers import make_authenticator
from sluicegate.gateway.config import GatewayConfig, load_config
from sluicegate.gateway.server import GatewayServer
from sluicegate.gateway.service import GatewayService, open_catalog


@dataclass
class RunningGateway:
    config: GatewayConfig
    service: GatewayService
    server: GatewayServer

    @property
    def host(self) -> str:
        return "127.0.0.1"

    @property
    def port(self) -> int:
        return self.server.port


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="session")
def spark(warehouse: Path) -> Iterator[Any]:
    config = load_config(warehouse=warehouse)
    session = create_spark_session(config.spark)
    warm_up(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def streams(spark: Any, warehouse: Path) -> Iterator[Any]:
    """One stream manager for every gateway of the test process: they share one warehouse, and two managers would
    each run its streams."""
    from sluicegate.engine.streams.manager import StreamManager

    config = load_config(warehouse=warehouse, overrides={"streams": {"trigger_interval": 0.2,
                                                                           "static_check_interval": 1.0}})
    store = open_catalog(config)
    manager = StreamManager(spark, store, config.streams)
    yield manager
    manager.stop_all()
    store.close()


@pytest.fixture(scope="session")
def landing_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where tests land files for streams and file views: the tests' temporary folders (the warehouse among them
    stays protected by the policy)."""
    return tmp_path_factory.getbasetemp()


def with_landing(overrides: dict[str, Any] | None, root: Path) -> dict[str, Any]:
    merged = {key: dict(value) if isinstance(value, dict) else value for key, value in (overrides or {}).items()}
    merged.setdefault("security", {}).setdefault("allowed_paths", [str(root)])
    return merged


@pytest.fixture(scope="session")
def start_gateway(spark: Any, warehouse: Path, streams: Any,
                  landing_root: Path) -> Iterator[Callable[..., RunningGateway]]:
    """Start a gateway on the shared Spark with configuration overrides (a nested dict, as in the TOML file)."""
    started: list[RunningGateway] = []

    def start(overrides: dict[str, Any] | None = None) -> RunningGateway:
        config = load_config(port=0, warehouse=warehouse, overrides=with_landing(overrides, landing_root))
        service = GatewayService(config, spark, make_authenticator(config.auth.mode, config.auth.password_file,
                                                                        config.auth.ldap),
                                 open_catalog(config), streams)
        server = GatewayServer(service, "127.0.0.1", 0, config.server.max_connections)
        server.start()
        running = RunningGateway(config, service, server)
        started.append(running)
        return running

    yield start
    for running in started:
        running.server.shutdown(grace=0)
        if running.service.catalog is not None:
            running.service.catalog.close()


@pytest.fixture(scope="session")
def gateway(start_gateway: Callable[..., RunningGateway]) -> RunningGateway:
    return start_gateway()


@pytest.fixture(scope="module")
def kafka() -> Iterator[Any]:
    """A mock Kafka cluster (librdkafka's, in process) for one module's tests, closed after them: a module's streams
    must be stopped before it goes."""
    from kafka_broker import running_mock_kafka

    yield from running_mock_kafka()


@pytest.fixture()
def connect(gateway: RunningGateway) -> Iterator[Callable[..., Any]]:
    """PyHive connections to the shared gateway, closed after the test."""
    from pyhive import hive

    opened = []

    def open_connection(**kwargs: Any) -> Any:
        kwargs.setdefault("username", "tester")
        conn = hive.connect(gateway.host, kwargs.pop("port", gateway.port), **kwargs)
        opened.append(conn)
        return conn

    yield open_connection
    for conn in opened:
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - a test may have closed it, or killed its server
            pass


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@pytest.fixture(scope="session")
def beeline() -> Callable[..., Any]:
    """Run the Java beeline shipped in pyspark's jars against a gateway; returns the CompletedProcess."""
    import subprocess

    home = spark_home()
    script = home / "bin" / "beeline"
    if not os.access(script, os.X_OK):
        for tool in (home / "bin").iterdir():
            tool.chmod(tool.stat().st_mode | 0o111)
    env = dict(os.environ, SPARK_HOME=str(home))
    if "JAVA_HOME" not in env:
        from sluicegate.engine.java import find_java_home

        env["JAVA_HOME"] = str(find_java_home())

    def run(port: int, *args: str, user: str = "tester", password: str = "x", timeout: float = 180,
            url_options: str = "") -> Any:
        """`url_options`: appended to the JDBC URL, e.g. ";ssl=true;sslTrustStore=...;trustStorePassword=..."."""
        command = [str(script), "-u", f"jdbc:hive2://127.0.0.1:{port}/default{url_options}", "-n", user, "-p", password,
                   "--silent=true", "--outputformat=csv2", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env,
                              stdin=subprocess.DEVNULL)

    assert shutil.which("bash"), "beeline is a bash script"
    return run
