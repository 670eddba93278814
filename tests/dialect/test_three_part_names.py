"""Three-part names: the catalog part is checked and dropped at the parse root, for every statement kind, with
Databricks' NO_SUCH_CATALOG_EXCEPTION at the catalog's position for any other catalog (no JVM)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sluicegate.dialect import catalogs
from sluicegate.dialect import statements as st
from sluicegate.dialect.catalogs import NoSuchCatalogError
from sluicegate.dialect.classify import classify
from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.parse import parse
from sluicegate.dialect.references import current_catalog_calls, splice, table_references
from sluicegate.dialect.statements import TableName


@pytest.fixture
def renamed() -> Iterator[None]:
    """The catalog configured as `lake` for one test."""
    catalogs.configure("lake")
    try:
        yield
    finally:
        catalogs.configure(catalogs.DEFAULT)


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT * FROM main.sales.t", st.SelectQuery),
    ("describe extended `main`.`analytics`.`m_incr`", st.DescribeTable(TableName("analytics", "m_incr"), True)),
    ("SHOW TBLPROPERTIES `main`.`analytics`.`m_st`", st.ShowTblProperties(TableName("analytics", "m_st"))),
    ("DROP TABLE hive_metastore.a.t", st.DropTable(TableName("a", "t"), False, False)),
    ("DROP MATERIALIZED VIEW spark_catalog.a.mv", st.DropMaterializedView(TableName("a", "mv"), False)),
    ("refresh streaming table `main`.`analytics`.`m_st`",
     st.Refresh(TableName("analytics", "m_st"), "STREAMING TABLE")),
    ("create schema if not exists `main`.`analytics`", st.CreateDatabase("analytics", True, None)),
    ("DROP SCHEMA main.analytics CASCADE", st.DropDatabase("analytics", False, True)),
    ("USE main.analytics", st.UseDatabase("analytics")),
    ("USE SCHEMA hive_metastore.analytics", st.UseDatabase("analytics")),
    ("SHOW SCHEMAS IN `main`", st.ShowDatabases(None)),
    ("SHOW DATABASES IN main LIKE 'a*'", st.ShowDatabases("a*")),
    ("SHOW TABLES IN main.analytics", st.ShowTables("analytics", None)),
    ("SHOW STREAMING TABLES IN main.analytics", st.ShowStreamingTables("analytics", None)),
    ("SHOW COLUMNS IN `main`.`analytics`.`m_incr`", st.ShowColumns(TableName("analytics", "m_incr"))),
    ("SHOW COLUMNS FROM t IN hive_metastore_db", st.ShowColumns(TableName("hive_metastore_db", "t"))),
    ("DESCRIBE SCHEMA `main`.`analytics`", st.DescribeDatabase("analytics", False)),
    ("DESC DATABASE EXTENDED hive_metastore.a", st.DescribeDatabase("a", True)),
    ("SHOW CATALOGS", st.ShowCatalogs(None)),
    ("SHOW CATALOGS LIKE 'm*'", st.ShowCatalogs("m*")),
    ("GRANT SELECT ON TABLE main.a.t TO bob",
     st.Grant(("SELECT",), st.SecurableObject("TABLE", TableName("a", "t")), ("bob",))),
    ("GRANT CREATE ON SCHEMA main.a TO bob",
     st.Grant(("CREATE",), st.SecurableObject("SCHEMA", TableName(None, "a")), ("bob",))),
    ("VACUUM main.a.t", st.Vacuum(TableName("a", "t"), None)),
    ("ALTER TABLE main.a.t RENAME TO main.a.u", st.RenameTable(TableName("a", "t"), TableName("a", "u"))),
])
def test_the_catalog_part_is_dropped_for_every_kind(sql: str, expected: object) -> None:
    classified = classify(sql)
    if isinstance(expected, type):
        assert isinstance(classified, expected)
    else:
        assert classified == expected


def test_the_statements_that_name_a_table_keep_two_parts() -> None:
    insert = classify("insert into main.a.t select * from main.a.s")
    assert isinstance(insert, st.Insert) and insert.table == TableName("a", "t")
    merge = classify("merge into `main`.`a`.`t` as d using `s` on d.id = s.id when matched then update set *")
    assert isinstance(merge, st.Merge) and merge.table == TableName("a", "t")
    assert "main" not in merge.tree.sql()
    created = classify("CREATE STREAMING TABLE main.a.s AS SELECT * FROM STREAM(main.a.src)")
    assert isinstance(created, st.CreateStreamingTable)
    assert (created.plan.database, created.plan.name) == ("a", "s")
    assert [(s.database, s.table) for s in created.plan.sources] == [("a", "src")]
    view = classify("create or replace view `main`.`analytics`.`v` as ( select id from `main`.`analytics`.`t` )")
    assert isinstance(view, st.CreateView) and view.table == TableName("analytics", "v")


def test_the_span_of_a_three_part_reference_covers_the_catalog() -> None:
    sql = "SELECT * FROM `main`.`sales`.`orders` o JOIN hive_metastore.sales.users ON o.u = users.id"
    refs = table_references(sql)
    assert [(r.database, r.name) for r in refs] == [("sales", "orders"), ("sales", "users")]
    assert [sql[r.start:r.end] for r in refs] == ["`main`.`sales`.`orders`", "hive_metastore.sales.users"]
    spliced = splice(sql, [(refs[0], "v0"), (refs[1], "v1")]).sql
    assert spliced == "SELECT * FROM v0 o JOIN v1 AS `users` ON o.u = users.id"


@pytest.mark.parametrize(("sql", "column"), [
    ("SELECT * FROM other.sales.t", 15),
    ("DESCRIBE TABLE `lake`.a.t", 16),
    ("SHOW SCHEMAS IN nope", 17),
    ("SHOW TABLES IN nope.a", 16),
    ("USE nope.a", 5),
    ("GRANT SELECT ON SCHEMA nope.a TO bob", 24),
    ("INSERT INTO x.a.t SELECT 1", 13),
    ("CREATE TABLE x.a.t (id INT)", 14),
])
def test_another_catalog_is_refused_at_its_position(sql: str, column: int) -> None:
    with pytest.raises(NoSuchCatalogError) as raised:
        classify(sql)
    error = raised.value
    assert (error.error_class, error.sqlstate) == ("NO_SUCH_CATALOG_EXCEPTION", "42704")
    assert (error.line, error.column) == (1, column)
    assert "cannot be found" in error.message and "main" in (error.hint or "")


def test_the_system_catalog_holds_information_schema_and_query_only() -> None:
    refs = table_references("SELECT * FROM system.information_schema.tables t JOIN main.information_schema.columns c")
    assert [(r.database, r.name) for r in refs] == [("information_schema", "tables"), ("information_schema", "columns")]
    (history,) = table_references("SELECT * FROM system.query.history")
    assert (history.database, history.name) == ("query", "history") and history.node.meta["catalog"] == "system"
    with pytest.raises(NoSuchCatalogError, match="holds information_schema"):
        parse("SELECT * FROM system.sales.t")


def test_use_and_set_catalog_and_a_setting_named_catalog() -> None:
    assert classify("USE CATALOG main") == st.UseCatalog("main", 1, 13)
    assert classify("SET CATALOG `hive_metastore`") == st.UseCatalog("hive_metastore", 1, 13)
    assert classify("set catalog 'main'").name == "main"
    assert isinstance(classify("SET catalog = x"), st.Passthrough)


def test_a_configured_name_replaces_main(renamed: None) -> None:
    assert catalogs.current().names == ("lake", "hive_metastore", "spark_catalog")
    assert classify("DESCRIBE lake.a.t") == st.DescribeTable(TableName("a", "t"), False)
    assert classify("DESCRIBE spark_catalog.a.t") == st.DescribeTable(TableName("a", "t"), False)
    with pytest.raises(NoSuchCatalogError, match="one catalog, `lake`"):
        classify("DESCRIBE main.a.t")


@pytest.mark.parametrize("name", ["", "system", "information_schema", "a.b", "a b", "1a", "x" * 129])
def test_a_bad_configured_name_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a valid catalog name"):
        catalogs.checked_name(name)


def test_current_catalog_calls_keep_spark_s_column_name_only_where_they_are_a_column() -> None:
    sql = "SELECT current_catalog(), CURRENT_CATALOG ( ) AS c FROM t WHERE current_catalog() = 'main'"
    calls = current_catalog_calls(sql, parse(sql))
    assert splice(sql, [(call, "'main'") for call in calls]).sql == (
        "SELECT 'main' AS `current_catalog()`, 'main' AS c FROM t WHERE 'main' = 'main'")


@pytest.mark.parametrize("sql", ["USE CATALOG", "SET CATALOG", "SHOW CATALOGS LIKE", "SHOW CATALOGS x",
                                 "USE CATALOG main.x"])
def test_a_bad_catalog_statement_is_a_positioned_syntax_error_never_spark_s(sql: str) -> None:
    with pytest.raises(DialectError) as raised:
        classify(sql)
    assert raised.value.line == 1 and raised.value.column is not None
