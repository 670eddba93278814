"""The Kafka source: `STREAM read_kafka(...)` as a Spark Python data source (`sg_kafka`) over confluent-kafka.

Offsets are JSON `{topic: {partition: next offset}}`, kept in the stream's checkpoint by Spark. The driver asks the
brokers for each partition's watermarks (`latestOffset`, capped by maxOffsetsPerTrigger); each micro-batch is a fixed
range [start, end) per partition, read on an executor with assign + seek and `isolation.level=read_committed` until
the consumer's position reaches `end`. Offsets without a record (transaction markers, compacted records) are skipped
by that rule, so a replayed batch reads exactly the same records, and the exactly-once Delta sink does the rest. No
consumer group is joined; `commit` records each written batch's end in the group `<groupIdPrefix>-<table>` for lag
tools (nothing here reads it back).

Spark 4.1's Python API gives `latestOffset` no start (no admission control): the first batch of a run starts where
the query's checkpoint says (engine/streams/checkpoint_offsets.py; offsets carry the source's tag under `@source`,
which no topic name can be), later ones at the end returned last, so every batch is capped. A one-batch scheduled
pass is given no checkpoint: it reads everything there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from sluicegate.dialect.streaming.kafka import ASSIGN, EARLIEST, LATEST, SCHEMA, KafkaOptions, parse_options
from sluicegate.engine.streams import checkpoint_offsets
from sluicegate.engine.streams.checkpoint_offsets import TAG_FIELD, RunStart, tagged
from sluicegate.engine.streams.errors import KafkaDataLossError, KafkaReadError
from sluicegate.engine.streams.kafka_logging import kafka_logger

if TYPE_CHECKING:
    import pyarrow as pa
    from confluent_kafka import Consumer
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

FORMAT_NAME = "sg_kafka"
READER_OPTION = "readerTable"          # the streaming table that reads (the consumer group's name, errors)
INTERNAL_OPTIONS = (READER_OPTION.lower(), "path", *checkpoint_offsets.INTERNAL_OPTIONS)
METADATA_TIMEOUT = 30.0                # seconds for a metadata or watermark answer from the brokers
ASK_SLICE = 1.0                        # seconds of one ask: between asks, a broker outage is noticed (`_outage`)
STALL_TIMEOUT = 120.0                  # seconds a partition's read may make no progress before the batch fails
ROWS_PER_CHUNK = 10_000

Offsets = dict[str, dict[int, int]]
log = logging.getLogger(__name__)


def to_json(offsets: Offsets) -> dict[str, dict[str, int]]:
    """Canonical (sorted) JSON offsets: Spark compares a batch's end with its start as text."""
    return {topic: {str(p): offsets[topic][p] for p in sorted(offsets[topic])} for topic in sorted(offsets)}


def from_json(data: dict[str, Any]) -> Offsets:
    return {topic: {int(p): int(o) for p, o in parts.items()} for topic, parts in data.items() if topic != TAG_FIELD}


