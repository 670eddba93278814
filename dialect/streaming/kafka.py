"""`read_kafka(...)`'s options as pure data: their names, what each may hold, and which hold credentials.

The dialect checks a statement's options with this module (so a bad one is reported at its position before anything
runs), the runtime's Kafka source reads them with it, and every place that shows a stored definition hides the
credentials with `redact_sql`. Names follow Databricks' `read_kafka`; client settings go to librdkafka as `kafka.*`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

BOOTSTRAP = "bootstrapServers"
SUBSCRIBE = "subscribe"
SUBSCRIBE_PATTERN = "subscribePattern"
ASSIGN = "assign"
STARTING_OFFSETS = "startingOffsets"
STARTING_TIMESTAMP = "startingTimestamp"
MAX_OFFSETS = "maxOffsetsPerTrigger"
FAIL_ON_DATA_LOSS = "failOnDataLoss"
GROUP_ID_PREFIX = "groupIdPrefix"
CLIENT_PREFIX = "kafka."
SUBSCRIPTIONS = (SUBSCRIBE, SUBSCRIBE_PATTERN, ASSIGN)
OPTIONS = (BOOTSTRAP, *SUBSCRIPTIONS, STARTING_OFFSETS, STARTING_TIMESTAMP, MAX_OFFSETS, FAIL_ON_DATA_LOSS,
           GROUP_ID_PREFIX)
_BY_LOWER = {name.lower(): name for name in OPTIONS}
EARLIEST, LATEST = -2, -1                     # per-partition markers in startingOffsets JSON, as Spark's Kafka source
SCHEMA = ("key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP, "
          "timestampType INT, headers ARRAY<STRUCT<key: STRING, value: BINARY>>")
# Client settings whose value is a secret: never shown (DESCRIBE, EXPLAIN, SHOW CREATE TABLE, errors).
_SECRET = re.compile(r"password|secret|jaas|token|credential|ssl\.key\b|ssl\.key\.|oauthbearer\.config", re.IGNORECASE)
REDACTED = "*****"


class KafkaOptionError(ValueError):
    """One option that cannot be used: `option` names it as written (None: one is missing), `hint` says what to do."""

    def __init__(self, message: str, option: str | None, hint: str) -> None:
        super().__init__(message)
        self.message, self.option, self.hint = message, option, hint


@dataclass(frozen=True)
class KafkaOptions:
    bootstrap_servers: str
    subscription: str                         # one of SUBSCRIPTIONS
    topics: tuple[str, ...] = ()              # subscribe
    pattern: str | None = None                # subscribePattern
    assignment: dict[str, tuple[int, ...]] = field(default_factory=dict, hash=False)   # assign
    starting: str | dict[str, dict[int, int]] = "latest"                                # "earliest" | "latest" | JSON
    starting_timestamp: int | None = None     # ms since the epoch
    max_offsets_per_trigger: int | None = None
    fail_on_data_loss: bool = True
    group_id_prefix: str = "sluicegate"
    client: dict[str, str] = field(default_factory=dict, hash=False)   # kafka.* without the prefix

    def wants(self, topic: str) -> bool:
        if self.subscription == SUBSCRIBE:
            return topic in self.topics
        if self.subscription == SUBSCRIBE_PATTERN:
            return re.fullmatch(self.pattern or "", topic) is not None and not topic.startswith("__")
        return topic in self.assignment


def canonical_name(name: str) -> str | None:
    """An option's name as the source reads it (`kafka.*` lower case), or None when read_kafka has no such option."""
    lowered = name.lower()
    if lowered.startswith(CLIENT_PREFIX) and len(lowered) > len(CLIENT_PREFIX):
        return lowered
    return _BY_LOWER.get(lowered)


def is_secret(name: str) -> bool:
    return name.lower().startswith(CLIENT_PREFIX) and _SECRET.search(name) is not None


def redacted(options: dict[str, str]) -> dict[str, str]:
    return {key: (REDACTED if is_secret(key) else value) for key, value in options.items()}


# `kafka.sasl.password` => 'x' (the name bare or in backticks, the value in single or double quotes)
_SECRET_ARGUMENT = re.compile(r"""(`?kafka\.[\w.-]+`?\s*=>\s*)('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")""",
                              re.IGNORECASE)


def redact_sql(sql: str | None) -> str | None:
    """A stored definition as it may be shown: the value of every secret `kafka.*` option replaced."""
    if sql is None:
        return None

    def hide(found: re.Match[str]) -> str:
        name = found.group(1).split("=>")[0].strip().strip("`")
        return found.group(1) + (f"'{REDACTED}'" if is_secret(name) else found.group(2))

    return _SECRET_ARGUMENT.sub(hide, sql)


def identity_options(options: dict[str, str]) -> dict[str, str]:
    """The options that say what a Kafka source reads (its subscription): CREATE OR REFRESH that changes only the
    others (brokers' addresses, the cap, failOnDataLoss, where a new stream would start, client settings such as a
    rotated password) goes on from the checkpoint instead of reading the topics again, which retention may have
    emptied."""
    return {key: value for key, value in options.items() if key in SUBSCRIPTIONS}


def kafka_description(options: dict[str, str]) -> str:
    """What a plan's Kafka source reads, for EXPLAIN and DESCRIBE (no client settings, so no credentials)."""
    chosen = next(((name, options[name]) for name in SUBSCRIPTIONS if name in options), ("subscribe", "?"))
    return f"Kafka {chosen[0]} {chosen[1]} at {options.get(BOOTSTRAP, '?')}"


def _integer(name: str, value: str, minimum: int) -> int:
    try:
        number = int(value)
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise KafkaOptionError(f"{name} must be an integer of at least {minimum}, not '{value}'.", name,
                               f"write {name} => {max(minimum, 1000)}")
    return number


