"""HTML the console writes: every piece of text goes through `esc` (table names, comments, statements, error
messages and user names are all user data, and user data in HTML is an XSS vector), and pages are built from these
few helpers so that nothing is formatted into HTML anywhere else. The page's Content-Security-Policy (app.py) runs
no script at all, so a slip here still executes nothing.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Iterable, Sequence
from urllib.parse import urlencode

NAV = (("/console/", "Overview"), ("/console/history", "Query history"), ("/console/streams", "Streaming tables"),
       ("/console/views", "Materialized views"), ("/console/lineage", "Lineage"))

STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#1d2733;background:#f6f7f9}
header{background:#1d2733;color:#fff;padding:.6em 1.2em;display:flex;gap:1.4em;align-items:center}
header a{color:#cfe3ff;text-decoration:none}header a.here{color:#fff;font-weight:600}
header .who{margin-left:auto;display:flex;gap:.8em;align-items:center}
main{padding:1em 1.4em}h1{font-size:1.35em}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;background:#fff;font-size:.9em;margin:.4em 0}
th,td{border:1px solid #d8dde3;padding:.3em .55em;text-align:left;vertical-align:top}th{background:#eef1f4}
code,pre{font-family:ui-monospace,monospace;font-size:.88em}pre{white-space:pre-wrap;margin:0;max-width:60em}
.state-RUNNING,.ok{color:#0a7a28}.state-FAILED,.state-RETRYING,.bad{color:#b3261e}.muted{color:#66717d}
.note{background:#fff;border-left:4px solid #6c8ebf;padding:.6em 1em;max-width:60em}
.error{background:#fde8e6;border-left:4px solid #b3261e;padding:.6em 1em}
form.inline{display:inline}svg{background:#fff;border:1px solid #d8dde3}
.cards{display:flex;gap:1em;flex-wrap:wrap}
.card{background:#fff;border:1px solid #d8dde3;padding:.6em 1em;min-width:9em}
.card b{display:block;font-size:1.3em}
"""


def esc(value: object) -> str:
    """Text as HTML text or a quoted attribute value: `& < > " '` escaped; None as empty."""
    return "" if value is None else html.escape(str(value), quote=True)


def when(value: dt.datetime | float | None) -> str:
    """A time as UTC `YYYY-MM-DD HH:MM:SS` (epoch seconds or a datetime), escaped; '' for None."""
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        value = dt.datetime.fromtimestamp(value, dt.timezone.utc)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return esc(value.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"))


def seconds(value: float | None) -> str:
    if value is None:
        return ""
    if value < 120:
        return f"{value:.1f} s"
    if value < 7200:
        return f"{value / 60:.1f} min"
    return f"{value / 3600:.1f} h"


def link(path: str, text: object, **query: str) -> str:
    href = path + ("?" + urlencode(query) if query else "")
    return f'<a href="{esc(href)}">{esc(text)}</a>'


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], empty: str = "none", attrs: str = "") -> str:
    """A table whose cells are already HTML (built with `esc`); `headers` are escaped here."""
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    if not body:
        return f'<p class="muted empty"{attrs}>{esc(empty)}</p>'   # the same id: a page reads the same either way
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    thead = f"<thead><tr>{head}</tr></thead>" if any(headers) else ""   # a table of facts has no column names
    return f"<table{attrs}>{thead}<tbody>{body}</tbody></table>"


def csrf_field(csrf: str) -> str:
    return f'<input type="hidden" name="csrf" value="{esc(csrf)}">'


def page(title: str, body: str, *, user: str | None = None, csrf: str | None = None, here: str = "") -> str:
    """A whole page: the navigation and logout for a logged-in user, the body (HTML) inside <main>."""
    header = '<header><b>sluicegate</b>'
    if user is not None:
        header += "".join(f'<a href="{esc(href)}"{" class=here" if href == here else ""}>{esc(text)}</a>'
                          for href, text in NAV)
        header += (f'<span class="who"><span id="user">{esc(user)}</span>'
                   f'<form class="inline" method="post" action="/console/logout">{csrf_field(csrf or "")}'
                   '<button type="submit" id="logout">Log out</button></form></span>')
    header += "</header>"
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)} - sluicegate</title>'
            f"<style>{STYLE}</style></head><body>{header}<main><h1>{esc(title)}</h1>{body}</main></body></html>")