def capped(start: Offsets, latest: Offsets, limit: int | None) -> Offsets:
    """The end of the next batch: `latest`, or with a limit about `limit` offsets past `start` in all, shared among
    the partitions in proportion to their backlog (each behind partition moves at least one offset, none back)."""
    if limit is None:
        return latest
    backlog = {(t, p): max(0, o - start.get(t, {}).get(p, 0)) for t, parts in latest.items() for p, o in parts.items()}
    total = sum(backlog.values())
    if total <= limit:
        return latest
    end: Offsets = {}
    for (topic, partition), behind in sorted(backlog.items()):
        begin = start.get(topic, {}).get(partition, 0)
        share = max(1, behind * limit // total) if behind else 0
        end.setdefault(topic, {})[partition] = max(begin, min(latest[topic][partition], begin + share))
    return end


@dataclass(frozen=True)
class OffsetRange(InputPartition):
    topic: str
    partition: int
    start: int
    end: int                           # exclusive


def client_config(options: KafkaOptions, **extra: Any) -> dict[str, Any]:
    """A consumer's settings; its log lines go through the gateway's logging, rate-limited (kafka_logging)."""
    config: dict[str, Any] = dict(options.client)
    config.update({"bootstrap.servers": options.bootstrap_servers, "enable.auto.commit": False,
                   "isolation.level": "read_committed", "enable.partition.eof": True,
                   "group.id": options.group_id_prefix, "logger": kafka_logger(), **extra})
    return config


def _offsets_error(what: str, error: Any) -> KafkaReadError:
    return KafkaReadError(f"{what}: {error}", hint="check that the brokers in bootstrapServers are reachable and the "
                                                   "topic exists; the stream retries by itself")


def _record_batch(rows: list[Any], schema: pa.Schema) -> pa.RecordBatch:
    import pyarrow as pa

    keys, values, topics, partitions, offsets, stamps, kinds, headers = ([] for _ in range(8))
    for message in rows:
        kind, stamp = message.timestamp()
        keys.append(message.key())
        values.append(message.value())
        topics.append(message.topic())
        partitions.append(message.partition())
        offsets.append(message.offset())
        stamps.append(stamp if kind else None)
        kinds.append(kind - 1 if kind else None)   # librdkafka: 1 create, 2 log append; Spark: 0 and 1
        found = message.headers()
        headers.append([{"key": k, "value": v} for k, v in found] if found else None)
    arrays = [pa.array(keys, pa.binary()), pa.array(values, pa.binary()), pa.array(topics, pa.string()),
              pa.array(partitions, pa.int32()), pa.array(offsets, pa.int64()),
              pa.array(stamps, pa.int64()).cast(pa.timestamp("ms")).cast(schema.field("timestamp").type),
              pa.array(kinds, pa.int32()), pa.array(headers, schema.field("headers").type)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def read_range(options: KafkaOptions, part: OffsetRange, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The records of [start, end) of one partition, in chunks. The read ends when the consumer's position reaches
    `end`: offsets without a record (transaction markers, compacted records) move the position on by themselves."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    reset = "error" if options.fail_on_data_loss else "earliest"
    consumer = Consumer(client_config(options, **{"auto.offset.reset": reset}))
    try:
        consumer.assign([TopicPartition(part.topic, part.partition, part.start)])
        rows: list[Any] = []
        position, last_progress = part.start, time.monotonic()
        while position < part.end:
            before = position
            # no more than the range still needs: consume() returns only when it has them all or times out
            for message in consumer.consume(num_messages=min(ROWS_PER_CHUNK, part.end - position), timeout=1.0):
                error = message.error()
                if error is None and message.offset() < part.end:
                    rows.append(message)
                    position = max(position, message.offset() + 1)
                elif error is None:
                    position = part.end
                elif error.code() == KafkaError._PARTITION_EOF:   # all before this offset has been fetched
                    position = max(position, message.offset())
                elif error.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
                    raise _lost(part, f"offset {position} is no longer on the brokers ({error.str()})")
                elif error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART and not options.fail_on_data_loss:
                    return
                else:
                    raise _offsets_error(f"reading {part.topic}[{part.partition}]", error.str())
            position = max(position, consumer.position([TopicPartition(part.topic, part.partition)])[0].offset)
            if position > before:
                last_progress = time.monotonic()
            elif time.monotonic() - last_progress > STALL_TIMEOUT:
                raise _offsets_error(f"{part.topic}[{part.partition}] stayed at offset {position} below {part.end} "
                                     f"for {STALL_TIMEOUT:g} s", "no record and no end of partition")
            if len(rows) >= ROWS_PER_CHUNK:
                yield _record_batch(rows, schema)
                rows = []
        if rows:
            yield _record_batch(rows, schema)
    finally:
        consumer.close()


def _lost(part: OffsetRange, what: str) -> KafkaDataLossError:
    return KafkaDataLossError(
        f"{part.topic}[{part.partition}]: {what}; records between {part.start} and {part.end} may be lost",
        hint="the records were deleted (retention) or the topic was recreated; to go on from the earliest offset "
             "still there, CREATE OR REFRESH the table with failOnDataLoss => false")


class KafkaStreamReader(DataSourceStreamReader):
    def __init__(self, options: KafkaOptions, schema: StructType, reader: str | None,
                 run: RunStart | None = None) -> None:
        self.options = options
        self.schema = schema
        self.reader = reader
        self.run = run or RunStart(None, None)
        self._resumed = False                     # whether this run's start was looked up in the checkpoint
        self._initial: Offsets | None = None      # the starting offsets, once asked: initialOffset says the same
        self._planned: Offsets | None = None     # the end latestOffset returned last: the next batch's start
        self._consumer: Consumer | None = None
        self._down = False                        # librdkafka said every broker is down (error_cb) ...
        self._failing: str | None = None          # ... and a connection failed since: the error (an outage)

    # -- the driver: what the brokers hold --------------------------------------------------------------------

    @property
    def consumer(self) -> Consumer:
        from confluent_kafka import Consumer

        if self._consumer is None:
            self._consumer = Consumer(client_config(self.options, **{"group.id": self.group_id,
                                                                      "on_commit": self._committed,
                                                                      "error_cb": self._client_error}))
        return self._consumer

    def _client_error(self, error: Any) -> None:
        """librdkafka's errors (served by poll). All brokers down alone may be an idle connection the broker closed;
        a transport error after it (a reconnect refused or timed out) makes it an outage."""
        from confluent_kafka import KafkaError

        if error.code() == KafkaError._ALL_BROKERS_DOWN:
            self._down = True
        elif error.code() == KafkaError._TRANSPORT and self._down:
            self._failing = error.str()

    def _ask(self, what: str, call: Callable[[float], Any], from_a_broker: bool = True) -> Any:
        """`call(timeout)` in slices of ASK_SLICE up to METADATA_TIMEOUT, failing at once when librdkafka says all
        brokers are down: a broker outage fails the batch (KAFKA_READ_FAILED, the stream RETRYING) within seconds
        instead of after the whole timeout, while a slow broker that still answers gets its full time. An answer
        `from_a_broker` (not from librdkafka's metadata cache) says the brokers are back."""
        deadline = time.monotonic() + METADATA_TIMEOUT
        while True:
            try:
                answer = call(max(0.1, min(ASK_SLICE, deadline - time.monotonic())))
            except Exception as exc:  # confluent_kafka raises KafkaException; its text says what
                self.consumer.poll(0)                     # serves error_cb
                if self._failing is not None:
                    raise _offsets_error(what, f"all brokers are down ({self._failing})") from exc
                if time.monotonic() >= deadline:
                    raise _offsets_error(what, exc) from exc
                continue
            if from_a_broker:
                self._down, self._failing = False, None
            return answer

    def _committed(self, error: Any, offsets: Any) -> None:
        if error is not None:   # a lag tool's view must not fail the stream: logged
            log.warning("could not record the offsets of %s in group %s: %s", self.reader, self.group_id, error)

    @property
    def group_id(self) -> str:
        return f"{self.options.group_id_prefix}-{(self.reader or 'stream').replace('`', '')}"   # db.table

    def topic_partitions(self) -> list[tuple[str, int]]:
        """The partitions the options name, as the brokers know them now (a pattern or a new partition is found
        again on every call, so new topics and partitions join the next batch)."""
        if self.options.subscription == ASSIGN:
            return sorted((t, p) for t, parts in self.options.assignment.items() for p in parts)
        metadata = self._ask("listing the topics", lambda timeout: self.consumer.list_topics(timeout=timeout),
                             from_a_broker=False)
        return sorted((name, p) for name, topic in metadata.topics.items()
                      if topic.error is None and self.options.wants(name) for p in topic.partitions)

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        from confluent_kafka import TopicPartition

        low, high = self._ask(f"asking for the offsets of {topic}[{partition}]",
                              lambda timeout: self.consumer.get_watermark_offsets(
                                  TopicPartition(topic, partition), timeout=timeout, cached=False))
        return int(low), int(high)

    def _at_timestamp(self, pairs: list[tuple[str, int]]) -> Offsets:
        from confluent_kafka import TopicPartition

        wanted = [TopicPartition(t, p, int(self.options.starting_timestamp or 0)) for t, p in pairs]
        found = self.consumer.offsets_for_times(wanted, timeout=METADATA_TIMEOUT) if wanted else []
        offsets: Offsets = {}
        for item in found:
            offset = item.offset if item.offset >= 0 else self.watermarks(item.topic, item.partition)[1]
            offsets.setdefault(item.topic, {})[item.partition] = offset
        return offsets

    def initialOffset(self) -> dict[str, Any]:  # Spark's name
        """Where a new stream starts (Spark asks after its first latestOffset, which may have asked already)."""
        return tagged(to_json(self._initial_offsets()), self.run.tag)

    def _initial_offsets(self) -> Offsets:
        if self._initial is None:
            self._initial = self._starting_offsets()
        return self._initial

    def _starting_offsets(self) -> Offsets:
        pairs = self.topic_partitions()
        if self.options.starting_timestamp is not None:
            return self._at_timestamp(pairs)
        starting = self.options.starting
        offsets: Offsets = {}
        for topic, partition in pairs:
            low, high = self.watermarks(topic, partition)
            given = starting.get(topic, {}).get(partition, EARLIEST) if isinstance(starting, dict) else \
                (EARLIEST if starting == "earliest" else LATEST)
            offsets.setdefault(topic, {})[partition] = low if given == EARLIEST else high if given == LATEST \
                else given
        return offsets

    def latestOffset(self) -> dict[str, Any]:  # Spark's name
        """The next batch's end: the partitions' high watermarks, capped by maxOffsetsPerTrigger counted from the
        batch's start. Spark does not say the start; in this run of the query it is the end returned last (or the
        end of the batch replayed after a restart), and before that the end logged in the query's checkpoint (the
        starting offsets for a new query). Without either the end is not capped: any guess from elsewhere (a
        consumer group, which other streams may share) could fall before the start and make a batch read again."""
        if self._planned is None and not self._resumed:
            self._resumed = True
            start = self.run.start(lambda: to_json(self._initial_offsets()), f"read_kafka for {self.reader}")
            self._planned = from_json(start) if start is not None else None
        latest: Offsets = {}
        for topic, partition in self.topic_partitions():
            latest.setdefault(topic, {})[partition] = self.watermarks(topic, partition)[1]
        end = latest
        if self._planned is not None:
            for topic, parts in self._planned.items():   # a partition never goes back, nor disappears from the offsets
                for partition, offset in parts.items():
                    kept = latest.setdefault(topic, {})
                    kept[partition] = max(kept.get(partition, offset), offset)
            # a run given no checkpoint is a scheduled table's one-batch pass (runner.sources_checkpoint), which
            # reads all there is, as Spark ignores read limits for it: a batch replayed from the checkpoint at the
            # pass's start must not cap it
            limit = self.options.max_offsets_per_trigger if self.run.checkpoint is not None else None
            end = capped(self._planned, latest, limit)
        self._planned = end
        return tagged(to_json(end), self.run.tag)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        """One range per partition that moved; a partition new since `start` is read from its earliest offset.
        Offsets before `start` that the brokers no longer hold follow failOnDataLoss."""
        begin, stop = from_json(start), from_json(end)
        self._planned = stop        # after a restart the replayed batch tells the cap where the next one starts
        ranges: list[InputPartition] = []
        for topic in sorted(stop):
            for partition in sorted(stop[topic]):
                first, last = begin.get(topic, {}).get(partition), stop[topic][partition]
                if last <= (first or 0):
                    continue
                low, _ = self.watermarks(topic, partition)
                if first is not None and first < low and self.options.fail_on_data_loss:
                    raise _lost(OffsetRange(topic, partition, first, last),
                                f"the earliest offset on the brokers is {low}, after {first}")
                if max(first or 0, low) < last:
                    ranges.append(OffsetRange(topic, partition, max(first or 0, low), last))
        return ranges

    def commit(self, end: dict[str, Any]) -> None:
        """Spark wrote the batch up to `end`: its offsets go to the consumer group for lag tools, best effort (the
        checkpoint, not the group, is where a restart resumes)."""
        from confluent_kafka import TopicPartition

        offsets = [TopicPartition(t, p, o) for t, parts in from_json(end).items() for p, o in parts.items()]
        try:
            self.consumer.poll(0)          # the outcome of the previous batch's commit reaches `_committed`
            if offsets:                    # asynchronous: a broker that does not answer must not hold the stream
                self.consumer.commit(offsets=offsets, asynchronous=True)
        except Exception as exc:  # noqa: BLE001 - see `_committed`
            log.warning("could not record the offsets of %s in group %s: %s", self.reader, self.group_id, exc)

    def stop(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    # -- an executor: one offset range ------------------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema

        assert isinstance(partition, OffsetRange)
        yield from read_range(self.options, partition, to_arrow_schema(self.schema))


class KafkaSource(DataSource):
    """`spark.readStream.format("sg_kafka").options(**read_kafka's options).load()`."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        given = {key: value for key, value in self.options.items() if key.lower() not in INTERNAL_OPTIONS}
        return KafkaStreamReader(parse_options(given), schema, self.options.get(READER_OPTION),
                                 RunStart.of(self.options))


def register(spark: SparkSession) -> None:
    spark.dataSource.register(KafkaSource)