def _boolean(name: str, value: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise KafkaOptionError(f"{name} must be true or false, not '{value}'.", name, f"write {name} => false")
    return value.lower() == "true"


def _assignment(value: str) -> dict[str, tuple[int, ...]]:
    try:
        data = json.loads(value)
        parsed = {str(topic): tuple(int(p) for p in parts) for topic, parts in data.items() if isinstance(parts, list)}
        if not parsed or len(parsed) != len(data):
            raise ValueError
        return parsed
    except (ValueError, TypeError, AttributeError):
        raise KafkaOptionError(f"assign must be JSON naming topics and their partitions, not '{value}'.", ASSIGN,
                               """write assign => '{"topic":[0,1]}'""") from None


def _starting(value: str) -> str | dict[str, dict[int, int]]:
    if value.lower() in ("earliest", "latest"):
        return value.lower()
    try:
        data = json.loads(value)
        parsed = {str(topic): {int(p): int(o) for p, o in parts.items()} for topic, parts in data.items()}
        if not parsed or any(o < EARLIEST for parts in parsed.values() for o in parts.values()):
            raise ValueError
        return parsed
    except (ValueError, TypeError, AttributeError):
        raise KafkaOptionError(f"startingOffsets must be 'earliest', 'latest' or JSON offsets, not '{value}'.",
                               STARTING_OFFSETS, """write startingOffsets => 'earliest' or '{"topic":{"0":23}}' """
                               "(-2 = earliest, -1 = latest for a partition)") from None


def parse_options(given: dict[str, str]) -> KafkaOptions:
    """The options as written (any case) -> KafkaOptions; a KafkaOptionError names the first one that is wrong."""
    values: dict[str, str] = {}
    client: dict[str, str] = {}
    for name, value in given.items():
        canonical = canonical_name(name)
        if canonical is None:
            raise KafkaOptionError(f"read_kafka has no option `{name}`.", name,
                                   f"use one of {', '.join(OPTIONS)}, or kafka.<librdkafka setting> for the client")
        if canonical.startswith(CLIENT_PREFIX):
            if canonical == "kafka.bootstrap.servers":
                raise KafkaOptionError("The brokers are named by bootstrapServers, not kafka.bootstrap.servers.",
                                       name, "write bootstrapServers => 'host:9092'")
            client[canonical[len(CLIENT_PREFIX):]] = value
        else:
            values[canonical] = value
    if not values.get(BOOTSTRAP, "").strip():
        raise KafkaOptionError("read_kafka needs the brokers to read from.", None,
                               "add bootstrapServers => 'host:9092[,host2:9092]'")
    chosen = [name for name in SUBSCRIPTIONS if name in values]
    if len(chosen) != 1:
        raise KafkaOptionError(
            "read_kafka needs exactly one of subscribe, subscribePattern or assign"
            + (f", not {' and '.join(chosen)}." if chosen else "."), chosen[1] if len(chosen) > 1 else None,
            "write subscribe => 'topic1,topic2', subscribePattern => 'regex' or assign => '{\"topic\":[0,1]}'")
    subscription = chosen[0]
    topics = tuple(t.strip() for t in values.get(SUBSCRIBE, "").split(",") if t.strip())
    if subscription == SUBSCRIBE and not topics:
        raise KafkaOptionError("subscribe names no topic.", SUBSCRIBE, "write subscribe => 'topic1,topic2'")
    pattern = values.get(SUBSCRIBE_PATTERN)
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise KafkaOptionError(f"subscribePattern '{pattern}' is not a regular expression: {exc}.",
                                   SUBSCRIBE_PATTERN, "write a Java/Python regex such as 'orders-.*'") from None
    if STARTING_OFFSETS in values and STARTING_TIMESTAMP in values:
        raise KafkaOptionError("startingOffsets and startingTimestamp cannot both be given.", STARTING_TIMESTAMP,
                               "keep one of them")
    maximum = values.get(MAX_OFFSETS)
    return KafkaOptions(
        bootstrap_servers=values[BOOTSTRAP].strip(),
        subscription=subscription,
        topics=topics,
        pattern=pattern,
        assignment=_assignment(values[ASSIGN]) if ASSIGN in values else {},
        starting=_starting(values[STARTING_OFFSETS]) if STARTING_OFFSETS in values else "latest",
        starting_timestamp=_integer(STARTING_TIMESTAMP, values[STARTING_TIMESTAMP], 0)
        if STARTING_TIMESTAMP in values else None,
        max_offsets_per_trigger=_integer(MAX_OFFSETS, maximum, 1) if maximum is not None else None,
        fail_on_data_loss=_boolean(FAIL_ON_DATA_LOSS, values[FAIL_ON_DATA_LOSS])
        if FAIL_ON_DATA_LOSS in values else True,
        group_id_prefix=values.get(GROUP_ID_PREFIX, "sluicegate"),
        client=client,
    )


def server_hosts(bootstrap_servers: str) -> list[tuple[str, str | None]]:
    """'h1:9092, [::1]:9093, h2' -> [(h1, 9092), (::1, 9093), (h2, None)] (a scheme such as PLAINTEXT:// dropped)."""
    hosts = []
    for listed in bootstrap_servers.split(","):
        item = re.sub(r"^[A-Za-z_]+://", "", listed.strip())
        if not item:
            continue
        found = re.fullmatch(r"\[([^\]]+)\](?::(\d+))?", item) or re.fullmatch(r"([^:]+)(?::(\d+))?", item)
        hosts.append((found.group(1), found.group(2)) if found else (item, None))
    return hosts
