"""Statement classification: each warehouse statement becomes its dataclass, the rest passes through to Spark."""

from __future__ import annotations

import pytest

from dialect.errors import StatementSyntaxError
from dialect.statements import (
    AddColumns, ColumnSpec, CreateDatabase, CreateTable, CreateView, Delete, DescribeHistory, DescribeTable,
    DropDatabase, DropTable, Insert, Merge, Passthrough, RenameTable, SelectQuery, ShowCreateTable, ShowDatabases,
    ShowTables, TableName, Update, UseDatabase, Vacuum, classify,
)


def test_create_table_with_everything():
    sql = ("CREATE TABLE IF NOT EXISTS db.t (a INT NOT NULL COMMENT 'key', b DECIMAL(10,2), c ARRAY<STRING>) "
           "USING DELTA PARTITIONED BY (a) COMMENT 'orders' TBLPROPERTIES ('owner.team'='sales')")
    statement = classify(sql)
    assert statement == CreateTable(
        TableName("db", "t"),
        (ColumnSpec("a", "int", False, "key"), ColumnSpec("b", "decimal(10,2)"), ColumnSpec("c", "array<string>")),
        ("a",), "orders", {"owner.team": "sales"}, "DELTA", True, False, None,
    )


def test_ctas_keeps_the_query_offset():
    sql = "CREATE OR REPLACE TABLE t USING DELTA PARTITIONED BY (k) AS\n  SELECT 1 AS k"
    statement = classify(sql)
    assert isinstance(statement, CreateTable) and statement.replace and statement.partition_by == ("k",)
    assert statement.query is not None
    assert statement.query.sql == "SELECT 1 AS k"
    assert sql[statement.query.offset:] == "SELECT 1 AS k"


def test_insert_forms():
    values = classify("INSERT INTO t (a, b) VALUES (1, 'x')")
    assert values == Insert(TableName(None, "t"), ("a", "b"), values.query, False)
    assert values.query.sql == "VALUES (1, 'x')"
    overwrite = classify("INSERT OVERWRITE TABLE db.t SELECT * FROM s")
    assert isinstance(overwrite, Insert) and overwrite.overwrite and overwrite.query.sql == "SELECT * FROM s"
    cte = classify("INSERT INTO t WITH x AS (SELECT 1 AS a) SELECT a FROM x")
    assert cte.query.sql == "WITH x AS (SELECT 1 AS a) SELECT a FROM x"


@pytest.mark.parametrize("sql, expected", [
    ("CREATE DATABASE IF NOT EXISTS sales COMMENT 'x'", CreateDatabase("sales", True, "x")),
    ("CREATE SCHEMA s", CreateDatabase("s", False, None)),
    ("DROP SCHEMA s CASCADE", DropDatabase("s", False, True)),
    ("DROP DATABASE IF EXISTS s", DropDatabase("s", True, False)),
    ("USE sales", UseDatabase("sales")),
    ("SHOW DATABASES", ShowDatabases(None)),
    ("SHOW SCHEMAS LIKE 'sa*'", ShowDatabases("sa*")),
    ("SHOW TABLES", ShowTables(None, None)),
    ("SHOW TABLES IN sales LIKE 'o*'", ShowTables("sales", "o*")),
    ("DROP TABLE IF EXISTS db.t", DropTable(TableName("db", "t"), True, False)),
    ("DROP VIEW v", DropTable(TableName(None, "v"), False, True)),
    ("ALTER TABLE t RENAME TO u", RenameTable(TableName(None, "t"), TableName(None, "u"))),
    ("ALTER TABLE t ADD COLUMNS (b STRING COMMENT 'c')", AddColumns(TableName(None, "t"),
                                                                   (ColumnSpec("b", "string", True, "c"),))),
    ("DESCRIBE t", DescribeTable(TableName(None, "t"), False)),
    ("DESCRIBE EXTENDED db.t", DescribeTable(TableName("db", "t"), True)),
    ("DESCRIBE HISTORY t", DescribeHistory(TableName(None, "t"))),
    ("SHOW CREATE TABLE db.t", ShowCreateTable(TableName("db", "t"))),
    ("VACUUM t RETAIN 24 HOURS", Vacuum(TableName(None, "t"), 24.0)),
    ("VACUUM `db`.`t`", Vacuum(TableName("db", "t"), None)),
    ("SET spark.sql.ansi.enabled=false", Passthrough("SET spark.sql.ansi.enabled=false")),
])
def test_simple_statements(sql, expected):
    assert classify(sql) == expected


def test_view_and_dml():
    view = classify("CREATE OR REPLACE VIEW v AS SELECT a FROM t")
    assert isinstance(view, CreateView) and view.replace and view.query.sql == "SELECT a FROM t"
    assert isinstance(classify("DELETE FROM t WHERE a = 1"), Delete)
    assert isinstance(classify("UPDATE t SET b = 'z' WHERE a = 1"), Update)
    merge = classify("MERGE INTO db.t USING s ON t.a = s.a WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    assert isinstance(merge, Merge) and merge.table == TableName("db", "t")
    assert classify("SELECT 1") == SelectQuery(classify("SELECT 1").query)


def test_streaming_table_is_classified_with_its_plan():
    statement = classify("CREATE STREAMING TABLE s AS SELECT * FROM STREAM t")
    assert type(statement).__name__ == "CreateStreamingTable"
    assert statement.plan.sources[0].table == "t"  # type: ignore[union-attr]


def test_syntax_errors_carry_positions():
    with pytest.raises(StatementSyntaxError) as raised:
        classify("CREATE TABLE t (a INT,")
    assert raised.value.line == 1
