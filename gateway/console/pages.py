"""The console's pages: each a function of what it shows (already filtered to what the viewer may see) returning
the HTML of the page's body; `markup.page` wraps it. Nothing here reads the catalog or the sessions: `app.py` does,
so that what a user may see is decided in one place.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sluicegate.catalog.events import EventRecord
from sluicegate.gateway.console import charts
from sluicegate.gateway.console.markup import csrf_field, esc, link, seconds, table, when
from sluicegate.gateway.console.pipeline import Batch, Refresh, StreamView
from sluicegate.gateway.console.sources import HistoryFilter, HistoryRow, LiveQuery

STATUSES = ("", "FINISHED", "FAILED", "CANCELED", "TIMEDOUT", "RUNNING")


@dataclass(frozen=True)
class Overview:
    version: str
    spark_version: str
    started: float
    health: list[tuple[str, bool, str]]     # (check, passed, detail)
    sessions: list[tuple[str, str, float, int]]   # (user, client, opened at, operations)
    queries: list[LiveQuery]
    is_admin: bool


def login_page(message: str = "") -> str:
    error = f'<p class="error" id="login-error">{esc(message)}</p>' if message else ""
    return (error + '<form method="post" action="/console/login" id="login">'
            '<p><label>User <input name="user" id="user-name" autocomplete="username" required></label></p>'
            '<p><label>Password or token <input name="password" id="password" type="password" '
            'autocomplete="current-password"></label></p>'
            '<p><button type="submit" id="login-submit">Log in</button></p></form>'
            '<p class="muted">The users of the gateway\'s HTTP port: a password (auth.mode), or an access token.</p>')


def _cancel_form(query: LiveQuery, csrf: str) -> str:
    return (f'<form class="inline" method="post" action="/console/queries/cancel">{csrf_field(csrf)}'
            f'<input type="hidden" name="query_id" value="{esc(query.query_id)}">'
            f'<button type="submit" class="cancel" data-query="{esc(query.query_id)}">Cancel</button></form>')


def overview(data: Overview, csrf: str, notice: str = "") -> str:
    now = time.time()
    cards = [("sluicegate", data.version), ("Spark", data.spark_version), ("Up for", seconds(now - data.started)),
             ("Sessions", str(len(data.sessions))), ("Running queries", str(len(data.queries)))]
    body = notice
    body += '<div class="cards">' + "".join(f'<div class="card">{esc(k)}<b>{esc(v)}</b></div>' for k, v in cards)
    body += "</div><h2>Health</h2>" + table(
        ("check", "state", "detail"),
        ((esc(name), '<span class="ok">ok</span>' if passed else '<span class="bad">failing</span>', esc(detail))
         for name, passed, detail in data.health), attrs=' id="health"')
    scope = "every user's" if data.is_admin else "your"
    body += f"<h2>Running queries</h2><p class=\"muted\">{esc(scope)} running statements</p>" + table(
        ("id", "user", "client", "state", "elapsed", "statement", ""),
        ((f"<code>{esc(q.query_id)}</code>", esc(q.user), esc(q.client), esc(q.state), esc(seconds(q.elapsed(now))),
          f"<pre>{esc(q.statement[:2000])}</pre>", _cancel_form(q, csrf)) for q in data.queries),
        empty="no statement running", attrs=' id="queries"')
    body += f"<h2>Open sessions</h2><p class=\"muted\">{esc(scope)} sessions</p>" + table(
        ("user", "client", "opened", "operations"),
        ((esc(user), esc(client), when(opened), esc(count)) for user, client, opened, count in data.sessions),
        empty="no open session", attrs=' id="sessions"')
    return body


def history(rows: Sequence[HistoryRow], filters: HistoryFilter, recorded: bool, is_admin: bool) -> str:
    options = "".join(f'<option value="{esc(s)}"{" selected" if s == filters.status else ""}>{esc(s or "any")}'
                      "</option>" for s in STATUSES)
    form = ('<form method="get" action="/console/history" id="history-filters">'
            + (f'<label>User <input name="user" value="{esc(filters.user)}"></label> ' if is_admin else "")
            + f'<label>Status <select name="status">{options}</select></label> '
            f'<label>Text <input name="text" value="{esc(filters.text)}"></label> '
            '<button type="submit">Filter</button></form>')
    if not recorded:
        return form + ('<p class="note" id="history-empty">Query history is not recorded in this build: no '
                       "statement is kept after it ends. The running ones are on the overview.</p>")
    return form + table(
        ("statement id", "user", "client", "type", "status", "error class", "started", "duration", "rows",
         "statement"),
        ((f"<code>{esc(r.statement_id)}</code>", esc(r.executed_by), esc(r.client), esc(r.statement_type),
          f'<span class="state-{esc(r.status)}">{esc(r.status)}</span>', esc(r.error_class), when(r.start_time),
          esc("" if r.duration_ms is None else f"{r.duration_ms} ms"), esc(r.rows),
          f"<pre>{esc(r.statement_text[:1000])}</pre>") for r in rows),
        empty="no statement matches", attrs=' id="history"')


def _state(stream: Any) -> str:
    if stream is None:
        return '<span class="muted">no stream</span>'
    return f'<span class="state-{esc(stream.status)}">{esc(stream.status)}</span>'


def streams(views: Sequence[StreamView]) -> str:
    return table(
        ("streaming table", "state", "trigger", "last batch", "rows/s", "failures", "last error", "comment"),
        ((link("/console/stream", f"{v.table.database}.{v.table.name}", name=f"{v.table.database}.{v.table.name}"),
          _state(v.stream), esc(v.trigger), when(v.stream.last_batch_at if v.stream else None),
          esc("" if v.stream is None or v.stream.rows_per_second is None else f"{v.stream.rows_per_second:.1f}"),
          esc(v.stream.failures if v.stream else ""), esc(v.stream.last_error if v.stream else ""),
          esc(v.table.comment)) for v in views),
        empty="no streaming table you may read", attrs=' id="streams"')


def stream_detail(view: StreamView, found: list[Batch], events: list[EventRecord], freshness: list[tuple[float, float]],
                  throughput: list[tuple[float, float]]) -> str:
    """`events`: the newest events, newest first."""
    stream = view.stream
    last = found[-1] if found else None
    facts = [("state", _state(stream)), ("trigger", esc(view.trigger)),
             ("sources", "<br>".join(esc(s) for s in view.sources) or '<span class="muted">none recorded</span>'),
             ("last batch", when(stream.last_batch_at if stream else None)
              + (f" (batch {esc(stream.last_batch_id)})" if stream and stream.last_batch_id is not None else "")),
             ("freshness now", esc(seconds(freshness[-1][1]) if freshness else "")),
             ("rows/s (last batch)", esc("" if last is None or last.rows_per_second is None
                                         else f"{last.rows_per_second:.1f}")),
             ("backlog", esc(", ".join(f"{k[len('backlog_'):]} {v}" for k, v in sorted(last.backlog.items()))
                             if last and last.backlog else "none reported")),
             ("failures", esc(stream.failures if stream else "")),
             ("last error", f'<pre class="bad" id="last-error">{esc(stream.last_error)}</pre>'
              if stream and stream.last_error else '<span class="muted">none</span>'),
             ("comment", esc(view.table.comment)), ("owner", esc(view.table.owner))]
    body = table(("", ""), ((esc(k), v) for k, v in facts), attrs=' id="stream-facts"')
    body += "<h2>Freshness and throughput</h2>"
    body += ('<p class="muted">Freshness: at each micro-batch, how long the table had gone without one; the last '
             "point is the age of the newest batch now. Throughput: Spark's processed rows per second.</p>")
    body += charts.time_series("freshness-chart", "freshness", "seconds", freshness) + "<br>"
    body += charts.time_series("throughput-chart", "throughput", "rows/s", throughput)
    if view.flows:
        body += "<h2>Flows</h2>" + table(
            ("flow", "state", "last batch", "last error"),
            ((esc(f.flow), _state(f), when(f.last_batch_at), esc(f.last_error)) for f in view.flows))
    newest = events                  # newest first
    body += f"<h2>Event log</h2><p class=\"muted\">the newest {len(newest)} events " \
            "(all of them: <code>SELECT * FROM event_log(TABLE(...))</code>)</p>"
    body += table(("time", "level", "type", "message"),
                  ((when(e.timestamp), esc(e.level), esc(e.event_type), f"<pre>{esc(e.message[:2000])}</pre>")
                   for e in newest), empty="no event", attrs=' id="events"')
    return body


def views(found: Sequence[tuple[Any, dict[str, Any], list[Refresh]]]) -> str:
    if not found:
        return '<p class="muted" id="views-empty">no materialized view you may read</p>'
    body = ""
    for entry, state, history_rows in found:
        qualified = f"{entry.database}.{entry.name}"
        body += f'<h2 id="view-{esc(qualified)}">{esc(qualified)}</h2>'
        inputs = ", ".join(f"{k}@v{v}" for k, v in sorted((state.get("input_versions") or {}).items()))
        body += table(("", ""), (
            ("status", f'<span class="state-{esc(state.get("status"))}">{esc(state.get("status"))}</span>'),
            ("refresh policy", esc(state.get("refresh_policy"))),
            ("last refresh", when(state.get("last_refresh_at"))),
            ("last technique", esc(state.get("last_kind"))), ("why", esc(state.get("last_reason"))),
            ("inputs", esc(inputs)), ("last error", esc(state.get("last_error"))),
            ("comment", esc(entry.comment))))
        body += table(("time", "outcome", "full refresh asked", "cause", "reason"),
                      ((when(r.at), f'<span class="{"bad" if r.level == "ERROR" else ""}">{esc(r.outcome)}</span>',
                        esc("" if r.full_refresh is None else ("yes" if r.full_refresh else "no")), esc(r.cause),
                        esc(r.reason)) for r in history_rows[:50]),
                      empty="no refresh recorded", attrs=f' id="refreshes-{esc(qualified)}"')
    return body


def lineage(nodes: Sequence[charts.Node], edges: Sequence[charts.Edge]) -> str:
    legend = " ".join(f'<span class="card">{esc(kind)}</span>' for kind in charts.KIND_COLOURS)
    return (f'<p class="muted">What feeds what, over the objects you may read: {legend}</p>'
            + charts.lineage_graph(nodes, edges))
