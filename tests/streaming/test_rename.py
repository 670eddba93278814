"""RENAME of a streaming table is refused (its stream, checkpoint and Delta log are bound to its name), and the
table, its stream and its folder stay exactly as they were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyhive_helpers import error_status, sorted_rows


def test_a_streaming_table_cannot_be_renamed_and_keeps_streaming(stream_cursor: Any, land: Any, landing_root: Path,
                                                                 warehouse: Path) -> None:
    folder = landing_root / "rename_refused"
    land(folder, [{"country": "fr"}])
    stream_cursor.execute(
        f"CREATE STREAMING TABLE per_country AS SELECT country, count(*) AS n FROM STREAM read_files('{folder}', "
        "format => 'json', schema => 'country STRING') GROUP BY country")
    stream_cursor.execute("REFRESH STREAMING TABLE per_country")
    statement = "ALTER TABLE per_country RENAME TO renamed"
    status = error_status(stream_cursor, statement)
    assert status.sqlState == "42601", status
    assert "[STREAMING_TABLE_OPERATION_NOT_ALLOWED.UNSUPPORTED_OPERATION]" in status.errorMessage
    assert f"line 1, column {statement.index('per_country') + 1}" in status.errorMessage, status.errorMessage
    assert "DROP TABLE" in status.errorMessage  # the hint: what to do instead
    database = stream_cursor.database
    assert (warehouse / f"{database}.db" / "per_country").is_dir()
    assert not (warehouse / f"{database}.db" / "renamed").exists()
    land(folder, [{"country": "fr"}, {"country": "de"}])
    stream_cursor.execute("REFRESH STREAMING TABLE per_country")  # its stream still runs, under its name
    assert sorted_rows(stream_cursor, "SELECT * FROM per_country") == [("de", 1), ("fr", 2)]
