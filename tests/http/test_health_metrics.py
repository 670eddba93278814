"""GET /health, /ready and /metrics on a real gateway (HTTP port and status port), scraped with urllib and parsed with
prometheus-client's own parser: the names, types and labels are Prometheus', and the figures move with the work done
through PyHive (statements by type, rows fetched, sessions, failed logins and lockouts, a streaming table's batches,
a materialized view's refresh, the JVM's heap). The scrape's credentials: required by default, not when
metrics.require_auth is false; metrics.enabled = false answers 404."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from credentials import password_auth
from prometheus_client.parser import text_string_to_metric_families
from pyhive import hive
from pyhive_helpers import land_named, poll_until

from sluicegate.gateway.auth.tokens import create_token

PASSWORDS = {"alice": "s3cret"}
DATABASE = "metrics_db"
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture(scope="module")
def auth(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    # a user is locked out after 3 failures; the address never is (the other tests log in from it too)
    return password_auth(tmp_path_factory.mktemp("metrics_auth"), PASSWORDS,
                         max_failures=3, max_failures_per_address=10_000)


@pytest.fixture(scope="module")
def metrics_gateway(start_gateway: Any, auth: dict[str, Any]) -> Any:
    return start_gateway({"server": {"http_port": 0, "status_port": 0, "allow_plaintext": True}, "auth": auth})


def basic(user: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()


ALICE = basic("alice", "s3cret")


def get(port: int, path: str, authorization: str | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if authorization is not None:
        request.add_header("Authorization", authorization)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def scrape(gateway: Any, authorization: str | None = ALICE, port: int | None = None) -> tuple[dict[str, Any], Samples]:
    """The families by name (as the parser names them: a counter without `_total`) and every sample's value."""
    status, headers, body = get(port or gateway.server.http_port, "/metrics", authorization)
    assert status == 200, body
    assert headers["Content-Type"].startswith("text/plain; version=")  # the text format (prometheus-client's)
    families = {family.name: family for family in text_string_to_metric_families(body.decode())}
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples}
    return families, samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def alice(gateway: Any) -> Any:
    return hive.connect(gateway.host, gateway.port, username="alice", password=PASSWORDS["alice"], auth="CUSTOM")


def test_health_and_ready_answer_without_credentials(metrics_gateway: Any) -> None:
    for port in (metrics_gateway.server.http_port, metrics_gateway.server.status_port):
        status, headers, body = get(port, "/health")
        assert (status, json.loads(body)) == (200, {"status": "ok"})
        status, headers, body = get(port, "/ready")
        answer = json.loads(body)
        assert status == 200, answer
        assert headers["Content-Type"] == "application/json"
        assert answer == {"status": "ready", "failed": [], "checks": {"jvm": "ok", "catalog": "ok", "streams": "ok"}}
    # the status port serves nothing else; the HTTP port's other GETs still answer 404
    assert get(metrics_gateway.server.status_port, "/cliservice")[0] == 404
    assert get(metrics_gateway.server.http_port, "/")[0] == 404


def test_metrics_need_the_http_ports_credentials(metrics_gateway: Any, auth: dict[str, Any]) -> None:
    _, before = scrape(metrics_gateway)
    for port in (metrics_gateway.server.http_port, metrics_gateway.server.status_port):
        status, headers, body = get(port, "/metrics")
        assert status == 401 and "Authentication failed" in json.loads(body)["error"]
        assert headers["WWW-Authenticate"].startswith("Basic")
        status, _, _ = get(port, "/metrics", basic("alice", "wrong"))
        assert status == 401
    _, token = create_token(Path(auth["token_file"]), "alice")
    families, after = scrape(metrics_gateway, f"Bearer {token}")
    assert "sluicegate_sessions_open" in families
    # the two wrong passwords were failed logins (the missing headers were not guesses)
    assert value(after, "sluicegate_authentication_failures_total") - \
        value(before, "sluicegate_authentication_failures_total") == 2
    # the status port answers the same scrape
    status_port = metrics_gateway.server.status_port
    assert "sluicegate_statement_duration_seconds" in scrape(metrics_gateway, port=status_port)[0]


