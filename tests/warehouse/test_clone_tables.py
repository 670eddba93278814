"""CREATE TABLE ... {SHALLOW | DEEP} CLONE through PyHive against a real gateway: the clone has the source's rows,
schema, partitioning and properties as of the version asked for; its history is its own (a CLONE commit); writes to
either table leave the other as it was; a shallow clone hard-links the source's files (no byte copied) and outlives
a VACUUM of the source; a deep clone copies them; OR REPLACE clones again in place, keeping the history."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import database_cursor, sorted_rows

DATABASE = "wh_clone"


@pytest.fixture(scope="module")
def cursor(gateway: Any) -> Iterator[Any]:
    yield from database_cursor(gateway, DATABASE)


def _data_files(streams: Any, name: str) -> dict[str, os.stat_result]:
    """The table's live data files (its latest version), relative to its folder, with their inode facts."""
    from sluicegate.storage.delta.tables import open_table

    location = streams.store.get_table(DATABASE, name).location
    return {os.path.relpath(path, location): os.stat(path) for path in open_table(location).file_uris()}


def _statistics(streams: Any, name: str) -> list[dict[str, Any]]:
    """The add actions' partition values and statistics, by file (delta-rs's typed form)."""
    import pyarrow as pa

    from sluicegate.storage.delta.tables import open_table

    actions = pa.table(open_table(streams.store.get_table(DATABASE, name).location).get_add_actions(flatten=True))
    return sorted((row for row in actions.drop_columns(["modification_time"]).to_pylist()), key=lambda r: r["path"])


def _history(cursor: Any, name: str) -> list[tuple[int, str, dict[str, str]]]:
    cursor.execute(f"DESCRIBE HISTORY {name}")
    return [(row[0], row[4], json.loads(row[5])) for row in cursor.fetchall()]


def _table_type(cursor: Any, name: str) -> str:
    cursor.execute("SELECT table_type FROM information_schema.tables "
                   f"WHERE table_schema = '{DATABASE}' AND table_name = '{name}'")
    (found,), = cursor.fetchall()
    return str(found)


def test_a_shallow_clone_links_the_files_and_lives_on_its_own(cursor: Any, streams: Any) -> None:
    cursor.execute("CREATE TABLE src (id INT, day STRING COMMENT 'the day') PARTITIONED BY (day) "
                   "COMMENT 'the source' TBLPROPERTIES ('team' = 'a')")
    cursor.execute("INSERT INTO src VALUES (1, 'd1'), (2, 'd2')")
    cursor.execute("INSERT INTO src VALUES (3, 'd1')")

    cursor.execute("CREATE TABLE cl SHALLOW CLONE src TBLPROPERTIES ('extra' = 'yes')")

    assert sorted_rows(cursor, "SELECT * FROM cl") == [(1, "d1"), (2, "d2"), (3, "d1")]
    source_files, clone_files = _data_files(streams, "src"), _data_files(streams, "cl")
    assert source_files.keys() == clone_files.keys() and len(clone_files) == 3
    for path, stat in clone_files.items():  # the same bytes under a second name: nothing copied
        assert (stat.st_ino, stat.st_dev) == (source_files[path].st_ino, source_files[path].st_dev)
    assert _statistics(streams, "cl") == _statistics(streams, "src")  # what data skipping reads, kept
    (version, operation, parameters), = _history(cursor, "cl")
    assert (version, operation) == (0, "CLONE")
    assert parameters == {"source": f"{DATABASE}.src", "sourceVersion": "2", "isShallow": "true"}
    entry = streams.store.get_table(DATABASE, "cl")
    assert (entry.partition_by, entry.comment, entry.clone_of) == (("day",), "the source", f"`{DATABASE}`.`src`")
    assert entry.properties == {"team": "a", "extra": "yes"}
    cursor.execute("DESCRIBE TABLE cl")
    assert ("day", "string", "the day") in [tuple(row) for row in cursor.fetchall()]
    assert (_table_type(cursor, "cl"), _table_type(cursor, "src")) == ("MANAGED_SHALLOW_CLONE", "MANAGED")

    cursor.execute("INSERT INTO cl VALUES (4, 'd2')")
    cursor.execute("DELETE FROM src WHERE id = 1")
    assert sorted_rows(cursor, "SELECT id FROM cl") == [(1,), (2,), (3,), (4,)]
    assert sorted_rows(cursor, "SELECT id FROM src") == [(2,), (3,)]

    cursor.execute("SET spark.databricks.delta.retentionDurationCheck.enabled = false")
    cursor.execute("VACUUM src RETAIN 0 HOURS")  # the source's name of a file the clone still reads goes
    assert sorted_rows(cursor, "SELECT id FROM cl") == [(1,), (2,), (3,), (4,)]
    cursor.execute("DROP TABLE cl")  # and the clone's names go with it, never the source's files
    assert sorted_rows(cursor, "SELECT id FROM src") == [(2,), (3,)]


