"""One executor read of the Kafka source against librdkafka's mock cluster, without a JVM: a range gives exactly its
records, and the read ends as soon as they are in (it does not wait out the consumer's poll timeout, which cost the
benchmark one idle second per partition and micro-batch)."""

from __future__ import annotations

import time
from typing import Any

from sluicegate.dialect.streaming.kafka import parse_options
from sluicegate.engine.streams.kafka_source import OffsetRange, read_range


def _arrow_schema() -> Any:
    """read_kafka's columns (dialect.streaming.kafka.SCHEMA) as the executor gets them, built without a JVM."""
    import pyarrow as pa

    header = pa.struct([("key", pa.string()), ("value", pa.binary())])
    return pa.schema([("key", pa.binary()), ("value", pa.binary()), ("topic", pa.string()), ("partition", pa.int32()),
                      ("offset", pa.int64()), ("timestamp", pa.timestamp("us", tz="UTC")),
                      ("timestampType", pa.int32()), ("headers", pa.list_(header))])


def test_a_range_reads_exactly_its_records_and_returns_once_they_are_in(kafka):
    kafka.produce("ranged", [(None, f"r{i}".encode()) for i in range(300)])
    options = parse_options({"bootstrapServers": kafka.bootstrap, "subscribe": "ranged"})
    schema = _arrow_schema()
    list(read_range(options, OffsetRange("ranged", 0, 0, 10), schema))   # the first consumer pays for metadata
    for start, end in ((0, 300), (100, 250), (299, 300)):
        begun = time.monotonic()
        batches = list(read_range(options, OffsetRange("ranged", 0, start, end), schema))
        elapsed = time.monotonic() - begun
        offsets = [o for batch in batches for o in batch.column("offset").to_pylist()]
        values = [v for batch in batches for v in batch.column("value").to_pylist()]
        assert offsets == list(range(start, end))
        assert values == [f"r{i}".encode() for i in range(start, end)]
        assert elapsed < 0.9, f"[{start}, {end}) took {elapsed:.2f} s: the read waited out the poll timeout"