def test_names_types_and_labels(metrics_gateway: Any) -> None:
    families, samples = scrape(metrics_gateway)
    expected = {
        "sluicegate_sessions_open": "gauge", "sluicegate_sessions_opened": "counter",
        "sluicegate_operations": "gauge", "sluicegate_connections_open": "gauge",
        "sluicegate_statements": "counter", "sluicegate_statement_duration_seconds": "histogram",
        "sluicegate_fetched_rows": "counter", "sluicegate_fetched_bytes": "counter",
        "sluicegate_authentication_failures": "counter", "sluicegate_authentication_lockouts": "counter",
        "sluicegate_authentication_refused_locked": "counter",
        "sluicegate_jvm_up": "gauge", "sluicegate_jvm_memory_heap_used_bytes": "gauge",
        "sluicegate_jvm_memory_heap_max_bytes": "gauge", "sluicegate_start_time_seconds": "gauge",
        "sluicegate_process_resident_memory_bytes": "gauge",
    }
    assert {name: families[name].type for name in expected if name in families} == expected
    assert {s.labels["state"] for s in families["sluicegate_operations"].samples} >= {"RUNNING", "FINISHED", "ERROR"}
    assert {s.labels["transport"] for s in families["sluicegate_connections_open"].samples} == {"binary", "http"}
    assert {s.labels["scope"] for s in families["sluicegate_authentication_lockouts"].samples} == {"user", "address"}
    assert value(samples, "sluicegate_jvm_up") == 1.0
    used, most = (value(samples, "sluicegate_jvm_memory_heap_used_bytes"),
                  value(samples, "sluicegate_jvm_memory_heap_max_bytes"))
    assert 0 < used <= most


def test_a_statement_moves_its_type_s_histogram_and_the_fetch_counters(metrics_gateway: Any) -> None:
    _, before = scrape(metrics_gateway)
    connection = alice(metrics_gateway)
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT id, 'x' AS s FROM range(7)")
        assert len(cursor.fetchall()) == 7
        with pytest.raises(hive.OperationalError):
            cursor.execute("SELECT * FROM no_such_table_anywhere")
        _, during = scrape(metrics_gateway)
        assert value(during, "sluicegate_sessions_open") >= 1
        assert value(during, "sluicegate_connections_open", transport="binary") >= 1
    finally:
        connection.close()
    _, after = scrape(metrics_gateway)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("sluicegate_statement_duration_seconds_count", type="SELECT") == 2
    assert moved("sluicegate_statement_duration_seconds_bucket", type="SELECT", le="+Inf") == 2
    assert moved("sluicegate_statement_duration_seconds_sum", type="SELECT") > 0
    assert moved("sluicegate_statements_total", type="SELECT", status="FINISHED") == 1
    assert moved("sluicegate_statements_total", type="SELECT", status="ERROR") == 1
    assert moved("sluicegate_fetched_rows_total") == 7
    assert moved("sluicegate_fetched_bytes_total") > 7 * 8
    assert moved("sluicegate_sessions_opened_total") == 1


def test_failed_logins_and_a_lockout_are_counted(metrics_gateway: Any) -> None:
    _, before = scrape(metrics_gateway)
    for _ in range(4):  # three failures lock mallory out; the fourth attempt is refused without a check
        with pytest.raises(Exception):  # noqa: B017 - PyHive raises the transport's error, whichever it is
            hive.connect(metrics_gateway.host, metrics_gateway.port, username="mallory", password="guess",
                         auth="CUSTOM")
    _, after = scrape(metrics_gateway)
    assert value(after, "sluicegate_authentication_failures_total") - \
        value(before, "sluicegate_authentication_failures_total") == 3
    assert value(after, "sluicegate_authentication_lockouts_total", scope="user") - \
        value(before, "sluicegate_authentication_lockouts_total", scope="user") == 1
    assert value(after, "sluicegate_authentication_refused_locked_total") - \
        value(before, "sluicegate_authentication_refused_locked_total") == 1


