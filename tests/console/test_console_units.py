"""The console's pure parts, no JVM: logins (expiry, CSRF), escaping, the request's cookie and form, the SVG charts,
and the figures drawn from an event log (micro-batches, freshness, refresh history)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from sluicegate.catalog.events import EventRecord
from sluicegate.gateway.config import load_config
from sluicegate.gateway.console import charts, pipeline
from sluicegate.gateway.console.app import SECURITY_HEADERS, Request, is_console_path
from sluicegate.gateway.console.logins import MAX_AGE, Logins, csrf_matches
from sluicegate.gateway.console.markup import esc, page
from sluicegate.gateway.console.sources import HistoryFilter, NoHistory
from sluicegate.gateway.errors import ConfigError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_login_lives_while_used_and_ends_when_idle_or_too_old() -> None:
    clock = Clock()
    logins = Logins(idle=60, clock=clock)
    token, login = logins.open("alice")
    assert logins.get(token) is login and login.user == "alice"
    clock.now += 59
    assert logins.get(token) is login          # each request restarts the idle clock
    clock.now += 61
    assert logins.get(token) is None           # idle too long
    token, _ = logins.open("alice")
    for _ in range(int(MAX_AGE // 50) + 1):
        clock.now += 50
        found = logins.get(token)
    assert found is None                       # used all along, but older than MAX_AGE


def test_tokens_are_random_and_unknown_or_closed_ones_are_refused() -> None:
    logins = Logins(idle=60)
    first, _ = logins.open("alice")
    second, _ = logins.open("alice")
    assert first != second and len(first) >= 40
    assert logins.get(None) is None and logins.get("") is None and logins.get(first + "x") is None
    logins.close(first)
    assert logins.get(first) is None and logins.get(second) is not None
    assert first not in repr(vars(logins))     # only a keyed digest of the cookie is kept


def test_csrf_token_must_match_the_login() -> None:
    logins = Logins(idle=60)
    _, alice = logins.open("alice")
    _, bob = logins.open("bob")
    assert csrf_matches(alice, alice.csrf)
    assert not csrf_matches(alice, bob.csrf)
    assert not csrf_matches(alice, None) and not csrf_matches(alice, "")


def test_everything_user_given_is_escaped() -> None:
    evil = "<script>alert('x')</script>\"&"
    assert esc(evil) == "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&quot;&amp;"
    html = page(evil, f"<p>{esc(evil)}</p>", user=evil, csrf=evil)
    assert "<script>" not in html
    assert "script-src" not in dict(SECURITY_HEADERS)["Content-Security-Policy"]  # default-src 'none': no script


def test_request_reads_its_cookie_query_and_form() -> None:
    request = Request.of("POST", "/console/queries/cancel?x=1&x=2", "a=b; sluicegate_console=tok-123", "10.0.0.1",
                         b"query_id=abc&csrf=c%26d")
    assert request.path == "/console/queries/cancel" and request.query == {"x": "1"}
    assert request.token == "tok-123" and request.form == {"query_id": "abc", "csrf": "c&d"}
    assert Request.of("GET", "/console/", '"broken; =', "x").token is None
    assert Request.of("GET", "/console/", None, "x").token is None
    assert is_console_path("/console") and is_console_path("/console/streams")
    assert not is_console_path("/consoleX") and not is_console_path("/cliservice")


def test_a_post_from_another_sites_page_is_cross_site() -> None:
    def post(origin: str | None, host: str | None = "127.0.0.1:10001") -> Request:
        return Request.of("POST", "/console/login", None, "x", b"", origin, host)

    assert not post(None).cross_site                      # no Origin: not a browser's cross-site form
    assert not post("http://127.0.0.1:10001").cross_site
    assert post("https://evil.example").cross_site and post("http://127.0.0.1:9999").cross_site
    assert post("null").cross_site                        # a sandboxed or file:// page


def test_a_time_series_is_thinned_and_says_what_it_was_given() -> None:
    points = [(1_700_000_000.0 + i, float(i % 7)) for i in range(5000)]
    svg = charts.time_series("c", "freshness", "s", points)
    assert 'data-points="5000"' in svg and f'data-last="{points[-1][0]}"' in svg
    assert svg.count(",") < 2 * charts.MAX_POINTS + 20   # at most MAX_POINTS coordinates drawn
    empty = charts.time_series("c", "<b>", "s", [])
    assert "no micro-batch" in empty and "<b>" not in empty


def test_lineage_graph_lays_out_columns_and_escapes_labels() -> None:
    nodes = [charts.Node("s", "files /in/<x>", "source"), charts.Node("t", "db.t", "streaming table"),
             charts.Node("v", "db.v", "materialized view")]
    svg = charts.lineage_graph(nodes, [charts.Edge("s", "t"), charts.Edge("t", "v")])
    assert 'data-nodes="3"' in svg and svg.count('class="edge"') == 2
    assert "<x>" not in svg and "&lt;x&gt;" in svg
    assert charts._depths(nodes, [charts.Edge("s", "t"), charts.Edge("t", "v")]) == {"s": 0, "t": 1, "v": 2}


def _event(seconds: int, event_type: str, details: dict, message: str = "m", level: str = "INFO") -> EventRecord:
    at = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)
    return EventRecord(str(seconds), "{}", "{}", at, message, level, None, None, json.dumps(details), event_type)


def test_batches_and_freshness_come_from_flow_progress_events() -> None:
    events = [_event(0, "update_progress", {"update_progress": {"state": "RUNNING"}}),
              _event(10, "flow_progress", {"flow_progress": {"batch_id": 0, "duration_ms": 500, "metrics": {
                  "num_input_rows": 100, "num_output_rows": 100, "backlog_files": 3}}}),
              _event(40, "flow_progress", {"flow_progress": {"batch_id": 1, "processed_rows_per_second": 80.0,
                                                             "metrics": {"num_input_rows": 8}}})]
    found = pipeline.batches(events)
    assert [b.batch_id for b in found] == [0, 1]
    assert found[0].rows_per_second == 200.0 and found[0].backlog == {"backlog_files": 3}
    assert found[1].freshness == 30.0 and found[1].rows_per_second == 80.0
    now = found[1].at + 5
    assert pipeline.freshness_points(found, now) == [(found[1].at, 30.0), (now, 5.0)]
    assert pipeline.throughput_points(found) == [(found[0].at, 200.0), (found[1].at, 80.0)]


def test_refresh_history_says_incremental_or_full_and_why() -> None:
    events = [_event(0, "create_update", {"create_update": {"cause": "USER_ACTION", "full_refresh": False}},
                     "created by alice"),
              _event(5, "create_update", {"create_update": {"cause": "USER_ACTION", "full_refresh": False,
                                                            "technique": "INCREMENTAL", "reason": "appends only"}}),
              _event(9, "update_progress", {"update_progress": {"state": "FAILED"}}, "refresh failed", "ERROR")]
    history = pipeline.refreshes(events)
    assert [(r.outcome, r.reason) for r in history] == [
        ("FAILED", "refresh failed"), ("INCREMENTAL", "appends only"), ("CREATED", "created by alice")]


def test_no_history_says_it_records_nothing() -> None:
    history = NoHistory()
    assert history.recorded is False and history.query("alice", False, HistoryFilter()) == []


def test_console_settings(tmp_path: Path) -> None:
    config = load_config(warehouse=tmp_path)
    assert config.console.enabled and config.console.session_timeout == 1800.0
    off = load_config(warehouse=tmp_path, overrides={"console": {"enabled": False, "session_timeout": 60}})
    assert not off.console.enabled and off.console.session_timeout == 60.0
    with pytest.raises(ConfigError, match="console.session_timeout"):
        load_config(warehouse=tmp_path, overrides={"console": {"session_timeout": 0}})


def _record_batches(store: Any, first: int, count: int) -> None:
    for batch in range(first, first + count):
        store.record_event("b", "t", "FLOW_PROGRESS", f"batch {batch}", event_type="flow_progress", level="METRICS",
                           details={"flow_progress": {"batch_id": batch, "processed_rows_per_second": 10.0 + batch,
                                                      "metrics": {"num_input_rows": 1}}})


def test_event_logs_are_read_incrementally_within_their_retention(tmp_path: Path) -> None:
    from sluicegate.catalog.events import EventRetention
    from sluicegate.catalog.store import CatalogStore, TableEntry

    store = CatalogStore.for_warehouse(tmp_path, EventRetention(max_rows_per_table=5))
    try:
        store.create_database("b")
        store.create_table(TableEntry("b", "t", "STREAMING_TABLE", None, None, None))
        _record_batches(store, 0, 3)
        logs = pipeline.EventLogs(store, store.event_retention)
        entry = store.require_table("b", "t")
        found, newest = logs.read(entry)
        assert [b.batch_id for b in found] == [0, 1, 2] and found[0].freshness is None
        assert [e.message for e in newest] == ["batch 2", "batch 1", "batch 0"]
        _record_batches(store, 3, 4)
        found, newest = logs.read(entry)
        assert [b.batch_id for b in found] == [2, 3, 4, 5, 6]          # the log's own bound: 5 newest
        assert found[1].freshness is not None                           # continues across reads
        assert [e.message for e in newest] == [f"batch {i}" for i in (6, 5, 4, 3, 2)]
        assert store.event_log("b", "t", after_sequence=6) == store.event_log("b", "t")[-1:]
        store.drop_table("b", "t")
        store.create_table(TableEntry("b", "t", "STREAMING_TABLE", None, None, None))
        _record_batches(store, 0, 1)
        found, _ = logs.read(store.require_table("b", "t"))
        assert [b.batch_id for b in found] == [0]                       # a new table is a new log
    finally:
        store.close()
