"""DESCRIBE STREAMING TABLE's Kafka rows: the offsets each partition has been read up to (the end of the last
micro-batch committed in the stream's checkpoint, so also while it is stopped) and the backlog, the brokers' latest
offsets minus those, asked for when DESCRIBE runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sluicegate.dialect.streaming.kafka import parse_options
from sluicegate.dialect.streaming.plan import StreamingPlan
from sluicegate.engine.streams.checkpoint_offsets import untagged

ASK_TIMEOUT = 5.0          # seconds DESCRIBE waits for the brokers before it shows the backlog as unknown

Offsets = dict[str, dict[int, int]]


def _offsets(value: Any) -> Offsets | None:
    """A progress entry's offsets if they are Kafka's {topic: {partition: offset}}."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, dict):
        return None
    value = untagged(value)     # the source's tag (checkpoint_offsets) is no topic
    if not all(isinstance(parts, dict) for parts in value.values()):
        return None
    try:
        return {str(t): {int(p): int(o) for p, o in parts.items()} for t, parts in value.items()}
    except (TypeError, ValueError):
        return None


def _latest(options: Any, offsets: Offsets) -> Offsets:
    from confluent_kafka import Consumer, TopicPartition

    from sluicegate.engine.streams.kafka_source import client_config

    consumer = Consumer(client_config(options, **{"socket.timeout.ms": int(ASK_TIMEOUT * 1000)}))
    try:
        return {topic: {p: int(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=ASK_TIMEOUT)[1])
                        for p in parts} for topic, parts in offsets.items()}
    finally:
        consumer.close()


def _listed(offsets: Offsets) -> str:
    return ", ".join(f"{t}[{p}]={o}" for t in sorted(offsets) for p, o in sorted(offsets[t].items())) or "(none)"


def committed_offsets(checkpoint: str | None) -> list[Offsets]:
    """The Kafka offsets among the sources' ends of the last committed batch (Spark's offset log: a version line,
    the batch's metadata, then one line per source)."""
    folder = Path(checkpoint or "")
    batches = [int(f.name) for f in (folder / "commits").glob("[0-9]*") if f.name.isdigit()] \
        if (folder / "commits").is_dir() else []
    if not batches:
        return []
    try:
        lines = (folder / "offsets" / str(max(batches))).read_text(encoding="utf-8").splitlines()[2:]
    except OSError:
        return []
    return [found for line in lines if (found := _offsets(line))]


def kafka_rows(plan: StreamingPlan, checkpoint: str | None) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    entries = committed_offsets(checkpoint) if any(s.kind == "kafka" for s in plan.sources) else []
    for source in (s for s in plan.sources if s.kind == "kafka"):
        options = parse_options(source.options)
        read = next((o for o in entries if o and all(options.wants(t) for t in o)), None)
        if read is None:
            rows.append(("Kafka offsets", "(no micro-batch committed yet)"))
            continue
        rows.append(("Kafka offsets", _listed(read)))
        try:
            latest = _latest(options, read)
        except Exception as exc:  # noqa: BLE001 - DESCRIBE reports what it can; the text says why
            rows.append(("Kafka backlog", f"unknown: the brokers did not answer ({type(exc).__name__})"))
            continue
        behind = {t: {p: max(0, latest[t][p] - o) for p, o in parts.items()} for t, parts in read.items()}
        total = sum(b for parts in behind.values() for b in parts.values())
        rows.append(("Kafka backlog", f"{total} ({_listed(behind)})"))
    return rows
