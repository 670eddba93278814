"""Streaming tables over Kafka through the gateway (PyHive): `STREAM read_kafka(...)` against librdkafka's mock
cluster on 127.0.0.1, on real Spark and real Delta. A transactional producer leaves commit markers (offsets without a
record) that the reader must pass over; each table must end holding exactly the records produced, once each, across
capped micro-batches and a stop and start on the same checkpoint."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from delta_log import txn_actions
from kafka_broker import MockKafka
from pyhive_helpers import drop_database, error_status, poll_until, sorted_rows

from sluicegate.executor.streaming_tables import CREATE_WAITS

SCHEMA = "id INT, customer STRING, amount INT"
CUSTOMERS = ("ann", "bob", "cid")


@pytest.fixture(autouse=True)
def _streams_stopped_before_the_broker(stream_cursor: Any, gateway: Any) -> Any:
    yield
    drop_database(gateway, stream_cursor.database)


def _orders(first: int, count: int) -> list[dict[str, Any]]:
    return [{"id": i, "customer": CUSTOMERS[i % len(CUSTOMERS)], "amount": i % 7 + 1}
            for i in range(first, first + count)]


def _produce(kafka: MockKafka, topic: str, orders: list[dict[str, Any]], per_transaction: int = 4) -> None:
    """Orders in transactions of a few records over partitions 0 and 1 (by id)."""
    for start in range(0, len(orders), per_transaction):
        kafka.produce_transaction(topic, [(o["customer"].encode(), json.dumps(o).encode(), o["id"] % 2)
                                          for o in orders[start:start + per_transaction]], transactional_id=topic)


def _totals(orders: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    counts, sums = Counter(o["customer"] for o in orders), Counter()
    for o in orders:
        sums[o["customer"]] += o["amount"]
    return sorted(((c, counts[c], sums[c]) for c in counts), key=repr)


def _source(kafka: MockKafka, topic: str, extra: str = "") -> str:
    return (f"STREAM read_kafka(bootstrapServers => '{kafka.bootstrap}', subscribe => '{topic}', "
            f"startingOffsets => 'earliest'{extra})")


def _described(cursor: Any, table: str) -> dict[str, str]:
    cursor.execute(f"DESCRIBE STREAMING TABLE {table}")
    return dict(cursor.fetchall())


def _batches(streams: Any, database: str, name: str) -> list[int]:
    """The micro-batch ids the table's Delta log records, in commit order."""
    entry, table = streams.store.get_stream(database, name), streams.store.get_table(database, name)
    return [batch for app, batch in txn_actions(table.location) if app == entry.stream_id]


