"""DROP DATABASE ... CASCADE of a database holding streaming tables, through PyHive: their streams stop and their
checkpoints go, as with DROP TABLE (found through the shell: a continuous stream ran on in a dropped database and
failed the gateway's shutdown); the flows into them stop too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyhive_helpers import error_status


def test_drop_database_cascade_stops_streams_and_removes_checkpoints(connect: Any, streams: Any, tmp_path: Path,
                                                                     land: Any) -> None:
    cur = connect().cursor()
    land(tmp_path / "in", [{"id": 1}])
    cur.execute("DROP DATABASE IF EXISTS st_cascade CASCADE")
    cur.execute("CREATE DATABASE st_cascade")
    source = f"STREAM read_files('{tmp_path / 'in'}', format => 'json', schema => 'id INT')"
    cur.execute(f"CREATE STREAMING TABLE st_cascade.continuous AS SELECT id FROM {source}")
    cur.execute(f"CREATE STREAMING TABLE st_cascade.hourly SCHEDULE EVERY 1 HOUR AS SELECT id FROM {source}")
    cur.execute("CREATE STREAMING TABLE st_cascade.filled (id INT)")
    cur.execute(f"CREATE FLOW st_cascade.into_filled AS INSERT INTO st_cascade.filled BY NAME SELECT id FROM {source}")
    streams.wait_for("st_cascade", "continuous")
    streams.wait_for("st_cascade", "hourly")
    streams.wait_for("st_cascade", "filled", flow="into_filled")
    checkpoints = [Path(streams.store.get_stream("st_cascade", name).checkpoint) for name in ("continuous", "hourly")]
    checkpoints.append(Path(streams.store.get_stream("st_cascade", "filled", "into_filled").checkpoint))
    assert all(folder.is_dir() for folder in checkpoints)
    status = error_status(cur, "DROP DATABASE st_cascade")
    assert "SCHEMA_NOT_EMPTY" in status.errorMessage              # without CASCADE nothing is touched
    assert ("st_cascade", "continuous") in streams.running()
    cur.execute("DROP DATABASE st_cascade CASCADE")
    assert [key for key in streams.running() if key[0] == "st_cascade"] == []
    assert streams.schedule_of("st_cascade", "hourly") is None     # no pass will start for a dropped table
    assert not any(folder.exists() for folder in checkpoints)
    cur.execute("SHOW DATABASES LIKE 'st_cascade'")
    assert cur.fetchall() == []
