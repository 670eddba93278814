"""A Kafka broker for tests: librdkafka's mock cluster, run inside the test process by a client configured with
`test.mock.num.brokers`. It listens on 127.0.0.1 (its port is read from the client's log line), so a gateway in
this process or another reaches it as any broker; topics are created by the first record produced to them. It lives
as long as the client that made it: a module's fixture closes it at its end.

The mock writes transaction markers (so a transactional producer leaves offset gaps) but does not hide aborted
records from a read_committed consumer; only committed transactions are produced here."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Iterator
from typing import Any

_ADDRESS = re.compile(r"replaced with (127\.0\.0\.1:\d+)")


class MockKafka:
    def __init__(self) -> None:
        from confluent_kafka import Producer

        found = threading.Event()
        address: list[str] = []

        class Catch(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                match = _ADDRESS.search(record.getMessage())
                if match and not address:
                    address.append(match.group(1))
                    found.set()

        logger = logging.getLogger(f"mock-kafka-{id(self)}")
        logger.addHandler(Catch())
        logger.setLevel(logging.INFO)
        logger.propagate = False
        self._cluster: Any = Producer({"test.mock.num.brokers": 1, "bootstrap.servers": "", "logger": logger})
        self._cluster.poll(0)
        if not found.wait(30):
            raise AssertionError("the mock Kafka cluster did not log its address")
        self.bootstrap = address[0]
        self._transactional: dict[str, Any] = {}

    def produce(self, topic: str, records: Iterable[tuple[bytes | None, bytes]], partition: int = 0) -> None:
        """Records (key, value) to one partition, plainly (acknowledged before this returns)."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True})
        for key, value in records:
            producer.produce(topic, value=value, key=key, partition=partition)
        assert producer.flush(30) == 0, "records left unacknowledged"

    def produce_transaction(self, topic: str, records: Iterable[tuple[bytes | None, bytes, int]],
                            transactional_id: str = "tests") -> None:
        """Records (key, value, partition) in one committed transaction: each partition it wrote to gets a
        commit marker, an offset without a record."""
        from confluent_kafka import Producer

        producer = self._transactional.get(transactional_id)
        if producer is None:
            producer = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": transactional_id})
            producer.init_transactions(30)
            self._transactional[transactional_id] = producer
        producer.begin_transaction()
        for key, value, partition in records:
            producer.produce(topic, value=value, key=key, partition=partition,
                             headers=[("source", b"tests")])
        producer.commit_transaction(30)

    def close(self) -> None:
        for producer in self._transactional.values():
            producer.flush(10)
        self._transactional.clear()
        self._cluster.flush(10)
        self._cluster = None      # the mock cluster stops with the client that made it


def running_mock_kafka() -> Iterator[MockKafka]:
    """For a module's fixture: `yield from running_mock_kafka()`."""
    broker = MockKafka()
    try:
        yield broker
    finally:
        broker.close()