def test_a_deep_clone_of_an_old_version_copies_its_files(cursor: Any, streams: Any) -> None:
    cursor.execute("CREATE TABLE hist (id BIGINT)")
    cursor.execute("INSERT INTO hist VALUES (1)")
    cursor.execute("INSERT INTO hist VALUES (2)")

    cursor.execute("CREATE TABLE deep DEEP CLONE hist VERSION AS OF 1")

    assert sorted_rows(cursor, "SELECT * FROM deep") == [(1,)]
    (path, stat), = _data_files(streams, "deep").items()
    assert stat.st_ino != _data_files(streams, "hist")[path].st_ino  # a copy, not a link
    assert _history(cursor, "deep")[0][2]["isShallow"] == "false"
    assert _table_type(cursor, "deep") == "MANAGED"
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    cursor.execute(f"CREATE TABLE by_time SHALLOW CLONE hist TIMESTAMP AS OF '{now}'")
    assert sorted_rows(cursor, "SELECT * FROM by_time") == [(1,), (2,)]
    cursor.execute("CREATE TABLE IF NOT EXISTS deep SHALLOW CLONE hist")  # there: nothing happens
    assert sorted_rows(cursor, "SELECT * FROM deep") == [(1,)]


def test_or_replace_clones_again_in_place_and_keeps_the_history(cursor: Any, streams: Any, warehouse: Path) -> None:
    cursor.execute("CREATE TABLE again_src (id INT)")
    cursor.execute("INSERT INTO again_src VALUES (1)")
    cursor.execute("CREATE OR REPLACE TABLE again SHALLOW CLONE again_src")
    cursor.execute("INSERT INTO again_src VALUES (2)")

    cursor.execute(f"CREATE OR REPLACE TABLE main.{DATABASE}.again SHALLOW CLONE main.{DATABASE}.again_src")

    assert sorted_rows(cursor, "SELECT * FROM again") == [(1,), (2,)]
    assert [(v, op) for v, op, _ in _history(cursor, "again")] == [(1, "CLONE"), (0, "CLONE")]
    assert streams.store.get_table(DATABASE, "again").location == str(warehouse / f"{DATABASE}.db" / "again")

    cursor.execute("CREATE OR REPLACE TABLE again AS SELECT 7 AS id")  # no longer a clone
    assert _table_type(cursor, "again") == "MANAGED"


def test_what_cannot_be_cloned_is_refused_where_written(cursor: Any, warehouse: Path) -> None:
    from pyhive_helpers import error_status

    cursor.execute("CREATE TABLE plain (id INT)")
    cursor.execute("CREATE VIEW a_view AS SELECT * FROM plain")
    cases = {"CREATE TABLE c1 SHALLOW CLONE a_view": "EXPECT_TABLE_NOT_VIEW",
             "CREATE TABLE c2 SHALLOW CLONE missing": "TABLE_OR_VIEW_NOT_FOUND",
             "CREATE TABLE plain SHALLOW CLONE plain": "TABLE_OR_VIEW_ALREADY_EXISTS",
             "CREATE TABLE c3 SHALLOW CLONE plain VERSION AS OF 9": "DELTA_VERSION_NOT_FOUND",
             "CREATE TABLE c4 SHALLOW CLONE plain LOCATION '/tmp/elsewhere'": "UNSUPPORTED_FEATURE"}
    for sql, error_class in cases.items():
        status = error_status(cursor, sql)
        assert f"[{error_class}" in status.errorMessage, (sql, status.errorMessage)
    assert sorted_rows(cursor, f"SHOW TABLES IN {DATABASE} LIKE 'c1|c2|c3|c4'") == []
    assert not (warehouse / f"{DATABASE}.db" / "c3").exists()  # the folder a failed clone made is gone
