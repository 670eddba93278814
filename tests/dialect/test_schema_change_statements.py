"""The schema and layout statements dbt-databricks sends, in the dialect, without a JVM: ALTER {TABLE | MATERIALIZED
VIEW | STREAMING TABLE} ... CLUSTER BY (columns, NONE, AUTO), ALTER TABLE ... DROP COLUMN(S), ALTER TABLE ... ALTER
COLUMN c TYPE (and CHANGE COLUMN c c <type>), `(DESCRIBE HISTORY t)` read as a relation, MERGE WITH SCHEMA
EVOLUTION, COMMENT ON each kind of relation, and DELETE / UPDATE / MERGE naming columns by their table's full name,
which read as the table's short name where Databricks resolves them."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sluicegate.dialect.classify import classify
from sluicegate.dialect.determinism import nondeterminism
from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.parse import parse
from sluicegate.dialect.references import history_reads, table_references
from sluicegate.dialect.statement_types import statement_type
from sluicegate.dialect.statements import (
    AlterSchedule,
    ColumnName,
    Delete,
    DropColumns,
    Merge,
    SetClustering,
    SetColumnComment,
    SetColumnType,
    SetTableComment,
    TableName,
    Update,
)


def _names(columns: tuple[ColumnName, ...]) -> list[str]:
    return [column.name for column in columns]


def test_cluster_by_columns_none_and_auto() -> None:
    stmt = classify("ALTER TABLE `main`.`s`.`t` CLUSTER BY (id, `Event Time`)")
    assert isinstance(stmt, SetClustering) and stmt.table == TableName("s", "t") and not stmt.auto
    assert _names(stmt.columns) == ["id", "Event Time"]
    assert stmt.columns[0].offset == len("ALTER TABLE `main`.`s`.`t` CLUSTER BY (")
    assert classify("alter table t cluster by none") == SetClustering(TableName(None, "t"), ())
    assert classify("ALTER TABLE t CLUSTER BY AUTO") == SetClustering(TableName(None, "t"), (), auto=True)
    assert statement_type(stmt) == "ALTER_TABLE"


@pytest.mark.parametrize("kind", ["MATERIALIZED VIEW", "STREAMING TABLE"])
def test_cluster_by_of_a_materialized_view_or_streaming_table(kind: str) -> None:
    """Databricks changes their clustering with their own ALTER (not ALTER TABLE): the same forms, the kind kept."""
    sql = f"ALTER {kind} `main`.`s`.`mv` CLUSTER BY (id, ts)"
    stmt = classify(sql)
    assert stmt == SetClustering(TableName("s", "mv"), (ColumnName("id"), ColumnName("ts")), kind=kind)
    assert stmt.columns[1].offset == sql.index("ts)")
    assert classify(f"alter {kind.lower()} mv cluster by none") == SetClustering(TableName(None, "mv"), (), kind=kind)
    assert classify(f"ALTER {kind} mv CLUSTER BY AUTO") == SetClustering(TableName(None, "mv"), (), True, kind)
    assert classify("ALTER TABLE t CLUSTER BY (a)").kind == "TABLE"
    assert isinstance(classify(f"ALTER {kind} mv DROP SCHEDULE"), AlterSchedule)  # still its own


@pytest.mark.parametrize("sql", ["ALTER MATERIALIZED VIEW mv CLUSTER BY (a) ZORDER",
                                 "ALTER STREAMING TABLE st CLUSTER", "ALTER MATERIALIZED VIEW mv RENAME TO x"])
def test_alter_of_a_materialized_view_or_streaming_table_is_a_syntax_error_otherwise(sql: str) -> None:
    """These ALTERs are the gateway's: what else follows the name is a syntax error, not Spark's to guess at."""
    with pytest.raises(DialectError) as raised:
        classify(sql)
    assert raised.value.error_class == "PARSE_SYNTAX_ERROR"


@pytest.mark.parametrize("sql", ["ALTER TABLE t CLUSTER BY (a.b)", "ALTER TABLE t CLUSTER BY ()",
                                 "ALTER MATERIALIZED VIEW mv CLUSTER BY (a.b)",
                                 "ALTER STREAMING TABLE st CLUSTER BY ()"])
def test_cluster_by_refuses_what_names_no_top_level_column(sql: str) -> None:
    with pytest.raises(DialectError) as raised:
        classify(sql)
    assert raised.value.hint and "CLUSTER BY" in raised.value.message


@pytest.mark.parametrize(("sql", "columns", "if_exists"), [
    ("ALTER TABLE `main`.`s`.`t` DROP COLUMNS (`msg`)", ["msg"], False),   # dbt-databricks' sync_all_columns
    ("ALTER TABLE s.t DROP COLUMNS (a, b)", ["a", "b"], False),
    ("ALTER TABLE s.t DROP COLUMN a", ["a"], False),
    ("ALTER TABLE s.t DROP COLUMN (a)", ["a"], False),
    ("ALTER TABLE s.t DROP COLUMN IF EXISTS a", ["a"], True),
    ("ALTER TABLE s.t DROP COLUMNS IF EXISTS (a, b)", ["a", "b"], True),
])
def test_drop_columns(sql: str, columns: list[str], if_exists: bool) -> None:
    stmt = classify(sql)
    assert isinstance(stmt, DropColumns) and stmt.table == TableName("s", "t")
    assert _names(stmt.columns) == columns and stmt.if_exists is if_exists
    assert all(column.offset is not None and sql[column.offset:].lstrip("`").startswith(column.name)
               for column in stmt.columns)


def test_drop_of_a_nested_field_is_refused() -> None:
    with pytest.raises(DialectError, match="top-level columns"):
        classify("ALTER TABLE t DROP COLUMN a.b")


def test_merge_with_schema_evolution_is_a_merge_that_says_so() -> None:
    dbt = ("merge\n        with schema evolution\n    into\n        `main`.`s`.`m` as DBT_INTERNAL_DEST\n    using\n"
           "        `m__dbt_tmp` as DBT_INTERNAL_SOURCE\n    on\n        DBT_INTERNAL_SOURCE.`id` <=> "
           "DBT_INTERNAL_DEST.`id`\n    when matched\n        then update set\n            *\n"
           "    when not matched\n        then insert\n            *")
    stmt = classify(dbt)
    assert isinstance(stmt, Merge) and stmt.schema_evolution and stmt.table == TableName("s", "m")
    assert statement_type(stmt) == "MERGE"
    assert len(stmt.tree.args["whens"].expressions) == 2
    plain = classify("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert isinstance(plain, Merge) and not plain.schema_evolution


def test_a_merge_with_a_cte_is_still_one() -> None:
    stmt = classify("WITH s AS (SELECT 1 AS id) MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert isinstance(stmt, Merge) and not stmt.schema_evolution


def _columns(tree: exp.Expression) -> set[str]:
    return {column.sql(StreamingSpark) for column in tree.find_all(exp.Column)}


def test_full_names_of_the_statements_tables_read_as_their_short_names() -> None:
    """dbt-databricks' legacy delete+insert on a composite key: both tables named by catalog, schema and table."""
    stmt = classify("delete from `main`.`s`.`t`\nwhere EXISTS (SELECT 1 FROM `main`.`s`.`t__dbt_tmp` WHERE "
                    "`main`.`s`.`t`.`id` <=> `main`.`s`.`t__dbt_tmp`.`id` AND s.t.color <=> "
                    "hive_metastore.s.t__dbt_tmp.color)")
    assert isinstance(stmt, Delete) and stmt.table == TableName("s", "t")
    assert _columns(stmt.tree) == {"`t`.`id`", "`t__dbt_tmp`.`id`", "t.color", "t__dbt_tmp.color"}
    one_key = classify("delete from `main`.`s`.`t` where `main`.`s`.`t`.`id` IN (SELECT `id` FROM tmp)")
    assert _columns(one_key.tree) == {"`t`.`id`", "`id`"}  # type: ignore[union-attr]
    update = classify("UPDATE s.t SET v = s.t.v + 1 WHERE s.t.id = 1")
    assert isinstance(update, Update) and _columns(update.tree) == {"v", "t.v", "t.id"}
    merge = classify("MERGE INTO main.s.t USING s.u ON main.s.t.id = s.u.id WHEN MATCHED THEN UPDATE SET v = s.u.v")
    assert _columns(merge.tree) == {"t.id", "u.id", "v", "u.v"}  # type: ignore[union-attr]