def test_append_and_group_by_read_exactly_the_committed_records(stream_cursor, streams, kafka):
    cur = stream_cursor
    orders = _orders(0, 30)
    cur.execute("CREATE STREAMING TABLE raw_orders AS SELECT CAST(key AS STRING) AS customer, "
                f"from_json(CAST(value AS STRING), '{SCHEMA}').id AS id, topic, partition, offset, timestamp, "
                "headers[0].key AS header FROM " + _source(kafka, "orders_a", ", maxOffsetsPerTrigger => 9"))
    streams.wait_for(cur.database, "raw_orders")     # a new stream's first batch is not capped: let it pass empty
    _produce(kafka, "orders_a", orders)
    cur.execute("CREATE STREAMING TABLE totals AS SELECT o.customer, count(*) AS n, sum(o.amount) AS total FROM "
                f"(SELECT from_json(CAST(value AS STRING), '{SCHEMA}') AS o FROM {_source(kafka, 'orders_a')}) "
                "GROUP BY o.customer")
    for name in ("raw_orders", "totals"):
        streams.wait_for(cur.database, name)
    rows = sorted_rows(cur, "SELECT id, customer, topic, partition, offset, header FROM raw_orders")
    assert [(r[0], r[1]) for r in sorted(rows)] == [(o["id"], o["customer"]) for o in orders]
    assert {r[2] for r in rows} == {"orders_a"} and {r[5] for r in rows} == {"source"}
    for partition in (0, 1):   # each transaction of 2 records here ends with a marker: offsets 0, 1, 3, 4, 6, ...
        offsets = sorted(r[4] for r in rows if r[3] == partition)
        assert offsets == [i + i // 2 for i in range(15)], offsets
    assert sorted_rows(cur, "SELECT * FROM totals") == _totals(orders)
    assert len(_batches(streams, cur.database, "raw_orders")) >= 4, "maxOffsetsPerTrigger => 9 caps each batch"
    cur.execute("SELECT count(*) FROM raw_orders WHERE timestamp IS NULL")
    assert cur.fetchall() == [(0,)]

    more = _orders(30, 11)
    _produce(kafka, "orders_a", more, per_transaction=3)
    for name in ("raw_orders", "totals"):
        streams.wait_for(cur.database, name)
    cur.execute("SELECT id FROM raw_orders")
    assert sorted(r[0] for r in cur.fetchall()) == list(range(41))
    assert sorted_rows(cur, "SELECT * FROM totals") == _totals(orders + more)
    batches = _batches(streams, cur.database, "raw_orders")
    assert batches == sorted(set(batches)), f"a batch written twice: {batches}"
    # lag tools see the written offsets in the consumer group; Spark hands a batch's end to the source when it plans
    # the next one, so the group may be one batch behind
    read = _parsed(_described(cur, "raw_orders")["Kafka offsets"])
    group = _parsed(_group_offsets(kafka, f"sluicegate-{cur.database}.raw_orders", "orders_a"))
    assert all(0 < group[p] <= read[p] for p in ("orders_a[0]", "orders_a[1]")), (group, read)


def _parsed(offsets: str) -> dict[str, int]:
    return {name: int(value) for name, value in (item.split("=") for item in offsets.split(", "))}


def _group_offsets(kafka: MockKafka, group: str, topic: str) -> str:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": group})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(4)], timeout=10)
    finally:
        consumer.close()
    return ", ".join(f"{t.topic}[{t.partition}]={max(t.offset, 0)}" for t in found)


def test_stop_and_start_resume_from_the_checkpoint_with_no_loss_or_duplicate(stream_cursor, streams, kafka):
    cur = stream_cursor
    produced = _orders(0, 10)
    _produce(kafka, "orders_b", produced)
    cur.execute(f"CREATE STREAMING TABLE b_raw AS SELECT from_json(CAST(value AS STRING), '{SCHEMA}').id AS id "
                f"FROM {_source(kafka, 'orders_b', ', maxOffsetsPerTrigger => 4')}")
    cur.execute("CREATE STREAMING TABLE b_totals AS SELECT o.customer, count(*) AS n, sum(o.amount) AS total FROM "
                f"(SELECT from_json(CAST(value AS STRING), '{SCHEMA}') AS o FROM {_source(kafka, 'orders_b')}) "
                "GROUP BY o.customer")
    for name in ("b_raw", "b_totals"):
        streams.wait_for(cur.database, name)
    assert _described(cur, "b_raw")["Kafka backlog"].startswith("0 (orders_b[0]=0, orders_b[1]=0")
    for round_ in range(3):
        for name in ("b_raw", "b_totals"):
            streams.stop(cur.database, name, desired=None)
        more = _orders(len(produced), 7 + round_)
        _produce(kafka, "orders_b", more, per_transaction=2)
        produced += more
        if round_ == 0:   # stopped: the records and commit markers produced since are its backlog
            shown = _described(cur, "b_raw")
            assert int(shown["Kafka backlog"].split()[0]) >= len(more), shown
            assert "orders_b[0]=" in shown["Kafka offsets"] and "orders_b[1]=" in shown["Kafka offsets"]
        for name in ("b_raw", "b_totals"):
            streams.resume(streams.store.get_stream(cur.database, name))
            streams.wait_for(cur.database, name)
        cur.execute("SELECT id FROM b_raw")
        assert sorted(r[0] for r in cur.fetchall()) == [o["id"] for o in produced]
        assert sorted_rows(cur, "SELECT * FROM b_totals") == _totals(produced)
    batches = _batches(streams, cur.database, "b_raw")
    assert batches == sorted(set(batches)), f"a batch written twice: {batches}"


def test_new_partitions_and_pattern_subscriptions(stream_cursor, streams, kafka):
    cur = stream_cursor
    kafka.produce("events_1", [(None, b"a")])
    cur.execute("CREATE STREAMING TABLE by_pattern AS SELECT topic, CAST(value AS STRING) AS v FROM STREAM "
                f"read_kafka(bootstrapServers => '{kafka.bootstrap}', subscribePattern => 'events_[0-9]+', "
                "startingOffsets => 'earliest')")
    streams.wait_for(cur.database, "by_pattern")
    kafka.produce("events_2", [(None, b"b"), (None, b"c")], partition=2)   # a topic that did not exist before
    kafka.produce("events_1", [(None, b"d")], partition=3)
    kafka.produce("other", [(None, b"x")])
    streams.wait_for(cur.database, "by_pattern")
    assert sorted_rows(cur, "SELECT * FROM by_pattern") == [("events_1", "a"), ("events_1", "d"), ("events_2", "b"),
                                                             ("events_2", "c")]


def test_wrong_options_are_refused_through_the_client(stream_cursor, kafka):
    status = error_status(stream_cursor, "CREATE STREAMING TABLE bad AS SELECT * FROM STREAM read_kafka(\n"
                                         "  subscribe => 'x', startingOffsets => 'earliest')")
    assert status.sqlState == "42616" and "INVALID_KAFKA_OPTION" in status.errorMessage
    assert "bootstrapServers" in status.errorMessage
    status = error_status(stream_cursor, "CREATE STREAMING TABLE bad AS SELECT * FROM STREAM read_kafka("
                                         f"bootstrapServers => '{kafka.bootstrap}', subscribe => 'x', "
                                         "maxOffsetsPerTrigger => 'many')")
    assert "maxOffsetsPerTrigger must be an integer" in status.errorMessage
    stream_cursor.execute("SHOW TABLES")
    assert "bad" not in {row[1] for row in stream_cursor.fetchall()}


def test_event_time_windows_over_the_record_timestamp(stream_cursor, streams, kafka):
    cur = stream_cursor
    orders = _orders(0, 12)
    _produce(kafka, "orders_w", orders)
    cur.execute("CREATE STREAMING TABLE per_hour AS SELECT window(timestamp, '1 hour').start AS hour, count(*) AS n, "
                f"sum(from_json(CAST(value AS STRING), '{SCHEMA}').amount) AS total FROM "
                f"{_source(kafka, 'orders_w')} WATERMARK timestamp DELAY OF INTERVAL 10 MINUTES "
                "GROUP BY window(timestamp, '1 hour')")
    streams.wait_for(cur.database, "per_hour")
    cur.execute("SELECT hour, n, total FROM per_hour")
    rows = cur.fetchall()
    assert sum(r[1] for r in rows) == len(orders) and sum(r[2] for r in rows) == sum(o["amount"] for o in orders)
    assert 1 <= len(rows) <= 2, rows     # produced within a moment: one hour, or two across an hour's turn
    assert _described(cur, "per_hour")["Watermark"] is not None


@pytest.mark.beeline
def test_the_example_through_the_shell_and_beeline(stream_cursor, streams, gateway, beeline, kafka, tmp_path):
    """`sluicegate shell -f sql_examples/kafka_orders.sql --var kafka=...` creates the tables, beeline reads them."""
    import os
    import subprocess
    import sys

    db = stream_cursor.database
    example = Path(__file__).resolve().parents[2] / "sql_examples" / "kafka_orders.sql"
    shell = Path(sys.executable).with_name("sluicegate")
    done = subprocess.run([str(shell), "shell", "--port", str(gateway.port), "-u", "tester", "-d", db,
                           "--var", f"kafka={kafka.bootstrap}", "-f", str(example)], capture_output=True, text=True,
                          timeout=180, stdin=subprocess.DEVNULL, env=dict(os.environ, HOME=str(tmp_path)))
    assert done.returncode == 0, done.stdout + done.stderr
    kafka.produce_transaction("orders", [(None, json.dumps({"id": i, "customer": c, "amount": i}).encode(), 0)
                                         for i, c in ((1, "ann"), (2, "bob"), (3, "ann"))], transactional_id=db)
    for name in ("kafka_orders", "revenue_per_customer"):
        streams.wait_for(db, name)
    done = beeline(gateway.port, "-e", f"SELECT customer, orders, revenue FROM {db}.revenue_per_customer "
                                       "ORDER BY customer; DESCRIBE STREAMING TABLE " + f"{db}.kafka_orders")
    assert done.returncode == 0, done.stderr
    assert "ann,2,4\nbob,1,2" in done.stdout
    described = {line.split(",", 1)[0]: line.split(",", 1)[1].strip('\x00"') for line in done.stdout.splitlines()
                 if "," in line}   # csv2 wraps a value holding a comma in NUL characters
    assert "orders[0]=4" in described["Kafka offsets"] and described["Kafka backlog"].startswith("0 ("), described


def test_an_unreachable_broker_fails_the_stream_with_a_clear_error_and_nothing_else(stream_cursor, streams, kafka):
    import socket

    cur = stream_cursor
    with socket.socket() as probe:       # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    cur.execute(f"SET {CREATE_WAITS}=false")   # the stream's own record of the failure is what this looks at
    cur.execute("CREATE STREAMING TABLE nowhere AS SELECT CAST(value AS STRING) AS v FROM STREAM read_kafka("
                f"bootstrapServers => '127.0.0.1:{closed}', subscribe => 'x', `kafka.sasl.password` => 'pw-9f3')")

    def failed() -> str | None:
        entry = streams.store.get_stream(cur.database, "nowhere")
        return entry.last_error if entry is not None and entry.last_error else None

    error = poll_until(failed, "the stream to record its failure", timeout=240)
    assert "KAFKA_READ_FAILED" in error, error
    assert "pw-9f3" not in error
    assert _described(cur, "nowhere")["Kafka offsets"] == "(no micro-batch committed yet)"
    kafka.produce("alive", [(None, b"yes")])   # another stream on a working broker is not disturbed
    cur.execute("CREATE STREAMING TABLE alive AS SELECT CAST(value AS STRING) AS v FROM " + _source(kafka, "alive"))
    streams.wait_for(cur.database, "alive")
    assert sorted_rows(cur, "SELECT v FROM alive") == [("yes",)]


def test_create_or_refresh_with_new_settings_goes_on_from_the_checkpoint(stream_cursor, streams, kafka):
    """A rotated password or a new cap must not empty the table and read the topic again (retention may have
    deleted its start): only a new subscription does."""
    cur = stream_cursor
    _produce(kafka, "orders_r", _orders(0, 6))
    create = ("CREATE OR REFRESH STREAMING TABLE r AS SELECT from_json(CAST(value AS STRING), '" + SCHEMA
              + "').id AS id FROM " + _source(kafka, "orders_r", "{}"))
    cur.execute(create.format(", `kafka.sasl.password` => 'old'"))
    streams.wait_for(cur.database, "r")
    first = streams.store.get_stream(cur.database, "r").stream_id
    cur.execute(create.format(", `kafka.sasl.password` => 'new', maxOffsetsPerTrigger => 3"))
    _produce(kafka, "orders_r", _orders(6, 5))
    streams.wait_for(cur.database, "r")
    assert streams.store.get_stream(cur.database, "r").stream_id == first      # the same stream and checkpoint
    cur.execute("SELECT id FROM r")
    assert sorted(row[0] for row in cur.fetchall()) == list(range(11))
    assert [kind for _, kind, _ in streams.store.events(cur.database, "r", 20) if kind.startswith("REFRESH_")] \
        == ["REFRESH_UNCHANGED"]
