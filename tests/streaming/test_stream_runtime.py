"""The stream runtime below the gateway: a batch committed to Delta whose checkpoint commit was lost is replayed
without being written twice; a stopped stream resumes from its checkpoint; a failing stream is marked FAILED with its
error and retried while the others go on."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from delta_log import txn_actions
from deltalake import DeltaTable
from pyhive_helpers import poll_until

from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.engine.streams.runner import build, merge_keys
from sluicegate.engine.streams.sink import DeltaSink
from sluicegate.storage.delta.write import commit_files


class CrashAfterCommit(DeltaSink):
    """Commits batch `crash_at` to Delta, then fails before Spark can mark it done: what a crash at that moment
    leaves behind."""

    crash_at = 1

    def __call__(self, batch: Any, batch_id: int) -> None:
        super().__call__(batch, batch_id)
        if batch_id == self.crash_at:
            raise RuntimeError("simulated crash between the Delta commit and the checkpoint commit")


def test_replayed_batch_is_not_written_twice_and_state_stays_right(spark, tmp_path, land):
    from pyspark.sql.pandas.types import to_arrow_schema

    source = tmp_path / "in"
    source.mkdir()
    plan = analyze(f"CREATE STREAMING TABLE t AS SELECT k, count(*) AS n FROM STREAM "
                   f"read_files('{source}', format => 'json', schema => 'k STRING') GROUP BY k")
    location, checkpoint = str(tmp_path / "t"), str(tmp_path / "checkpoint")
    replays: list[int] = []

    def run(sink_type: type[DeltaSink]) -> Any:
        built = build(spark.newSession(), plan, {})
        if not DeltaTable.is_deltatable(location):
            commit_files(location, [], to_arrow_schema(built.result.schema), "append", create=True)
        sink = sink_type(location, "stream-1", plan.output_mode, merge_keys(plan, built.result.columns),
                         lambda written: replays.append(written.batch_id) if written.replayed else None)
        return (built.result.writeStream.foreachBatch(sink).outputMode(plan.output_mode)
                .option("checkpointLocation", checkpoint).start())

    query = run(CrashAfterCommit)
    land(source, [{"k": "a"}, {"k": "b"}])
    query.processAllAvailable()                          # batch 0
    land(source, [{"k": "a"}])
    with pytest.raises(Exception, match="simulated crash"):
        query.processAllAvailable()                      # batch 1: in Delta, not in the checkpoint's commit log
    assert [batch for _, batch in txn_actions(location)] == [0, 1]

    query = run(DeltaSink)                               # restart on the same checkpoint: batch 1 is replayed
    query.processAllAvailable()
    land(source, [{"k": "b"}, {"k": "c"}])
    query.processAllAvailable()                          # batch 2 builds on the state batch 1's replay committed
    query.stop()
    assert replays == [1]
    assert [batch for _, batch in txn_actions(location)] == [0, 1, 2]
    rows = DeltaTable(location).to_pyarrow_table().to_pylist()
    assert sorted((r["k"], r["n"]) for r in rows) == [("a", 2), ("b", 2), ("c", 1)]


def test_stopped_stream_resumes_from_its_checkpoint(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "in"
    land(source, [{"id": 1}, {"id": 2}])
    cur.execute(f"CREATE STREAMING TABLE resumed AS SELECT id FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'id INT')")
    streams.wait_for(cur.database, "resumed")
    streams.stop(cur.database, "resumed", desired=None)  # as at shutdown: it should run again at the next start
    land(source, [{"id": 3}])
    assert streams.store.get_stream(cur.database, "resumed").status == "STOPPED"
    streams.resume(streams.store.get_stream(cur.database, "resumed"))
    streams.wait_for(cur.database, "resumed")
    cur.execute("SELECT id FROM resumed")
    assert sorted(row[0] for row in cur.fetchall()) == [1, 2, 3]



def test_failing_stream_is_marked_failed_and_the_others_go_on(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    cur.execute("CREATE TABLE orders (id INT, amount INT) USING DELTA")
    cur.execute("INSERT INTO orders VALUES (1, 10), (2, 20)")
    cur.execute("CREATE STREAMING TABLE big_orders AS SELECT id, amount FROM STREAM(orders) WHERE amount > 15")
    source = tmp_path / "other"
    land(source, [{"x": 1}])
    cur.execute(f"CREATE STREAMING TABLE bystander AS SELECT x FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'x INT')")
    streams.wait_for(cur.database, "big_orders")
    cur.execute("SELECT * FROM big_orders")
    assert cur.fetchall() == [(2, 20)]
    cur.execute("DELETE FROM orders WHERE id = 1")       # a rewrite: the stream cannot read it as new rows
    failed = poll_until(lambda: (e := streams.store.get_stream(cur.database, "big_orders")) and e.status == "FAILED"
                        and e, "the stream to fail")
    assert "rewrote rows in place" in failed.last_error and failed.failures >= 1
    cur.execute("DESCRIBE STREAMING TABLE big_orders")
    info = dict(cur.fetchall())
    assert info["Status"] == "FAILED" and "DELETE" in info["Last error"]
    land(source, [{"x": 2}])
    streams.wait_for(cur.database, "bystander")
    cur.execute("SELECT x FROM bystander")
    assert sorted(row[0] for row in cur.fetchall()) == [1, 2]
    cur.execute("DROP TABLE big_orders")                   # drops a failed stream too, retries included
    assert streams.store.get_stream(cur.database, "big_orders") is None


def _listener_count(spark: Any) -> int:
    return spark.sparkContext._jsc.sc().listenerBus().listeners().size()


def test_restarts_reuse_the_stream_session_and_add_no_listeners(stream_cursor, streams, spark, tmp_path, land):
    """Spark never forgets a session's streaming listener bus: a session per restart would leak one each time."""
    cur = stream_cursor
    source = tmp_path / "in"
    land(source, [{"id": 1}])
    cur.execute(f"CREATE STREAMING TABLE restarted AS SELECT id FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'id INT')")
    streams.wait_for(cur.database, "restarted")
    listeners = _listener_count(spark)
    for batch in range(2, 5):
        streams.stop(cur.database, "restarted", desired=None)
        land(source, [{"id": batch}])
        streams.resume(streams.store.get_stream(cur.database, "restarted"))
        streams.wait_for(cur.database, "restarted")
    assert _listener_count(spark) == listeners
    cur.execute("SELECT id FROM restarted")
    assert sorted(row[0] for row in cur.fetchall()) == [1, 2, 3, 4]


