"""The materialized_view materialization against the suite's gateway, through PyHive: a view in the way is replaced;
an unchanged re-run is a REFRESH (no commit without new input, the new rows with it); a changed schedule alone is an
ALTER; on_configuration_change 'fail' and 'continue' keep the stored query, 'apply' replaces it; `--full-refresh`
replaces (recomputes); a changed refresh_policy replaces; a streaming table model of the same name then replaces
the view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from dbt.cli.main import dbtRunner
from pyhive import hive

REPO = Path(__file__).resolve().parents[2]
SCHEMA = "dbt_mv_configs"
SHIM = ("{% materialization materialized_view, adapter='spark' %}\n"
        "  {{ return(sluicegate.materialization_materialized_view_spark()) }}\n"
        "{% endmaterialization %}\n")


def _project(tmp_path: Path, target: dict[str, Any], config: str, query: str) -> Path:
    """A project with one model, `mv`: `config(<config>)` then `query`; its macros hand materialized_view to the
    package, as dbt_example/macros does."""
    project = tmp_path / "mv_configs"
    (project / "models").mkdir(parents=True, exist_ok=True)
    (project / "macros").mkdir(exist_ok=True)
    (project / "dbt_project.yml").write_text(yaml.safe_dump({
        "name": "mv_configs", "version": "1.0.0", "config-version": 2, "profile": "mv_configs"}))
    (project / "packages.yml").write_text(f"packages:\n  - local: {REPO / 'dbt_sluicegate'}\n")
    (project / "profiles.yml").write_text(yaml.safe_dump(
        {"mv_configs": {"target": "dev", "outputs": {"dev": {**target, "schema": SCHEMA}}}}))
    (project / "macros" / "materialized_view.sql").write_text(SHIM)
    (project / "models" / "mv.sql").write_text(f"-- the model\n{{{{ config({config}) }}}}\n{query}\n")
    return project


def _dbt(project: Path, *args: str) -> Any:
    return dbtRunner().invoke([*args, "--project-dir", str(project), "--profiles-dir", str(project)])


class Gateway:
    """PyHive on the suite's gateway: rows, the DESCRIBE EXTENDED details and the Delta commits of `mv`."""

    def __init__(self, target: dict[str, Any]) -> None:
        self.cursor = hive.connect(target["host"], target["port"], username=target["user"]).cursor()

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        self.cursor.execute(sql)
        return sorted(self.cursor.fetchall(), key=repr)

    def details(self) -> dict[str, str]:
        return {row[0]: row[1] for row in self.rows(f"DESCRIBE TABLE EXTENDED {SCHEMA}.mv")}

    def commits(self) -> int:
        return len(self.rows(f"DESCRIBE HISTORY {SCHEMA}.mv"))


MV = ("materialized='materialized_view', partition_by='k', tblproperties={'team': 'finance'}, "
      "grants={'select': ['dbt_test_user_1']}")
QUERY = f"select k, sum(v) as total from {SCHEMA}.src group by k"


