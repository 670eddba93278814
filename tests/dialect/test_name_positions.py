"""The classifier carries where a statement writes each name (no JVM): errors about a name point at it, and nothing
reads a name's position back out of the text. A table's position is its database part's when written (after a dropped
catalog part), else its name's; quotes are part of the name; EXPLAIN is blanked, not cut, so positions stay those of
the text as typed."""

from __future__ import annotations

import pytest

from sluicegate.dialect import statements as st
from sluicegate.dialect.classify import classify
from sluicegate.dialect.errors import SqlError
from sluicegate.dialect.positions import line_column


def _at(sql: str, offset: int | None) -> tuple[int, int] | None:
    return line_column(sql, offset) if offset is not None else None


@pytest.mark.parametrize(("sql", "where"), [
    ("DROP TABLE t", (1, 12)),
    ("DROP TABLE db.t", (1, 12)),
    ("DROP TABLE `My Db`.`t`", (1, 12)),
    ("DROP TABLE `t`", (1, 12)),
    ("DROP TABLE spark_catalog.db.t", (1, 26)),      # the catalog is dropped: the name starts at its database
    ("DROP TABLE main.db.t", (1, 17)),
    ("DROP TABLE db . t", (1, 12)),
    ("SELECT 1;\n", None),
    ("-- t is named below\nDROP\n  TABLE\n    IF EXISTS   t", (4, 17)),
    ("INSERT INTO db.t SELECT * FROM t", (1, 13)),
    ("DELETE FROM\n  `db`.t WHERE t.x = 1", (2, 3)),
    ("CREATE TABLE t (t INT) USING delta", (1, 14)),
    ("CREATE OR REPLACE VIEW t AS SELECT 1 AS t", (1, 24)),
    ("DESCRIBE TABLE EXTENDED db.t", (1, 25)),
    ("REFRESH STREAMING TABLE\n  db.t FULL", (2, 3)),
])
def test_table_positions(sql: str, where: tuple[int, int] | None) -> None:
    statement = classify(sql)
    table = getattr(statement, "table", None)
    assert (_at(sql, table.offset) if table is not None else None) == where


def test_explain_prefixed_statements_keep_positions_in_the_text_as_typed() -> None:
    sql = "EXPLAIN\nCREATE STREAMING TABLE db.events AS SELECT * FROM STREAM(source)"
    statement = classify(sql)
    assert isinstance(statement, st.ExplainStreamingTable)
    assert len(statement.sql) == len(sql) and statement.sql.index("db.events") == sql.index("db.events")
    sql = "EXPLAIN CREATE MATERIALIZED VIEW\n  `db`.`mv` AS SELECT a, count(*) AS n FROM t GROUP BY a"
    explained = classify(sql)
    assert isinstance(explained, st.ExplainMaterializedView)
    assert _at(sql, explained.create.table.offset) == (2, 3)


def test_streaming_table_carries_its_name_beside_the_plan() -> None:
    sql = "CREATE OR REFRESH STREAMING TABLE\n  spark_catalog.db.events AS SELECT * FROM STREAM(source)"
    statement = classify(sql)
    assert isinstance(statement, st.CreateStreamingTable) and statement.table is not None
    assert statement.table == st.TableName("db", "events")
    assert _at(sql, statement.table.offset) == (2, 17)


def test_two_names_and_flows() -> None:
    sql = "ALTER TABLE db.old\nRENAME TO db.new"
    renamed = classify(sql)
    assert isinstance(renamed, st.RenameTable)
    assert (_at(sql, renamed.table.offset), _at(sql, renamed.new_name.offset)) == ((1, 13), (2, 11))
    sql = "CREATE FLOW f AS INSERT INTO\n  target BY NAME SELECT * FROM STREAM(source)"
    flow = classify(sql)
    assert isinstance(flow, st.CreateFlow)
    assert (_at(sql, flow.flow.offset), _at(sql, flow.table.offset)) == ((1, 13), (2, 3))


def test_columns_databases_and_schemas() -> None:
    sql = "CREATE TABLE t (a INT, b INT)\nPARTITIONED BY (b, `c`)"
    created = classify(sql)
    assert isinstance(created, st.CreateTable)
    assert [_at(sql, o) for o in created.partition_offsets] == [(2, 17), (2, 20)]
    sql = "ALTER TABLE t ADD COLUMNS (t INT,\n  `x y` STRING)"
    added = classify(sql)
    assert isinstance(added, st.AddColumns)
    assert [_at(sql, o) for o in added.column_offsets] == [(1, 28), (2, 3)]
    sql = "ALTER TABLE t ALTER COLUMN t COMMENT 'x'"
    commented = classify(sql)
    assert isinstance(commented, st.SetColumnComment) and _at(sql, commented.column_offset) == (1, 28)
    sql = "COMMENT ON COLUMN `main`.`s`.`t`.`id` IS 'the key'"
    commented = classify(sql)
    assert commented == st.SetColumnComment(st.TableName("s", "t"), "id", "the key")
    assert _at(sql, commented.column_offset) == (1, 34) and _at(sql, commented.table.offset) == (1, 26)
    with pytest.raises(SqlError, match="with its table"):
        classify("COMMENT ON COLUMN id IS 'x'")
    with pytest.raises(SqlError, match="CATALOG_NOT_FOUND|nope"):
        classify("COMMENT ON COLUMN nope.s.t.id IS 'x'")
    renamed = classify("ALTER VIEW s.v RENAME TO s.w")
    assert renamed == st.RenameTable(st.TableName("s", "v"), st.TableName("s", "w"), view=True)
    assert classify("ALTER TABLE v RENAME TO w") == st.RenameTable(st.TableName(None, "v"), st.TableName(None, "w"))
    for sql, where in [("CREATE SCHEMA IF NOT EXISTS main.s", (1, 34)), ("DROP DATABASE `s` CASCADE", (1, 15)),
                       ("DESCRIBE SCHEMA EXTENDED s", (1, 26))]:
        database = classify(sql)
        assert isinstance(database, (st.CreateDatabase, st.DropDatabase, st.DescribeDatabase))
        assert _at(sql, database.offset) == where, sql
    sql = "GRANT SELECT ON SCHEMA\n  s TO alice"
    granted = classify(sql)
    assert isinstance(granted, st.Grant) and _at(sql, granted.securable.name.offset) == (2, 3)


def test_positions_do_not_change_what_a_statement_is() -> None:
    assert classify("DROP TABLE db.t") == classify("DROP   TABLE\n db.t")
    assert hash(st.TableName("db", "t", 3)) == hash(st.TableName("db", "t"))
    assert classify("CREATE VIEW v (a COMMENT 'about a') AS SELECT 1 AS a").comment is None  # a column's, not v's
