"""Bad input does not stop a stream, and an error reads as itself (issue 13, item 4), through PyHive on real Spark,
Delta and files.

read_files keeps what it cannot parse or cast in `_rescued_data` (the rest of the record flows on, the stream keeps
running, later files are ingested); `mode => 'FAILFAST'` keeps failing instead; a plan stored before the column
existed reads as before after a restart. A bad cast inside a batch INSERT or a stream's micro-batch reports Spark's
CAST_INVALID_INPUT (22018), not the Delta write that ran the query.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from pyhive_helpers import error_status, poll_until, sorted_rows

from sluicegate.dialect.streaming.plan import StreamingPlan
from sluicegate.executor.streaming_tables import CREATE_WAITS

BAD_JSON = [{"id": 1, "s": "a"}, {"id": "abc", "s": "b"}]



def _described(cursor: Any, table: str) -> dict[str, Any]:
    cursor.execute(f"DESCRIBE STREAMING TABLE {table}")
    return dict(row[:2] for row in cursor.fetchall())


def _columns(cursor: Any, table: str) -> list[str]:
    cursor.execute(f"SELECT * FROM {table} LIMIT 0")
    return [column[0].split(".")[-1] for column in cursor.description]


def test_a_bad_json_value_is_rescued_and_the_stream_goes_on(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "orders"
    land(source, BAD_JSON)
    cur.execute(f"CREATE STREAMING TABLE rescued AS SELECT * FROM STREAM read_files('{source}', format => 'json', "
                "schema => 'id INT, s STRING')")
    streams.wait_for(cur.database, "rescued")
    assert _columns(cur, "rescued") == ["id", "s", "_rescued_data"]
    rows = sorted_rows(cur, "SELECT id, s, _rescued_data FROM rescued")
    assert rows == [(1, "a", None), (None, "b", '{"id": "abc", "s": "b"}')]  # the good field keeps its value
    land(source, [{"id": 2, "s": "c"}, {"id": 3.5, "s": "d"}])             # later files are still ingested
    streams.wait_for(cur.database, "rescued")
    rows = sorted_rows(cur, "SELECT id, s FROM rescued WHERE _rescued_data IS NULL")
    assert rows == [(1, "a"), (2, "c")]
    bad = sorted_rows(cur, "SELECT s, get_json_object(_rescued_data, '$.id') FROM rescued "
                           "WHERE _rescued_data IS NOT NULL")
    assert bad == [("b", "abc"), ("d", "3.5")]
    info = _described(cur, "rescued")
    assert info["Status"] == "RUNNING" and not info["Last error"]


def test_a_column_list_without_the_rescued_column_says_how_to_keep_it(stream_cursor, tmp_path, land):
    """SELECT * of read_files has `_rescued_data` too: a column list that leaves it out is told what to do, and a
    list that declares it keeps the bad records."""
    cur = stream_cursor
    source = tmp_path / "declared"
    land(source, BAD_JSON)
    files = f"STREAM read_files('{source}', format => 'json', schema => 'id INT, s STRING')"
    status = error_status(cur, f"CREATE STREAMING TABLE declared (id INT, s STRING) AS SELECT * FROM {files}")
    assert status.sqlState == "42000" and "[STREAMING_TABLE_DEFINITION]" in status.errorMessage, status
    assert "`_rescued_data`" in status.errorMessage and "cannot parse or cast" in status.errorMessage
    assert "declare _rescued_data STRING" in status.errorMessage  # the hint
    assert "declared" not in [row[1] for row in sorted_rows(cur, "SHOW TABLES")]  # nothing left behind
    cur.execute(f"CREATE STREAMING TABLE declared (id INT, s STRING, _rescued_data STRING) AS SELECT * FROM {files}")
    cur.execute("REFRESH STREAMING TABLE declared")
    assert sorted_rows(cur, "SELECT id, _rescued_data IS NULL FROM declared") == [(1, True), (None, False)]


def test_csv_and_an_inferred_schema_rescue_too(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    csv = tmp_path / "csv"
    csv.mkdir()
    (csv / "a.csv").write_text("id,s\n1,a\nabc,b\n3,c,extra\n")
    cur.execute(f"CREATE STREAMING TABLE from_csv AS SELECT * FROM STREAM read_files('{csv}', format => 'csv', "
                "header => 'true', schema => 'id INT, s STRING')")
    streams.wait_for(cur.database, "from_csv")
    assert sorted_rows(cur, "SELECT * FROM from_csv") == [(1, "a", None), (3, "c", "3,c,extra"), (None, "b", "abc,b")]
    inferred = tmp_path / "inferred"
    land(inferred, [{"id": 1, "s": "a"}])  # inferred from the files present: id BIGINT, s STRING
    cur.execute(f"CREATE STREAMING TABLE from_inferred AS SELECT * FROM STREAM read_files('{inferred}', "
                "format => 'json')")
    land(inferred, [{"id": "abc", "s": "b"}])
    streams.wait_for(cur.database, "from_inferred")
    assert _columns(cur, "from_inferred") == ["id", "s", "_rescued_data"]
    assert sorted_rows(cur, "SELECT * FROM from_inferred") == [(1, "a", None), (None, "b", '{"id": "abc", "s": "b"}')]


def test_the_column_can_be_renamed_and_failfast_still_fails(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "named"
    land(source, BAD_JSON)
    cur.execute(f"CREATE STREAMING TABLE renamed AS SELECT * FROM STREAM read_files('{source}', format => 'json', "
                "schema => 'id INT, s STRING', rescuedDataColumn => 'bad_input')")
    streams.wait_for(cur.database, "renamed")
    assert sorted_rows(cur, "SELECT id, bad_input IS NULL FROM renamed") == [(1, True), (None, False)]
    # the stream's own failure is what this looks at: CREATE returns without waiting for the first update (which,
    # retried, would fail the CREATE with the same FAILED_READ_FILE)
    cur.execute(f"SET {CREATE_WAITS}=false")
    cur.execute(f"CREATE STREAMING TABLE strict AS SELECT * FROM STREAM read_files('{source}', format => 'json', "
                "schema => 'id INT, s STRING', mode => 'FAILFAST')")
    assert _columns(cur, "strict") == ["id", "s"]
    failed = poll_until(lambda: (e := streams.store.get_stream(cur.database, "strict")) and e.last_error and e,
                        "the FAILFAST stream to fail")
    assert "FAILED_READ_FILE" in failed.last_error and "DeltaWriteError" not in failed.last_error
    assert sorted_rows(cur, "SELECT * FROM strict") == []
    cur.execute("DROP TABLE strict")


def test_other_reader_options_are_still_refused(stream_cursor, tmp_path, land):
    source = tmp_path / "refused"
    land(source, BAD_JSON)
    status = error_status(stream_cursor, f"CREATE STREAMING TABLE refused AS SELECT * FROM STREAM read_files("
                                         f"'{source}', format => 'json', cleanSource => 'delete')")
    assert status.sqlState == "42501" and "the reader option 'cleansource'" in status.errorMessage
    assert "rescueddatacolumn" in status.errorMessage  # on the allow-list, on purpose


def test_a_plan_stored_before_the_column_restarts_unchanged(stream_cursor, streams, tmp_path, land):
    """A table created by a release without `_rescued_data` keeps its schema across restarts and CREATE OR
    REFRESH of the same query: its stored plan says so."""
    cur = stream_cursor
    source = tmp_path / "old"
    land(source, [{"id": 1, "s": "a"}])
    sql = (f"CREATE OR REFRESH STREAMING TABLE old_plan AS SELECT * FROM STREAM read_files('{source}', "
           "format => 'json', schema => 'id INT, s STRING')")
    cur.execute(sql.replace("'json'", "'json', mode => 'FAILFAST'"))  # a table without the column ...
    streams.wait_for(cur.database, "old_plan")
    # ... and the plan an earlier release stored for `sql`: the same source, no rescued data column
    plan = StreamingPlan.from_json(streams.store.get_stream(cur.database, "old_plan").plan_json)
    stored = json.loads(dataclasses.replace(plan, sources=(dataclasses.replace(plan.sources[0], options={}),))
                        .to_json())
    del stored["sources"][0]["rescued_data"]
    streams.stop(cur.database, "old_plan", desired=None)
    streams.store.update_stream(cur.database, "old_plan", plan_json=json.dumps(stored))
    streams.resume(streams.store.get_stream(cur.database, "old_plan"))
    land(source, [{"id": "abc", "s": "b"}, {"id": 2, "s": "c"}])
    streams.wait_for(cur.database, "old_plan")
    assert _columns(cur, "old_plan") == ["id", "s"]
    assert sorted_rows(cur, "SELECT * FROM old_plan") == [(1, "a"), (2, "c"), (None, "b")]  # as before: nulled
    cur.execute(sql)  # dbt sends the same definition again: it goes on, with the schema it has
    land(source, [{"id": 3, "s": "d"}])
    streams.wait_for(cur.database, "old_plan")
    assert _columns(cur, "old_plan") == ["id", "s"]
    assert sorted_rows(cur, "SELECT * FROM old_plan") == [(1, "a"), (2, "c"), (3, "d"), (None, "b")]
    assert [kind for _, kind, _ in streams.store.events(cur.database, "old_plan")].count("REFRESH_UNCHANGED") == 1
    assert streams.store.get_stream(cur.database, "old_plan").status == "RUNNING"


def test_batch_read_files_rescues_as_the_stream_does(connect, landing_root: Path):
    folder = landing_root / "batch_rescued"
    folder.mkdir(exist_ok=True)
    (folder / "a.json").write_text("".join(json.dumps(row) + "\n" for row in BAD_JSON))
    cursor = connect().cursor()
    rows = sorted_rows(cursor, f"SELECT * FROM read_files('{folder}', format => 'json', schema => 'id INT, s STRING')")
    assert rows == [(1, "a", None), (None, "b", '{"id": "abc", "s": "b"}')]
    rows = sorted_rows(cursor, f"SELECT s, _rescued_data IS NULL FROM read_files('{folder}', format => 'json')")
    assert rows == [("a", True), ("b", True)]  # inferred: id is a STRING, nothing to rescue, the column is there
    status = error_status(cursor, f"SELECT * FROM read_files('{folder}', format => 'json', mode => 'FAILFAST', "
                                  "schema => 'id INT, s STRING')")
    assert "MALFORMED_RECORD_IN_PARSING" in status.errorMessage


def test_a_bad_cast_reads_as_itself_in_an_insert_and_in_a_stream(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    cur.execute("CREATE TABLE texts (s STRING) USING DELTA")
    cur.execute("INSERT INTO texts VALUES ('1'), ('abc')")
    cur.execute("CREATE TABLE numbers (i INT) USING DELTA")
    status = error_status(cur, "INSERT INTO numbers SELECT CAST(s AS INT) FROM texts")
    assert status.sqlState == "22018" and "CAST_INVALID_INPUT" in status.errorMessage
    assert "DELTA_WRITE_FAILED" not in status.errorMessage
    source = tmp_path / "casts"
    land(source, [{"s": "1"}, {"s": "abc"}])
    cur.execute(f"SET {CREATE_WAITS}=false")    # the stream's error (a waiting CREATE fails with it: test_supervisor)
    cur.execute(f"CREATE STREAMING TABLE casted AS SELECT CAST(s AS INT) AS i FROM STREAM read_files('{source}', "
                "format => 'json', schema => 's STRING')")
    failed = poll_until(lambda: (e := streams.store.get_stream(cur.database, "casted")) and e.last_error and e,
                        "the stream to fail on the cast")
    assert "CAST_INVALID_INPUT" in failed.last_error and "22018" in failed.last_error
    assert "DeltaWriteError" not in failed.last_error and "writing data files" not in failed.last_error
    assert "CAST_INVALID_INPUT" in (_described(cur, "casted")["Last error"] or "")
    cur.execute("DROP TABLE casted")


def test_a_parquet_file_of_other_types_fails_with_spark_s_error(stream_cursor, streams, tmp_path):
    """Parquet has no rescued data column (Spark keeps no record text for it): a file whose column types do not
    match the schema fails the stream with Spark's own error, naming the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cur = stream_cursor
    source = tmp_path / "parquet"
    source.mkdir()
    pq.write_table(pa.table({"id": ["abc"]}), source / "a.parquet")
    cur.execute(f"SET {CREATE_WAITS}=false")    # the stream's own failure, as above
    cur.execute(f"CREATE STREAMING TABLE from_parquet AS SELECT * FROM STREAM read_files('{source}', "
                "format => 'parquet', schema => 'id INT')")
    assert _columns(cur, "from_parquet") == ["id"]
    failed = poll_until(lambda: (e := streams.store.get_stream(cur.database, "from_parquet")) and e.last_error and e,
                        "the parquet stream to fail")
    assert "FAILED_READ_FILE" in failed.last_error and "a.parquet" in failed.last_error
    cur.execute("DROP TABLE from_parquet")
