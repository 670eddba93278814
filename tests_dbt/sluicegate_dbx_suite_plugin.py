"""pytest plugin that runs dbt-databricks' own functional suite (`tests/functional/adapter/` of its repository, at a
pinned tag, unchanged: tests_dbt/run_databricks_suite exports it) against a real sluicegate.

The suite's `databricks_uc_sql_endpoint` profile points at a Databricks SQL warehouse named by environment variables;
here every profile the suite builds (its targets all go through `tests.profiles._build_databricks_cluster_target`)
points at a gateway this plugin starts (tests_dbt/dbx_gateway.py: a fresh warehouse, HTTP on a free port, a token),
as a user's profile does (README, "dbt-databricks"): `host` and `_connection_uri` over http, a warehouse-like
`http_path`, the token, catalog `main`. The suite's own connection settings (retries, timeouts, 4 threads) stay.

What needs a Unity Catalog feature the gateway does not have or a cloud cluster is skipped, each with its reason
(`SKIPPED_HERE`, and the markers in `SKIPPED_MARKERS`); the tests expected to fail are in `KNOWN_FAILURES` (strict:
one that starts passing fails the run, so the list stays true); every other skip is the suite's own, with its reason.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

sys.path.append(str(Path(__file__).resolve().parent))  # tests_dbt/, for the shared gateway
from dbx_gateway import SHARED_GATEWAY, Gateway, running_gateway

USER = "dbt_suite"
HTTP_PATH = "/sql/1.0/warehouses/sluicegate"   # a warehouse-like path: dbt assumes the newest runtime, no probe

_UC_TAGS = "Unity Catalog tags (SET TAGS, information_schema.*_tags): not in sluicegate"
_PYTHON = "Python models and Python UDFs run on a Databricks cluster or serverless compute"
_MASKS = "Unity Catalog column masks (SQL functions bound to columns): not in sluicegate"
_FILTERS = "Unity Catalog row filters: not in sluicegate"
_ICEBERG = "Iceberg / UniForm tables (Unity Catalog's Iceberg REST catalog): sluicegate writes Delta only"
_METRIC_VIEWS = "Unity Catalog metric views (WITH METRICS LANGUAGE YAML): not in sluicegate"

# Skipped here, each with why: a Unity Catalog feature sluicegate does not have, or a Databricks cluster. Keys are
# parts of pytest node ids (a folder, a file, `::Class`).
SKIPPED_HERE = {
    "adapter/python_model/": _PYTHON,
    "::TestIncrementalPythonLiquidClustering": _PYTHON,
    "::TestIncrementalPythonTblproperties": _PYTHON,
    "::TestDatabricksPythonUDFSupported": _PYTHON,
    "::TestDatabricksPythonUDFLifecycle": _PYTHON,
    "::TestDatabricksMultiArgPythonUDF": _PYTHON,
    "adapter/column_masks/": _MASKS,
    "incremental/test_incremental_column_masks.py": _MASKS,
    "adapter/row_filters/": _FILTERS,
    "adapter/column_tags/": _UC_TAGS,
    "adapter/tags/": _UC_TAGS,
    "incremental/test_incremental_tags.py": _UC_TAGS,
    "incremental/test_incremental_column_tags.py": _UC_TAGS,
    "::TestIncrementalMetadataFetchRequiresTableTags": _UC_TAGS,
    "::TestIncrementalMetadataFetchRequiresColumnTags": _UC_TAGS,
    # its model declares `databricks_tags`: the first run sends SET TAGS (the flag it tests only skips the fetch)
    "::TestV1IncrementalApplyConfigChangesFalseSkipsTagFetch": _UC_TAGS,
    "::TestMaterializedViewMetadataFetchRequiresTags": _UC_TAGS,
    "::TestViewMetadataFetchRequiresTags": _UC_TAGS,
    "materialized_view_tests/test_refresh_with_tags.py": _UC_TAGS,
    # its model has `databricks_tags` from the first run on (then a schedule change): every run sets tags
    "materialized_view_tests/test_mv_alter_no_rebuild.py": _UC_TAGS,
    "::TestUpdateViewViaAlterAddTags": _UC_TAGS,
    "::TestUpdateViewViaAlterRemoveTags": _UC_TAGS,
    # every model of the file declares `databricks_tags` (its schema.yml), so each first build sends ALTER VIEW ...
    # SET TAGS; its Hive classes without tags are the suite's own skips on this profile
    "views/test_views.py": _UC_TAGS,
    "adapter/iceberg/": _ICEBERG,
    "::TestUniformIcebergTblproperties": _ICEBERG,
    "::TestSnapshotIceberg": _ICEBERG,
    # its write integration declares `table_format: iceberg`: the table is created with
    # `delta.universalFormat.enabledFormats = 'iceberg'`, and the test reads that property back
    "::TestUnityCatalogTableFormatDefault": _ICEBERG,
    "adapter/metric_views/": _METRIC_VIEWS,
    "adapter/spog/": "SPOG: an account-level host routing to a workspace by id (Databricks' cloud front door)",
    "columns/test_foreign_table_get_columns.py": "Lakehouse Federation foreign tables (Unity Catalog connections)",
    # not Databricks: its project's packages.yml needs `dbt deps` from hub.getdbt.com, which this machine cannot reach
    "::TestDatabricksEmptyWithUnionRelations": "dbt deps from hub.getdbt.com (dbt_utils): no internet access here",
}

# Skipped for a marker of the suite's, with why.
SKIPPED_MARKERS = {
    "external": "an external location (cloud storage registered in Unity Catalog, DBT_DATABRICKS_LOCATION_ROOT): "
                "sluicegate's tables live in its warehouse",
    "python": _PYTHON,
}

# Tests that fail against sluicegate, each with why (a gateway gap, said precisely). Strict: one that starts passing
# fails the run.
KNOWN_FAILURES: dict[str, str] = {
}

# The markers the suite declares in its pyproject.toml, which is not exported with it.
MARKERS = {
    "external": "mark test as requiring an external location",
    "python": "mark test as running a python model",
    "dlt": "mark test as running a DLT model",
    "skip_kernel": "skip test when running against the connector kernel backend",
}

_stack = ExitStack()
_gateway: Gateway | None = None


def gateway() -> Gateway:
    """The gateway: the one named by $SLUICEGATE_DBX_SUITE_GATEWAY (JSON, as tests_dbt/dbx_suite_each.py passes the
    one it started for all files), else one started on first use (a session's first profile), stopped when pytest
    ends."""
    global _gateway
    shared = os.environ.get(SHARED_GATEWAY)
    if _gateway is None and shared:
        _gateway = Gateway.from_json(shared)
    if _gateway is None:
        root = Path(tempfile.mkdtemp(prefix="sluicegate-dbx-suite-"))
        _gateway = _stack.enter_context(running_gateway(root, USER))
        print(f"sluicegate gateway at {_gateway.http_url}, log {_gateway.log}", file=sys.stderr)
    return _gateway


def pointed_at_gateway(build: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """The suite's target builder, with the target it builds pointed at the gateway."""
    def built(*args: Any, **kwargs: Any) -> dict[str, Any]:
        target = build(*args, **kwargs)
        started = gateway()
        target.update(host=started.http_url, http_path=HTTP_PATH, token=started.token, auth_type=None,
                      client_id=None, client_secret=None, azure_client_id=None, azure_client_secret=None)
        target["connection_parameters"] = {**target.get("connection_parameters", {}),
                                           "_connection_uri": f"{started.http_url}/cliservice",
                                           "enable_telemetry": False}
        target.setdefault("catalog", "main")
        return target
    return built


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    from tests import profiles  # dbt-databricks' suite, exported by tests_dbt/run_databricks_suite

    profiles._build_databricks_cluster_target = pointed_at_gateway(profiles._build_databricks_cluster_target)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for part, reason in SKIPPED_HERE.items():
            if part in item.nodeid:
                item.add_marker(pytest.mark.skip(reason=reason))
        for marker, reason in SKIPPED_MARKERS.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))
        for part, reason in KNOWN_FAILURES.items():
            if part in item.nodeid:
                item.add_marker(pytest.mark.xfail(reason=reason, strict=True))


def pytest_unconfigure(config: pytest.Config) -> None:
    _stack.close()
