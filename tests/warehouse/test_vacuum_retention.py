"""VACUUM through the gateway (PyHive) on real Delta tables: Delta's retention rule (a removed file expires by its
removal, not its age), the table's delta.deletedFileRetentionDuration set at CREATE or by ALTER, DRY RUN, and a bad
interval refused where it is written. Compactions are made with delta-rs as the background compactor makes them."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from delta_compaction import compact
from deltalake import DeltaTable
from pyhive_helpers import cursor_in, database_named_after, dropped_after, error_status, poll_until, sorted_rows

from sluicegate.storage.delta.holds import holds
from sluicegate.storage.delta.retention import maintain_retention

ONE_SECOND = "'delta.deletedFileRetentionDuration' = 'interval 1 seconds'"


@pytest.fixture()
def cursor(connect: Any, request: pytest.FixtureRequest) -> Any:
    yield from dropped_after(cursor_in(connect, database_named_after(request, "vr_", 30)))


def _location(warehouse: Path, cursor: Any, table: str) -> Path:
    return warehouse / f"{cursor.database}.db" / table


def _data_files(location: Path) -> set[Path]:
    return {p for p in location.rglob("*.parquet") if "_delta_log" not in p.parts}


def _three_inserts(cursor: Any, table: str) -> None:
    for n in (1, 2, 3):
        cursor.execute(f"INSERT INTO {table} VALUES ({n})")


def _data_paths(cursor: Any) -> set[str]:
    """The Parquet files among a DRY RUN's paths (the rest: the `_SUCCESS` markers and checksums Spark wrote)."""
    assert [column[0] for column in cursor.description] == ["path"]
    return {row[0] for row in cursor.fetchall() if row[0].endswith(".parquet")}


def _dry_run(cursor: Any, table: str) -> set[str]:
    cursor.execute(f"VACUUM {table} DRY RUN")
    return _data_paths(cursor)


def _uris(files: set[Path]) -> set[str]:
    return {f"file:{os.path.abspath(f)}" for f in files}


def test_files_compacted_away_just_now_survive_vacuum_however_old(cursor, warehouse):
    cursor.execute("CREATE TABLE c (id INT) USING DELTA")
    _three_inserts(cursor, "c")
    location = _location(warehouse, cursor, "c")
    small = _data_files(location)
    assert len(small) == 3
    eight_days_ago = time.time() - 8 * 86400
    for path in small:                      # written eight days ago ...
        os.utime(path, (eight_days_ago, eight_days_ago))
    before = DeltaTable(str(location)).version()
    compact(location)                       # ... and compacted away just now

    cursor.execute("VACUUM c RETAIN 168 HOURS")
    assert cursor.fetchall() == [(f"file:{location}",)]
    assert small <= _data_files(location)
    assert sorted_rows(cursor, f"SELECT id FROM c VERSION AS OF {before}") == [(1,), (2,), (3,)]
    assert _dry_run(cursor, "c") == set()   # the table's default, a week: nothing either

    cursor.execute("SET spark.databricks.delta.retentionDurationCheck.enabled = false")
    cursor.execute("INSERT INTO c VALUES (4)")   # a live file Spark wrote, with its checksum beside it
    cursor.execute("VACUUM c RETAIN 0 HOURS DRY RUN")
    assert _data_paths(cursor) == _uris(small)
    assert small <= _data_files(location)   # a dry run deletes nothing
    cursor.execute("VACUUM c RETAIN 0 HOURS")
    assert not small & _data_files(location)
    live = {location / p for p in DeltaTable(str(location)).get_add_actions(flatten=True).column("path").to_pylist()}
    by_spark = [path for path in live if path.parent.name.startswith("_sg_write_")]
    assert len(by_spark) == 1 and by_spark[0].with_name(f".{by_spark[0].name}.crc").exists()  # its checksum stays
    assert sorted_rows(cursor, "SELECT id FROM c") == [(1,), (2,), (3,), (4,)]


def test_a_retention_property_set_at_create_is_honoured(cursor, warehouse):
    cursor.execute(f"CREATE TABLE p (id INT) USING DELTA TBLPROPERTIES ({ONE_SECOND})")
    location = _location(warehouse, cursor, "p")
    assert DeltaTable(str(location)).metadata().configuration["delta.deletedFileRetentionDuration"] == \
        "interval 1 second"   # the form delta-rs reads
    _three_inserts(cursor, "p")
    small = _data_files(location)
    compact(location)
    # no RETAIN: the table's second applies, and a property under 168 hours is its owner's choice (no refusal)
    assert poll_until(lambda: _dry_run(cursor, "p") == _uris(small), "the tombstones to be a second old", 30)
    cursor.execute("VACUUM p")
    assert not small & _data_files(location)
    assert sorted_rows(cursor, "SELECT id FROM p") == [(1,), (2,), (3,)]


