"""A stream over an AUTO CDC table (issue 29), through PyHive against a real gateway: the table's commits update and
delete rows by key, so `STREAM(t)` of it is refused at CREATE, as Databricks refuses a streaming read of a table
with updates and deletes, with STREAMING_SOURCE_NOT_APPEND_ONLY (0A000) at `STREAM(t)` and a hint naming what
works instead: a materialized view over it, or `skipChangeCommits` (both followed here). The same for every kind of
AUTO CDC table: SCD type 1, SCD type 2, and a table declared with columns that AUTO CDC flows fill. The other way
round, a first AUTO CDC flow into a table that streams already read is refused at CREATE FLOW, naming them, and so
is CREATE OR REFRESH making such a table a FLOW AUTO CDC one."""

from __future__ import annotations

from typing import Any

from pyhive_helpers import error_status, sorted_rows

from sluicegate.dialect.streaming.plan import StreamingPlan

CDC = "KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op)"


def _changes(cur: Any) -> None:
    cur.execute("CREATE TABLE changes (id INT, op STRING, seq BIGINT, name STRING)")
    cur.execute("INSERT INTO changes VALUES (1, 'U', 1, 'ann'), (2, 'U', 1, 'bob')")


def _refused(cur: Any, streams: Any, source: str, reader: str = "down") -> None:
    """CREATE STREAMING TABLE `reader` over STREAM(`source`) is refused at CREATE, at STREAM, with the hint, and
    leaves nothing behind."""
    sql = f"CREATE STREAMING TABLE {reader} AS SELECT id, name FROM STREAM({source})"
    status = error_status(cur, sql)
    message = status.errorMessage
    assert status.sqlState == "0A000" and "STREAMING_SOURCE_NOT_APPEND_ONLY" in message, message
    assert f"line 1, column {sql.index('STREAM(') + 1}" in message, message
    assert "AUTO CDC table" in message and "update and delete" in message, message
    assert "CREATE MATERIALIZED VIEW" in message and "skipChangeCommits" in message, message
    assert streams.store.get_table(cur.database, reader) is None


def test_stream_of_auto_cdc_tables_is_refused_at_create_and_the_hint_works(stream_cursor: Any,
                                                                            streams: Any) -> None:
    cur = stream_cursor
    _changes(cur)
    cur.execute(f"CREATE STREAMING TABLE scd1 FLOW AUTO CDC FROM STREAM(changes) {CDC} STORED AS SCD TYPE 1")
    cur.execute(f"CREATE STREAMING TABLE scd2 FLOW AUTO CDC FROM STREAM(changes) {CDC} STORED AS SCD TYPE 2")
    cur.execute("CREATE STREAMING TABLE by_flows (id INT, seq BIGINT, name STRING)")
    cur.execute(f"CREATE FLOW into_by_flows AS AUTO CDC INTO by_flows FROM STREAM(changes) {CDC}")
    for source in ("scd1", "scd2", "by_flows", f"`{cur.database}`.scd1"):
        _refused(cur, streams, source)
    # a flow reading one is refused alike, an INSERT flow as an AUTO CDC flow
    cur.execute("CREATE STREAMING TABLE sink (id INT, name STRING)")
    status = error_status(cur, "CREATE FLOW copy AS INSERT INTO sink SELECT id, name FROM STREAM(scd2)")
    assert status.sqlState == "0A000" and "STREAMING_SOURCE_NOT_APPEND_ONLY" in status.errorMessage, status
    status = error_status(cur, f"CREATE FLOW again AS AUTO CDC INTO by_flows FROM STREAM(scd1) {CDC}")
    assert status.sqlState == "0A000" and "STREAMING_SOURCE_NOT_APPEND_ONLY" in status.errorMessage, status

    # what the hint names: a materialized view follows the updates and deletes; a stream with skipChangeCommits
    # reads only the commits that append (rows of new keys) and goes on past the commits that update or delete
    cur.execute("CREATE MATERIALIZED VIEW names AS SELECT id, name FROM scd1")
    cur.execute("CREATE STREAMING TABLE new_keys TBLPROPERTIES ('skipChangeCommits' = 'true') AS "
                "SELECT id, name FROM STREAM(scd1)")
    cur.execute("REFRESH STREAMING TABLE new_keys")
    cur.execute("INSERT INTO changes VALUES (1, 'U', 2, 'ann2'), (2, 'D', 2, NULL)")   # an update and a delete
    cur.execute("REFRESH STREAMING TABLE scd1")
    cur.execute("INSERT INTO changes VALUES (3, 'U', 1, 'cy')")                         # a new key only
    cur.execute("REFRESH STREAMING TABLE scd1")
    cur.execute("REFRESH MATERIALIZED VIEW names")
    cur.execute("REFRESH STREAMING TABLE new_keys")
    assert sorted_rows(cur, "SELECT * FROM scd1") == [(1, 2, "ann2"), (3, 1, "cy")]
    assert sorted_rows(cur, "SELECT * FROM names") == [(1, "ann2"), (3, "cy")]
    assert sorted_rows(cur, "SELECT * FROM new_keys") == [(1, "ann"), (2, "bob"), (3, "cy")]


