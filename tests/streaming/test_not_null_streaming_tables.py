"""Issue 27's gaps 4 and 5 through PyHive: a streaming table's column list keeps NOT NULL (the Delta log, the catalog,
DESCRIBE and information_schema agree, through CREATE, CREATE OR REFRESH and REFRESH ... FULL) and Delta enforces it
on every micro-batch (a null fails the stream with DELTA_NOT_NULL_CONSTRAINT_VIOLATED, SQLSTATE 23502, and nothing
of that batch is written; the stream resumes from its checkpoint exactly once), as for a flow's target table and a
materialized view's column list (a refresh writing a null fails and keeps the previous result); CREATE [OR REFRESH]
STREAMING TABLE returns once its first update is in the table (no polling here), fails with the stream's error when
that update fails (the table stays, FAILED), and returns at once when the session says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deltalake import DeltaTable
from pyhive_helpers import error_status, poll_until, sorted_rows

NOT_NULL = "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"
SCHEMA = "schema => 'id BIGINT, v STRING'"


def _source(folder: Path) -> str:
    return f"STREAM read_files('{folder}', format => 'json', {SCHEMA})"


def _nullable(cur: Any, table: str) -> list[tuple[Any, ...]]:
    return sorted_rows(cur, "SELECT column_name, is_nullable, comment FROM system.information_schema.columns "
                            f"WHERE table_schema = '{cur.database}' AND table_name = '{table}'")


def _delta_nullable(streams: Any, database: str, table: str) -> dict[str, bool]:
    entry = streams.store.get_table(database, table)
    return {field.name: field.nullable for field in DeltaTable(str(entry.location)).schema().fields}


def _shown(cur: Any, table: str) -> dict[str, Any]:
    cur.execute(f"SHOW STREAMING TABLES LIKE '{table}'")
    columns = [d[0] for d in cur.description]
    (row,) = cur.fetchall()
    return dict(zip(columns, row, strict=True))


def _failed(cur: Any, table: str) -> dict[str, Any]:
    return poll_until(lambda: (lambda shown: shown if shown["status"] == "FAILED" else None)(_shown(cur, table)),
                      f"{table} to be FAILED")


def test_not_null_is_kept_everywhere_and_the_create_returns_with_its_first_update(
        stream_cursor: Any, landing_root: Path, streams: Any, land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": 1, "v": "a"}, {"id": 2, "v": None}])
    create = (f"CREATE OR REFRESH STREAMING TABLE kept (id BIGINT NOT NULL COMMENT 'the key', v STRING) "
              f"AS SELECT id, v FROM {_source(folder)}")
    cur.execute(create)
    # gap 5: the first update is in when the statement returns, no polling
    assert sorted_rows(cur, "SELECT id, v FROM kept") == [(1, "a"), (2, None)]
    expected = [("id", "NO", "the key"), ("v", "YES", None)]
    assert _nullable(cur, "kept") == expected
    assert _delta_nullable(streams, database, "kept") == {"id": False, "v": True}
    cur.execute("DESCRIBE TABLE kept")
    assert [row[:3] for row in cur.fetchall()][:2] == [("id", "bigint", "the key"), ("v", "string", None)]
    cur.execute("SHOW CREATE TABLE kept")
    assert "NOT NULL" in cur.fetchall()[0][0]
    cur.execute(create)                                  # unchanged: the same stream goes on
    cur.execute("REFRESH STREAMING TABLE kept FULL")     # a new stream, the table written again
    assert sorted_rows(cur, "SELECT id, v FROM kept") == [(1, "a"), (2, None)]
    assert _nullable(cur, "kept") == expected
    assert _delta_nullable(streams, database, "kept") == {"id": False, "v": True}
    # dropping NOT NULL is a new definition: the table is written again without the constraint
    cur.execute(f"CREATE OR REFRESH STREAMING TABLE kept (id BIGINT, v STRING) AS SELECT id, v FROM {_source(folder)}")
    assert _nullable(cur, "kept") == [("id", "YES", None), ("v", "YES", None)]
    assert _delta_nullable(streams, database, "kept") == {"id": True, "v": True}
    assert sorted_rows(cur, "SELECT id, v FROM kept") == [(1, "a"), (2, None)]


def test_a_null_mid_stream_fails_it_writes_nothing_of_its_batch_and_the_stream_resumes_exactly_once(
        stream_cursor: Any, landing_root: Path, streams: Any, land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}])
    cur.execute(f"CREATE STREAMING TABLE guarded (id BIGINT NOT NULL, v STRING) AS SELECT id, v FROM "
                f"{_source(folder)}")
    assert sorted_rows(cur, "SELECT id FROM guarded") == [(1,), (2,)]
    location = str(streams.store.get_table(database, "guarded").location)
    version = DeltaTable(location).version()
    land(folder, [{"id": 3, "v": "c"}, {"id": None, "v": "no key"}])
    shown = _failed(cur, "guarded")
    assert shown["failures"] == 1       # not retried: the same batch fails the same way each time
    assert f"[{NOT_NULL}]" in shown["lastError"] and "column: id" in shown["lastError"]
    cur.execute("DESCRIBE STREAMING TABLE guarded")
    info = dict(cur.fetchall())
    assert info["Status"] == "FAILED" and info["Last error"] == shown["lastError"]
    assert sorted_rows(cur, "SELECT id FROM guarded") == [(1,), (2,)]      # nothing of the failed batch
    assert DeltaTable(location).version() == version
    status = error_status(cur, "REFRESH STREAMING TABLE guarded")         # started again: fails again
    assert "STREAM_FAILED_AGAIN" in status.errorMessage and NOT_NULL in status.errorMessage
    assert sorted_rows(cur, "SELECT id FROM guarded") == [(1,), (2,)]
    # a new stateless query over the same sources goes on from the checkpoint: the failed batch, replayed, lands
    # once, and the batch before it is not written again
    cur.execute(f"CREATE OR REFRESH STREAMING TABLE guarded (id BIGINT NOT NULL, v STRING) AS "
                f"SELECT coalesce(id, -1) AS id, v FROM {_source(folder)}")
    assert sorted_rows(cur, "SELECT id, v FROM guarded") == [(-1, "no key"), (1, "a"), (2, "b"), (3, "c")]
    assert _shown(cur, "guarded")["status"] == "RUNNING"


def test_an_aggregate_merged_on_a_not_null_key_fails_on_a_null_key(stream_cursor: Any, landing_root: Path,
                                                                    land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": 1, "v": "a"}, {"id": 2, "v": "a"}, {"id": 3, "v": "b"}])
    cur.execute(f"CREATE STREAMING TABLE per_v (v STRING NOT NULL, n BIGINT NOT NULL) AS SELECT v, count(*) AS n "
                f"FROM {_source(folder)} GROUP BY v")           # update mode: each batch is MERGEd on v
    assert sorted_rows(cur, "SELECT v, n FROM per_v") == [("a", 2), ("b", 1)]
    land(folder, [{"id": 4, "v": "b"}])
    cur.execute("REFRESH STREAMING TABLE per_v")
    assert sorted_rows(cur, "SELECT v, n FROM per_v") == [("a", 2), ("b", 2)]
    land(folder, [{"id": 5, "v": None}, {"id": 6, "v": "a"}])
    shown = _failed(cur, "per_v")
    assert f"[{NOT_NULL}]" in shown["lastError"] and "column: v" in shown["lastError"]
    assert sorted_rows(cur, "SELECT v, n FROM per_v") == [("a", 2), ("b", 2)]


def test_a_failing_first_update_fails_the_create_and_leaves_the_table_failed(
        stream_cursor: Any, landing_root: Path, land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": 1, "v": "a"}, {"id": None, "v": "b"}])
    status = error_status(cur, f"CREATE STREAMING TABLE checked_first (id BIGINT NOT NULL, v STRING) AS "
                               f"SELECT id, v FROM {_source(folder)}")
    assert status.sqlState == "23502" and f"[{NOT_NULL}]" in status.errorMessage
    assert "column: id" in status.errorMessage and "REFRESH STREAMING TABLE" in status.errorMessage   # the hint
    assert ("checked_first",) in [row[1:2] for row in sorted_rows(cur, "SHOW TABLES")]
    assert _shown(cur, "checked_first")["status"] == "FAILED"
    assert sorted_rows(cur, "SELECT count(*) FROM checked_first") == [(0,)]


def test_a_session_can_create_without_waiting_and_an_empty_source_returns_at_once(
        stream_cursor: Any, landing_root: Path, land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder, empty = landing_root / f"{database}_in", landing_root / f"{database}_empty"
    land(folder, [{"id": None, "v": "b"}])
    empty.mkdir()
    cur.execute("SET spark.sluicegate.streams.createWaitsForFirstUpdate=false")
    cur.execute(f"CREATE STREAMING TABLE later (id BIGINT NOT NULL, v STRING) AS SELECT id, v FROM {_source(folder)}")
    assert NOT_NULL in _failed(cur, "later")["lastError"]     # the same failure, found after the statement returned
    cur.execute("SET spark.sluicegate.streams.createWaitsForFirstUpdate=true")
    cur.execute(f"CREATE STREAMING TABLE nothing_yet (id BIGINT NOT NULL, v STRING) AS SELECT id, v FROM "
                f"{_source(empty)}")
    assert _shown(cur, "nothing_yet")["status"] == "RUNNING"
    assert sorted_rows(cur, "SELECT count(*) FROM nothing_yet") == [(0,)]
    land(empty, [{"id": 5, "v": "e"}])
    cur.execute("REFRESH STREAMING TABLE nothing_yet")
    assert sorted_rows(cur, "SELECT id, v FROM nothing_yet") == [(5, "e")]


def test_a_flow_into_a_not_null_column_fails_on_a_null(stream_cursor: Any, landing_root: Path, land: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land(folder, [{"id": 1, "v": "a"}])
    cur.execute("CREATE STREAMING TABLE target (id BIGINT NOT NULL COMMENT 'the key', v STRING)")
    assert _nullable(cur, "target") == [("id", "NO", "the key"), ("v", "YES", None)]
    cur.execute(f"CREATE FLOW feed AS INSERT INTO target BY NAME SELECT id, v FROM {_source(folder)}")
    cur.execute("REFRESH STREAMING TABLE target")
    assert sorted_rows(cur, "SELECT id, v FROM target") == [(1, "a")]
    land(folder, [{"id": None, "v": "b"}])

    def flow_failed() -> Any:
        cur.execute(f"SHOW FLOWS IN {database}")
        return next((row for row in cur.fetchall() if row[1] == "feed" and row[3] == "FAILED"), None)

    poll_until(flow_failed, "the flow to be FAILED")
    cur.execute("DESCRIBE STREAMING TABLE target")
    assert NOT_NULL in " ".join(str(value) for _, value in cur.fetchall())
    assert sorted_rows(cur, "SELECT id, v FROM target") == [(1, "a")]


def test_a_materialized_views_column_list_keeps_and_enforces_not_null(stream_cursor: Any, streams: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    cur.execute("CREATE TABLE src (id BIGINT, v STRING) USING DELTA")
    cur.execute("INSERT INTO src VALUES (1, 'a'), (2, NULL)")
    create = ("CREATE OR REPLACE MATERIALIZED VIEW mv (id BIGINT NOT NULL COMMENT 'the key', v STRING, "
              "PRIMARY KEY (id)) AS SELECT id, v FROM src")
    cur.execute(create)
    assert sorted_rows(cur, "SELECT id, v FROM mv") == [(1, "a"), (2, None)]
    assert _nullable(cur, "mv") == [("id", "NO", "the key"), ("v", "YES", None)]
    assert _delta_nullable(streams, database, "mv") == {"id": False, "v": True}
    cur.execute("INSERT INTO src VALUES (NULL, 'c')")
    status = error_status(cur, "REFRESH MATERIALIZED VIEW mv")
    assert status.sqlState == "23502" and f"[{NOT_NULL}]" in status.errorMessage and "column: id" in status.errorMessage
    assert sorted_rows(cur, "SELECT id, v FROM mv") == [(1, "a"), (2, None)]      # the previous result stays
    status = error_status(cur, "CREATE MATERIALIZED VIEW mv2 (id BIGINT NOT NULL, v STRING) AS SELECT id, v FROM src")
    assert status.sqlState == "23502" and "mv2" not in {row[1] for row in sorted_rows(cur, "SHOW TABLES")}
    # without NOT NULL the same definition is a new one: recomputed, and the null is a row
    cur.execute("CREATE OR REPLACE MATERIALIZED VIEW mv (id BIGINT COMMENT 'the key', v STRING) AS "
                "SELECT id, v FROM src")
    assert sorted_rows(cur, "SELECT id, v FROM mv") == [(1, "a"), (2, None), (None, "c")]
    assert _delta_nullable(streams, database, "mv") == {"id": True, "v": True}
