"""A real gateway for dbt-databricks (tests_dbt/dbx_gateway.py: `sluicegate serve` from .venv on 127.0.0.1, port 0
for Thrift and HTTP, a fresh warehouse, a token made with `sluicegate token create`).
Run by tests_dbt/run_databricks in .venv-dbx (dbt-databricks and its pinned databricks-sql-connector)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from databricks import sql
from dbt.cli.main import dbtRunner

sys.path.append(str(Path(__file__).resolve().parents[1]))  # tests_dbt/, for the gateway shared with the suite's plugin
from dbx_gateway import Gateway, running_gateway

__all__ = ["Gateway", "copy_project", "dbt", "described", "properties", "rows"]

USER = "dbt_dbx"


@pytest.fixture(scope="session")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    with running_gateway(tmp_path_factory.mktemp("sluicegate-dbx"), USER) as started:
        yield started


def copy_project(source: Path, into: Path, gateway: Gateway, schemas: dict[str, str]) -> Path:
    """`source` copied into `into` with a profile as a user writes it for sluicegate (README, "dbt-databricks"): one
    target per entry of `schemas` (target name -> schema), the first the default."""
    project = into / source.name
    shutil.copytree(source, project)
    outputs = {name: {
        "type": "databricks", "host": gateway.http_url, "http_path": "/sql/1.0/warehouses/sluicegate",
        "token": gateway.token, "catalog": "main", "schema": schema, "threads": 1,
        "connection_parameters": {"_connection_uri": f"{gateway.http_url}/cliservice", "enable_telemetry": False},
    } for name, schema in schemas.items()}
    profile = {"sluicegate_databricks": {"target": next(iter(schemas)), "outputs": outputs}}
    (project / "profiles.yml").write_text(yaml.safe_dump(profile))
    return project


@contextmanager
def cursor(gateway: Gateway) -> Iterator[Any]:
    connection = sql.connect(server_hostname="127.0.0.1", http_path="/cliservice", access_token=gateway.token,
                             _connection_uri=f"{gateway.http_url}/cliservice", enable_telemetry=False)
    try:
        with connection.cursor() as opened:
            yield opened
    finally:
        connection.close()


def rows(gateway: Gateway, query: str) -> list[tuple[Any, ...]]:
    with cursor(gateway) as opened:
        opened.execute(query)
        return sorted(tuple(row) for row in opened.fetchall())


def described(gateway: Gateway, table: str) -> dict[str, str]:
    """DESCRIBE TABLE EXTENDED of `table` (schema.name, in catalog main): first column -> second."""
    return {row[0]: row[1] for row in rows(gateway, f"DESCRIBE TABLE EXTENDED main.{table}")}


def properties(gateway: Gateway, table: str) -> dict[str, str]:
    return dict(rows(gateway, f"SHOW TBLPROPERTIES main.{table}"))


def dbt(project: Path, gateway: Gateway, *args: str, variables: dict[str, Any] | None = None) -> str:
    """Run dbt in this process; returns what it logged during the run (the statements it sent among it)."""
    log = project / "logs" / "dbt.log"
    start = log.stat().st_size if log.exists() else 0
    landing = {"landing": str(gateway.warehouse / "landing" / "dbx")}
    result = dbtRunner().invoke([*args, "--project-dir", str(project), "--profiles-dir", str(project),
                                 "--vars", json.dumps({**landing, **(variables or {})})])
    assert result.success, f"dbt {' '.join(args)} failed: {result.exception}"
    with open(log, encoding="utf-8") as logged:
        logged.seek(start)
        return logged.read()
