"""OPTIMIZE racing running streams, through PyHive on real Spark, Delta and files: a streaming table in append mode
and one in update mode (a GROUP BY, committed by MERGE) are optimized again and again while their streams commit;
each ends with exactly the expected rows, and what reads the optimized table (a downstream `STREAM(t)` and a
materialized view) sees no row twice: OPTIMIZE's commit changes no data (dataChange=false)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyhive_helpers import poll_until, sorted_rows

ROUNDS = 6
PER_FILE = 5


def _count(cur: Any, table: str) -> int:
    cur.execute(f"SELECT count(*) FROM {table}")
    return int(cur.fetchall()[0][0])


def _optimized_commits(cur: Any, table: str) -> list[dict[str, Any]]:
    cur.execute(f"DESCRIBE HISTORY {table}")
    return [json.loads(row[9]) for row in cur.fetchall() if row[4] == "OPTIMIZE"]


def _race(cur: Any, land: Any, folder: Path, table: str, expected_rows: Any, zorder: str = "") -> list[dict[str, Any]]:
    """Land ROUNDS files, optimizing `table` (`zorder`: its ZORDER BY clause) after each while its stream commits,
    until it holds `expected_rows()`; returns the metrics of every OPTIMIZE that rewrote files."""
    rewritten = []
    for round_ in range(ROUNDS):
        committed = _committed(cur, table)
        land(folder, [{"id": round_ * PER_FILE + i, "g": f"g{i % 3}"} for i in range(PER_FILE)])
        if round_ % 2:  # on every other round, the stream commits the new file first
            poll_until(lambda c=committed: _committed(cur, table) > c, f"{table} to commit a batch")
        cur.execute(f"OPTIMIZE {table} {zorder}")
        (_, metrics), = cur.fetchall()
        if json.loads(metrics)["numFilesRemoved"]:
            rewritten.append(json.loads(metrics))
    poll_until(lambda: sorted_rows(cur, f"SELECT * FROM {table}") == expected_rows(),
               f"{table} to hold every landed row")
    cur.execute(f"OPTIMIZE {table}")
    return rewritten


def _committed(cur: Any, table: str) -> int:
    cur.execute(f"DESCRIBE HISTORY {table}")
    return sum(1 for row in cur.fetchall() if row[4] != "OPTIMIZE")


def test_optimize_races_an_append_stream_and_its_readers(stream_cursor: Any, land: Any, landing_root: Path,
                                                         streams: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": -1, "g": "g0"}])
    cur.execute(f"CREATE STREAMING TABLE bronze AS SELECT id, g FROM STREAM read_files('{folder}', format => 'json', "
                "schema => 'id INT, g STRING')")
    cur.execute("CREATE STREAMING TABLE silver AS SELECT id, upper(g) AS g FROM STREAM(bronze)")
    cur.execute("CREATE MATERIALIZED VIEW per_group AS SELECT g, count(*) AS n FROM bronze GROUP BY g")
    every = [(-1, "g0")] + [(r * PER_FILE + i, f"g{i % 3}") for r in range(ROUNDS) for i in range(PER_FILE)]

    rewritten = _race(cur, land, folder, "bronze", lambda: sorted(every, key=repr))

    assert rewritten, "no OPTIMIZE found files to rewrite: the race did not happen"
    assert len(_optimized_commits(cur, "bronze")) >= len(rewritten)
    poll_until(lambda: _count(cur, "silver") >= len(every), "silver to read every row of bronze")
    cur.execute("REFRESH STREAMING TABLE silver")
    assert sorted_rows(cur, "SELECT * FROM silver") == sorted(((i, g.upper()) for i, g in every), key=repr)
    cur.execute("SELECT count(*), count(DISTINCT id) FROM silver")
    assert cur.fetchall() == [(len(every), len(every))]
    cur.execute("REFRESH MATERIALIZED VIEW per_group")
    assert sorted_rows(cur, "SELECT * FROM per_group") == sorted_rows(
        cur, "SELECT g, count(*) FROM bronze GROUP BY g")
    assert sum(n for _, n in sorted_rows(cur, "SELECT * FROM per_group")) == len(every)
    events = [e for e in streams.store.event_log(database, "bronze") if e.event_type == "maintenance_progress"]
    assert len(events) == ROUNDS + 1
    details = json.loads(events[-1].details)["maintenance_progress"]
    assert details["operation"] == "OPTIMIZE" and set(details["metrics"]) >= {"numFilesAdded", "numFilesRemoved"}
    cur.execute("SELECT event_type, details FROM event_log(TABLE(bronze)) WHERE event_type = 'maintenance_progress'")
    assert len(cur.fetchall()) == ROUNDS + 1
    entry = streams.store.get_stream(database, "bronze")
    assert entry.status == "RUNNING" and not entry.last_error


def test_optimize_races_an_update_stream(stream_cursor: Any, land: Any, landing_root: Path, streams: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": -1, "g": "g0"}])
    cur.execute(f"CREATE STREAMING TABLE per_g AS SELECT g, count(*) AS n, sum(id) AS total FROM STREAM "
                f"read_files('{folder}', format => 'json', schema => 'id INT, g STRING') GROUP BY g")
    cur.execute("CREATE MATERIALIZED VIEW per_g_view AS SELECT g, n FROM per_g")
    every = [(-1, "g0")] + [(r * PER_FILE + i, f"g{i % 3}") for r in range(ROUNDS) for i in range(PER_FILE)]
    expected = sorted(((g, sum(1 for _, h in every if h == g), sum(i for i, h in every if h == g))
                       for g in {g for _, g in every}), key=repr)

    # a MERGE leaves the table one file (nothing to compact); z-ordering rewrites it every time
    rewritten = _race(cur, land, folder, "per_g", lambda: expected, "ZORDER BY (total)")

    assert rewritten, "no OPTIMIZE found files to rewrite: the race did not happen"
    assert sorted_rows(cur, "SELECT * FROM per_g") == expected
    cur.execute("REFRESH MATERIALIZED VIEW per_g_view")
    assert sorted_rows(cur, "SELECT * FROM per_g_view") == [(g, n) for g, n, _ in expected]
    entry = streams.store.get_stream(database, "per_g")
    assert entry.status == "RUNNING" and not entry.last_error
