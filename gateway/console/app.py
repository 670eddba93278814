"""The web console: routes, login and what each user may see. It is served on the HTTP port under `/console/`
(gateway/http/server.py hands it every request there) and knows nothing of HTTP beyond `Request` and `Response`.

- Login: a form checked exactly as an HTTP request's Basic header is (`check_login`: the HTTP port's users,
  passwords or tokens, the same throttling and lockout); then a cookie (`logins.py`). A page without a live cookie
  redirects to the login page; a POST without the login's CSRF token, or sent from another site's page (its Origin
  header), is refused (403).
- What a user sees: their own sessions and running queries (admins: all), the streaming tables and materialized
  views they may read (`Policy.may_read`), and the lineage over those.
- Every page is sent with a Content-Security-Policy that allows no script and only its own inline style (by hash),
  `no-store` caching, and no framing.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from importlib import metadata
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlencode, urlsplit

from sluicegate.dialect.errors import SqlError
from sluicegate.gateway.console import pages, pipeline
from sluicegate.gateway.console.logins import COOKIE, Login, Logins, csrf_matches
from sluicegate.gateway.console.markup import STYLE, esc, page
from sluicegate.gateway.console.sources import (
    HistoryFilter,
    HistorySource,
    LiveQueries,
    NoHistory,
    OperationLiveQueries,
)
from sluicegate.gateway.errors import AuthenticationError

if TYPE_CHECKING:
    from sluicegate.gateway.service import GatewayService

log = logging.getLogger(__name__)

PREFIX = "/console"
MAX_FORM_BYTES = 16 * 1024
_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
SECURITY_HEADERS = (
    ("Content-Security-Policy", f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; img-src 'self'; "
                                "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "same-origin"))   # no-referrer would make a browser send `Origin: null` with our own forms

CheckLogin = Callable[[str, str, str], str]   # (user, password or token, client address) -> the user, or raises


def is_console_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


@dataclass(frozen=True)
class Request:
    method: str                       # GET or POST
    path: str                         # without the query string
    query: dict[str, str]
    cookie_header: str | None
    address: str
    form: dict[str, str] = field(default_factory=dict)
    origin: str | None = None         # the Origin header a browser sends with a POST
    host: str | None = None           # the Host header

    @classmethod
    def of(cls, method: str, target: str, cookie_header: str | None, address: str, body: bytes = b"",
           origin: str | None = None, host: str | None = None) -> Request:
        path, _, query = target.partition("?")
        return cls(method, path, _fields(query), cookie_header, address,
                   _fields(body.decode("utf-8", "replace")) if body else {}, origin, host)

    @property
    def cross_site(self) -> bool:
        """A POST a browser sent from another site's page (its Origin is not this host): refused, login included
        (a forged login would sign the victim in as the attacker)."""
        if not self.origin or self.origin == "null" or not self.host:
            return bool(self.origin == "null")
        return urlsplit(self.origin).netloc.lower() != self.host.strip().lower()

    @property
    def token(self) -> str | None:
        if not self.cookie_header:
            return None
        try:
            cookies: SimpleCookie = SimpleCookie(self.cookie_header)
        except CookieError:
            return None
        morsel = cookies.get(COOKIE)
        return morsel.value if morsel is not None else None


def _fields(text: str) -> dict[str, str]:
    """A query string or form body as its first value per name (an unparsable one as none)."""
    try:
        return {k: v[0] for k, v in parse_qs(text, keep_blank_values=True, max_num_fields=50).items()}
    except ValueError:
        return {}


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str = "text/html; charset=utf-8"


def _html(status: int, text: str, *headers: tuple[str, str]) -> Response:
    return Response(status, text.encode("utf-8"), (*SECURITY_HEADERS, *headers))


def _redirect(location: str, *headers: tuple[str, str]) -> Response:
    return Response(303, b"", (("Location", location), *SECURITY_HEADERS, *headers))


def _version() -> str:
    try:
        return metadata.version("sluicegate")
    except metadata.PackageNotFoundError:
        return "unknown"


class Console:
    def __init__(self, service: GatewayService, check_login: CheckLogin, *, idle_timeout: float,
                 secure_cookie: bool = False, history: HistorySource | None = None,
                 live: LiveQueries | None = None) -> None:
        """`history`, `live`: where the query history and the running queries come from (the defaults: none
        recorded, and the operation registry); replace them to serve the real ones."""
        self.service = service
        self.check_login = check_login
        self.logins = Logins(idle_timeout)
        self.secure_cookie = secure_cookie
        self.history: HistorySource = history if history is not None else NoHistory()
        self.live: LiveQueries = live if live is not None else OperationLiveQueries(service.sessions, self._is_admin)
        self.started = time.time()
        self.event_logs = pipeline.EventLogs(service.catalog, service.catalog.event_retention)

    def _is_admin(self, user: str) -> bool:
        return self.service.policy.principal(user).is_admin

    # -- routing ----------------------------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        try:
            return self._route(request)
        except Exception:  # one broken page must not take the port's thread down; the log has it
            log.exception("console page %s failed", request.path)
            return _html(500, page("Error", '<p class="error">this page failed; the gateway\'s log says why</p>'))

    def _route(self, request: Request) -> Response:
        path = request.path.rstrip("/") or "/"
        if request.method == "POST" and request.cross_site:
            return _html(403, page("Refused", '<p class="error">a form of another site may not act here</p>'))
        if path == "/console/login":
            return self._login_form() if request.method == "GET" else self._login(request)
        login = self.logins.get(request.token)
        if login is None:
            return _redirect("/console/login")
        if request.method == "POST":
            if not csrf_matches(login, request.form.get("csrf")):
                return _html(403, page("Refused", '<p class="error">the form is stale or not this console\'s: '
                                                  "reload the page and try again</p>"))
            if path == "/console/logout":
                self.logins.close(request.token)
                return _redirect("/console/login", ("Set-Cookie", self._cookie("", expire=True)))
            if path == "/console/queries/cancel":
                return self._cancel(login, request.form.get("query_id", ""), request.form.get("message", ""))
            return _html(404, page("Not found", "<p>no such action</p>", user=login.user, csrf=login.csrf))
        pages_by_path = {"/console": self._overview, "/console/history": self._history,
                         "/console/streams": self._streams, "/console/stream": self._stream,
                         "/console/views": self._views, "/console/lineage": self._lineage}
        render = pages_by_path.get(path)
        if render is None:
            return _html(404, page("Not found", "<p>no such page</p>", user=login.user, csrf=login.csrf))
        return render(login, request)

    # -- login ------------------------------------------------------------------------------------------------

    def _cookie(self, token: str, expire: bool = False) -> str:
        cookie = f"{COOKIE}={token}; Path={PREFIX}; HttpOnly; SameSite=Strict"
        if self.secure_cookie:
            cookie += "; Secure"
        return cookie + ("; Max-Age=0" if expire else "")

    def _login_form(self, message: str = "", status: int = 200) -> Response:
        return _html(status, page("Log in", pages.login_page(message)))

    def _login(self, request: Request) -> Response:
        user, password = request.form.get("user", "").strip(), request.form.get("password", "")
        if not user:
            return self._login_form("enter a user name", 400)
        try:
            user = self.check_login(user, password, request.address)
        except AuthenticationError as exc:
            log.info("console login of %r from %s refused: %s", user, request.address, exc.message)
            return self._login_form(exc.message, 401)
        token, _ = self.logins.open(user)
        log.info("console login of %r from %s", user, request.address)
        return _redirect("/console/", ("Set-Cookie", self._cookie(token)))

    # -- pages ------------------------------------------------------------------------------------------------

    def _page(self, login: Login, title: str, body: str, here: str) -> Response:
        return _html(200, page(title, body, user=login.user, csrf=login.csrf, here=here))

    def _overview(self, login: Login, request: Request) -> Response:
        admin = self._is_admin(login.user)
        sessions = [(s.user, s.client, s.created, len(s.operations())) for s in self.service.sessions.list()
                    if admin or s.user == login.user]
        data = pages.Overview(_version(), self._spark_version(), self.started, self._health(), sessions,
                              self.live.list(login.user, admin), admin)
        notice = ""
        if request.query.get("cancelled"):
            notice = f'<p class="note" id="notice">cancelled query <code>{esc(request.query["cancelled"])}</code></p>'
        elif request.query.get("refused"):
            notice = (f'<p class="error" id="notice">query <code>{esc(request.query["refused"])}</code> was not '
                      f'cancelled: {esc(request.query.get("reason", ""))}</p>')
        return self._page(login, "Overview", pages.overview(data, login.csrf, notice), "/console/")

    def _spark_version(self) -> str:
        try:
            return str(self.service.spark.version)
        except Exception:  # noqa: BLE001 - a JVM that does not answer shows in the health table
            return "?"

    def _health(self) -> list[tuple[str, bool, str]]:
        checks: list[tuple[str, bool, str]] = []
        try:
            databases = len(self.service.catalog.list_databases())
            checks.append(("catalog", True, f"answers ({databases} databases)"))
        except Exception as exc:  # noqa: BLE001 - a failing catalog is what this check reports
            checks.append(("catalog", False, f"{type(exc).__name__}: {exc}"))
        try:
            self.service.spark.sparkContext.statusTracker().getActiveJobsIds()
            checks.append(("Spark (JVM)", True, "answers"))
        except Exception as exc:  # noqa: BLE001 - a JVM gone is what this check reports
            checks.append(("Spark (JVM)", False, f"{type(exc).__name__}: {exc}"))
        try:
            streams = self.service.catalog.list_streams()
            states: dict[str, int] = {}
            for stream in streams:
                if stream.desired_state != pipeline.MATERIALIZED_VIEW:
                    states[stream.status] = states.get(stream.status, 0) + 1
            failing = states.get("FAILED", 0) + states.get("RETRYING", 0)
            detail = ", ".join(f"{n} {state}" for state, n in sorted(states.items())) or "none"
            checks.append(("streams", failing == 0, detail))
        except Exception as exc:  # noqa: BLE001 - reported, as above
            checks.append(("streams", False, f"{type(exc).__name__}: {exc}"))
        return checks

    def _cancel(self, login: Login, query_id: str, message: str) -> Response:
        try:
            self.live.cancel(query_id, login.user, message[:500])
        except SqlError as exc:  # kill_statement's refusals: not running (42704), not yours (42501), ...
            log.info("console cancel of %s by %r refused: %s", query_id, login.user, exc.message)
            return _redirect("/console/?" + urlencode({"refused": query_id[:64], "reason": exc.message[:300]}))
        log.info("console: %r cancelled query %s", login.user, query_id)
        return _redirect("/console/?" + urlencode({"cancelled": query_id[:64]}))

    def _history(self, login: Login, request: Request) -> Response:
        admin = self._is_admin(login.user)
        status = request.query.get("status", "")
        filters = HistoryFilter(user=request.query.get("user", "").strip() if admin else "",
                                status=status if status in pages.STATUSES else "",
                                text=request.query.get("text", "")[:200])
        rows = self.history.query(login.user, admin, filters) if self.history.recorded else []
        return self._page(login, "Query history", pages.history(rows, filters, self.history.recorded, admin),
                          "/console/history")

    def _streams(self, login: Login, request: Request) -> Response:
        store, policy = self.service.catalog, self.service.policy
        found = [pipeline.stream_view(store, entry)
                 for entry in pipeline.visible(store, policy, login.user, pipeline.STREAMING_TABLE)]
        return self._page(login, "Streaming tables", pages.streams(found), "/console/streams")

    def _stream(self, login: Login, request: Request) -> Response:
        store, policy = self.service.catalog, self.service.policy
        name = request.query.get("name", "")
        entry = pipeline.find_visible(store, policy, login.user, name, pipeline.STREAMING_TABLE)
        if entry is None:
            return _html(404, page("Not found", f"<p>no streaming table {esc(name)} you may read</p>",
                                   user=login.user, csrf=login.csrf))
        view = pipeline.stream_view(store, entry)
        found, newest = self.event_logs.read(entry)
        body = pages.stream_detail(view, found, newest, pipeline.freshness_points(found, time.time()),
                                   pipeline.throughput_points(found))
        return self._page(login, f"{entry.database}.{entry.name}", body, "/console/streams")

    def _views(self, login: Login, request: Request) -> Response:
        store, policy = self.service.catalog, self.service.policy
        found = [(entry, pipeline.view_state(store, entry), pipeline.refreshes(store.event_log(entry.database,
                                                                                                 entry.name)))
                 for entry in pipeline.visible(store, policy, login.user, pipeline.MATERIALIZED_VIEW)]
        return self._page(login, "Materialized views", pages.views(found), "/console/views")

    def _lineage(self, login: Login, request: Request) -> Response:
        nodes, edges = pipeline.lineage(self.service.catalog, self.service.policy, login.user)
        return self._page(login, "Lineage", pages.lineage(nodes, edges), "/console/lineage")
