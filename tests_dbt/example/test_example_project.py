"""The worked dbt project (dbt_example/, with the sluicegate package) against the suite's gateway: `dbt build` makes
bronze and silver streaming tables and the gold materialized view over silver, and tests them; a second build
changes nothing; more files that land reach gold without dbt (streams, then gold's TRIGGER ON UPDATE) and a third
build keeps them; `--full-refresh` rebuilds the same.
Run by `./run test-dbt` in .venv-dbt."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.cli.main import dbtRunner
from pyhive import hive

REPO = Path(__file__).resolve().parents[2]
SCHEMA = "dbt_example"


def _land(folder: Path, name: str, rows: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{name}.tmp"
    partial.write_text("".join(json.dumps(row) + "\n" for row in rows))
    partial.rename(folder / name)


def _dbt(project: Path, *args: str) -> Any:
    result = dbtRunner().invoke([*args, "--project-dir", str(project), "--profiles-dir", str(project)])
    assert result.success, f"dbt {' '.join(args)} failed: {result.exception}"
    return result


def _rows(target: dict[str, Any], sql: str) -> list[tuple[Any, ...]]:
    cursor = hive.connect(target["host"], target["port"], username=target["user"]).cursor()
    cursor.execute(sql)
    return sorted(cursor.fetchall(), key=repr)


def _poll(read: Callable[[], Any], expected: Any, timeout: float = 180.0) -> Any:
    """`read()` until it returns `expected` or `timeout` seconds pass; the last value read."""
    deadline = time.monotonic() + timeout
    value = read()
    while value != expected and time.monotonic() < deadline:
        time.sleep(0.5)
        value = read()
    return value


@pytest.fixture()
def project(tmp_path: Path, sluicegate: dict[str, Any]) -> Path:
    project = tmp_path / "dbt_example"
    shutil.copytree(REPO / "dbt_example", project)
    (project / "packages.yml").write_text(f"packages:\n  - local: {REPO / 'dbt_sluicegate'}\n")
    profile = {"sluicegate_example": {"target": "dev", "outputs": {"dev": {**sluicegate["target"], "schema": SCHEMA}}}}
    (project / "profiles.yml").write_text(yaml.safe_dump(profile))
    return project


def test_build_twice_then_new_files(project: Path, sluicegate: dict[str, Any], monkeypatch: Any) -> None:
    landing = sluicegate["warehouse"] / "landing" / "dbt_example"
    monkeypatch.setenv("SLUICEGATE_LANDING", str(landing))
    target = sluicegate["target"]
    _land(landing / "orders", "part-1.json", [
        {"order_id": "o1", "customer": " Alice ", "amount": "10.50", "status": "paid"},
        {"order_id": "o2", "customer": "bob", "amount": "20", "status": "paid"},
        {"order_id": "o3", "customer": "ALICE", "amount": "5.25", "status": "cancelled"},
        {"order_id": "o4", "customer": "carol", "amount": "abc", "status": "paid"},
    ])
    _dbt(project, "deps")
    _dbt(project, "build")
    gold = f"SELECT customer, orders, CAST(revenue AS STRING) FROM {SCHEMA}.gold_revenue"
    assert _rows(target, gold) == [("alice", 1, "10.50"), ("bob", 1, "20.00")]
    described = dict(row[:2] for row in _rows(target, f"DESCRIBE TABLE EXTENDED {SCHEMA}.gold_revenue"))
    assert described["Type"] == "MATERIALIZED_VIEW"
    assert described["Refresh Schedule"] == "TRIGGER ON UPDATE"
    assert described["Input Versions"].startswith(f"{SCHEMA}.silver_orders@v")
    histories = [f"DESCRIBE HISTORY {SCHEMA}.{name}" for name in ("bronze_orders", "silver_orders", "gold_revenue")]
    versions = [len(_rows(target, history)) for history in histories]

    _dbt(project, "build")  # nothing changed: every stream goes on from its checkpoint, gold's REFRESH finds silver
    assert _rows(target, gold) == [("alice", 1, "10.50"), ("bob", 1, "20.00")]  # unmoved: no commit is made
    assert [len(_rows(target, history)) for history in histories] == versions

    _land(landing / "orders", "part-2.json", [
        {"order_id": "o5", "customer": "Bob ", "amount": "7.5", "status": "paid"},
        {"order_id": "o6", "customer": "alice", "amount": "-3", "status": "paid"},
    ])
    # no dbt run: the streams pick the file up and gold, TRIGGER ON UPDATE, follows silver's new version
    expected = [("alice", 1, "10.50"), ("bob", 2, "27.50")]
    assert _poll(lambda: _rows(target, gold), expected) == expected
    _dbt(project, "build")
    assert _rows(target, gold) == [("alice", 1, "10.50"), ("bob", 2, "27.50")]
    assert _rows(target, f"SELECT count(*) FROM {SCHEMA}.bronze_orders") == [(6,)]

    _dbt(project, "build", "--full-refresh")  # emptied and rebuilt from every file, gold recomputed: the same result
    assert _rows(target, gold) == [("alice", 1, "10.50"), ("bob", 2, "27.50")]
    described = dict(row[:2] for row in _rows(target, f"DESCRIBE TABLE EXTENDED {SCHEMA}.gold_revenue"))
    assert described["Last Refresh Type"] == "FULL"
