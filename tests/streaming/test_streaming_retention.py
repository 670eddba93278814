"""Retention on a streaming table: `CREATE STREAMING TABLE ... TBLPROPERTIES` keeps `delta.*` properties in the
Delta log, and the background compactor's entry point (`maintain_retention`) deletes the files a compaction removed
once the table's own retention has passed, while the stream goes on writing and every row stays readable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from delta_compaction import compact
from deltalake import DeltaTable
from pyhive_helpers import error_status, poll_until
from pyhive_helpers import sorted_rows as _rows

from sluicegate.storage.delta.retention import maintain_retention


def _data_files(location: Path) -> set[Path]:
    return {p for p in location.rglob("*.parquet") if "_delta_log" not in p.parts}


def test_a_streaming_tables_retention_property_is_kept_and_applied(stream_cursor, streams, warehouse, tmp_path,
                                                                    land):
    cur = stream_cursor
    source = tmp_path / "events"
    source.mkdir()
    cur.execute(f"CREATE STREAMING TABLE ev TBLPROPERTIES ('delta.deletedFileRetentionDuration' = "
                f"'interval 1 seconds', 'team' = 'ops') AS SELECT id FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'id INT')")
    location = warehouse / f"{cur.database}.db" / "ev"
    configuration = DeltaTable(str(location)).metadata().configuration
    assert configuration.get("delta.deletedFileRetentionDuration") == "interval 1 second"
    for n in (1, 2, 3):
        land(source, [{"id": n}])
        streams.wait_for(cur.database, "ev")
    small = _data_files(location)
    assert len(small) == 3
    compact(location)

    freed: list[Any] = []

    def collected() -> bool:
        freed.append(maintain_retention(str(location)))
        return not small & _data_files(location)

    poll_until(collected, "the compacted-away files to pass the table's second of retention", 30)
    assert sum(result.files_deleted for result in freed) >= len(small)
    assert sum(result.bytes_freed for result in freed) > 0
    assert _rows(cur, "SELECT id FROM ev") == [(1,), (2,), (3,)]
    land(source, [{"id": 4}])
    streams.wait_for(cur.database, "ev")
    assert _rows(cur, "SELECT id FROM ev") == [(1,), (2,), (3,), (4,)]


def test_a_streaming_table_with_a_bad_interval_is_refused(stream_cursor, tmp_path):
    cur = stream_cursor
    status = error_status(cur, f"CREATE STREAMING TABLE bad TBLPROPERTIES ('delta.logRetentionDuration' = 'soon') "
                               f"AS SELECT id FROM STREAM read_files('{tmp_path}', format => 'json', "
                               f"schema => 'id INT')")
    assert status.sqlState == "22006" and "INVALID_INTERVAL_FORMAT" in status.errorMessage
    cur.execute("SHOW TABLES")
    assert "bad" not in {row[1] for row in cur.fetchall()}
