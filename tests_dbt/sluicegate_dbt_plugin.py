"""pytest plugin that runs dbt-spark's own functional suite (from its sdist, unchanged) against a real sluicegate.

The suite's `apache_spark` profile points at Spark's Thrift server on `spark_db:10000`; here it points at a gateway
this plugin starts on 127.0.0.1 (port 0, a fresh warehouse), with a 1 s poll interval and long-poll wait (below).
Classes that the suite skips on `apache_spark` only because Spark's Thrift server lacks them (Delta Lake above all)
run here, with their reasons in `RUN_HERE`; the tests expected to fail are in `KNOWN_FAILURES` and those skipped here
in `SKIPPED_HERE`, each with its reason (printed by `-ra`); every other skip is the suite's own, with its own reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
# tests/child_processes.py, shared with the gateway's tests: appended, so that nothing installed here is shadowed.
sys.path.append(str(REPO / "tests"))
from child_processes import ready_match, stop

# dbt-tests-adapter's `project` fixtures, also for the test modules outside the suite's tree (tests_dbt/example).
pytest_plugins = ["dbt.tests.fixtures.project"]

# Skipped by the suite on `apache_spark` (Spark's Thrift server) but run here, with why they apply to sluicegate.
RUN_HERE = {
    "test_basic.py::TestSnapshotCheckColsSpark": "snapshots MERGE into Delta tables",
    "test_basic.py::TestSnapshotTimestampSpark": "snapshots MERGE into Delta tables",
    "test_basic.py::TestSingularTestsEphemeralSpark": "ephemeral models are CTEs, nothing server-specific",
    "test_incremental_merge_exclude_columns.py": "MERGE into Delta",
    "test_incremental_predicates.py": "MERGE into Delta",
    "test_incremental_unique_id.py": "MERGE into Delta",
    "test_incremental_on_schema_change.py::TestDeltaOnSchemaChange": "ALTER TABLE ADD COLUMNS on Delta",
    "test_incremental_strategies.py::TestDeltaStrategies": "append and merge on Delta",
    "test_persist_docs.py": "column and table comments on Delta",
    "test_store_test_failures.py::TestSparkStoreTestFailuresWithDelta": "test failures stored as Delta tables",
    "test_dbt_clone.py": "dbt clone's `create or replace table t shallow clone s` of Delta tables",
    "test_dbt_show.py::TestSparkShowDoesNotHandleDoubleLimit": "dbt show's LIMIT, nothing server-specific",
    "test_utils.py::TestDateDiff": "Spark 4.1's date functions",
    "test_grants.py::TestModelGrantsSpark": "GRANT, REVOKE and SHOW GRANTS (Databricks' shape)",
    "test_grants.py::TestIncrementalGrantsSpark": "GRANT, REVOKE and SHOW GRANTS (Databricks' shape)",
    "test_grants.py::TestSeedGrantsSpark": "GRANT, REVOKE and SHOW GRANTS (Databricks' shape)",
    "test_grants.py::TestSnapshotGrantsSpark": "GRANT, REVOKE and SHOW GRANTS (Databricks' shape)",
    **{f"test_constraints.py::{name}": "Delta CHECK constraints (ALTER TABLE ADD CONSTRAINT) and SET NOT NULL"
       for name in ("TestSparkTableConstraintsDdlEnforcement", "TestSparkIncrementalConstraintsDdlEnforcement",
                    "TestSparkConstraintQuotedColumn", "TestSparkTableConstraintsRollback",
                    "TestSparkIncrementalConstraintsRollback", "TestSparkModelConstraintsRuntimeEnforcement")},
    **{f"test_constraints.py::{name}": "contracts: the column types a PyHive cursor describes (Databricks' names)"
       for name in ("TestSparkTableConstraintsColumnsEqualDatabricksHTTP",
                    "TestSparkViewConstraintsColumnsEqualDatabricksHTTP",
                    "TestSparkIncrementalConstraintsColumnsEqualDatabricksHTTP")},
}

# Tests that fail against sluicegate for a reason that is not sluicegate's, each failing the same way against Spark's
# own Thrift server (4.1.4) or needing another dbt version. Strict: a test here that starts passing fails the run, so
# the list stays true.
_SEED_EMPTY = "`dbt seed --empty` needs dbt-core 1.12 (fails the same against Spark's own Thrift server)"
KNOWN_FAILURES = {
    **{f"test_empty.py::TestSparkEmptySeedFlag::{test}": _SEED_EMPTY for test in (
        "test_seed_empty_creates_table_with_zero_rows", "test_seed_empty_preserves_column_types",
        "test_build_empty_with_seed")},
}

# Skipped here as for Spark's Thrift server, each with why (the suite's own reason, "skipped on 'apache_spark'
# profile", says nothing about sluicegate).
SKIPPED_HERE = {
    **{f"test_constraints.py::{name}": "expects pyodbc's type names (STR, BOOL, DATETIME) in contract errors; the "
                                       "DatabricksHTTP variant of the class, with the names PyHive reports, runs here"
       for name in ("TestSparkTableConstraintsColumnsEqualPyodbc", "TestSparkViewConstraintsColumnsEqualPyodbc",
                    "TestSparkIncrementalConstraintsColumnsEqualPyodbc")},
    "test_grants.py::TestInvalidGrantsSpark": "expects Databricks' errors for unknown users; sluicegate grants to any "
                                              "user name (it has no user directory to check against)",
    "test_python_model.py": "Python models run as jobs on a Databricks cluster, not over a Thrift connection",
}

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
    port = ready_match(_gateway, r"ready on 127\.0\.0\.1:(\d+)", warehouse / "gateway.log").group(1)
    print(f"sluicegate gateway on port {port}, log {warehouse / 'gateway.log'}", file=sys.stderr)
    return int(port)


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
        # dbt-spark's client-side `query_timeout` is checked between polls, timed from the first poll's answer; a poll
        # waits up to Hive's 5 s long-polling timeout (as on Spark's Thrift server), so the timeout would fire only
        # for statements over ~11 s (test_query_timeout's 8.5 s cross join would finish first). A 1 s wait and poll
        # interval, as a user who sets query_timeout would choose, keep it within ~2 s.
        "server_side_parameters": {"hive.server2.long.polling.timeout": "1s"},
        "poll_interval": 1,
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
        if any(part in item.nodeid for part in RUN_HERE):
            item.add_marker(pytest.mark.skip_profile("spark_session"), append=False)
        for part, reason in SKIPPED_HERE.items():
            if part in item.nodeid:
                item.add_marker(pytest.mark.skip(reason=reason))
        for part, reason in KNOWN_FAILURES.items():
            if part in item.nodeid:
                item.add_marker(pytest.mark.xfail(reason=reason, strict=True))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _gateway is not None:
        stop(_gateway, 60)
