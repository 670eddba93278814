"""Fixtures of the modules here that use dbt-tests-adapter's `project` (registered by sluicegate_dbt_plugin)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def dbt_profile_target(sluicegate: dict[str, Any]) -> dict[str, Any]:
    """The suite's gateway as dbt-tests-adapter's target (dbt-spark's suite has its own fixture, in its conftest,
    which the plugin points at the same gateway)."""
    return dict(sluicegate["target"])
