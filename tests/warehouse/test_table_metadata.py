"""What dbt sends about a table's metadata, on Delta tables: ADD COLUMNS in Spark's unparenthesised form, column
and table comments (persist_docs), table properties and SHOW TBLPROPERTIES; only the owner may change them."""

from __future__ import annotations

from typing import Any

import pytest
from deltalake import DeltaTable
from pyhive_helpers import cursor_in, error_status, sorted_rows

DB = "wh_table_metadata"


@pytest.fixture()
def cursor(connect: Any) -> Any:
    cur = cursor_in(connect, DB)
    cur.execute("CREATE OR REPLACE TABLE m (id INT, s STRING) USING delta")
    return cur


def _described(cursor: Any) -> dict[str, tuple[str, str | None]]:
    cursor.execute("DESCRIBE TABLE EXTENDED m")
    return {row[0]: (row[1], row[2]) for row in cursor.fetchall()}


@pytest.mark.parametrize("sql", [
    "ALTER TABLE m ADD COLUMNS c STRING, d INT",
    "ALTER TABLE m ADD COLUMNS (c STRING, d INT)",
    "/* dbt */ alter table m add columns\n   `c` string,\n   `d` int",
])
def test_add_columns_in_every_form_spark_accepts(cursor: Any, sql: str) -> None:
    cursor.execute(sql)
    cursor.execute("INSERT INTO m VALUES (1, 'a', 'x', 2)")
    assert sorted_rows(cursor, "SELECT * FROM m") == [(1, "a", "x", 2)]


def test_column_and_table_comments_land_in_delta_and_describe(cursor: Any, warehouse: Any) -> None:
    cursor.execute("ALTER TABLE m CHANGE COLUMN id COMMENT 'the key'")
    cursor.execute("ALTER TABLE m ALTER COLUMN s COMMENT 'it\\'s text'")
    cursor.execute("COMMENT ON TABLE m IS 'facts'")
    described = _described(cursor)
    assert described["id"] == ("int", "the key") and described["s"] == ("string", "it's text")
    assert described["Comment"][0] == "facts"
    fields = {f.name: f.metadata for f in DeltaTable(str(warehouse / f"{DB}.db" / "m")).schema().fields}
    assert fields["id"]["comment"] == "the key"
    assert DeltaTable(str(warehouse / f"{DB}.db" / "m")).metadata().description == "facts"
    status = error_status(cursor, "ALTER TABLE m CHANGE COLUMN nope COMMENT 'x'")
    assert status.sqlState == "42703" and "nope" in status.errorMessage


def test_comment_on_column_as_dbt_databricks_sends_it(cursor: Any, warehouse: Any) -> None:
    cursor.execute(f"COMMENT ON COLUMN `main`.`{DB}`.`m`.`id` IS 'the key'")
    cursor.execute("COMMENT ON COLUMN m.s IS 'some text'")
    described = _described(cursor)
    assert described["id"] == ("int", "the key") and described["s"] == ("string", "some text")
    fields = {f.name: f.metadata for f in DeltaTable(str(warehouse / f"{DB}.db" / "m")).schema().fields}
    assert fields["s"]["comment"] == "some text"
    assert sorted_rows(cursor, "SELECT column_name, comment FROM system.information_schema.columns "
                               f"WHERE table_schema = '{DB}' AND table_name = 'm'") == [
        ("id", "the key"), ("s", "some text")]
    status = error_status(cursor, "COMMENT ON COLUMN m.nope IS 'x'")
    assert status.sqlState == "42703" and "nope" in status.errorMessage
    status = error_status(cursor, "COMMENT ON COLUMN nowhere.m.id IS 'x'")
    assert "nowhere" in status.errorMessage


def test_alter_view_renames_a_view_and_only_a_view(cursor: Any) -> None:
    cursor.execute("INSERT INTO m VALUES (1, 'a')")
    cursor.execute("CREATE VIEW v_old AS SELECT id FROM m")
    cursor.execute("ALTER VIEW v_old RENAME TO v_new")
    assert sorted_rows(cursor, "SELECT * FROM v_new") == [(1,)]
    assert "TABLE_OR_VIEW_NOT_FOUND" in error_status(cursor, "SELECT * FROM v_old").errorMessage
    status = error_status(cursor, "ALTER VIEW m RENAME TO m2")
    assert status.sqlState == "42809" and "EXPECT_VIEW_NOT_TABLE" in status.errorMessage
    assert "ALTER TABLE" in status.errorMessage
    assert sorted_rows(cursor, "SELECT id FROM m") == [(1,)]


