"""Names are names, never paths (review 2026-11-23, Part B rows 3, 4, 7 and 13).

Every attack is a statement from a real client (PyHive, or beeline). Each test asserts the clean SQL error (class
and SQLSTATE), that nothing outside the warehouse was created, changed or deleted (a victim folder with a file sits
next to the warehouse, where `../../victim/...` from a table folder WAREHOUSE/<db>.db/<name> would reach), and that
the gateway still answers. One test writes bad rows straight into a catalog and boots `sluicegate serve` on it.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gateway_process import GatewayProcess
from pyhive_helpers import error_status, sorted_rows

from sluicegate.catalog.store import CatalogStore, TableEntry

DATABASE = "sec_names"
INVALID = ("INVALID_SCHEMA_OR_RELATION_NAME", "42602")
EXISTS = ("LOCATION_ALREADY_EXISTS", "42K04")


def _tree(root: Path) -> dict[str, str]:
    """Every file and folder under `root` with a digest of each file's bytes: what must not change."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            found[os.path.relpath(os.path.join(folder, name), root) + "/"] = ""
        for name in files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return found


class Outside:
    """The world next to the warehouse: a victim folder with files, and the names an escape would create."""

    def __init__(self, warehouse: Path) -> None:
        self.warehouse = warehouse
        self.parent = warehouse.parent
        self.victim = self.parent / "victim"
        (self.victim / "dir1").mkdir(parents=True, exist_ok=True)
        (self.victim / "dir1" / "important.txt").write_text("keep me\n", encoding="utf-8")
        (self.victim / "keep.txt").write_text("keep me too\n", encoding="utf-8")
        self.before = self.snapshot()

    def snapshot(self) -> dict[str, Any]:
        return {"victim": _tree(self.victim), "escape": sorted(p.name for p in self.parent.iterdir()
                                                                 if p.name in ("x", "escape", "moved_here", "s"))}

    def assert_untouched(self) -> None:
        assert self.snapshot() == self.before
        assert (self.warehouse / "catalog.db").is_file()


@pytest.fixture()
def outside(warehouse: Path) -> Outside:
    return Outside(warehouse)


@pytest.fixture()
def cursor(connect: Any) -> Iterator[Any]:
    cur = connect().cursor()
    cur.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    cur.execute(f"USE {DATABASE}")
    yield cur


def refused(cursor: Any, sql: str, expected: tuple[str, str] = INVALID) -> str:
    """Run `sql`, expect the error class and SQLSTATE, and check the session still answers; returns the message."""
    status = error_status(cursor, sql)
    error_class, sqlstate = expected
    assert status.errorMessage.startswith(f"[{error_class}]"), status.errorMessage
    assert status.sqlState == sqlstate
    cursor.execute("SELECT 1")
    assert cursor.fetchall() == [(1,)]
    return status.errorMessage


def tables(cursor: Any) -> set[str]:
    return {row[1] for row in sorted_rows(cursor, f"SHOW TABLES IN {DATABASE}")}


@pytest.mark.parametrize("sql", [
    "CREATE TABLE `../../victim/dir1` (id INT)",
    "CREATE TABLE `..` (id INT)",
    "CREATE TABLE `.` (id INT)",
    "CREATE TABLE `../../x` AS SELECT 1 AS id",
    "CREATE OR REPLACE TABLE `../../victim` AS SELECT 1 AS id",
    "CREATE TABLE IF NOT EXISTS `a\\b` (id INT)",
    "CREATE TABLE `a``b` (id INT)",
    "CREATE TABLE `a\nb` (id INT)",
    "CREATE TABLE `a\x00b` (id INT)",
    "CREATE TABLE `.hidden` (id INT)",
    "CREATE TABLE `my table` (id INT)",
    f"CREATE TABLE `{'x' * 129}` (id INT)",
    "CREATE TABLE `../../victim`.t (id INT)",
    "CREATE VIEW `a/b` AS SELECT 1 AS id",
    "CREATE VIEW `..` AS SELECT 1 AS id",
], ids=lambda sql: re.sub(r"\W+", "_", sql)[:40])
def test_a_table_or_view_name_that_is_not_a_name_is_refused(cursor, outside, warehouse, sql):
    message = refused(cursor, sql)
    assert "a name may contain ASCII letters, digits and `_`" in message
    outside.assert_untouched()
    assert not list((warehouse / f"{DATABASE}.db").glob("*[!a-z0-9_]*")), "no oddly named folder in the database"


