"""A real gateway for dbt-databricks (tests_dbt/dbx_gateway.py: `sluicegate serve` from .venv on 127.0.0.1, port 0
for Thrift and HTTP, a fresh warehouse, a token made with `sluicegate token create`).
Run by tests_dbt/run_databricks in .venv-dbx (dbt-databricks and its pinned databricks-sql-connector)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[1]))  # tests_dbt/, for the gateway shared with the suite's plugin
from dbx_gateway import Gateway, running_gateway

__all__ = ["Gateway"]

USER = "dbt_dbx"


@pytest.fixture(scope="session")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    with running_gateway(tmp_path_factory.mktemp("sluicegate-dbx"), USER) as started:
        yield started
