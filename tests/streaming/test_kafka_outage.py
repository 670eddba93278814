"""A Kafka broker that goes away while a streaming table reads it (librdkafka's mock cluster, closed mid-stream): the
stream says so within 5 seconds (RETRYING or FAILED with KAFKA_READ_FAILED in SHOW STREAMING TABLES, DESCRIBE and the
event log) instead of staying RUNNING for the 30 s of a metadata timeout. The mock cluster cannot come back on the
same port, so recovery is the stream's ordinary retry, covered by the supervisor's tests."""

from __future__ import annotations

import json
import time
from typing import Any

from kafka_broker import MockKafka
from pyhive_helpers import drop_database, poll_until, sorted_rows

OUTAGE_NOTICED_WITHIN = 5.0   # seconds, from the broker's end to the stream's state (issue 26)


def test_a_broker_outage_is_a_stream_state_within_five_seconds(stream_cursor: Any, streams: Any,
                                                               gateway: Any) -> None:
    cur = stream_cursor
    broker = MockKafka()       # this test's own cluster: it is stopped mid-test
    running = True
    try:
        broker.produce("outage", [(None, json.dumps({"id": i}).encode()) for i in range(3)])
        cur.execute("CREATE STREAMING TABLE fed AS SELECT get_json_object(CAST(value AS STRING), '$.id') AS id "
                    f"FROM STREAM read_kafka(bootstrapServers => '{broker.bootstrap}', subscribe => 'outage', "
                    "startingOffsets => 'earliest')")
        streams.wait_for(cur.database, "fed")
        assert sorted_rows(cur, "SELECT id FROM fed") == [("0",), ("1",), ("2",)]
        assert streams.store.get_stream(cur.database, "fed").status == "RUNNING"

        broker.close()
        running, stopped = False, time.monotonic()

        def noticed() -> str | None:
            entry = streams.store.get_stream(cur.database, "fed")
            return entry.last_error if entry.status in ("RETRYING", "FAILED", "STARTING") and entry.last_error \
                else None

        error = poll_until(noticed, "the stream to tell the outage", timeout=60)
        took = time.monotonic() - stopped
        assert "KAFKA_READ_FAILED" in error and "all brokers are down" in error, error
        assert took < OUTAGE_NOTICED_WITHIN, f"the outage showed after {took:.1f} s"

        cur.execute("SHOW STREAMING TABLES LIKE 'fed'")
        shown = dict(zip([c[0] for c in cur.description], cur.fetchone(), strict=True))
        assert shown["status"] in ("RETRYING", "FAILED", "STARTING"), shown
        assert "KAFKA_READ_FAILED" in shown["lastError"], shown
        events = streams.store.event_log(cur.database, "fed")
        assert any("KAFKA_READ_FAILED" in (event.message or "") for event in events), events
    finally:
        drop_database(gateway, cur.database)
        if running:
            broker.close()
