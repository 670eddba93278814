"""The Delta warehouse through the gateway: every statement over PyHive, checked from outside with delta-rs.

After each write the table read directly with `deltalake` equals what a gateway SELECT returns, and the Delta log
has exactly one new commit per statement.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from pyhive_helpers import cursor_in
from pyhive_helpers import error_status as _error
from pyhive_helpers import sorted_rows as _select

DB = "wh_sql"


@pytest.fixture()
def cursor(connect: Any) -> Any:
    return cursor_in(connect, DB)


def _location(warehouse: Path, table: str) -> str:
    return str(warehouse / f"{DB}.db" / table)


def _direct(path: str, columns: list[str]) -> list[tuple[Any, ...]]:
    table = DeltaTable(path).to_pyarrow_table().select(columns).to_pylist()
    return sorted(tuple(row[c] for c in columns) for row in table)


def _one_commit(cursor: Any, path: str, sql: str) -> None:
    before = DeltaTable(path).version()
    cursor.execute(sql)
    assert DeltaTable(path).version() == before + 1, sql


def test_create_insert_update_delete_overwrite_agree_with_delta(cursor, warehouse):
    cursor.execute("DROP TABLE IF EXISTS items")
    cursor.execute("CREATE TABLE items (id INT NOT NULL COMMENT 'the id', name STRING, price DOUBLE) USING DELTA "
                   "COMMENT 'things' TBLPROPERTIES ('owner.team' = 'core')")
    path = _location(warehouse, "items")
    assert DeltaTable(path).version() == 0
    assert _select(cursor, "SELECT * FROM items") == []

    _one_commit(cursor, path, "INSERT INTO items VALUES (1, 'a', 1.5), (2, 'b', 2), (3, 'c', NULL)")
    expected = [(1, "a", 1.5), (2, "b", 2.0), (3, "c", None)]
    assert _select(cursor, "SELECT id, name, price FROM items") == expected
    assert _direct(path, ["id", "name", "price"]) == expected

    _one_commit(cursor, path, "INSERT INTO items (name, id) SELECT 'd', 4")
    _one_commit(cursor, path, "UPDATE items SET price = price * 10 WHERE id < 3")
    _one_commit(cursor, path, "DELETE FROM items WHERE name = 'c'")
    expected = [(1, "a", 15.0), (2, "b", 20.0), (4, "d", None)]
    assert _select(cursor, "SELECT id, name, price FROM items") == expected
    assert _direct(path, ["id", "name", "price"]) == expected

    _one_commit(cursor, path, "INSERT OVERWRITE items SELECT id + 100, upper(name), price FROM items WHERE id < 3")
    expected = [(101, "A", 15.0), (102, "B", 20.0)]
    assert _select(cursor, "SELECT id, name, price FROM items") == expected
    assert _direct(path, ["id", "name", "price"]) == expected

    # time travel reads the version before the overwrite
    assert len(_select(cursor, f"SELECT * FROM items VERSION AS OF {DeltaTable(path).version() - 1}")) == 3

    cursor.execute("DESCRIBE HISTORY items")
    history = cursor.fetchall()
    assert [row[0] for row in history][:1] == [DeltaTable(path).version()]
    assert [row[4] for row in history][:4] == ["WRITE", "DELETE", "UPDATE", "WRITE"]


def test_partitioned_ctas_views_and_listings(cursor, warehouse):
    for name in ("by_day", "big", "copy2"):
        cursor.execute(f"DROP VIEW IF EXISTS {name}" if name == "big" else f"DROP TABLE IF EXISTS {name}")
    cursor.execute("CREATE TABLE by_day USING DELTA PARTITIONED BY (day) AS "
                   "SELECT id, CAST(id % 3 AS STRING) AS day FROM range(30)")
    path = _location(warehouse, "by_day")
    assert DeltaTable(path).metadata().partition_columns == ["day"]
    assert DeltaTable(path).version() == 0  # one commit for the whole CTAS
    assert _select(cursor, "SELECT day, count(*) FROM by_day GROUP BY day") == [("0", 10), ("1", 10), ("2", 10)]
    _one_commit(cursor, path, "DELETE FROM by_day WHERE day = '1' AND id > 20")
    assert _direct(path, ["id"]) == [(i,) for i in range(30) if not (i % 3 == 1 and i > 20)]

    cursor.execute("CREATE VIEW big COMMENT 'large ids' AS SELECT id FROM by_day WHERE id >= 25")
    assert _select(cursor, "SELECT * FROM big") == [(26,), (27,), (29,)]
    cursor.execute("CREATE OR REPLACE TABLE copy2 AS WITH b AS (SELECT * FROM big) "
                   "SELECT b.id, d.day FROM b JOIN by_day d ON b.id = d.id")
    assert _select(cursor, "SELECT count(*) FROM copy2") == [(3,)]

    cursor.execute(f"SHOW TABLES IN {DB} LIKE 'by*|big|copy*'")
    assert cursor.fetchall() == [(DB, "big", False), (DB, "by_day", False), (DB, "copy2", False)]
    assert [d[0] for d in cursor.description] == ["namespace", "tableName", "isTemporary"]

    cursor.execute("DESCRIBE by_day")
    rows = cursor.fetchall()
    assert rows[:2] == [("id", "bigint", None), ("day", "string", None)]
    assert ("# Partition Information", "", "") in rows
    cursor.execute("DESCRIBE EXTENDED big")
    details = {row[0]: row[1] for row in cursor.fetchall()}
    assert details["Type"] == "VIEW" and details["Comment"] == "large ids"
    cursor.execute("SHOW CREATE TABLE by_day")
    text = cursor.fetchall()[0][0]
    assert text.startswith(f"CREATE TABLE main.{DB}.by_day (")   # the gateway's catalog, as DESCRIBE names it
    assert "USING delta" in text and "PARTITIONED BY (day)" in text

    cursor.execute("SHOW DATABASES LIKE 'wh_*'")
    assert (DB,) in cursor.fetchall()


def test_alter_rename_drop_and_vacuum(cursor, warehouse):
    cursor.execute("DROP TABLE IF EXISTS al")
    cursor.execute("DROP TABLE IF EXISTS al2")
    cursor.execute("CREATE TABLE al (a INT) USING DELTA")
    cursor.execute("INSERT INTO al VALUES (1)")
    cursor.execute("ALTER TABLE al ADD COLUMNS (b STRING COMMENT 'new')")
    cursor.execute("INSERT INTO al VALUES (2, 'x')")
    assert _select(cursor, "SELECT * FROM al") == [(1, None), (2, "x")]
    cursor.execute("ALTER TABLE al RENAME TO al2")
    assert not os.path.exists(_location(warehouse, "al"))
    path = _location(warehouse, "al2")
    assert _direct(path, ["a", "b"]) == [(1, None), (2, "x")]

    cursor.execute("INSERT OVERWRITE al2 VALUES (3, 'y')")
    crashed = Path(path) / "_sg_write_crashed"
    crashed.mkdir()
    (crashed / "part-0.parquet").write_bytes(b"not really")
    status = _error(cursor, "VACUUM al2 RETAIN 0 HOURS")
    assert status.sqlState == "22023"
    cursor.execute("SET spark.databricks.delta.retentionDurationCheck.enabled = false")
    cursor.execute("VACUUM al2 RETAIN 0 HOURS")
    assert not crashed.exists()
    live = {os.path.normpath(os.path.join(path, p)) for p in DeltaTable(path).file_uris()}
    on_disk = {os.path.join(d, f) for d, _, fs in os.walk(path) if "_delta_log" not in d for f in fs
               if f.endswith(".parquet")}
    assert {p.replace("file://", "") for p in live} == on_disk
    assert _select(cursor, "SELECT * FROM al2") == [(3, "y")]

    cursor.execute("DROP TABLE al2")
    assert not os.path.exists(path)


def test_errors_have_class_sqlstate_position_and_hint(cursor):
    cursor.execute("DROP TABLE IF EXISTS typed")
    cursor.execute("DROP VIEW IF EXISTS typed_v")
    cursor.execute("CREATE TABLE typed (n INT NOT NULL, s STRING) USING DELTA")
    cursor.execute("CREATE VIEW typed_v AS SELECT n FROM typed")

    status = _error(cursor, "INSERT INTO\n  nope VALUES (1)")
    assert status.sqlState == "42P01" and "TABLE_OR_VIEW_NOT_FOUND" in status.errorMessage
    assert "line 2, column 3" in status.errorMessage

    status = _error(cursor, "SELECT * FROM typed t JOIN\n missing m ON t.n = m.n")
    assert status.sqlState == "42P01" and "line 2, column 2" in status.errorMessage

    status = _error(cursor, "CREATE TABLE typed (x INT) USING DELTA")
    assert status.sqlState == "42P07" and "typed" in status.errorMessage
    cursor.execute("CREATE TABLE IF NOT EXISTS typed (x INT) USING DELTA")  # a no-op

    status = _error(cursor, "INSERT INTO typed VALUES ('abc', 'x')")   # a quoted literal is cast, as Databricks does
    assert status.sqlState == "22018" and "CAST_INVALID_INPUT" in status.errorMessage and "'abc'" in status.errorMessage
    status = _error(cursor, "INSERT INTO typed SELECT s, s FROM typed")   # a query's text column is not
    assert status.sqlState == "KD000" and "`n`" in status.errorMessage

    status = _error(cursor, "INSERT INTO typed VALUES (1)")
    assert status.sqlState == "21S01"

    status = _error(cursor, "INSERT INTO typed VALUES (NULL, 'x')")
    assert "NOT NULL" in status.errorMessage

    status = _error(cursor, "INSERT INTO typed_v VALUES (1)")
    assert status.sqlState == "42809" and "view" in status.errorMessage

    status = _error(cursor, "UPDATE typed SET nope = 1")
    assert status.sqlState == "42703"

    status = _error(cursor, "CREATE TABLE no_such_db.t (a INT) USING DELTA")
    assert status.sqlState == "42704"

    cursor.execute("INSERT INTO typed VALUES (CAST(7 AS BIGINT), 'ok')")  # a number fits a number column
    assert _select(cursor, "SELECT * FROM typed") == [(7, "ok")]


def test_non_delta_tables_stay_with_spark(cursor):
    cursor.execute("DROP TABLE IF EXISTS pq")
    cursor.execute("CREATE TABLE pq (a INT) USING parquet")
    cursor.execute("INSERT INTO pq VALUES (5)")
    assert _select(cursor, "SELECT * FROM pq") == [(5,)]
    cursor.execute("SHOW TABLES LIKE 'pq'")
    assert cursor.fetchall() == [(DB, "pq", False)]
    cursor.execute("DROP TABLE pq")


def test_merge_updates_deletes_and_inserts_in_one_commit(cursor, warehouse):
    cursor.execute("DROP TABLE IF EXISTS stock")
    cursor.execute("CREATE TABLE stock (sku INT, qty INT) USING DELTA")
    cursor.execute("INSERT INTO stock VALUES (1, 10), (2, 20), (3, 30)")
    path = _location(warehouse, "stock")
    _one_commit(cursor, path,
                "MERGE INTO stock AS s USING (SELECT * FROM VALUES (1, 5), (2, 0), (4, 40) AS c(sku, qty)) AS c "
                "ON s.sku = c.sku WHEN MATCHED AND c.qty = 0 THEN DELETE "
                "WHEN MATCHED THEN UPDATE SET qty = s.qty + c.qty "
                "WHEN NOT MATCHED THEN INSERT (sku, qty) VALUES (c.sku, c.qty)")
    expected = [(1, 15), (3, 30), (4, 40)]
    assert _select(cursor, "SELECT * FROM stock") == expected
    assert _direct(path, ["sku", "qty"]) == expected


def test_metadata_calls_list_catalog_tables_views_and_columns(cursor, gateway):
    import sqlalchemy as sa

    cursor.execute("DROP TABLE IF EXISTS meta_delta")
    cursor.execute("DROP VIEW IF EXISTS meta_delta_v")
    cursor.execute("CREATE TABLE meta_delta (k BIGINT NOT NULL COMMENT 'key', v STRING) USING DELTA COMMENT 'md'")
    cursor.execute("CREATE VIEW meta_delta_v AS SELECT k FROM meta_delta")
    engine = sa.create_engine(f"hive://tester@127.0.0.1:{gateway.port}/{DB}")
    try:
        columns = sa.inspect(engine).get_columns("meta_delta", schema=DB)  # PyHive reads DESCRIBE
        assert [(c["name"], str(c["type"])) for c in columns] == [("k", "BIGINT"), ("v", "VARCHAR")]
    finally:
        engine.dispose()
    from pyhive import hive
    from TCLIService import ttypes as T

    conn = hive.connect(gateway.host, gateway.port, username="tester")
    try:
        client, session = conn._client, conn._sessionHandle
        response = client.GetTables(T.TGetTablesReq(sessionHandle=session, schemaName=DB, tableName="meta_delta%"))
        fetched = client.FetchResults(T.TFetchResultsReq(operationHandle=response.operationHandle,
                                                         orientation=T.TFetchOrientation.FETCH_NEXT, maxRows=100))
        columns = fetched.results.columns
        names, kinds = columns[2].stringVal.values, columns[3].stringVal.values
        assert dict(zip(names, kinds, strict=True)) == {"meta_delta": "TABLE", "meta_delta_v": "VIEW"}
        response = client.GetColumns(T.TGetColumnsReq(sessionHandle=session, schemaName=DB, tableName="meta_delta"))
        fetched = client.FetchResults(T.TFetchResultsReq(operationHandle=response.operationHandle,
                                                         orientation=T.TFetchOrientation.FETCH_NEXT, maxRows=100))
        columns = fetched.results.columns
        assert columns[3].stringVal.values == ["k", "v"]
        assert columns[10].i32Val.values == [0, 1]          # NULLABLE
        assert columns[11].stringVal.values == ["key", ""]  # REMARKS
    finally:
        conn.close()


def test_table_dropped_and_created_again_reads_its_new_rows(cursor):
    """Snapshot DataFrames are remembered per table version: a table created again at the same place starts over at
    the same versions with other files, and must not be read through the old ones."""
    for value in (1, 2):
        cursor.execute("DROP TABLE IF EXISTS reborn")
        cursor.execute("CREATE TABLE reborn (v INT) USING DELTA")
        cursor.execute(f"INSERT INTO reborn VALUES ({value})")
        assert _select(cursor, "SELECT v FROM reborn") == [(value,)]
        assert _select(cursor, "SELECT v FROM reborn") == [(value,)]


def test_merge_with_two_source_rows_for_one_target_row_fails_and_writes_nothing(cursor, warehouse):
    cursor.execute("DROP TABLE IF EXISTS stock")
    cursor.execute("CREATE TABLE stock (sku INT, qty INT) USING DELTA")
    cursor.execute("INSERT INTO stock VALUES (1, 10), (2, 20)")
    path = _location(warehouse, "stock")
    before = DeltaTable(path).version()
    status = _error(cursor, "MERGE INTO stock t USING (SELECT * FROM VALUES (1, 5), (1, 7) AS v(sku, qty)) s "
                            "ON t.sku = s.sku WHEN MATCHED THEN UPDATE SET qty = s.qty")
    assert status.sqlState == "21506"
    assert "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE" in status.errorMessage
    assert DeltaTable(path).version() == before
    assert _select(cursor, "SELECT * FROM stock") == [(1, 10), (2, 20)]
    # several source rows for one key are fine when only WHEN NOT MATCHED could apply to them
    cursor.execute("MERGE INTO stock t USING (SELECT * FROM VALUES (3, 1), (3, 2) AS v(sku, qty)) s "
                   "ON t.sku = s.sku WHEN NOT MATCHED THEN INSERT *")
    assert _select(cursor, "SELECT * FROM stock") == [(1, 10), (2, 20), (3, 1), (3, 2)]


def test_temporary_view_hides_a_table_of_the_same_name_in_its_session(connect):
    first, second = connect().cursor(), connect().cursor()
    first.execute(f"CREATE DATABASE IF NOT EXISTS {DB}")
    for cur in (first, second):
        cur.execute(f"USE {DB}")
    first.execute("DROP TABLE IF EXISTS shadowed")
    first.execute("CREATE TABLE shadowed (v INT) USING DELTA")
    first.execute("INSERT INTO shadowed VALUES (1)")
    first.execute("CREATE TEMPORARY VIEW shadowed AS SELECT 2 AS v")
    assert _select(first, "SELECT v FROM shadowed") == [(2,)]              # Spark's rule: the view wins
    assert _select(first, f"SELECT v FROM {DB}.shadowed") == [(1,)]        # qualified: the table
    assert _select(second, "SELECT v FROM shadowed") == [(1,)]             # another session has no such view


def test_insert_select_with_duplicate_generated_names_assigns_by_position(cursor, warehouse):
    """Spark names both CASTs after `id`: the columns go by position, as Spark's own INSERT does."""
    cursor.execute("DROP TABLE IF EXISTS by_position")
    cursor.execute("CREATE TABLE by_position (id BIGINT, bucket INT, label STRING) USING DELTA")
    path = _location(warehouse, "by_position")
    _one_commit(cursor, path, "INSERT INTO by_position SELECT id, CAST(id % 3 AS INT), CAST(id AS STRING) "
                              "FROM range(5)")
    expected = [(i, i % 3, str(i)) for i in range(5)]
    assert _select(cursor, "SELECT id, bucket, label FROM by_position") == expected
    assert _direct(path, ["id", "bucket", "label"]) == expected
    # and through a column list, and with overwrite
    _one_commit(cursor, path, "INSERT OVERWRITE by_position (label, id, bucket) "
                              "SELECT CAST(id AS STRING), id, CAST(id % 2 AS INT) FROM range(3)")
    assert _direct(path, ["id", "bucket", "label"]) == [(i, i % 2, str(i)) for i in range(3)]
