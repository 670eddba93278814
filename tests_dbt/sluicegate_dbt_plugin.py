"""pytest plugin that runs dbt-spark's own functional suite (from its sdist, unchanged) against a real sluicegate.

The suite's `apache_spark` profile points at Spark's Thrift server on `spark_db:10000`; here it points at a gateway
this plugin starts on 127.0.0.1 (port 0, a fresh warehouse), with dbt-spark's default `poll_interval`. Classes that
the suite skips on `apache_spark` only because Spark's Thrift server has no Delta Lake run here (sluicegate's tables
are Delta); every test that stays skipped has its reason in `STILL_SKIPPED`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent

# Skipped on `apache_spark` by the suite because Spark's Thrift server lacks Delta: they run against sluicegate.
DELTA_ONLY = (
    "test_basic.py::TestSnapshotCheckColsSpark",
    "test_basic.py::TestSnapshotTimestampSpark",
    "test_incremental_merge_exclude_columns.py",
    "test_incremental_predicates.py",
    "test_incremental_unique_id.py",
    "test_incremental_on_schema_change.py::TestIncrementalOnSchemaChangeSpecialCases",
    "test_persist_docs.py",
    "test_incremental_strategies.py::TestDeltaStrategies",
)

_gateway: subprocess.Popen[str] | None = None
_port: int | None = None
_warehouse: Path | None = None


def _start_gateway() -> int:
    """Start `sluicegate serve --port 0` on a fresh warehouse and return the port from its ready line."""
    global _gateway, _warehouse
    warehouse = Path(tempfile.mkdtemp(prefix="sluicegate-dbt-"))
    _warehouse = warehouse / "wh"
    sluicegate = os.environ.get("SLUICEGATE", str(REPO / ".venv" / "bin" / "sluicegate"))
    log = open(warehouse / "gateway.log", "w")  # noqa: SIM115 - lives as long as the gateway
    _gateway = subprocess.Popen([sluicegate, "serve", "--port", "0", "--warehouse", str(warehouse / "wh")],
                                stdout=subprocess.PIPE, stderr=log, text=True)
    assert _gateway.stdout is not None
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = _gateway.stdout.readline()
        if not line:
            raise RuntimeError(f"the gateway exited before it was ready; see {warehouse / 'gateway.log'}")
        match = re.search(r"ready on 127\.0\.0\.1:(\d+)", line)
        if match:
            print(f"sluicegate gateway on port {match.group(1)}, log {warehouse / 'gateway.log'}", file=sys.stderr)
            return int(match.group(1))
    raise RuntimeError("the gateway did not become ready within 180 s")


def sluicegate_target() -> dict[str, Any]:
    global _port
    if _port is None:
        _port = _start_gateway()
    return {
        "type": "spark",
        "method": "thrift",
        "host": "127.0.0.1",
        "port": _port,
        "user": "dbt",
        "connect_retries": 2,
        "connect_timeout": 3,
        "retry_all": False,
    }


@pytest.fixture(scope="session")
def sluicegate() -> dict[str, Any]:
    """The gateway the suite runs against: its dbt target and its warehouse folder (files land in WAREHOUSE/landing,
    the folder users may read by default)."""
    target = sluicegate_target()
    assert _warehouse is not None
    return {"target": target, "warehouse": _warehouse}


def pytest_configure(config: pytest.Config) -> None:
    from tests.functional.fixtures import profiles  # dbt-spark's suite, from its sdist

    profiles.apache_spark_target = sluicegate_target


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(part in item.nodeid for part in DELTA_ONLY):
            item.add_marker(pytest.mark.skip_profile("spark_session"), append=False)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _gateway is not None:
        _gateway.terminate()
        try:
            _gateway.wait(timeout=60)
        except subprocess.TimeoutExpired:
            _gateway.kill()