def test_materialized_view_lifecycle(tmp_path: Path, sluicegate: dict[str, Any]) -> None:
    target = sluicegate["target"]
    gateway = Gateway(target)
    for sql in (f"CREATE DATABASE IF NOT EXISTS {SCHEMA}",
                f"CREATE TABLE {SCHEMA}.src (k STRING, v INT) USING delta",
                f"INSERT INTO {SCHEMA}.src VALUES ('a', 1), ('a', 2), ('b', 5)",
                f"CREATE VIEW {SCHEMA}.mv AS SELECT 1 AS k"):
        gateway.cursor.execute(sql)

    project = _project(tmp_path, target, MV, QUERY)
    assert _dbt(project, "deps").success
    assert _dbt(project, "run").success  # the view in the way is dropped, the materialized view created
    details = gateway.details()
    assert details["Type"] == "MATERIALIZED_VIEW"
    assert details["Table Properties"] == "[team=finance]"
    assert details["Refresh Schedule"] == "MANUAL"
    assert ("dbt_test_user_1", "SELECT") in [row[:2] for row in gateway.rows(f"SHOW GRANTS ON {SCHEMA}.mv")]
    assert ("k", "string", None) in gateway.rows(f"DESCRIBE TABLE {SCHEMA}.mv")[:3]
    assert any(row[0] == "# Partition Information" for row in gateway.rows(f"DESCRIBE TABLE {SCHEMA}.mv"))
    assert gateway.rows(f"SELECT k, total FROM {SCHEMA}.mv") == [("a", 3), ("b", 5)]
    commits = gateway.commits()

    assert _dbt(project, "run").success  # unchanged, no new input: a REFRESH that commits nothing
    assert gateway.commits() == commits
    gateway.cursor.execute(f"INSERT INTO {SCHEMA}.src VALUES ('b', 10), ('c', 7)")
    assert _dbt(project, "run").success  # unchanged, new input: the REFRESH brings it in
    assert gateway.rows(f"SELECT k, total FROM {SCHEMA}.mv") == [("a", 3), ("b", 15), ("c", 7)]
    commits = gateway.commits()

    _project(tmp_path, target, MV + ", schedule={'every': '2 HOURS'}", QUERY)
    assert _dbt(project, "run").success  # the schedule alone changed: ALTER ... ADD SCHEDULE, nothing recomputed
    assert gateway.details()["Refresh Schedule"] == "EVERY 2 HOURS"
    assert gateway.commits() == commits

    changed = QUERY.replace("sum(v)", "max(v)")
    _project(tmp_path, target, MV + ", schedule={'every': '2 HOURS'}, on_configuration_change='fail'", changed)
    failed = _dbt(project, "run")
    assert not failed.success
    assert "`on_configuration_change` was set to `fail`" in str(failed.result.results[0].message)
    _project(tmp_path, target, MV + ", schedule={'every': '2 HOURS'}, on_configuration_change='continue'", changed)
    assert _dbt(project, "run").success
    assert gateway.details()["View Text"] == QUERY  # kept as it was
    assert gateway.commits() == commits

    _project(tmp_path, target, MV + ", schedule={'every': '2 HOURS'}", changed)
    assert _dbt(project, "run").success  # CREATE OR REPLACE: the new query, recomputed in one commit
    details = gateway.details()
    assert details["View Text"] == changed
    assert details["Refresh Schedule"] == "EVERY 2 HOURS"
    assert ("dbt_test_user_1", "SELECT") in [row[:2] for row in gateway.rows(f"SHOW GRANTS ON {SCHEMA}.mv")]
    assert gateway.rows(f"SELECT k, total FROM {SCHEMA}.mv") == [("a", 2), ("b", 10), ("c", 7)]
    assert gateway.commits() == commits + 1

    assert _dbt(project, "run", "--full-refresh").success  # CREATE OR REPLACE: recomputed though nothing moved
    assert gateway.details()["Last Refresh Type"] == "FULL"
    assert gateway.commits() == commits + 2
    assert gateway.rows(f"SELECT k, total FROM {SCHEMA}.mv") == [("a", 2), ("b", 10), ("c", 7)]

    _project(tmp_path, target, MV + ", schedule={'every': '2 HOURS'}, refresh_policy='sometimes'", changed)
    failed = _dbt(project, "run")
    assert not failed.success
    assert "refresh_policy must be auto" in str(failed.result.results[0].message)
    _project(tmp_path, target, MV + ", schedule={'every': '2 HOURS'}, refresh_policy='full'", changed)
    assert _dbt(project, "run").success  # another policy: CREATE OR REPLACE
    assert gateway.details()["Refresh Policy"] == "FULL"
    assert gateway.commits() == commits + 3

    _project(tmp_path, target, "materialized='streaming_table'", f"select k, v from stream({SCHEMA}.src)")
    assert _dbt(project, "run").success  # another materialization: the view goes with DROP MATERIALIZED VIEW
    assert gateway.details()["Type"] == "STREAMING_TABLE"
    assert len(gateway.rows(f"SELECT k, v FROM {SCHEMA}.mv")) == 5
