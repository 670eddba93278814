"""Fixtures: a real Spark session and real gateways on 127.0.0.1, port 0 (the bound port is read back); and the
markers that say what a test needs, set from the fixtures and helpers it uses (so that a new test cannot forget them
and `-m "not jvm"` stays a lane that starts no JVM)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import connections

from sluicegate.engine.maintenance import TableMaintenance
from sluicegate.gateway import app
from sluicegate.gateway.app import RunningGateway
from sluicegate.gateway.config import load_config
from sluicegate.gateway.service import open_catalog

# A fixture in a test's closure, and what it needs.
FIXTURE_NEEDS = {"spark": ("jvm",), "beeline": ("beeline", "jvm"), "s3": ("s3",), "browser": ("browser",)}
# A helper a test module imports, and what its tests need (they start it in their own fixtures or bodies).
HELPER_NEEDS = {"GatewayProcess": ("process", "jvm"), "standalone_cluster": ("cluster", "jvm"),
                "seaweed_s3": ("s3",), "S3Store": ("s3",)}
# Markers set by hand that mean a JVM as well.
JVM_MARKERS = ("beeline", "cluster", "process")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by them
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        needs: set[str] = set()
        for fixture in getattr(item, "fixturenames", ()):
            needs.update(FIXTURE_NEEDS.get(fixture, ()))
        module = getattr(item, "module", None)
        for helper, markers in HELPER_NEEDS.items():
            if module is not None and helper in vars(module):
                needs.update(markers)
        if any(item.get_closest_marker(name) for name in JVM_MARKERS):
            needs.add("jvm")
        for name in sorted(needs):
            if item.get_closest_marker(name) is None:
                item.add_marker(name)


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="session")
def spark(warehouse: Path) -> Iterator[Any]:
    session = app.start_spark(load_config(warehouse=warehouse))
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
    _shared_streams.append(manager)
    yield manager
    _shared_streams.clear()
    manager.stop_all()
    store.close()


_shared_streams: list[Any] = []   # the session's stream manager, once a test has asked for it


@pytest.fixture(scope="module", autouse=True)
def _stop_the_modules_streams() -> Iterator[None]:
    """Stop the streams a test module left running in the shared manager when the module ends. Its tables stay;
    only their queries end. Left running, every streaming table of every earlier module fired at the tests' 0.2 s
    trigger for the rest of the session (over a hundred by the end of the suite), taking the cores from the tests
    that came after. Asks for no fixture: a module that starts no JVM starts none here either."""
    before = set(_shared_streams[0].running()) if _shared_streams else set()
    yield
    if not _shared_streams:
        return
    manager = _shared_streams[0]
    for key in manager.running():
        if key not in before:
            manager.stop(key[0], key[1], flow=key[2] if len(key) > 2 else None)


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
        running = app.start(config, spark, catalog=open_catalog(config), streams=streams, host="127.0.0.1", port=0)
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop(grace=0)


@pytest.fixture(scope="session")
def gateway(start_gateway: Callable[..., RunningGateway]) -> RunningGateway:
    return start_gateway()


@pytest.fixture(scope="module")
def shipped_compactor(gateway: RunningGateway) -> Iterator[TableMaintenance]:
    """The background compactor at the shipped defaults, on the shared gateway's catalog, as `sluicegate serve` runs
    it: the tests' gateways share one stream manager, so none of them starts its own."""
    maintenance = TableMaintenance(gateway.service.catalog, load_config().maintenance).start()
    yield maintenance
    maintenance.close()


@pytest.fixture(scope="module")
def kafka() -> Iterator[Any]:
    """A mock Kafka cluster (librdkafka's, in process) for one module's tests, closed after them: a module's streams
    must be stopped before it goes."""
    from kafka_broker import running_mock_kafka

    yield from running_mock_kafka()


@pytest.fixture()
def connect(gateway: RunningGateway) -> Iterator[Callable[..., Any]]:
    """PyHive connections to the shared gateway, closed after the test."""
    yield from connections(gateway)


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
