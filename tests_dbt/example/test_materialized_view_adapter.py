"""dbt-tests-adapter's own materialized-view classes (MaterializedViewBasic, MaterializedViewChanges with its apply,
continue and fail mixins, as dbt-databricks runs them) against the suite's gateway, with the sluicegate package's
materialization: create, idempotent re-run, full refresh as REPLACE, a table or view replaced by a materialized view,
rows only after a REFRESH, a schedule change as ALTER and a property change as REPLACE."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dbt.adapters.base.relation import BaseRelation
from dbt.tests.adapter.materialized_view.basic import MaterializedViewBasic
from dbt.tests.adapter.materialized_view.changes import (
    MaterializedViewChanges,
    MaterializedViewChangesApplyMixin,
    MaterializedViewChangesContinueMixin,
    MaterializedViewChangesFailMixin,
)
from dbt.tests.util import get_model_file, run_dbt, set_model_file

REPO = Path(__file__).resolve().parents[2]
SHIM = (REPO / "dbt_example" / "macros" / "materialized_view.sql").read_text()
_TYPES = {"MATERIALIZED_VIEW": "materialized_view", "VIEW": "view", "STREAMING_TABLE": "streaming_table"}
_DELTA = {"seeds": {"+file_format": "delta"}, "models": {"+file_format": "delta"}}
_REFUSED = ("dbt-spark's table and view materializations send CREATE OR REPLACE TABLE / DROP TABLE, which a "
            "materialized view refuses as on Databricks (dbt-spark's cache calls every non-view a table); DROP "
            "MATERIALIZED VIEW it first")


def _details(project: Any, relation: BaseRelation) -> dict[str, str]:
    return {row[0]: row[1] for row in project.run_sql(f"describe table extended {relation}", fetch="all")}


def _relation_type(project: Any, relation: BaseRelation) -> str | None:
    listed = project.run_sql(f"show tables in {relation.schema} like '{relation.identifier}'", fetch="all")
    if not listed:
        return None
    kind = _details(project, relation)["Type"]
    return _TYPES.get(kind, "table")


class SluicegateMaterializedView:
    """The package installed and handed materialized_view (as dbt_example does), Delta seeds and models."""

    @pytest.fixture(scope="class")
    def packages(self) -> dict[str, Any]:
        return {"packages": [{"local": str(REPO / "dbt_sluicegate")}]}

    @pytest.fixture(scope="class")
    def macros(self) -> dict[str, str]:
        return {"materialized_view.sql": SHIM}

    @pytest.fixture(scope="class", autouse=True)
    def deps(self, project: Any) -> None:
        run_dbt(["deps"])
        run_dbt(["parse"])  # deps leaves no adapter registered; the fixtures' project.adapter needs one

    @staticmethod
    def query_relation_type(project: Any, relation: BaseRelation) -> str | None:
        return _relation_type(project, relation)


class TestMaterializedViewBasic(SluicegateMaterializedView, MaterializedViewBasic):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return _DELTA

    @staticmethod
    def insert_record(project: Any, table: BaseRelation, record: tuple[int, int]) -> None:
        project.run_sql(f"insert into {table} values ({record[0]}, {record[1]})")

    @staticmethod
    def refresh_materialized_view(project: Any, materialized_view: BaseRelation) -> None:
        project.run_sql(f"refresh materialized view {materialized_view}")

    @staticmethod
    def query_row_count(project: Any, relation: BaseRelation) -> int:
        return project.run_sql(f"select count(*) from {relation}", fetch="one")[0]

    @pytest.mark.xfail(strict=True, reason=_REFUSED)
    def test_table_replaces_materialized_view(self, project: Any, my_materialized_view: BaseRelation) -> None:
        super().test_table_replaces_materialized_view(project, my_materialized_view)

    @pytest.mark.xfail(strict=True, reason=_REFUSED)
    def test_view_replaces_materialized_view(self, project: Any, my_materialized_view: BaseRelation) -> None:
        super().test_view_replaces_materialized_view(project, my_materialized_view)


class SluicegateMaterializedViewChanges(SluicegateMaterializedView, MaterializedViewChanges):
    """A schedule is what ALTER changes; a table property needs a REPLACE (as on dbt-databricks)."""

    @staticmethod
    def check_start_state(project: Any, materialized_view: BaseRelation) -> None:
        details = _details(project, materialized_view)
        assert details["Type"] == "MATERIALIZED_VIEW"
        assert details["Refresh Schedule"] == "MANUAL"
        assert "Table Properties" not in details

    @staticmethod
    def change_config_via_alter(project: Any, materialized_view: BaseRelation) -> None:
        model = get_model_file(project, materialized_view)
        set_model_file(project, materialized_view, model.replace(
            "materialized='materialized_view',", "materialized='materialized_view', schedule={'every': '2 HOURS'},"))

    @staticmethod
    def check_state_alter_change_is_applied(project: Any, materialized_view: BaseRelation) -> None:
        assert _details(project, materialized_view)["Refresh Schedule"] == "EVERY 2 HOURS"

    @staticmethod
    def change_config_via_replace(project: Any, materialized_view: BaseRelation) -> None:
        model = get_model_file(project, materialized_view)
        set_model_file(project, materialized_view, model.replace(
            "materialized='materialized_view',", "materialized='materialized_view', tblproperties={'team': 'a'},"))

    @staticmethod
    def check_state_replace_change_is_applied(project: Any, materialized_view: BaseRelation) -> None:
        assert _details(project, materialized_view)["Table Properties"] == "[team=a]"


class TestMaterializedViewChangesApply(SluicegateMaterializedViewChanges, MaterializedViewChangesApplyMixin):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return {**_DELTA, "models": {**_DELTA["models"], "on_configuration_change": "apply"}}


class TestMaterializedViewChangesContinue(SluicegateMaterializedViewChanges, MaterializedViewChangesContinueMixin):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return {**_DELTA, "models": {**_DELTA["models"], "on_configuration_change": "continue"}}


class TestMaterializedViewChangesFail(SluicegateMaterializedViewChanges, MaterializedViewChangesFailMixin):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict[str, Any]:
        return {**_DELTA, "models": {**_DELTA["models"], "on_configuration_change": "fail"}}