@pytest.mark.parametrize(("sql", "kept"), [
    ("DELETE FROM s.t AS k WHERE s.t.id = 2", "s.t.id"),                      # an alias replaces the name
    ("DELETE FROM s.t WHERE other.s.t.id = 1", "other.s.t.id"),               # another catalog's
    ("DELETE FROM s.t WHERE EXISTS (SELECT 1 FROM o.t WHERE s.t.id = o.t.id)", "s.t.id"),  # `t.id`: ambiguous
    ("DELETE FROM s.t WHERE s.u.id = 1", "s.u.id"),                           # no such table in the statement
])
def test_other_full_names_are_left_for_spark(sql: str, kept: str) -> None:
    stmt = classify(sql)
    assert isinstance(stmt, Delete) and kept in _columns(stmt.tree)


@pytest.mark.parametrize(("sql", "kind", "comment"), [
    ("COMMENT ON TABLE s.t IS 'facts'", "TABLE", "facts"),
    ("COMMENT ON VIEW `main`.`s`.`t` IS 'it\\'s a view'", "VIEW", "it's a view"),
    ("comment on materialized view s.t is 'counted'", "MATERIALIZED VIEW", "counted"),
    ("COMMENT ON STREAMING TABLE s.t IS NULL", "STREAMING TABLE", None),
    ("COMMENT ON TABLE s.t IS NULL", "TABLE", None),
])
def test_comment_on_each_kind_of_relation(sql: str, kind: str, comment: str | None) -> None:
    """dbt-databricks' persist_docs writes the relation's kind: `COMMENT ON {kind} name IS '...'`."""
    assert classify(sql) == SetTableComment(TableName("s", "t"), comment, kind)
    assert statement_type(classify(sql)) == "COMMENT"


