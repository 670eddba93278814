"""dbt-databricks, unchanged and pinned, against a real gateway over HTTP with a Bearer token (catalog `main`, a
warehouse http_path): the project in project/ builds a table, a view, an incremental merge model, a streaming table
over read_files and a materialized view over it, each with its persisted docs and a SELECT grant (the table and the
incremental model with a contract's not-null and check constraints); then re-runs unchanged (REFRESH only), with
changes (new rows, a table property and a schedule on the streaming table, a property on the materialized view),
with `--full-refresh`, and `dbt test` passes. Every step is checked on the tables' contents through
databricks-sql-connector. test_dbt_databricks_coverage.py covers the rest (seed, snapshot, strategies, clone...)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Gateway, copy_project, dbt, described, properties, rows

PROJECT = Path(__file__).resolve().parent / "project"
SCHEMA = "dbt_dbx"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, gateway: Gateway) -> Path:
    return copy_project(PROJECT, tmp_path_factory.mktemp("dbx_project"), gateway, {"dev": SCHEMA})


def land(gateway: Gateway, name: str, records: list[dict[str, Any]]) -> None:
    folder = gateway.warehouse / "landing" / "dbx" / "clicks"
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{name}.tmp"
    partial.write_text("".join(json.dumps(record) + "\n" for record in records))
    partial.rename(folder / name)


def test_models_built_rerun_changed_refreshed_and_tested(project: Path, gateway: Gateway) -> None:
    land(gateway, "part-1.json", [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
    dbt(project, gateway, "run")
    assert rows(gateway, f"SELECT id, name FROM main.{SCHEMA}.m_table") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(gateway, f"SELECT id, name FROM main.{SCHEMA}.m_view") == [(1, "A"), (2, "B"), (3, "C")]
    assert rows(gateway, f"SELECT id, name FROM main.{SCHEMA}.m_incr") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(gateway, f"SELECT id, name FROM main.{SCHEMA}.m_st") == [(1, "a"), (2, "b")]
    assert rows(gateway, f"SELECT name, clicks FROM main.{SCHEMA}.m_mv") == [("a", 1), ("b", 1)]
    assert described(gateway, f"{SCHEMA}.m_st")["Type"] == "STREAMING_TABLE"
    assert described(gateway, f"{SCHEMA}.m_mv")["Type"] == "MATERIALIZED_VIEW"
    # Each materialization persisted its docs (dbt_project.yml, models/schema.yml) and granted SELECT.
    for name, column in [("m_table", "id"), ("m_view", "name"), ("m_incr", "id"), ("m_st", "id"), ("m_mv", "name")]:
        assert described(gateway, f"{SCHEMA}.{name}")["Comment"] == f"{name}: documented", name
        comments = {row[0]: row[2] for row in rows(gateway, f"DESCRIBE TABLE main.{SCHEMA}.{name}")}
        assert comments[column] == f"{name}.{column}", (name, comments)
        grants = rows(gateway, f"SHOW GRANTS ON TABLE main.{SCHEMA}.{name}")
        assert any("dbt_reader" in row and "SELECT" in row for row in grants), (name, grants)
    for name in ["m_table", "m_incr"]:  # their contracts' constraints
        assert properties(gateway, f"{SCHEMA}.{name}")[f"delta.constraints.{name}_id_positive"] == "id > 0"
        assert "id INT NOT NULL" in rows(gateway, f"SHOW CREATE TABLE main.{SCHEMA}.{name}")[0][0]

    # Unchanged: the streaming table and the materialized view are refreshed, not redefined.
    log = dbt(project, gateway, "run").lower()
    assert "refresh streaming table" in log and "create or refresh" not in log
    assert "refresh materialized view" in log and "create or replace materialized view" not in log
    assert rows(gateway, f"SELECT id, name FROM main.{SCHEMA}.m_st") == [(1, "a"), (2, "b")]

    # Changed: a new file, a merge that updates and inserts, a table property and a schedule on the streaming table
    # (CREATE OR REFRESH, then ALTER ... ADD SCHEDULE), a property on the materialized view (CREATE OR REPLACE).
    land(gateway, "part-2.json", [{"id": 3, "name": "a"}])
    changes = {"third_id": 4, "st_properties": {"pipelines.trigger.interval": "1 second"},
               "st_schedule": {"cron": "0 0 * * * ? *", "time_zone_value": "UTC"}, "mv_properties": {"team": "web"}}
    log = dbt(project, gateway, "run", variables=changes).lower()
    assert "create or refresh streaming table" in log and "add schedule cron" in log
    assert "create or replace materialized view" in log and "merge" in log
    assert rows(gateway, f"SELECT id, name FROM main.{SCHEMA}.m_incr") == [(1, "a"), (2, "b"), (3, "c"), (4, "c")]
    assert rows(gateway, f"SELECT id, name FROM main.{SCHEMA}.m_st") == [(1, "a"), (2, "b"), (3, "a")]
    assert rows(gateway, f"SELECT name, clicks FROM main.{SCHEMA}.m_mv") == [("a", 2), ("b", 1)]
    assert properties(gateway, f"{SCHEMA}.m_st")["pipelines.trigger.interval"] == "1 second"
    assert described(gateway, f"{SCHEMA}.m_st")["Refresh Schedule"] == "CRON '0 0 * * * ? *' AT TIME ZONE 'UTC'"
    assert properties(gateway, f"{SCHEMA}.m_mv")["team"] == "web"

    # The same changes again: nothing to apply, so refreshes only.
    log = dbt(project, gateway, "run", variables=changes).lower()
    assert "create or refresh" not in log and "add schedule" not in log and "alter streaming table" not in log

    # --full-refresh with the first configuration: rebuilt from scratch, every file read again.
    log = dbt(project, gateway, "run", "--full-refresh").lower()
    assert "drop table if exists `main`.`dbt_dbx`.`m_st`" in log
    assert rows(gateway, f"SELECT id, name FROM main.{SCHEMA}.m_incr") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(gateway, f"SELECT id, name FROM main.{SCHEMA}.m_st") == [(1, "a"), (2, "b"), (3, "a")]
    assert "pipelines.trigger.interval" not in properties(gateway, f"{SCHEMA}.m_st")
    assert described(gateway, f"{SCHEMA}.m_st")["Refresh Schedule"] == "MANUAL"
    assert "team" not in properties(gateway, f"{SCHEMA}.m_mv")

    dbt(project, gateway, "test")