def test_a_streaming_table_and_a_materialized_view_show_up_and_move(metrics_gateway: Any, landing_root: Path) -> None:
    folder = landing_root / "metrics_stream_in"
    land_named(folder, "0.json", [{"id": 1}, {"id": 2}])
    connection = alice(metrics_gateway)
    cursor = connection.cursor()
    try:
        cursor.execute(f"DROP DATABASE IF EXISTS {DATABASE} CASCADE")
        cursor.execute(f"CREATE DATABASE {DATABASE}")
        cursor.execute(f"USE {DATABASE}")
        cursor.execute(f"CREATE STREAMING TABLE events AS SELECT id FROM STREAM read_files('{folder}', "
                       "format => 'json', schema => 'id INT')")
        key = {"database": DATABASE, "table": "events", "flow": ""}

        def batch_seen() -> Samples | None:
            samples = scrape(metrics_gateway)[1]
            return samples if value(samples, "sluicegate_stream_last_batch_id", **key) >= 0 and \
                ("sluicegate_stream_last_batch_timestamp_seconds", tuple(sorted(key.items()))) in samples else None

        first = poll_until(batch_seen, "the stream's first batch in /metrics")
        assert value(first, "sluicegate_stream_state", **key, state="RUNNING") == 1.0
        assert value(first, "sluicegate_stream_state", **key, state="FAILED") == 0.0
        assert value(first, "sluicegate_stream_freshness_seconds", **key) >= 0
        assert value(first, "sluicegate_stream_consecutive_failures", **key) == 0

        land_named(folder, "1.json", [{"id": 3}])

        def later_batch() -> Samples | None:
            samples = scrape(metrics_gateway)[1]
            moved = value(samples, "sluicegate_stream_last_batch_timestamp_seconds", **key) > \
                value(first, "sluicegate_stream_last_batch_timestamp_seconds", **key)
            return samples if moved else None

        second = poll_until(later_batch, "a later batch time in /metrics")
        assert value(second, "sluicegate_stream_last_batch_id", **key) > \
            value(first, "sluicegate_stream_last_batch_id", **key)

        cursor.execute("CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n FROM events")
        cursor.execute("REFRESH MATERIALIZED VIEW total")
        families, samples = scrape(metrics_gateway)
        view = {"database": DATABASE, "view": "total"}
        kinds = {s.labels["kind"]: s.value for s in families["sluicegate_materialized_view_last_refresh_kind"].samples
                 if s.labels["view"] == "total"}
        assert sum(kinds.values()) == 1.0 and set(kinds) == {"FULL", "INCREMENTAL", "UNCHANGED"}
        assert value(samples, "sluicegate_materialized_view_last_refresh_failed", **view) == 0.0
        assert value(samples, "sluicegate_materialized_view_last_refresh_duration_seconds", **view) > 0
        assert value(samples, "sluicegate_materialized_view_last_refresh_timestamp_seconds", **view) >= \
            value(first, "sluicegate_stream_last_batch_timestamp_seconds", **key)
        assert value(samples, "sluicegate_statement_duration_seconds_count", type="REFRESH") >= 1
    finally:
        cursor.execute(f"DROP DATABASE IF EXISTS {DATABASE} CASCADE")
        connection.close()


def test_settings_open_or_close_the_endpoint(start_gateway: Any, metrics_gateway: Any) -> None:
    open_gateway = start_gateway({"server": {"http_port": 0}, "metrics": {"require_auth": False}})
    families, samples = scrape(open_gateway, authorization=None)
    assert "sluicegate_statement_duration_seconds" in families
    # a registry per gateway: the statements of the module's gateway are not this one's
    assert value(samples, "sluicegate_statements_total", type="SELECT", status="FINISHED") == 0
    assert value(scrape(metrics_gateway)[1], "sluicegate_statements_total", type="SELECT", status="FINISHED") >= 1
    closed = start_gateway({"server": {"http_port": 0}, "metrics": {"enabled": False}})
    assert get(closed.server.http_port, "/metrics")[0] == 404
    assert get(closed.server.http_port, "/health")[0] == 200
