"""The Kafka source's pure parts, without a JVM or a broker: how maxOffsetsPerTrigger shares a batch among partitions,
the canonical offsets JSON Spark compares, the policy's broker and client-setting checks, and the committed offsets
DESCRIBE reads from a checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sluicegate.engine.streams.kafka_lag import committed_offsets
from sluicegate.engine.streams.kafka_source import capped, from_json, to_json
from sluicegate.policy.errors import StatementNotAllowedError
from sluicegate.policy.grants import Principal
from sluicegate.policy.policy import Policy, SecuritySettings


def test_the_cap_shares_the_batch_by_backlog_and_never_moves_back():
    start = {"t": {0: 10, 1: 0}}
    latest = {"t": {0: 110, 1: 300}, "u": {0: 50}}
    end = capped(start, latest, 90)
    assert end == {"t": {0: 30, 1: 60}, "u": {0: 10}}          # 100:300:50 of 90, a new partition from 0
    assert capped(start, latest, None) == latest
    assert capped(start, latest, 10_000) == latest
    tiny = capped({"t": {0: 5, 1: 5}}, {"t": {0: 6, 1: 900}}, 1)
    assert tiny["t"][0] >= 5 and tiny["t"][1] >= 6               # each behind partition moves at least one offset


def test_offsets_json_is_canonical():
    offsets = {"b": {10: 1, 2: 3}, "a": {0: 7}}
    assert list(to_json(offsets)) == ["a", "b"] and list(to_json(offsets)["b"]) == ["2", "10"]
    assert from_json(to_json(offsets)) == offsets


def _policy(servers: tuple[str, ...] = ("127.0.0.1", "localhost", "::1"), admins: frozenset[str] = frozenset(),
            unrestricted: bool = False) -> Policy:
    return Policy(SecuritySettings(allowed_paths=(), protected_paths=(), admins=admins,
                                   admin_unrestricted=unrestricted, kafka_servers=servers))


def test_the_policy_allows_listed_brokers_and_client_settings_only():
    user, admin = Principal("u", False), Principal("root", True)
    policy = _policy()
    policy.check_kafka_source({"bootstrapServers": "127.0.0.1:9092,localhost:1,[::1]:2",
                               "kafka.sasl.password": "x"}, user)
    for servers in ("10.0.0.1:9092", "127.0.0.1:1,evil:2", "127.0.0.2"):
        with pytest.raises(StatementNotAllowedError):
            policy.check_kafka_source({"bootstrapServers": servers}, user)
    with pytest.raises(StatementNotAllowedError):
        policy.check_kafka_source({"bootstrapServers": "127.0.0.1:1", "kafka.sasl.kerberos.kinit.cmd": "sh"}, user)
    _policy(("broker.internal:9092",)).check_kafka_source({"bootstrapServers": "broker.internal:9092"}, user)
    with pytest.raises(StatementNotAllowedError):
        _policy(("broker.internal:9092",)).check_kafka_source({"bootstrapServers": "broker.internal:9093"}, user)
    _policy(("*",)).check_kafka_source({"bootstrapServers": "anything:1"}, user)
    admins = _policy(admins=frozenset({"root"}))
    admins.check_kafka_source({"bootstrapServers": "10.0.0.1:9092"}, admin)   # admins may name any broker
    with pytest.raises(StatementNotAllowedError):                              # but not run commands
        admins.check_kafka_source({"bootstrapServers": "h:1", "kafka.plugin.library.paths": "/x.so"}, admin)
    _policy(admins=frozenset({"root"}), unrestricted=True).check_kafka_source(
        {"bootstrapServers": "h:1", "kafka.plugin.library.paths": "/x.so"}, admin)


def test_describe_reads_the_last_committed_batchs_offsets(tmp_path: Path):
    (tmp_path / "offsets").mkdir()
    (tmp_path / "commits").mkdir()
    (tmp_path / "offsets" / "0").write_text('v1\n{"batchWatermarkMs":0}\n{"t":{"0":4}}\n{"version":3}\n')
    (tmp_path / "offsets" / "1").write_text('v1\n{"batchWatermarkMs":0}\n{"t":{"0":9,"1":2}}\n{"version":3}\n')
    assert committed_offsets(str(tmp_path)) == []
    (tmp_path / "commits" / "0").write_text("v1\n{}\n")
    assert committed_offsets(str(tmp_path)) == [{"t": {0: 4}}]
    (tmp_path / "commits" / "1").write_text("v1\n{}\n")
    assert committed_offsets(str(tmp_path)) == [{"t": {0: 9, 1: 2}}]
    assert committed_offsets(None) == []


def test_create_or_refresh_goes_on_unless_the_subscription_changes():
    from sluicegate.dialect.streaming.analyze import analyze
    from sluicegate.engine.streams.refresh import CONTINUE, FULL, UNCHANGED, decide

    def plan(arguments: str, select: str = "CAST(value AS STRING) AS v") -> Any:
        return analyze(f"CREATE OR REFRESH STREAMING TABLE t AS SELECT {select} FROM STREAM read_kafka({arguments})")

    stored = plan("bootstrapServers => 'a:1', subscribe => 'o', `kafka.sasl.password` => 'old'")
    tuned = plan("bootstrapServers => 'b:1', subscribe => 'o', `kafka.sasl.password` => 'new', "
                 "maxOffsetsPerTrigger => 5, failOnDataLoss => false, startingOffsets => 'earliest'")
    assert decide(stored, tuned, same_schema=True).kind == UNCHANGED
    assert decide(stored, plan("bootstrapServers => 'a:1', subscribe => 'o'", "CAST(key AS STRING) AS v"),
                  same_schema=True).kind == CONTINUE
    assert decide(stored, plan("bootstrapServers => 'a:1', subscribe => 'o,p'"), same_schema=True).kind == FULL
    assert decide(stored, plan("bootstrapServers => 'a:1', subscribePattern => 'o'"), same_schema=True).kind == FULL