def test_concurrent_creates_of_one_name_leave_one_working_table(connect, stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "in"
    land(source, [{"id": 1}])
    sql = (f"CREATE STREAMING TABLE contested AS SELECT id FROM STREAM "
           f"read_files('{source}', format => 'json', schema => 'id INT')")
    outcomes: list[str] = []

    def create() -> None:
        other = connect().cursor()
        other.execute(f"USE {cur.database}")
        try:
            other.execute(sql)
            outcomes.append("created")
        except Exception as exc:  # noqa: BLE001 - the loser's error is the outcome under test
            outcomes.append("TABLE_OR_VIEW_ALREADY_EXISTS" if "ALREADY_EXISTS" in str(exc) else str(exc))

    threads = [threading.Thread(target=create) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert sorted(outcomes) == ["TABLE_OR_VIEW_ALREADY_EXISTS", "created"]
    land(source, [{"id": 2}])
    streams.wait_for(cur.database, "contested")
    cur.execute("SELECT id FROM contested")
    assert sorted(row[0] for row in cur.fetchall()) == [1, 2]
    assert streams.store.get_stream(cur.database, "contested").status == "RUNNING"


def test_refresh_keeps_the_inferred_schema_when_the_files_are_gone(stream_cursor, streams, tmp_path, land):
    """A folder emptied by its producer's clean-up has nothing to infer from; the schema inferred at CREATE holds."""
    cur = stream_cursor
    source = tmp_path / "in"
    land(source, [{"id": 1, "name": "a"}])
    sql = (f"CREATE OR REFRESH STREAMING TABLE inferred AS SELECT id, name FROM STREAM "
           f"read_files('{source}', format => 'json')")
    cur.execute(sql)
    streams.wait_for(cur.database, "inferred")
    for landed in source.glob("*.json"):
        landed.unlink()
    cur.execute(sql)
    cur.execute("DESCRIBE STREAMING TABLE inferred")
    events = [value for name, value in cur.fetchall() if name == "Event"]
    assert any("REFRESH_UNCHANGED" in event for event in events), events
    land(source, [{"id": 2, "name": "b"}])
    streams.wait_for(cur.database, "inferred")
    cur.execute("SELECT id, name FROM inferred")
    assert sorted(cur.fetchall()) == [(1, "a"), (2, "b")]