def test_auto_cdc_flow_into_a_table_already_streamed_is_refused_naming_its_readers(stream_cursor: Any,
                                                                                   streams: Any) -> None:
    """A table declared with columns is append-only until its first AUTO CDC flow, so streams may read it; the flow
    would then update and delete under them (a Databricks stream fails on such commits), so CREATE FLOW is refused
    at its target, naming every such reader (a streaming table, an INSERT flow) but not one with skipChangeCommits,
    and the hint works: once the readers are gone the flow is accepted, and the skipping reader goes on."""
    cur, database = stream_cursor, stream_cursor.database
    _changes(cur)
    cur.execute("CREATE STREAMING TABLE by_flows (id INT, seq BIGINT, name STRING)")
    cur.execute("CREATE STREAMING TABLE down AS SELECT id, name FROM STREAM(by_flows)")
    cur.execute("CREATE STREAMING TABLE sink (id INT, name STRING)")
    cur.execute("CREATE FLOW copy AS INSERT INTO sink SELECT id, name FROM STREAM(by_flows)")
    cur.execute("CREATE STREAMING TABLE new_keys TBLPROPERTIES ('skipChangeCommits' = 'true') AS "
                "SELECT id, name FROM STREAM(by_flows)")
    sql = f"CREATE FLOW apply AS AUTO CDC INTO by_flows FROM STREAM(changes) {CDC}"
    status = error_status(cur, sql)
    message = status.errorMessage
    assert status.sqlState == "0A000" and "STREAMING_SOURCE_NOT_APPEND_ONLY" in message, message
    assert f"line 1, column {sql.index('by_flows') + 1}" in message, message
    assert f"`{database}`.`down`" in message and f"flow `copy` into `{database}`.`sink`" in message, message
    assert "new_keys" not in message and "update and delete" in message, message
    assert "CREATE MATERIALIZED VIEW" in message and "skipChangeCommits" in message, message
    assert streams.store.get_stream(database, "by_flows", flow="apply") is None

    cur.execute("DROP TABLE down")
    status = error_status(cur, sql)                          # the flow still reads it
    assert "flow `copy`" in status.errorMessage and "`down`" not in status.errorMessage, status
    cur.execute("DROP FLOW copy")
    cur.execute(sql)
    streams.wait_for(database, "by_flows", flow="apply")
    cur.execute("INSERT INTO changes VALUES (1, 'U', 2, 'ann2'), (2, 'D', 2, NULL)")   # an update and a delete
    streams.wait_for(database, "by_flows", flow="apply")
    cur.execute("INSERT INTO changes VALUES (3, 'U', 1, 'cy')")                         # a new key only
    streams.wait_for(database, "by_flows", flow="apply")
    assert sorted_rows(cur, "SELECT * FROM by_flows") == [(1, 2, "ann2"), (3, 1, "cy")]
    cur.execute("REFRESH STREAMING TABLE new_keys")   # past the commit that updated and deleted, to the new key
    assert sorted_rows(cur, "SELECT * FROM new_keys") == [(1, "ann"), (2, "bob"), (3, "cy")]


def test_an_append_table_made_auto_cdc_by_create_or_refresh_is_refused_naming_its_readers(stream_cursor: Any,
                                                                                         streams: Any) -> None:
    """CREATE OR REFRESH turning an append streaming table into a FLOW AUTO CDC one would update and delete rows
    under the streams reading it, as a first AUTO CDC flow into it would: refused the same way, at the table's name,
    naming them, the table left as it was; once they are gone it is accepted."""
    cur, database = stream_cursor, stream_cursor.database
    _changes(cur)
    cur.execute("CREATE STREAMING TABLE mirror AS SELECT id, seq, name FROM STREAM(changes)")
    cur.execute("CREATE STREAMING TABLE down AS SELECT id, name FROM STREAM(mirror)")
    sql = f"CREATE OR REFRESH STREAMING TABLE mirror FLOW AUTO CDC FROM STREAM(changes) {CDC}"
    status = error_status(cur, sql)
    message = status.errorMessage
    assert status.sqlState == "0A000" and "STREAMING_SOURCE_NOT_APPEND_ONLY" in message, message
    assert f"line 1, column {sql.index('mirror') + 1}" in message, message
    assert f"Cannot make an AUTO CDC table of `{database}`.`mirror`: `{database}`.`down` streams" in message, message
    assert "CREATE MATERIALIZED VIEW" in message and "skipChangeCommits" in message, message
    assert StreamingPlan.from_json(streams.store.get_stream(database, "mirror").plan_json).cdc is None

    cur.execute("DROP TABLE down")
    cur.execute(sql)
    assert StreamingPlan.from_json(streams.store.get_stream(database, "mirror").plan_json).cdc is not None
    assert sorted_rows(cur, "SELECT * FROM mirror") == [(1, 1, "ann"), (2, 1, "bob")]
