"""The README's set-up lines a newcomer types in the first hour (newcomer report 2026-11-27, last section): the dbt
install is the pinned one the tests use, the dbt example's folder is made before its build, one user name throughout
the quick tour."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _pins(text: str) -> dict[str, str]:
    return {name.lower(): version for name, version in re.findall(r"([A-Za-z][\w.-]*)(?:\[\w+\])?==([\w.]+)", text)}


def test_the_dbt_install_line_is_the_tests_pinned_set() -> None:
    installs = [line for line in README.splitlines() if ".venv-dbt/bin/pip install" in line]
    assert installs, "the README has no dbt install line"
    wanted = _pins((ROOT / "tests_dbt" / "requirements.txt").read_text(encoding="utf-8"))
    for line in installs:
        pins = _pins(line)
        assert {"dbt-core", "dbt-adapters", "dbt-spark"} <= set(pins), line   # nothing left for pip to pick
        assert all(wanted[name] == version for name, version in pins.items()), (line, wanted)
    assert "pip install 'dbt-spark[PyHive]'" not in README


def test_the_dbt_example_folder_is_made_before_the_build() -> None:
    build = README.index("dbt build --profiles-dir . --vars")
    made = README.rfind("mkdir -p warehouse/landing/dbt_example/orders", 0, build)
    assert made != -1 and "landing=$PWD/warehouse/landing/dbt_example" in README[made:build]
    models = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "dbt_example" / "models").glob("*.sql"))
    assert set(re.findall(r"var\(\"landing\"\) }}/(\w+)", models)) == {"orders"}   # the one folder it reads


def test_the_quick_tour_connects_as_one_user() -> None:
    tour = README[README.index("## A quick tour"):README.index("**databricks-sql-connector**")]
    assert 'username="me"' not in tour and "sluicegate://me@" not in tour and "-n me " not in tour
    assert tour.count("getpass.getuser()") >= 3 and '-n "$(id -un)"' in tour
    assert "each name is an owner of its own" in tour
