"""Statement classification: each warehouse statement becomes its dataclass, the rest passes through to Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from sluicegate.dialect.classify import classify
from sluicegate.dialect.columns import ColumnSpec
from sluicegate.dialect.errors import DialectError, StatementSyntaxError
from sluicegate.dialect.statements import (
    AddColumns,
    CloneTable,
    CreateDatabase,
    CreateFunction,
    CreateTable,
    CreateTemporaryView,
    CreateView,
    Delete,
    DescribeDetail,
    DescribeFunction,
    DescribeHistory,
    DescribeStreamingTable,
    DescribeTable,
    DropDatabase,
    DropFunction,
    DropStreamingTable,
    DropTable,
    Grant,
    Insert,
    Merge,
    Passthrough,
    Query,
    RenameTable,
    ReplaceOn,
    ReplaceWhere,
    Revoke,
    SecurableObject,
    SelectQuery,
    ShowCreateTable,
    ShowDatabases,
    ShowFunctions,
    ShowGrants,
    ShowStreamingTables,
    ShowTables,
    ShowViews,
    TableName,
    Update,
    UseDatabase,
    Vacuum,
)

ROOT = Path(__file__).resolve().parents[2]


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
    assert values == Insert(TableName(None, "t"), ("a", "b"), values.query, False, frozenset({1}))
    assert values.query.sql == "VALUES (1, 'x')"
    overwrite = classify("INSERT OVERWRITE TABLE db.t SELECT * FROM s")
    assert isinstance(overwrite, Insert) and overwrite.overwrite and overwrite.query.sql == "SELECT * FROM s"
    cte = classify("INSERT INTO t WITH x AS (SELECT 1 AS a) SELECT a FROM x")
    assert cte.query.sql == "WITH x AS (SELECT 1 AS a) SELECT a FROM x"


def test_insert_by_name_and_the_replacing_forms():
    by_name = classify("insert overwrite table `main`.`s`.`t` by name select * from `main`.`s`.`tmp`")
    assert isinstance(by_name, Insert) and by_name.by_name and by_name.overwrite and by_name.replace is None
    assert by_name.query.sql == "select * from `main`.`s`.`tmp`"
    sql = "INSERT INTO t BY NAME\n REPLACE WHERE day IN (1, 2) AND d >= cast('2020-01-01' as date)\n TABLE `s`.`tmp`"
    where = classify(sql)
    assert isinstance(where, Insert) and where.by_name and not where.overwrite
    assert where.replace == ReplaceWhere("day IN (1, 2) AND d >= CAST('2020-01-01' AS DATE)")
    assert where.query.sql == "SELECT * FROM `s`.`tmp`" and sql[where.query.offset:].endswith(" TABLE `s`.`tmp`")
    assert where.query.offset + where.query.sql.index("`s`") == sql.index("`s`")  # positions land on the name
    query = classify("INSERT INTO t REPLACE WHERE id IN (1, 2) (SELECT 1, 'a')")
    assert query.replace == ReplaceWhere("id IN (1, 2)") and query.query.sql == "(SELECT 1, 'a')"
    sql = (" insert into table s.t as target\nreplace on (target.`id` <=> temp.`id`)\n"
           "(select `id`, `v`\n from s.tmp ) as temp")
    on = classify(sql)
    assert isinstance(on, Insert) and on.table == TableName("s", "t", on.table.offset) and not on.by_name
    assert on.replace == ReplaceOn("target.`id` IS NOT DISTINCT FROM temp.`id`", "target", "temp")  # Spark reads both
    assert on.query.sql == "select `id`, `v`\n from s.tmp " and sql[on.query.offset:].startswith(on.query.sql)


@pytest.mark.parametrize("sql, message", [
    ("INSERT INTO t REPLACE USING (id) SELECT 1", "REPLACE USING is not supported"),
    ("INSERT INTO t REPLACE WHERE id IN (SELECT id FROM u) SELECT 1", "a subquery cannot decide"),
    ("INSERT INTO t AS a REPLACE ON (a.id = (SELECT max(id) FROM u)) (SELECT 1 AS id) AS s", "a subquery cannot"),
    ("INSERT OVERWRITE t REPLACE WHERE id = 1 SELECT 1", "INSERT OVERWRITE cannot REPLACE"),
])
def test_replacing_inserts_refused(sql: str, message: str):
    with pytest.raises(DialectError, match=message):
        classify(sql)


@pytest.mark.parametrize("sql", ["USE ROLE admin", "USE WAREHOUSE w"])
def test_use_of_what_spark_has_not_is_refused(sql: str):
    with pytest.raises(StatementSyntaxError, match=f"{sql.rsplit(' ', 1)[0]} is not supported"):
        classify(sql)


@pytest.mark.parametrize("sql, expected", [
    ("CREATE DATABASE IF NOT EXISTS sales COMMENT 'x'", CreateDatabase("sales", True, "x")),
    ("CREATE SCHEMA s", CreateDatabase("s", False, None)),
    ("DROP SCHEMA s CASCADE", DropDatabase("s", False, True)),
    ("DROP DATABASE IF EXISTS s", DropDatabase("s", True, False)),
    ("USE sales", UseDatabase("sales")),
    ("USE NAMESPACE sales", UseDatabase("sales")),
    ("USE DATABASE sales", UseDatabase("sales")),
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
    ("DESCRIBE DETAIL main.db.t", DescribeDetail(TableName("db", "t"))),
    ("DESC DETAIL t;", DescribeDetail(TableName(None, "t"))),
    ("DESCRIBE detail", DescribeTable(TableName(None, "detail"), False)),
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
    assert view.comment is None
    assert classify("CREATE VIEW v COMMENT 'it\\'s -- x' AS SELECT 1").comment == "it's -- x"
    assert isinstance(classify("DELETE FROM t WHERE a = 1"), Delete)
    assert isinstance(classify("UPDATE t SET b = 'z' WHERE a = 1"), Update)
    merge = classify("MERGE INTO db.t USING s ON t.a = s.a "
                     "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    assert isinstance(merge, Merge) and merge.table == TableName("db", "t")
    assert classify("SELECT 1") == SelectQuery(classify("SELECT 1").query)


def test_streaming_table_is_classified_with_its_plan():
    statement = classify("CREATE STREAMING TABLE s AS SELECT * FROM STREAM t")
    assert type(statement).__name__ == "CreateStreamingTable"
    assert statement.plan.sources[0].table == "t"  # type: ignore[union-attr]


def _table(name: str, database: str | None = None, kind: str = "TABLE") -> SecurableObject:
    return SecurableObject(kind, TableName(database, name))


TEMP_VIEW = "CREATE OR REPLACE GLOBAL TEMP VIEW v (a, b) AS\n  SELECT 1, 2"


@pytest.mark.parametrize("sql, expected", [
    # spellings: case, comments, newlines, backticks (a doubled backtick is one), a trailing semicolon
    ("show databases", ShowDatabases(None)),
    ("SHOW SCHEMAS", ShowDatabases(None)),
    ("-- list them\nSHOW /* all */ DATABASES LIKE 'a*';", ShowDatabases("a*")),
    ("SHOW TABLES IN db LIKE 'x*'", ShowTables("db", "x*")),
    ("SHOW TABLES FROM `my db` 'x*'", ShowTables("my db", "x*")),
    ("show tables in `a``b`", ShowTables("a`b", None)),
    ("SHOW TABLES IN default", ShowTables("default", None)),
    ("SHOW VIEWS", ShowViews(None, None)),
    ("SHOW VIEWS IN sales LIKE 'v*'", ShowViews("sales", "v*")),
    ("SHOW CREATE TABLE `db`.`my t`", ShowCreateTable(TableName("db", "my t"))),
    ("VACUUM t RETAIN 0 HOURS", Vacuum(TableName(None, "t"), 0.0)),
    ("vacuum\n  db.t\n  retain 1.5 hours", Vacuum(TableName("db", "t"), 1.5)),
    ("VACUUM t DRY RUN", Vacuum(TableName(None, "t"), None, dry_run=True)),
    ("vacuum db.t retain 200 hours dry run", Vacuum(TableName("db", "t"), 200.0, dry_run=True)),
    ("SHOW STREAMING TABLES FROM ads", ShowStreamingTables("ads", None)),
    ("DROP STREAMING TABLE `a``b`", DropStreamingTable(TableName(None, "a`b"), False)),
    ("DESC STREAMING TABLE ads.v", DescribeStreamingTable(TableName("ads", "v"))),
    ("DESCRIBE streaming", DescribeTable(TableName(None, "streaming"), False)),
    # temporary views: Spark runs the AS SELECT form as typed; the USING form names a data source the policy sees
    ("CREATE TEMPORARY VIEW v AS SELECT 1", CreateTemporaryView("v", Query("SELECT 1", 27), False, False,
                                                                 "CREATE TEMPORARY VIEW v AS SELECT 1")),
    (TEMP_VIEW, CreateTemporaryView("v", Query("SELECT 1, 2", TEMP_VIEW.index("SELECT")), True, True, TEMP_VIEW,
                                   columns=("a", "b"))),
    ("CREATE TEMP VIEW f USING parquet OPTIONS (path '/etc', x 'y')",
     CreateTemporaryView("f", None, False, False, "CREATE TEMP VIEW f USING parquet OPTIONS (path '/etc', x 'y')",
                         "parquet", {"path": "/etc", "x": "y"})),
    # grants, Databricks' shape
    ("GRANT SELECT, MODIFY ON TABLE db.t TO alice, `bob@x`",
     Grant(("SELECT", "MODIFY"), _table("t", "db"), ("alice", "bob@x"))),
    ("grant all privileges on schema s to users",
     Grant(("ALL PRIVILEGES",), SecurableObject("SCHEMA", TableName(None, "s")), ("users",))),
    ("GRANT ALL ON DATABASE s TO `a``b`", Grant(("ALL PRIVILEGES",), SecurableObject("SCHEMA", TableName(None, "s")),
                                                ("a`b",))),
    ("GRANT CREATE ON t TO alice", Grant(("CREATE",), _table("t"), ("alice",))),
    ("REVOKE SELECT ON VIEW v FROM alice", Revoke(("SELECT",), _table("v", kind="VIEW"), ("alice",))),
    ("SHOW GRANTS ON TABLE t", ShowGrants(None, _table("t"))),
    ("SHOW GRANTS alice ON SCHEMA s", ShowGrants("alice", SecurableObject("SCHEMA", TableName(None, "s")))),
    ("SHOW GRANTS ON t", ShowGrants(None, _table("t"))),
    ("SHOW GRANT `alice@x.com`", ShowGrants("alice@x.com", None)),
    ("GRANT SELECT, REFRESH ON MATERIALIZED VIEW db.mv TO bob",
     Grant(("SELECT", "REFRESH"), _table("mv", "db", kind="MATERIALIZED VIEW"), ("bob",))),
    ("revoke refresh on materialized view mv from bob", Revoke(("REFRESH",), _table("mv", kind="MATERIALIZED VIEW"),
                                                               ("bob",))),
    ("SHOW GRANTS bob ON MATERIALIZED VIEW mv", ShowGrants("bob", _table("mv", kind="MATERIALIZED VIEW"))),
    # what the gateway does not run itself: sqlglot's tree (parsed) or not (a command it keeps as text, an error)
    ("SHOW SYSTEM FUNCTIONS", Passthrough("SHOW SYSTEM FUNCTIONS")),
    ("EXPLAIN SELECT 1", Passthrough("EXPLAIN SELECT 1")),  # Spark runs it, with the tables it reads bound
    ("ADD JAR /tmp/x.jar", Passthrough("ADD JAR /tmp/x.jar", parsed=False)),
    ("CREATE TABLE t (a INT,", Passthrough("CREATE TABLE t (a INT,", parsed=False)),
    ("SELECT 'unterminated", Passthrough("SELECT 'unterminated", parsed=False)),
    ("SHOW TABLES EXTENDED", Passthrough("SHOW TABLES EXTENDED", parsed=False)),
])
def test_statement_kinds(sql, expected):
    assert classify(sql) == expected


def test_temporary_view_query_offset_points_into_the_statement():
    statement = classify(TEMP_VIEW)
    assert isinstance(statement, CreateTemporaryView) and statement.query is not None
    assert TEMP_VIEW[statement.query.offset:] == statement.query.sql


@pytest.mark.parametrize("sql, at", [
    ("GRANT SELECT ON TABLE TO alice", "alice"),          # sqlglot takes TO as the table: no TO follows
    ("GRANT SELECT ON t TO alice WITH GRANT OPTION", "WITH"),
    ("REVOKE SELECT ON t TO alice", "TO"),
    ("VACUUM t RETAIN x HOURS", "x"),
    ("VACUUM t DRY", "DRY"),
    ("VACUUM t DRY RUN RETAIN 1 HOURS", "RETAIN"),
    ("SHOW GRANTS ON", None),
    ("DROP STREAMING TABLE", None),
    ("CREATE STREAMING TABLE t AS SELECT * FROM STREAM s WATERMARK ts DELAY 5", "DELAY"),
])
def test_syntax_errors_in_the_gateways_own_statements_are_raised(sql, at):
    with pytest.raises(StatementSyntaxError) as raised:
        classify(sql)
    assert raised.value.line == 1 and raised.value.column is not None
    if at is not None:  # sqlglot reports the column of the last character of the offending token
        assert raised.value.column == sql.index(at) + len(at)


def test_unknown_privileges_are_named_with_the_supported_ones():
    sql = "GRANT SELECT,\n  USAGE ON TABLE t TO alice"
    with pytest.raises(DialectError) as raised:
        classify(sql)
    assert (raised.value.line, raised.value.column) == (2, 3)
    assert "USAGE" in raised.value.message
    assert "SELECT, MODIFY, CREATE, REFRESH, EXECUTE, ALL PRIVILEGES" in raised.value.hint
    with pytest.raises(DialectError):
        classify("GRANT SELECT (a) ON TABLE t TO alice")  # no column privileges
    for sql in ("GRANT SELECT ON FUNCTION f TO alice", "GRANT EXECUTE ON TABLE t TO alice",
                "REVOKE EXECUTE, MODIFY ON FUNCTION f FROM alice"):
        with pytest.raises(DialectError, match="EXECUTE is a function's privilege"):
            classify(sql)
    assert classify("GRANT EXECUTE ON SCHEMA s TO alice").privileges == ("EXECUTE",)


def test_the_classifier_and_the_executor_match_no_regexes():
    for path in ("dialect/classify.py", "dialect/trees.py", "dialect/statements.py", "dialect/dialect.py",
                 "dialect/expressions.py", "executor/dispatch.py"):
        text = (ROOT / path).read_text()
        assert "re.compile" not in text and "import re\n" not in text, path


def test_clone_statements_are_read_with_their_source_version_and_properties():
    """dbt-databricks' `dbt clone` sends `create or replace table t shallow clone s`; Databricks' grammar also has
    DEEP, IF NOT EXISTS, a time-travel clause on the source and TBLPROPERTIES."""
    assert classify("create or replace table `main`.`s`.`t` shallow clone `main`.`o`.`t`") == CloneTable(
        TableName("s", "t"), TableName("o", "t"), shallow=True, replace=True, if_not_exists=False)
    assert classify("CREATE TABLE IF NOT EXISTS t DEEP CLONE s VERSION AS OF 3 TBLPROPERTIES ('delta.x' = '1')") == \
        CloneTable(TableName(None, "t"), TableName(None, "s"), shallow=False, replace=False, if_not_exists=True,
                   version=3, properties={"delta.x": "1"})
    found = classify("create table t shallow clone s timestamp as of '2024-01-01 00:00:00' location '/x'")
    assert (found.timestamp, found.location) == ("2024-01-01 00:00:00", "/x")


def test_a_clone_with_columns_or_a_bad_version_is_refused_where_written():
    sql = "create table t (a int) shallow clone s"
    with pytest.raises(DialectError) as raised:
        classify(sql)
    assert "takes its columns" in str(raised.value)
    with pytest.raises(DialectError) as raised:
        classify("create table t shallow clone s version as of 'x'")
    assert raised.value.error_class == "INVALID_TIME_TRAVEL_SPEC"


def test_sql_functions_are_read_with_their_signature_and_body_as_written():
    """dbt-databricks' function resource sends `CREATE OR REPLACE FUNCTION main.s.f (price float) RETURNS float
    LANGUAGE SQL RETURN price * 2`; the body is kept as typed, after RETURN."""
    sql = ("CREATE OR REPLACE FUNCTION main.s.f (price float) RETURNS float LANGUAGE SQL COMMENT 'x2'\n"
           " RETURN price * 2;")
    found = classify(sql)
    assert found == CreateFunction(TableName("s", "f"), (("price", "FLOAT"),), "FLOAT", "price * 2",
                                   sql.index("price * 2"), "x2", replace=True)
    query = classify("CREATE FUNCTION IF NOT EXISTS f(x INT, y STRING) RETURNS INT RETURN SELECT max(a) FROM t")
    assert (query.parameters, query.body, query.if_not_exists) == ((("x", "INT"), ("y", "STRING")),
                                                                   "SELECT max(a) FROM t", True)
    assert classify("DROP FUNCTION IF EXISTS main.s.f") == DropFunction(TableName("s", "f"), True)
    assert classify("DESCRIBE FUNCTION EXTENDED s.f") == DescribeFunction(TableName("s", "f"), True)
    assert classify("SHOW USER FUNCTIONS IN main.s LIKE 'f*'") == ShowFunctions("USER", "s", "f*")
    assert classify("SHOW FUNCTIONS") == ShowFunctions("ALL", None, None)
    assert classify("GRANT EXECUTE ON FUNCTION s.f TO bob").securable.kind == "FUNCTION"
    # a temporary function stays Spark's, refused on its plan
    assert isinstance(classify("CREATE TEMPORARY FUNCTION g(x INT) RETURNS INT RETURN x"), Passthrough)


def test_a_table_or_python_function_is_refused_where_named():
    for sql in ("CREATE FUNCTION f(x INT) RETURNS TABLE (a INT) RETURN SELECT x",
                "CREATE FUNCTION f(x INT) RETURNS INT LANGUAGE PYTHON AS $$ return x $$"):
        with pytest.raises(DialectError) as raised:
            classify(sql)
        assert raised.value.column == sql.index(" f(") + 2