@pytest.mark.parametrize(("sql", "type_name"), [
    ("alter table `main`.`s`.`t` alter column `measure` type bigint", "bigint"),
    ("ALTER TABLE s.t ALTER COLUMN measure TYPE DECIMAL(12, 2)", "decimal(12,2)"),
    ("ALTER TABLE s.t CHANGE COLUMN measure measure BIGINT", "bigint"),
    ("ALTER TABLE s.t CHANGE measure MEASURE timestamp_ntz;", "timestamp_ntz"),
])
def test_a_column_type_change(sql: str, type_name: str) -> None:
    stmt = classify(sql)
    assert stmt == SetColumnType(TableName("s", "t"), ColumnName("measure"), type_name)
    assert stmt.column.offset is not None and sql[stmt.column.offset:].lstrip("`").startswith("measure")
    assert statement_type(stmt) == "ALTER_TABLE"


def test_change_column_forms_that_are_not_a_type_change() -> None:
    assert isinstance(classify("ALTER TABLE t CHANGE COLUMN c COMMENT 'x'"), SetColumnComment)
    for sql in ("ALTER TABLE t CHANGE COLUMN c d BIGINT", "ALTER TABLE t CHANGE COLUMN c c BIGINT COMMENT 'x'",
                "ALTER TABLE t CHANGE COLUMN c c BIGINT FIRST"):   # a rename, or more than the type: Spark's
        assert not isinstance(classify(sql), SetColumnType)


def test_describe_history_in_from_is_a_history_read_not_a_table_read() -> None:
    sql = "SELECT h.operation FROM (DESCRIBE HISTORY `main`.s.t) h JOIN u ON true WHERE h.version > 0"
    tree = parse(sql)
    (read,) = history_reads(sql, tree)
    assert (read.database, read.name) == ("s", "t") and not read.needs_alias
    assert sql[read.start:read.end] == "(DESCRIBE HISTORY `main`.s.t)"
    assert [ref.name for ref in table_references(sql, tree)] == ["u"]
    assert nondeterminism(tree) == "DESCRIBE"           # the log moves without a table version: never cached
    (alone,) = history_reads("select * from ( describe history t )", parse("select * from ( describe history t )"))
    assert alone.needs_alias and alone.name == "t"
    assert history_reads("DESCRIBE HISTORY s.t", parse("DESCRIBE HISTORY s.t")) == []   # the statement
