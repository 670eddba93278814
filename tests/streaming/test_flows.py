"""Flows through PyHive on real Spark and Delta: `CREATE STREAMING TABLE t (columns)` without a query, then several
`CREATE FLOW f AS INSERT INTO t BY NAME <streaming query>` appending into it, each exactly once with its own
checkpoint and its own txn app id; DROP FLOW keeps the rows and stops that flow only; errors with SQLSTATE and
position. Streams are driven with the manager's `wait_for` (processAllAvailable), never by sleeping."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from delta_log import txn_actions
from pyhive_helpers import error_status

from sluicegate.dialect.streaming.plan import StreamingPlan


def _rows(cur: Any, sql: str) -> list[tuple[Any, ...]]:
    cur.execute(sql)
    return sorted(cur.fetchall())


def _flow_ids(cur: Any, table: str) -> dict[str, str]:
    cur.execute(f"DESCRIBE STREAMING TABLE {table}")
    flows = [value for name, value in cur.fetchall() if name == "Flow"]
    return {text.split(":")[0]: text.rsplit("stream id ", 1)[1].split(",")[0] for text in flows}


def _create_two_flows(cur: Any, first: Path, second: Path) -> None:
    cur.execute("CREATE STREAMING TABLE events (id INT NOT NULL, src STRING, note STRING) COMMENT 'two folders'")
    schema = "schema => 'id INT'"
    cur.execute(f"CREATE FLOW from_a COMMENT 'folder a' AS INSERT INTO events BY NAME SELECT id, 'a' AS src "
                f"FROM STREAM read_files('{first}', format => 'json', {schema})")
    cur.execute(f"CREATE FLOW from_b AS INSERT INTO events BY NAME SELECT 'b' AS src, id "
                f"FROM STREAM read_files('{second}', format => 'json', {schema})")


def test_two_flows_fill_one_table_exactly_once_and_drop_flow_keeps_rows(stream_cursor, streams, warehouse, tmp_path,
                                                                        land):
    cur, db = stream_cursor, stream_cursor.database
    first, second = tmp_path / "a", tmp_path / "b"
    land(first, [{"id": 1}, {"id": 2}])
    land(second, [{"id": 10}])
    _create_two_flows(cur, first, second)
    for flow in ("from_a", "from_b"):
        streams.wait_for(db, "events", flow=flow)
    # BY NAME: the column order of the query does not matter; `note`, which no flow produces, is NULL
    assert _rows(cur, "SELECT id, src, note FROM events") == [(1, "a", None), (2, "a", None), (10, "b", None)]
    land(first, [{"id": 3}])
    land(second, [{"id": 11}, {"id": 12}])
    for flow in ("from_a", "from_b"):
        streams.wait_for(db, "events", flow=flow)
    assert _rows(cur, "SELECT id, src FROM events") == [(1, "a"), (2, "a"), (3, "a"), (10, "b"), (11, "b"),
                                                         (12, "b")]
    # each flow its own stream id (the Delta txn app id, batches 0, 1, ... each once) and its own checkpoint
    ids = _flow_ids(cur, "events")
    assert set(ids) == {"from_a", "from_b"} and ids["from_a"] != ids["from_b"]
    location = warehouse / f"{db}.db" / "events"
    apps: dict[str, list[int]] = {}
    for app, batch in txn_actions(location):
        apps.setdefault(app, []).append(batch)
    assert set(apps) == set(ids.values())
    assert all(batches == list(range(len(batches))) for batches in apps.values())
    checkpoints = {f.stream.flow: Path(f.stream.checkpoint) for f in streams.store.list_flows(db, "events")}
    assert len(set(checkpoints.values())) == 2 and all(path.is_dir() for path in checkpoints.values())
    # what a restart rebuilds: the plan as stored writes the table's columns, in its order, `note` as NULL
    stored = StreamingPlan.from_json(streams.store.get_stream(db, "events", "from_b").plan_json)
    assert [c.name for c in stored.columns] == ["id", "src", "note"] and "NULL" in stored.query_sql
    cur.execute(f"SHOW FLOWS IN {db}")
    shown = {row[1]: row for row in cur.fetchall()}
    assert shown["from_a"][2:4] == ("events", "RUNNING") and shown["from_a"][7] == "folder a"
    assert shown["from_b"][3] == "RUNNING"

    cur.execute("SHOW STREAMING TABLES LIKE 'events'")   # a table of flows is listed with its flows' status
    assert [row[1:4] for row in cur.fetchall()] == [("events", "RUNNING", "append")]

    cur.execute("DROP FLOW from_a")
    assert not checkpoints["from_a"].exists()
    land(first, [{"id": 4}])      # no longer read
    land(second, [{"id": 13}])
    streams.wait_for(db, "events", flow="from_b")
    assert _rows(cur, "SELECT id FROM events") == [(1,), (2,), (3,), (10,), (11,), (12,), (13,)]
    assert set(_flow_ids(cur, "events")) == {"from_b"}
    cur.execute("DROP FLOW IF EXISTS from_a")   # gone: nothing to do
    cur.execute("SELECT count(*) FROM event_log(TABLE(events)) WHERE event_type = 'flow_progress' AND "
                f"get_json_object(origin, '$.flow_name') = '{db}.from_b' AND get_json_object(origin, '$.flow_id') = "
                f"'{ids['from_b']}'")
    assert cur.fetchall()[0][0] >= 3    # one flow_progress event per micro-batch of the flow

    cur.execute("DROP TABLE events")             # drops its flows: their checkpoints go too
    assert not checkpoints["from_b"].exists()
    assert streams.store.list_flows(db) == []
    assert streams.running() == [] or all(key[:2] != (db, "events") for key in streams.running())


def test_a_table_with_its_own_query_takes_an_extra_flow(stream_cursor, streams, tmp_path, land):
    cur, db = stream_cursor, stream_cursor.database
    main, extra = tmp_path / "main", tmp_path / "extra"
    land(main, [{"id": 1}])
    land(extra, [{"id": 100}])
    cur.execute(f"CREATE STREAMING TABLE ids AS SELECT id FROM STREAM read_files('{main}', format => 'json', "
                f"schema => 'id INT')")
    cur.execute(f"CREATE FLOW backfill AS INSERT INTO ids BY NAME SELECT id FROM STREAM read_files('{extra}', "
                f"format => 'json', schema => 'id INT')")
    streams.wait_for(db, "ids")
    streams.wait_for(db, "ids", flow="backfill")
    assert _rows(cur, "SELECT id FROM ids") == [(1,), (100,)]
    cur.execute("DESCRIBE STREAMING TABLE ids")
    info = cur.fetchall()
    assert ("Status", "RUNNING") in info and any(n == "Flow" and v.startswith("backfill: RUNNING") for n, v in info)
    cur.execute("DROP TABLE ids")


def _error(cur: Any, sql: str) -> Any:
    status = error_status(cur, sql)
    assert "\tat " not in status.errorMessage
    return status


def test_flow_errors_name_the_problem_with_sqlstate_and_position(stream_cursor, tmp_path, land):
    cur = stream_cursor
    folder = tmp_path / "in"
    land(folder, [{"id": 1, "extra": "x"}])
    files = f"read_files('{folder}', format => 'json', schema => 'id INT, extra STRING')"
    cur.execute("CREATE STREAMING TABLE target (id INT)")
    cur.execute("CREATE TABLE plain (id INT)")

    status = _error(cur, f"CREATE FLOW f1 AS INSERT INTO missing BY NAME SELECT id FROM STREAM {files}")
    assert status.sqlState == "42P01" and "TABLE_OR_VIEW_NOT_FOUND" in status.errorMessage
    assert "line 1, column 31" in status.errorMessage or "1:31" in status.errorMessage, status.errorMessage

    status = _error(cur, f"CREATE FLOW f1 AS INSERT INTO plain BY NAME SELECT id FROM STREAM {files}")
    assert status.sqlState == "42809" and "EXPECT_STREAMING_TABLE" in status.errorMessage

    status = _error(cur, f"CREATE FLOW f1 AS INSERT INTO target BY NAME\nSELECT id, extra FROM STREAM {files}")
    assert status.sqlState == "KD000" and "EXTRA_COLUMNS" in status.errorMessage and "`extra`" in status.errorMessage
    assert "line 2" in status.errorMessage or "2:1" in status.errorMessage, status.errorMessage

    # read_files' `_rescued_data` is a column like any other: the hint says how to keep it or leave it out
    status = _error(cur, f"CREATE FLOW f1 AS INSERT INTO target BY NAME SELECT * FROM STREAM "
                         f"read_files('{folder}', format => 'json', schema => 'id INT')")
    assert status.sqlState == "KD000" and "_rescued_data" in status.errorMessage

    status = _error(cur, f"CREATE FLOW f1 AS INSERT INTO target BY NAME\nSELECT count(*) AS id FROM STREAM {files} "
                         "GROUP BY extra")
    assert status.sqlState == "42KDE" and "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION" in status.errorMessage
    assert "line 2" in status.errorMessage or "2:" in status.errorMessage, status.errorMessage

    status = _error(cur, "DROP FLOW nothing_here")
    assert status.sqlState == "42704" and "FLOW_NOT_FOUND" in status.errorMessage

    status = _error(cur, "CREATE STREAMING TABLE no_columns")
    assert "neither a query nor columns" in status.errorMessage

    cur.execute(f"CREATE FLOW f1 AS INSERT INTO target BY NAME SELECT id FROM STREAM {files}")
    status = _error(cur, f"CREATE FLOW f1 AS INSERT INTO target BY NAME SELECT id FROM STREAM {files}")
    assert status.sqlState == "42710" and "FLOW_ALREADY_EXISTS" in status.errorMessage
    cur.execute("DROP TABLE target")
    cur.execute("DROP TABLE plain")


def test_refresh_waits_for_every_flow_and_full_refresh_is_refused_while_flows_write(stream_cursor, streams, tmp_path,
                                                                                   land):
    cur, db = stream_cursor, stream_cursor.database
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    _create_two_flows(cur, first, second)
    land(first, [{"id": 1}])
    land(second, [{"id": 2}])
    cur.execute("REFRESH STREAMING TABLE events")      # SYNC: returns once both flows have caught up
    assert _rows(cur, "SELECT id, src FROM events") == [(1, "a"), (2, "b")]
    status = _error(cur, "REFRESH STREAMING TABLE events FULL")
    assert status.sqlState == "0A000" and "TABLE_HAS_FLOWS" in status.errorMessage and "DROP FLOW" in \
        status.errorMessage
    status = _error(cur, f"CREATE OR REFRESH STREAMING TABLE events AS SELECT id FROM STREAM read_files('{first}', "
                         "format => 'json', schema => 'id INT')")
    assert "TABLE_HAS_FLOWS" in status.errorMessage
    assert _rows(cur, "SELECT id FROM events") == [(1,), (2,)]
    assert {f.stream.flow for f in streams.store.list_flows(db, "events")} == {"from_a", "from_b"}
    cur.execute("DROP TABLE events")


def test_a_restart_of_the_tables_own_stream_keeps_the_rows_its_flows_wrote(stream_cursor, streams, tmp_path, land):
    """A table with its own query whose stream has committed no batch yet (its folder is empty) and an extra flow
    that filled it: restarting the table's stream must not take the flow's rows for a pending full refresh."""
    cur, db = stream_cursor, stream_cursor.database
    own, extra = tmp_path / "own", tmp_path / "extra"
    own.mkdir()
    land(extra, [{"id": 7}])
    cur.execute(f"CREATE STREAMING TABLE mixed AS SELECT id FROM STREAM read_files('{own}', format => 'json', "
                "schema => 'id INT')")
    cur.execute(f"CREATE FLOW into_mixed AS INSERT INTO mixed BY NAME SELECT id "
                f"FROM STREAM read_files('{extra}', format => 'json', schema => 'id INT')")
    streams.wait_for(db, "mixed", flow="into_mixed")
    assert _rows(cur, "SELECT id FROM mixed") == [(7,)]
    streams.stop(db, "mixed", desired=None)           # as a gateway restart or a retry would
    streams.resume(streams.store.get_stream(db, "mixed"))
    land(own, [{"id": 1}])
    streams.wait_for(db, "mixed")
    assert _rows(cur, "SELECT id FROM mixed") == [(1,), (7,)]
