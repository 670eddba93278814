"""librdkafka's own log lines go through Python's logging, rate-limited (engine/streams/kafka_logging.py): a consumer
of the Kafka source pointed at a port nothing listens on writes a handful of lines in the gateway's format, not the
~20 a second librdkafka writes by itself (newcomer report 1.14)."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import textwrap

from sluicegate.engine.streams.kafka_logging import BURST, RateLimit


def _record(message: str, level: int = logging.ERROR) -> logging.LogRecord:
    return logging.LogRecord("kafka", level, __file__, 1, message, None, None)


def test_the_rate_limit_lets_a_burst_through_then_says_what_it_left_out() -> None:
    now = [0.0]
    limit = RateLimit(burst=2, window=30.0, clock=lambda: now[0])
    kept = [limit.filter(_record(f"FAIL [rdkafka#consumer-1] connect {i} refused")) for i in range(5)]
    assert kept == [True, True, False, False, False]
    assert limit.filter(_record("REQTMOUT [rdkafka#consumer-1] timed out"))     # another facility: its own count
    assert limit.filter(_record("FAIL [rdkafka#consumer-1] at warning", logging.WARNING))   # another level too
    now[0] = 31.0
    after = _record("FAIL [rdkafka#consumer-1] connect 5 refused")
    assert limit.filter(after)
    assert after.getMessage() == "FAIL [rdkafka#consumer-1] connect 5 refused (3 more like it left out in the last " \
                                 "31 s)"
    quiet = _record("FAIL [rdkafka#consumer-1] connect 6 refused")
    assert limit.filter(quiet) and "left out" not in quiet.getMessage()   # nothing was dropped in this window


def test_a_consumer_of_an_unreachable_broker_logs_a_few_lines_in_the_gateway_format() -> None:
    """In a process with no logging set up (as Spark's Python workers are), for 4 s of reconnects."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    script = textwrap.dedent(f"""
        import time
        from confluent_kafka import Consumer
        from sluicegate.dialect.streaming.kafka import parse_options
        from sluicegate.engine.streams.kafka_source import client_config

        options = parse_options({{"bootstrapServers": "127.0.0.1:{closed}", "subscribe": "t"}})
        consumer = Consumer(client_config(options))
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            try:
                consumer.list_topics(timeout=0.5)
            except Exception:
                pass
        consumer.close()
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "SLUICEGATE_LOG_LEVEL": "INFO"})
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    refused = [line for line in lines if "Connection refused" in line]
    assert refused, done.stderr
    assert all(" sluicegate.engine.streams.kafka_client: " in line for line in refused), refused
    assert not any(line.startswith("%") for line in lines), lines    # librdkafka's own format never shows
    assert len(refused) <= BURST, refused                           # ~80 without the limit
