"""CREATE / DROP / SHOW MATERIALIZED VIEW as classified statements (no JVM): every clause of Databricks' CREATE, the
round trip of REFRESH POLICY, and the refusals the dialect makes at the right position."""

from __future__ import annotations

import pytest
import sqlglot

from sluicegate.dialect.classify import classify
from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import SqlError, StatementSyntaxError
from sluicegate.dialect.schedule import Schedule
from sluicegate.dialect.statements import (
    CreateMaterializedView,
    DropMaterializedView,
    Query,
    ShowMaterializedViews,
    TableName,
)


def test_every_clause() -> None:
    sql = ("CREATE MATERIALIZED VIEW db.mv (a COMMENT 'x', b) PARTITIONED BY (a) COMMENT 'c' "
           "TBLPROPERTIES ('k' = 'v') REFRESH POLICY FULL SCHEDULE EVERY 3 HOURS AS SELECT a, b FROM t")
    found = classify(sql)
    assert found == CreateMaterializedView(
        TableName("db", "mv"), Query("SELECT a, b FROM t", sql.index("SELECT")), False, False, False,
        (("a", "x"), ("b", None)), ("a",), "c", {"k": "v"}, "FULL", Schedule("every", every=3, unit="HOUR"))


@pytest.mark.parametrize(("sql", "replace", "or_refresh", "if_not_exists", "policy"), [
    ("CREATE OR REPLACE MATERIALIZED VIEW mv AS SELECT 1", True, False, False, "AUTO"),
    ("CREATE OR REFRESH MATERIALIZED VIEW mv REFRESH POLICY INCREMENTAL STRICT AS SELECT 1", False, True, False,
     "INCREMENTAL STRICT"),
    ("CREATE MATERIALIZED VIEW IF NOT EXISTS mv REFRESH POLICY INCREMENTAL AS SELECT 1", False, False, True,
     "INCREMENTAL"),
])
def test_create_forms(sql: str, replace: bool, or_refresh: bool, if_not_exists: bool, policy: str) -> None:
    found = classify(sql)
    assert isinstance(found, CreateMaterializedView)
    assert (found.replace, found.or_refresh, found.if_not_exists, found.refresh_policy) == (
        replace, or_refresh, if_not_exists, policy)


def test_trigger_on_update_and_drop_and_show() -> None:
    found = classify("CREATE MATERIALIZED VIEW mv TRIGGER ON UPDATE AT MOST EVERY INTERVAL 5 MINUTES AS SELECT 1")
    assert isinstance(found, CreateMaterializedView)
    assert found.schedule == Schedule("on_update", at_most_every_seconds=300)
    assert classify("DROP MATERIALIZED VIEW IF EXISTS d.mv") == DropMaterializedView(TableName("d", "mv"), True)
    assert classify("SHOW MATERIALIZED VIEWS IN d LIKE 'g*'") == ShowMaterializedViews("d", "g*")


def test_round_trip() -> None:
    sql = "CREATE OR REPLACE MATERIALIZED VIEW mv REFRESH POLICY INCREMENTAL STRICT TRIGGER ON UPDATE AS SELECT 1"
    assert sqlglot.parse_one(sql, read=StreamingSpark).sql(StreamingSpark) == sql


def test_stream_is_refused_at_its_position() -> None:
    sql = "CREATE MATERIALIZED VIEW mv AS\nSELECT * FROM STREAM(src)"
    with pytest.raises(SqlError) as raised:
        classify(sql)
    assert raised.value.error_class == "INVALID_FLOW_QUERY_TYPE.STREAMING_RELATION_FOR_MATERIALIZED_VIEW"
    assert raised.value.line == 2 and raised.value.hint


def test_expectations_are_refused() -> None:
    sql = "CREATE MATERIALIZED VIEW mv (a, CONSTRAINT ok EXPECT (a > 0)) AS SELECT 1 AS a"
    with pytest.raises(SqlError) as raised:
        classify(sql)
    assert raised.value.error_class == "UNSUPPORTED_FEATURE.MATERIALIZED_VIEW_EXPECTATIONS"
    assert raised.value.column == sql.index("ok") + 1   # the expectation's name


def test_key_constraints_in_the_column_list_are_informational_not_columns() -> None:
    """dbt-databricks' column list of a model with a contract: typed columns, then PRIMARY KEY / FOREIGN KEY."""
    sql = ("CREATE MATERIALIZED VIEW mv (`id` bigint NOT NULL COMMENT 'the key', `value` bigint, PRIMARY KEY (id), "
           "CONSTRAINT fk FOREIGN KEY (value) REFERENCES other (id)) AS SELECT 1 AS id, 2 AS value")
    found = classify(sql)
    assert isinstance(found, CreateMaterializedView)
    assert found.columns == (("id", "the key"), ("value", None))
    assert [(k.name, k.kind, k.columns, k.references, k.referenced_columns) for k in found.keys] == [
        (None, "PRIMARY KEY", ("id",), (), ()), ("fk", "FOREIGN KEY", ("value",), ("other",), ("id",))]  # kept
    own = classify("CREATE MATERIALIZED VIEW mv (id bigint PRIMARY KEY, v int) AS SELECT 1 AS id, 2 AS v")
    assert isinstance(own, CreateMaterializedView) and [k.columns for k in own.keys] == [("id",)]
    check = "CREATE MATERIALIZED VIEW mv (a, CONSTRAINT positive CHECK (a > 0)) AS SELECT 1 AS a"
    with pytest.raises(SqlError) as raised:
        classify(check)
    assert raised.value.column == check.index("positive") + 1


@pytest.mark.parametrize("sql", [
    "CREATE MATERIALIZED VIEW mv REFRESH POLICY SOMETIMES AS SELECT 1",
    "CREATE MATERIALIZED VIEW mv SCHEDULE EVERY AS SELECT 1",
])
def test_syntax_errors_are_reported(sql: str) -> None:
    with pytest.raises(StatementSyntaxError):
        classify(sql)
