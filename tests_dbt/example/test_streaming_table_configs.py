"""The streaming_table materialization's on_configuration_change (apply, continue, fail) and tblproperties, against
the suite's gateway: what a changed model does to the table's stored definition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from dbt.cli.main import dbtRunner
from pyhive import hive

REPO = Path(__file__).resolve().parents[2]
SCHEMA = "dbt_st_configs"


def _project(tmp_path: Path, target: dict[str, Any], landing: Path, on_change: str, column: str) -> Path:
    project = tmp_path / "configs"
    (project / "models").mkdir(parents=True, exist_ok=True)
    (project / "dbt_project.yml").write_text(yaml.safe_dump({
        "name": "configs", "version": "1.0.0", "config-version": 2, "profile": "configs"}))
    (project / "packages.yml").write_text(f"packages:\n  - local: {REPO / 'dbt_sluicegate'}\n")
    (project / "profiles.yml").write_text(yaml.safe_dump(
        {"configs": {"target": "dev", "outputs": {"dev": {**target, "schema": SCHEMA}}}}))
    (project / "models" / "events.sql").write_text(
        f"{{{{ config(materialized='streaming_table', on_configuration_change='{on_change}', "
        "tblproperties={'team': 'growth'}, grants={'select': ['dbt_test_user_1']}) }}\n"
        f"select {column} from stream read_files('{landing}', format => 'json', schema => 'a STRING, b STRING')\n")
    return project


def _dbt(project: Path, *args: str) -> Any:
    return dbtRunner().invoke([*args, "--project-dir", str(project), "--profiles-dir", str(project)])


def _definition(target: dict[str, Any]) -> str:
    cursor = hive.connect(target["host"], target["port"], username=target["user"]).cursor()
    cursor.execute(f"DESCRIBE TABLE EXTENDED {SCHEMA}.events")
    details = {row[0]: row[1] for row in cursor.fetchall()}
    assert "team=growth" in details["Table Properties"]
    cursor.execute(f"SHOW GRANTS ON {SCHEMA}.events")
    assert ("dbt_test_user_1", "SELECT") in [tuple(row[:2]) for row in cursor.fetchall()]
    return details["View Text"]


def test_on_configuration_change(tmp_path: Path, sluicegate: dict[str, Any]) -> None:
    target = sluicegate["target"]
    landing = sluicegate["warehouse"] / "landing" / "dbt_st_configs"
    landing.mkdir(parents=True, exist_ok=True)
    (landing / "a.json").write_text(json.dumps({"a": "1", "b": "2"}) + "\n")

    project = _project(tmp_path, target, landing, "apply", "a")
    assert _dbt(project, "deps").success
    assert _dbt(project, "run").success
    assert _definition(target).startswith("select a from stream")

    _project(tmp_path, target, landing, "fail", "a, b")
    failed = _dbt(project, "run")
    assert not failed.success
    assert "on_configuration_change is 'fail'" in str(failed.result.results[0].message)
    assert _definition(target).startswith("select a from stream")

    _project(tmp_path, target, landing, "continue", "a, b")
    assert _dbt(project, "run").success
    assert _definition(target).startswith("select a from stream")  # kept as it was

    _project(tmp_path, target, landing, "apply", "a, b")
    assert _dbt(project, "run").success
    assert _definition(target).startswith("select a, b from stream")


def _scheduled_project(tmp_path: Path, target: dict[str, Any], landing: Path, schedule: str) -> Path:
    """The configs project with one model, `scheduled`, whose `schedule` config is `schedule` ('' for none)."""
    project = _project(tmp_path, target, landing, "apply", "a")
    (project / "models" / "events.sql").unlink()
    config = "materialized='streaming_table', tblproperties={'team': 'growth'}" + (
        f", schedule={schedule}" if schedule else "")
    (project / "models" / "scheduled.sql").write_text(
        f"{{{{ config({config}) }}}}\n"
        f"select a from stream read_files('{landing}', format => 'json', schema => 'a STRING, b STRING')\n")
    return project


def _refresh_schedule(target: dict[str, Any]) -> str:
    cursor = hive.connect(target["host"], target["port"], username=target["user"]).cursor()
    cursor.execute(f"DESCRIBE TABLE EXTENDED {SCHEMA}.scheduled")
    return {row[0]: row[1] for row in cursor.fetchall()}["Refresh Schedule"]


def test_schedule_is_created_then_altered_without_redefining(tmp_path: Path, sluicegate: dict[str, Any]) -> None:
    """`schedule` writes the clause at create; a changed schedule alone is an ALTER ... SCHEDULE (the checkpoint and
    the rows stay); no schedule is DROP SCHEDULE."""
    target = sluicegate["target"]
    landing = sluicegate["warehouse"] / "landing" / "dbt_st_scheduled"
    landing.mkdir(parents=True, exist_ok=True)
    (landing / "a.json").write_text(json.dumps({"a": "1", "b": "2"}) + "\n")
    cursor = hive.connect(target["host"], target["port"], username=target["user"]).cursor()
    steps = (("{'cron': '0 0 6 * * ?', 'time_zone_value': 'Europe/Paris'}",
              "CRON '0 0 6 * * ?' AT TIME ZONE 'Europe/Paris'"),
             ("{'every': '2 HOURS'}", "EVERY 2 HOURS"),
             ("{'on_update': true, 'at_most_every': '5 MINUTES'}",
              "TRIGGER ON UPDATE AT MOST EVERY INTERVAL 300 SECONDS"),
             ("", "MANUAL"))
    for schedule, described in steps:
        project = _scheduled_project(tmp_path, target, landing, schedule)
        if schedule == steps[0][0]:
            assert _dbt(project, "deps").success
        assert _dbt(project, "run").success
        assert _refresh_schedule(target) == described
        cursor.execute(f"SELECT a FROM {SCHEMA}.scheduled")
        assert cursor.fetchall() == [("1",)]
    cursor.execute(f"DESCRIBE STREAMING TABLE {SCHEMA}.scheduled")
    events = [row[1] for row in cursor.fetchall() if row[0] == "Event"]
    assert any("SCHEDULE_CHANGED" in event for event in events)
    assert not any("REFRESH_FULL" in event for event in events)