def test_the_error_points_at_the_name(cursor):
    message = refused(cursor, "CREATE TABLE\n  `../../victim/dir1` (id INT)")
    assert "at line 2, column 3" in message


@pytest.mark.parametrize("sql", [
    "CREATE DATABASE `../../escape`",
    "CREATE DATABASE `a``b`",
    "CREATE DATABASE IF NOT EXISTS `..`",
    "CREATE DATABASE `a/b`",
    "CREATE SCHEMA `x\ny`",
], ids=lambda sql: re.sub(r"\W+", "_", sql)[:40])
def test_a_database_name_that_is_not_a_name_leaves_no_row(cursor, outside, sql):
    refused(cursor, sql)
    outside.assert_untouched()
    databases = {row[0] for row in sorted_rows(cursor, "SHOW DATABASES")}
    assert not {name for name in databases if not re.fullmatch(r"[a-z0-9_]+", name)}


def test_a_database_named_catalog_would_be_the_catalog_file(cursor, warehouse):
    message = refused(cursor, "CREATE DATABASE catalog")
    assert "reserved" in message
    refused(cursor, "CREATE DATABASE IF NOT EXISTS CATALOG")
    assert (warehouse / "catalog.db").is_file()
    assert "catalog" not in {row[0] for row in sorted_rows(cursor, "SHOW DATABASES")}


def test_rename_to_a_path_is_refused_and_the_table_stays(cursor, outside, warehouse):
    cursor.execute("CREATE TABLE movable (id INT)")
    cursor.execute("INSERT INTO movable VALUES (1), (2)")
    try:
        refused(cursor, "ALTER TABLE movable RENAME TO `../../victim/moved_here`")
        refused(cursor, "ALTER TABLE movable RENAME TO `../../x`")
        refused(cursor, f"ALTER TABLE movable RENAME TO `{DATABASE}/..`")
        outside.assert_untouched()
        assert sorted_rows(cursor, "SELECT id FROM movable") == [(1,), (2,)]
        assert (warehouse / f"{DATABASE}.db" / "movable" / "_delta_log").is_dir()
    finally:
        cursor.execute("DROP TABLE IF EXISTS movable")


def test_rename_onto_an_existing_folder_is_refused_and_both_are_kept(cursor, warehouse):
    cursor.execute("CREATE TABLE renamed_src (id INT)")
    cursor.execute("INSERT INTO renamed_src VALUES (7)")
    taken = warehouse / f"{DATABASE}.db" / "renamed_taken"
    taken.mkdir(parents=True)
    (taken / "someone_elses.txt").write_text("mine\n", encoding="utf-8")
    try:
        refused(cursor, "ALTER TABLE renamed_src RENAME TO renamed_taken", EXISTS)
        assert (taken / "someone_elses.txt").read_text(encoding="utf-8") == "mine\n"
        assert sorted_rows(cursor, "SELECT id FROM renamed_src") == [(7,)]
        cursor.execute("ALTER TABLE renamed_src RENAME TO renamed_ok")  # a good name still renames
        assert sorted_rows(cursor, "SELECT id FROM renamed_ok") == [(7,)]
        assert (warehouse / f"{DATABASE}.db" / "renamed_ok" / "_delta_log").is_dir()
        assert not (warehouse / f"{DATABASE}.db" / "renamed_src").exists()
    finally:
        cursor.execute("DROP TABLE IF EXISTS renamed_src")
        cursor.execute("DROP TABLE IF EXISTS renamed_ok")
        (taken / "someone_elses.txt").unlink()
        taken.rmdir()


@pytest.mark.parametrize("create", ["CREATE TABLE {name} (id INT)", "CREATE TABLE {name} AS SELECT 1 AS id"])
def test_an_existing_folder_is_an_error_never_removed(cursor, warehouse, create):
    """The old code took a folder where a new table would go for "an orphan of a crash" and removed it."""
    folder = warehouse / f"{DATABASE}.db" / "pre_existing"
    folder.mkdir(parents=True)
    (folder / "keep.txt").write_text("not yours\n", encoding="utf-8")
    try:
        message = refused(cursor, create.format(name="pre_existing"), EXISTS)
        assert str(folder) in message
        assert (folder / "keep.txt").read_text(encoding="utf-8") == "not yours\n"
        assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]
        assert "pre_existing" not in tables(cursor)
    finally:
        (folder / "keep.txt").unlink()
        folder.rmdir()
    cursor.execute(create.format(name="pre_existing"))  # the folder gone, the name is free
    cursor.execute("DROP TABLE pre_existing")
    assert not folder.exists()


