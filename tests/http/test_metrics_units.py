"""The metrics' parts without a JVM: the statement type a label takes, the throttle's counts, the JVM sampler that
gives up on a JVM that does not answer, /ready's 503 naming the failed check, and the settings."""

from __future__ import annotations

import json
import threading
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest
from prometheus_client.parser import text_string_to_metric_families

from sluicegate.engine.result_cache import CachedResult, ResultCache, ResultCacheSettings
from sluicegate.engine.results import ResultColumn
from sluicegate.gateway.auth.throttle import LoginThrottle
from sluicegate.gateway.config import ThrottleSettings, load_config
from sluicegate.gateway.errors import AuthenticationError, ConfigError
from sluicegate.gateway.http.status import status_answer
from sluicegate.gateway.metrics import GatewayMetrics, statement_type
from sluicegate.gateway.metrics_collector import GatewayCollector, JvmSampler
from sluicegate.gateway.operation.base import OperationType


def operation(text: str | None, kind: OperationType = OperationType.EXECUTE_STATEMENT) -> Any:
    return SimpleNamespace(op_type=kind, statement=text)


@pytest.mark.parametrize(("text", "expected"), [
    ("SELECT 1", "SELECT"), ("  with t AS (SELECT 1) SELECT * FROM t", "SELECT"), ("VALUES (1)", "SELECT"),
    ("-- a comment\n/* and another */ insert INTO t VALUES (1)", "INSERT"), ("(SELECT 1)", "SELECT"),
    ("REFRESH MATERIALIZED VIEW v", "REFRESH"), ("CREATE STREAMING TABLE s AS SELECT 1", "CREATE"),
    ("'; DROP TABLE x; --", "OTHER"), ("SELEKT 1", "OTHER"), ("", "OTHER"),
])
def test_a_statement_s_type_is_its_first_keyword_from_a_bounded_set(text: str, expected: str) -> None:
    assert statement_type(operation(text)) == expected


def test_a_metadata_request_is_its_own_type() -> None:
    assert statement_type(operation(None, OperationType.GET_TABLES)) == "GET_TABLES"


def test_the_throttle_counts_failures_lockouts_and_refusals() -> None:
    now = [0.0]
    throttle = LoginThrottle(ThrottleSettings(2, 100, 60.0, 30.0, 60.0), clock=lambda: now[0])
    throttle.failed("eve", "10.0.0.1")
    throttle.failed("eve", "10.0.0.1")     # the second failure locks eve out
    with pytest.raises(AuthenticationError):
        throttle.check("eve", "10.0.0.1")
    assert (throttle.failures_total, throttle.lockouts_total, throttle.refused_total) == \
        (2, {"user": 1, "address": 0}, 1)


def test_the_jvm_sampler_gives_up_on_a_jvm_that_does_not_answer() -> None:
    release = threading.Event()

    class Runtime:
        def totalMemory(self) -> int:
            release.wait(30)
            return 300

        def freeMemory(self) -> int:
            return 100

        def maxMemory(self) -> int:
            return 1000

    spark = SimpleNamespace(_jvm=SimpleNamespace(java=SimpleNamespace(lang=SimpleNamespace(
        Runtime=SimpleNamespace(getRuntime=Runtime)))))
    sampler = JvmSampler(spark)
    assert sampler.sample(0.05) is None     # busy: this scrape goes without the heap
    release.set()
    assert sampler.sample(30) == (200, 1000)  # the read in flight answers the next scrape


class _Catalog:
    def __init__(self, fails: bool) -> None:
        self.fails = fails

    def list_databases(self) -> list[Any]:
        if self.fails:
            raise OSError("database is locked")
        return []

    def list_streams(self) -> list[Any]:
        return []


def _kept_answer() -> ResultCache:
    """A result cache that missed once, then kept one answer and served it once."""
    cache = ResultCache(ResultCacheSettings())
    batch = pa.record_batch([pa.array([1, 2], pa.int64())], names=["_c0"])
    assert cache.get("q") is None
    cache.put("q", CachedResult((ResultColumn("n", "bigint"),), batch.schema, (batch,), batch.nbytes))
    assert cache.get("q") is not None
    return cache


def _service(catalog_fails: bool) -> Any:
    metrics = GatewayMetrics()
    spark = SimpleNamespace(_jvm=SimpleNamespace(java=SimpleNamespace(lang=SimpleNamespace(Runtime=SimpleNamespace(
        getRuntime=lambda: SimpleNamespace(totalMemory=lambda: 2, freeMemory=lambda: 1, maxMemory=lambda: 4))))))
    service = SimpleNamespace(
        config=SimpleNamespace(metrics=SimpleNamespace(enabled=True, require_auth=False)), metrics=metrics,
        streams_restored=True, stopping=False, catalog=_Catalog(catalog_fails), spark=spark, maintenance=None,
        result_cache=_kept_answer(),
        sessions=SimpleNamespace(list=list), streams=None,
        throttle=SimpleNamespace(failures_total=0, lockouts_total={"user": 0, "address": 0}, refused_total=0))
    metrics.collector = GatewayCollector(service, metrics.connection_counts, metrics.jvm_timeout)
    metrics.registry.register(metrics.collector)
    return service


def test_ready_answers_503_naming_the_check_that_failed() -> None:
    answer = status_answer(_service(catalog_fails=True), None, "/ready", None, "127.0.0.1")  # type: ignore[arg-type]
    assert answer is not None and answer.status == 503
    body = json.loads(answer.body)
    assert body["failed"] == ["catalog"] and "database is locked" in body["checks"]["catalog"]
    assert body["checks"]["jvm"] == "ok"
    ready = status_answer(_service(catalog_fails=False), None, "/ready", None, "127.0.0.1")  # type: ignore[arg-type]
    assert ready is not None and ready.status == 200


def test_metrics_parse_with_the_figures_read_at_scrape_time() -> None:
    answer = status_answer(_service(catalog_fails=False), None, "/metrics", None, "h")  # type: ignore[arg-type]
    assert answer is not None and answer.status == 200
    families = {f.name: f for f in text_string_to_metric_families(answer.body.decode())}
    assert families["sluicegate_jvm_memory_heap_used_bytes"].samples[0].value == 1
    assert families["sluicegate_authentication_failures"].type == "counter"
    assert [(f, families[f"sluicegate_result_cache_{f}"].samples[0].value) for f in ("hits", "misses", "evictions")] \
        == [("hits", 1), ("misses", 1), ("evictions", 0)]
    assert families["sluicegate_result_cache_bytes"].samples[0].value == 16
    assert families["sluicegate_result_cache_entries"].samples[0].value == 1


def test_settings(tmp_path: Any) -> None:
    config = load_config(warehouse=tmp_path)
    assert (config.server.status_port, config.metrics.enabled, config.metrics.require_auth) == (-1, True, True)
    changed = load_config(warehouse=tmp_path, overrides={"server": {"status_port": 0},
                                                         "metrics": {"require_auth": False, "jvm_timeout": 2.0}})
    assert (changed.server.status_port, changed.metrics.require_auth, changed.metrics.jvm_timeout) == (0, False, 2.0)
    with pytest.raises(ConfigError, match="server.status_port"):
        load_config(warehouse=tmp_path, overrides={"server": {"status_port": 70000}})
    with pytest.raises(ConfigError, match="metrics.jvm_timeout"):
        load_config(warehouse=tmp_path, overrides={"metrics": {"jvm_timeout": 0}})
