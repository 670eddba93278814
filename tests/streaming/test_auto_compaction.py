"""Background auto-compaction racing real streams (append and update mode), with a downstream streaming table and a
materialized view reading the compacted table: every result stays exact, and the file count stays bounded."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from delta_log import delta_log_operations
from deltalake import DeltaTable
from pyhive_helpers import poll_until, sorted_rows

from sluicegate.engine.maintenance import TableMaintenance
from sluicegate.engine.maintenance_settings import MaintenanceSettings
from sluicegate.storage.delta.compaction_policy import CompactionPolicy

FAN_IN = 4
POLICY = CompactionPolicy(target_size=1 << 20, fan_in=FAN_IN, base_size=64 * 1024)
BATCHES = 16


@pytest.fixture()
def compactor(gateway: Any) -> Iterator[TableMaintenance]:
    """A compactor that looks at a table as soon as it commits and never rests: as many races as can be."""
    maintenance = TableMaintenance(gateway.service.catalog,
                                   MaintenanceSettings(policy=POLICY, delay=0.0, cpu_share=1.0)).start()
    yield maintenance
    maintenance.close()


def _location(streams: Any, database: str, name: str) -> str:
    entry = streams.store.get_table(database, name)
    assert entry is not None and entry.location
    return str(entry.location)


def _live_files(location: str) -> int:
    return len(DeltaTable(location).file_uris())


def _ids(cur: Any, table: str) -> list[int]:
    cur.execute(f"SELECT id FROM {table}")
    return sorted(row[0] for row in cur.fetchall())


def _settled(compactor: TableMaintenance, location: str) -> int:
    """The live file count once the compactor has nothing left to merge in the table."""
    poll_until(lambda: not compactor.pending(location), f"the compactor to finish {location}", timeout=60)
    return _live_files(location)


def test_append_stream_compacted_while_read_downstream(stream_cursor: Any, landing_root: Path, streams: Any,
                                                       compactor: TableMaintenance, land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": 0, "batch": 0}])
    cur.execute(f"CREATE STREAMING TABLE bronze AS SELECT id, batch FROM STREAM read_files('{folder}', "
                "format => 'json', schema => 'id INT, batch INT')")
    cur.execute("CREATE STREAMING TABLE silver AS SELECT id, batch FROM STREAM(bronze)")
    cur.execute("CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(id) AS s FROM bronze")
    cur.execute("CREATE MATERIALIZED VIEW evens AS SELECT id, batch FROM bronze WHERE id % 2 = 0")
    expected = [0]
    for batch in range(1, BATCHES + 1):
        ids = list(range(batch * 10, batch * 10 + 5))
        land(folder, [{"id": i, "batch": batch} for i in ids])
        cur.execute("REFRESH STREAMING TABLE bronze")
        expected += ids
        assert sorted_rows(cur, "SELECT count(*), count(DISTINCT id), sum(id) FROM bronze") == \
            [(len(expected), len(expected), sum(expected))]
        if batch % 2 == 0:  # an incremental view: a file per refresh, compacted in turn
            cur.execute("REFRESH MATERIALIZED VIEW evens")
        if batch == 2:
            early = (DeltaTable(_location(streams, database, "bronze")).version(), len(expected))
        if batch % 8 == 0:
            cur.execute("REFRESH STREAMING TABLE silver")
            cur.execute("REFRESH MATERIALIZED VIEW totals")
            assert sorted_rows(cur, "SELECT n, s FROM totals") == [(len(expected), sum(expected))]
    bronze = _location(streams, database, "bronze")
    files = _settled(compactor, bronze)
    assert files < FAN_IN
    cur.execute("DESCRIBE DETAIL bronze")
    (detail,) = cur.fetchall()
    assert detail[9] == files and detail[0] == "delta"   # numFiles, as an operator reads it
    assert "OPTIMIZE" in delta_log_operations(bronze)
    assert _ids(cur, "bronze") == sorted(expected)
    cur.execute("REFRESH STREAMING TABLE silver")
    assert _ids(cur, "silver") == sorted(expected)
    cur.execute("REFRESH MATERIALIZED VIEW totals")
    assert sorted_rows(cur, "SELECT n, s FROM totals") == [(len(expected), sum(expected))]
    # the view's own table was compacted, and its next refresh is still incremental (a merge is no change)
    evens = _location(streams, database, "evens")
    assert _settled(compactor, evens) < FAN_IN and "OPTIMIZE" in delta_log_operations(evens)
    land(folder, [{"id": 1000, "batch": BATCHES + 1}])
    cur.execute("REFRESH STREAMING TABLE bronze")
    cur.execute("REFRESH MATERIALIZED VIEW evens")
    expected.append(1000)
    cur.execute("DESCRIBE EXTENDED evens")
    assert {row[0]: row[1] for row in cur.fetchall()}["Last Refresh Type"] == "INCREMENTAL"
    assert _ids(cur, "evens") == sorted(i for i in expected if i % 2 == 0)
    # time travel to a version from before the merges reads what it read then
    version, count = early
    assert sorted_rows(cur, f"SELECT count(*) FROM bronze VERSION AS OF {version}") == [(count,)]


def test_update_stream_compacted_while_it_merges(stream_cursor: Any, landing_root: Path, streams: Any,
                                                 compactor: TableMaintenance, land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"k": 0, "v": 1}])
    cur.execute(f"CREATE STREAMING TABLE per_key AS SELECT k, count(*) AS n, sum(v) AS s FROM STREAM read_files("
                f"'{folder}', format => 'json', schema => 'k INT, v INT') GROUP BY k")
    totals = {0: [1, 1]}
    for batch in range(1, BATCHES + 1):
        rows = [{"k": (batch * 3 + i) % 7, "v": batch} for i in range(3)]
        land(folder, rows)
        cur.execute("REFRESH STREAMING TABLE per_key")
        for row in rows:
            n, s = totals.setdefault(row["k"], [0, 0])
            totals[row["k"]] = [n + 1, s + row["v"]]
        assert sorted_rows(cur, "SELECT k, n, s FROM per_key") == sorted((k, n, s) for k, (n, s) in totals.items())
    location = _location(streams, database, "per_key")
    assert _settled(compactor, location) < FAN_IN * 2
    assert sorted_rows(cur, "SELECT k, n, s FROM per_key") == sorted((k, n, s) for k, (n, s) in totals.items())


def test_a_table_opts_out(stream_cursor: Any, landing_root: Path, streams: Any, compactor: TableMaintenance,
                          land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": 0}])
    cur.execute("CREATE STREAMING TABLE kept TBLPROPERTIES ('delta.autoOptimize.autoCompact' = 'false') AS "
                f"SELECT id FROM STREAM read_files('{folder}', format => 'json', schema => 'id INT')")
    for batch in range(1, FAN_IN * 2):
        land(folder, [{"id": batch}])
        cur.execute("REFRESH STREAMING TABLE kept")
    location = _location(streams, database, "kept")
    assert compactor.maintain(location) == []
    assert _live_files(location) == FAN_IN * 2
    assert "OPTIMIZE" not in delta_log_operations(location)


def test_retention_deletes_what_compaction_removed_once_past_the_tables_window(
        stream_cursor: Any, landing_root: Path, streams: Any, compactor: TableMaintenance, land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": 0}])
    cur.execute("CREATE STREAMING TABLE short_lived TBLPROPERTIES ('delta.deletedFileRetentionDuration' = "
                f"'interval 1 minute') AS SELECT id FROM STREAM read_files('{folder}', format => 'json', "
                "schema => 'id INT')")
    for batch in range(1, FAN_IN + 1):
        land(folder, [{"id": batch}])
        cur.execute("REFRESH STREAMING TABLE short_lived")
    location = _location(streams, database, "short_lived")
    _settled(compactor, location)
    on_disk = set(Path(location).rglob("*.parquet"))
    live = {Path(uri.removeprefix("file://")) for uri in DeltaTable(location).file_uris()}
    assert on_disk - live                                  # compacted away, still on disk for readers
    assert compactor.retain(location).files_deleted == 0   # inside the window: kept
    result = compactor.retain(location, now=time.time() + 120)
    assert result is not None and result.files_deleted == len(on_disk - live)
    assert set(Path(location).rglob("*.parquet")) == live
    assert _ids(cur, "short_lived") == list(range(FAN_IN + 1))


def test_a_quiet_table_settles_into_one_file(gateway: Any, stream_cursor: Any, landing_root: Path, streams: Any,
                                             land: Any) -> None:
    """A stream's table keeps files below fan_in per size class while it commits; once it has been quiet for
    `settle` seconds the compactor merges the rest, and readers see the same rows in one file."""
    settling = TableMaintenance(gateway.service.catalog,
                                MaintenanceSettings(policy=POLICY, delay=0.0, cpu_share=1.0, settle=1.0)).start()
    try:
        cur, database = stream_cursor, stream_cursor.database
        folder = landing_root / f"{database}_in"
        land(folder, [{"id": 0}])
        cur.execute(f"CREATE STREAMING TABLE quiet AS SELECT id FROM STREAM read_files('{folder}', format => 'json', "
                    "schema => 'id INT')")
        for batch in range(1, FAN_IN - 1):
            land(folder, [{"id": batch}])
            cur.execute("REFRESH STREAMING TABLE quiet")
        location = _location(streams, database, "quiet")
        assert not settling.pending(location) and _live_files(location) == FAN_IN - 1   # no class is full
        poll_until(lambda: _live_files(location) == 1, "the quiet table to settle into one file", timeout=60)
        assert _ids(cur, "quiet") == list(range(FAN_IN - 1))
        assert delta_log_operations(location).count("OPTIMIZE") == 1
        land(folder, [{"id": 100}])                     # a commit after settling: one more small file, settled too
        cur.execute("REFRESH STREAMING TABLE quiet")
        poll_until(lambda: _live_files(location) == 1, "the table to settle again", timeout=60)
        assert _ids(cur, "quiet") == [*range(FAN_IN - 1), 100]
    finally:
        settling.close()