def test_a_failed_ctas_removes_only_the_folder_it_made(cursor, warehouse):
    status = error_status(cursor, "CREATE TABLE ctas_fails AS SELECT 1 / 0 AS x")
    assert "DIVIDE_BY_ZERO" in status.errorMessage
    assert not (warehouse / f"{DATABASE}.db" / "ctas_fails").exists()
    assert "ctas_fails" not in tables(cursor)
    cursor.execute("CREATE TABLE ctas_fails AS SELECT 1 AS x")  # nothing was left to collide with
    cursor.execute("DROP TABLE ctas_fails")


def test_streaming_table_names_are_names(cursor, outside, warehouse):
    cursor.execute("CREATE TABLE IF NOT EXISTS stream_src (id INT)")
    for name in ("`../../victim/dir1`", "`..`", "`../s`", "`a``b`"):
        refused(cursor, f"CREATE STREAMING TABLE {name} AS SELECT id FROM STREAM(stream_src)")
    outside.assert_untouched()
    assert not (warehouse / "s").exists()
    folder = warehouse / f"{DATABASE}.db" / "stream_pre"
    folder.mkdir(parents=True)
    (folder / "keep.txt").write_text("not yours\n", encoding="utf-8")
    try:
        refused(cursor, "CREATE STREAMING TABLE stream_pre AS SELECT id FROM STREAM(stream_src)", EXISTS)
        assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]
        assert "stream_pre" not in tables(cursor)
    finally:
        (folder / "keep.txt").unlink()
        folder.rmdir()


def test_drop_never_follows_a_bad_location_out_of_the_warehouse(cursor, outside, gateway):
    """A row written before names were checked (or by hand) names a folder outside: DROP removes the row and keeps
    the files."""
    gateway.service.catalog.create_table(TableEntry(
        database=DATABASE, name="legacy_escape", kind="TABLE", location=str(outside.victim / "dir1"),
        schema_json=None, definition=None))
    cursor.execute("DROP TABLE legacy_escape")
    assert "legacy_escape" not in tables(cursor)
    outside.assert_untouched()


def test_no_statement_writes_through_a_bad_location(cursor, outside, gateway):
    gateway.service.catalog.create_table(TableEntry(
        database=DATABASE, name="legacy_write", kind="TABLE", location=str(outside.victim / "dir1"),
        schema_json='{"type": "struct", "fields": []}', definition=None))
    try:
        for sql in ("INSERT INTO legacy_write SELECT 1", "DELETE FROM legacy_write", "VACUUM legacy_write",
                    "ALTER TABLE legacy_write ADD COLUMNS (x INT)", "ALTER TABLE legacy_write RENAME TO moved"):
            refused(cursor, sql, ("LOCATION_OUTSIDE_WAREHOUSE", "42501"))
        outside.assert_untouched()
    finally:
        cursor.execute("DROP TABLE IF EXISTS legacy_write")


def test_drop_never_removes_the_warehouse_or_a_database_folder(cursor, gateway, warehouse):
    for name, location in (("legacy_root", warehouse), ("legacy_db", warehouse / f"{DATABASE}.db"),
                           ("legacy_dots", warehouse / f"{DATABASE}.db" / ".." / "..")):
        gateway.service.catalog.create_table(TableEntry(
            database=DATABASE, name=name, kind="TABLE", location=str(location), schema_json=None, definition=None))
        cursor.execute(f"DROP TABLE {name}")
    assert (warehouse / "catalog.db").is_file()
    assert (warehouse / f"{DATABASE}.db").is_dir()