def test_table_properties(cursor: Any) -> None:
    cursor.execute("ALTER TABLE m SET TBLPROPERTIES ('team' = 'growth', 'delta.appendOnly' = 'false', "
                   "'comment' = 'via properties')")
    properties = dict(sorted_rows(cursor, "SHOW TBLPROPERTIES m"))
    assert properties["team"] == "growth" and properties["delta.appendOnly"] == "false"
    assert properties["delta.minReaderVersion"] == "1" and "delta.minWriterVersion" in properties
    assert sorted_rows(cursor, "SHOW TBLPROPERTIES m ('team')") == [("team", "growth")]
    assert sorted_rows(cursor, "SHOW TBLPROPERTIES m ('nope')") == [
        ("nope", f"Table {DB}.m does not have property: nope")]
    assert _described(cursor)["Comment"][0] == "via properties"
    cursor.execute("ALTER TABLE m UNSET TBLPROPERTIES ('team')")
    assert "team" not in dict(sorted_rows(cursor, "SHOW TBLPROPERTIES m"))
    assert "UNSET_NONEXISTENT_PROPERTIES" in error_status(cursor, "ALTER TABLE m UNSET TBLPROPERTIES ('team')") \
        .errorMessage
    cursor.execute("ALTER TABLE m UNSET TBLPROPERTIES IF EXISTS ('team')")


def test_only_the_owner_changes_metadata(cursor: Any, connect: Any) -> None:
    cursor.execute("GRANT SELECT, MODIFY ON TABLE m TO mallory")
    other = connect(username="mallory").cursor()
    for sql in (f"ALTER TABLE {DB}.m ADD COLUMNS x INT", f"ALTER TABLE {DB}.m CHANGE COLUMN id COMMENT 'mine'",
                f"COMMENT ON TABLE {DB}.m IS 'mine'", f"COMMENT ON COLUMN {DB}.m.id IS 'mine'",
                f"ALTER TABLE {DB}.m SET TBLPROPERTIES ('k' = 'v')",
                f"ALTER TABLE {DB}.m UNSET TBLPROPERTIES IF EXISTS ('k')"):
        assert error_status(other, sql).sqlState == "42501", sql
    assert ("delta.minReaderVersion", "1") in sorted_rows(other, f"SHOW TBLPROPERTIES {DB}.m")
    stranger = connect(username="nobody_granted").cursor()
    assert error_status(stranger, f"SHOW TBLPROPERTIES {DB}.m").sqlState == "42501"


def test_a_view_with_column_comments_and_names(cursor: Any) -> None:
    """dbt's persist_docs on a view: `CREATE OR REPLACE VIEW v (id COMMENT '...', s) AS ...`."""
    cursor.execute("INSERT INTO m VALUES (1, 'a')")
    cursor.execute("CREATE OR REPLACE VIEW mv (id COMMENT 'the key', s) COMMENT 'a view' AS SELECT id, s FROM m")
    cursor.execute("DESCRIBE TABLE EXTENDED mv")
    described = {row[0]: (row[1], row[2]) for row in cursor.fetchall()}
    assert described["id"] == ("int", "the key") and described["s"][1] is None
    cursor.execute("CREATE OR REPLACE VIEW renamed (key, text) AS SELECT id, s FROM m")
    assert sorted_rows(cursor, "SELECT key, text FROM renamed") == [(1, "a")]
    status = error_status(cursor, "CREATE OR REPLACE VIEW bad (only_one) AS SELECT id, s FROM m")
    assert "CREATE_VIEW_COLUMN_ARITY_MISMATCH" in status.errorMessage


def _table_comment(cursor: Any, name: str) -> str | None:
    rows = sorted_rows(cursor, f"SELECT comment FROM information_schema.tables WHERE table_schema = '{DB}' "
                               f"AND table_name = '{name}'")
    assert len(rows) == 1, rows
    return rows[0][0]


def test_comment_on_each_kind_as_dbt_databricks_persist_docs_sends_it(cursor: Any, warehouse: Any) -> None:
    """`COMMENT ON {VIEW | MATERIALIZED VIEW | TABLE} <name> IS '...'`, the relation's kind in the statement; a
    name of another kind is refused with the kind it is and the COMMENT ON that fits; NULL removes a comment."""
    cursor.execute("INSERT INTO m VALUES (1, 'a')")
    cursor.execute("CREATE OR REPLACE VIEW cv AS SELECT id FROM m")
    cursor.execute("CREATE OR REPLACE MATERIALIZED VIEW cmv AS SELECT count(*) AS n FROM m")
    cursor.execute(f"COMMENT ON VIEW `main`.`{DB}`.`cv` IS 'a view\\'s words'")
    cursor.execute(f"COMMENT ON MATERIALIZED VIEW `main`.`{DB}`.`cmv` IS 'counted'")
    assert _table_comment(cursor, "cv") == "a view's words"
    assert _table_comment(cursor, "cmv") == "counted"
    assert DeltaTable(str(warehouse / f"{DB}.db" / "cmv")).metadata().description == "counted"
    for sql, kind, hint in ((f"COMMENT ON VIEW {DB}.m IS 'x'", "table", "COMMENT ON TABLE"),
                            ("COMMENT ON STREAMING TABLE cmv IS 'x'", "materialized view",
                             "COMMENT ON MATERIALIZED VIEW"),
                            ("COMMENT ON MATERIALIZED VIEW cv IS 'x'", "view", "COMMENT ON VIEW")):
        status = error_status(cursor, sql)
        assert status.sqlState == "42809" and f"is a {kind}" in status.errorMessage, (sql, status.errorMessage)
        assert hint in status.errorMessage, status.errorMessage
    cursor.execute("COMMENT ON VIEW cv IS NULL")
    assert _table_comment(cursor, "cv") is None
    assert _table_comment(cursor, "cmv") == "counted"        # the refused statements changed nothing