def test_a_retention_property_set_by_alter_is_honoured(cursor, warehouse):
    cursor.execute("CREATE TABLE a (id INT) USING DELTA")
    _three_inserts(cursor, "a")
    location = _location(warehouse, cursor, "a")
    small = _data_files(location)
    compact(location)
    cursor.execute("VACUUM a")
    assert small <= _data_files(location)   # a week by default
    cursor.execute(f"ALTER TABLE a SET TBLPROPERTIES ({ONE_SECOND})")
    # the Delta log holds the form delta-rs reads, and SHOW TBLPROPERTIES shows what the log holds
    assert DeltaTable(str(location)).metadata().configuration["delta.deletedFileRetentionDuration"] == \
        "interval 1 second"
    assert dict(sorted_rows(cursor, "SHOW TBLPROPERTIES a"))["delta.deletedFileRetentionDuration"] == \
        "interval 1 second"
    assert poll_until(lambda: _dry_run(cursor, "a") == _uris(small), "the tombstones to be a second old", 30)
    cursor.execute("VACUUM a")
    assert not small & _data_files(location)
    assert sorted_rows(cursor, "SELECT id FROM a") == [(1,), (2,), (3,)]


def test_a_short_explicit_retain_is_still_refused(cursor):
    cursor.execute(f"CREATE TABLE r (id INT) USING DELTA TBLPROPERTIES ({ONE_SECOND})")
    status = error_status(cursor, "VACUUM r RETAIN 1 HOURS")
    assert status.sqlState == "22023" and "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT" in status.errorMessage


@pytest.mark.parametrize("create", [
    "CREATE TABLE bad (id INT) USING DELTA TBLPROPERTIES ('delta.logRetentionDuration' = 'a fortnight')",
    "CREATE TABLE bad USING DELTA TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 1 month') "
    "AS SELECT 1 AS id",
])
def test_a_bad_interval_is_refused_at_create(cursor, warehouse, create):
    status = error_status(cursor, create)
    assert status.sqlState == "22006" and "INVALID_INTERVAL_FORMAT" in status.errorMessage
    assert "interval 7 days" in status.errorMessage          # the hint says how to write one
    assert ("bad",) not in {(row[1],) for row in sorted_rows(cursor, "SHOW TABLES")}
    assert not _location(warehouse, cursor, "bad").exists()


def test_a_bad_interval_is_refused_at_alter(cursor, warehouse):
    cursor.execute("CREATE TABLE t (id INT) USING DELTA")
    status = error_status(cursor, "ALTER TABLE t SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = '7')")
    assert status.sqlState == "22006" and "INVALID_INTERVAL_FORMAT" in status.errorMessage
    configuration = DeltaTable(str(_location(warehouse, cursor, "t"))).metadata().configuration
    assert "delta.deletedFileRetentionDuration" not in configuration
    assert "delta.deletedFileRetentionDuration" not in dict(sorted_rows(cursor, "SHOW TBLPROPERTIES t"))


def test_a_query_holds_its_version_until_its_operation_closes(cursor, connect, warehouse):
    """A query's rows are computed as they are fetched, after the statement returned: its hold on the version it
    read lasts until the client closes the operation, and retention keeps that version's files meanwhile."""
    cursor.execute(f"CREATE TABLE h (id INT) USING DELTA TBLPROPERTIES ({ONE_SECOND})")
    _three_inserts(cursor, "h")
    location = _location(warehouse, cursor, "h")
    small = _data_files(location)
    version = DeltaTable(str(location)).version()
    reader = cursor_in(connect, cursor.database)
    reader.execute("SELECT id FROM h")
    assert poll_until(lambda: [h.version for h in holds(location)] == [version], "the query's hold", 30)
    compact(location)
    maintain_retention(str(location), now=time.time() + 86400)   # a day later: Spark's markers go, not these
    assert small <= _data_files(location)
    assert sorted(reader.fetchall()) == [(1,), (2,), (3,)]
    reader.close()                                  # closes the operation
    assert poll_until(lambda: holds(location) == [], "the hold to be released with the operation", 30)
    freed = maintain_retention(str(location), now=time.time() + 86400)
    assert freed.files_deleted == len(small) and not small & _data_files(location)
    assert sorted_rows(cursor, "SELECT id FROM h") == [(1,), (2,), (3,)]