def test_legitimate_names_still_work_and_identifiers_are_quoted(cursor, warehouse):
    """Letters, digits and `_` in any case; columns with a space or a backtick go through INSERT, UPDATE, MERGE
    and the result's wire projection (doubled backticks)."""
    cursor.execute("CREATE TABLE `Mixed_Case_1` (`my col` STRING, `we``ird` INT, d DATE)")
    cursor.execute("CREATE TABLE merge_src_1 AS SELECT 'c' AS k")
    try:
        assert (warehouse / f"{DATABASE}.db" / "mixed_case_1" / "_delta_log").is_dir()
        cursor.execute("INSERT INTO mixed_case_1 VALUES ('a', 1, DATE'2024-01-02'), ('b', 2, NULL)")
        cursor.execute("UPDATE mixed_case_1 SET `we``ird` = `we``ird` + 10 WHERE `my col` = 'b'")
        cursor.execute("MERGE INTO mixed_case_1 t USING merge_src_1 s ON t.`my col` = s.k "
                       "WHEN NOT MATCHED THEN INSERT (`my col`, `we``ird`, d) VALUES (s.k, 3, NULL)")
        cursor.execute("SELECT `my col`, `we``ird`, d FROM mixed_case_1 ORDER BY `my col`")
        assert [d[0].split(".")[-1] for d in cursor.description] == ["my col", "we`ird", "d"]
        assert cursor.fetchall() == [("a", 1, "2024-01-02"), ("b", 12, None), ("c", 3, None)]
    finally:
        cursor.execute("DROP TABLE Mixed_Case_1")
        cursor.execute("DROP TABLE merge_src_1")
    assert not (warehouse / f"{DATABASE}.db" / "mixed_case_1").exists()


@pytest.mark.beeline
def test_beeline_gets_the_class_and_sqlstate(gateway, beeline, outside, tmp_path):
    script = tmp_path / "attack.sql"
    script.write_text("CREATE TABLE `../../victim/dir1` (id INT);\n"
                      "CREATE DATABASE `a``b`;\n"
                      "SELECT 'still here' AS alive;\n", encoding="utf-8")
    result = beeline(gateway.port, "--force=true", "-f", str(script))
    output = result.stdout + result.stderr
    assert output.count("INVALID_SCHEMA_OR_RELATION_NAME") >= 2, output
    assert "state=42602" in output
    assert "still here" in result.stdout
    outside.assert_untouched()


# -- boot over a catalog with bad rows -------------------------------------------------------------------------------


def _plant_bad_rows(warehouse: Path, victim: Path) -> None:
    """Rows as an older release (or a hand edit) left them: names Spark cannot parse, a stream whose checkpoint and
    table folder are outside the warehouse. Written with sqlite3, past every check of the store."""
    store = CatalogStore.for_warehouse(warehouse)
    store.create_database("good_db")
    store.close()
    now = "2026-11-23 00:00:00"
    with sqlite3.connect(warehouse / "catalog.db") as db:
        for name in ("../../escape", "a`b", "catalog"):
            db.execute("INSERT INTO databases (name, comment, created_at) VALUES (?, NULL, ?)", (name, now))
        db.execute("INSERT INTO tables (database, name, kind, location, properties, partition_by, created_at, "
                   "updated_at) VALUES ('good_db', 'bad_stream', 'STREAMING_TABLE', ?, '{}', '[]', ?, ?)",
                   (str(victim / "dir1"), now, now))
        table_id = db.execute("SELECT id FROM tables WHERE name = 'bad_stream'").fetchone()[0]
        db.execute("INSERT INTO streams (table_id, stream_id, plan_json, checkpoint, status, desired_state, failures, "
                   "updated_at) VALUES (?, ?, '{}', ?, 'RUNNING', 'RUNNING', 0, ?)",
                   (table_id, "0" * 32, str(victim), now))


def test_a_bad_catalog_row_is_skipped_at_boot_with_a_warning(tmp_path, outside):
    from pyhive import hive

    warehouse = tmp_path / "boot-warehouse"
    _plant_bad_rows(warehouse, outside.victim)
    log_path = tmp_path / "gateway.log"
    gateway = GatewayProcess(warehouse, None, log_path)
    try:
        gateway.start()
        conn = hive.connect("127.0.0.1", gateway.port, username="tester")
        try:
            cur = conn.cursor()
            cur.execute("USE good_db")
            cur.execute("SELECT 1")
            assert cur.fetchall() == [(1,)]
        finally:
            conn.close()
    finally:
        gateway.stop()
    text = log_path.read_text(encoding="utf-8")
    assert "skipping the catalog's database '../../escape'" in text
    assert "skipping the catalog's database 'a`b'" in text
    assert "skipping the catalog's database 'catalog'" in text
    assert re.search(r"not resuming the stream of the catalog row 'good_db'\.'bad_stream': its checkpoint", text)
    outside.assert_untouched()
