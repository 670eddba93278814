"""Thrift over HTTP: the HiveServer2 service on its own port (`server.http_port`), for Hive JDBC's http mode and
Databricks' clients. `server.py` is the transport, `credentials.py` who sent a request, `ownership.py` whose
sessions it may use, `status.py` the GETs of /health, /ready and /metrics (here and on `server.status_port`)."""

from __future__ import annotations

import base64
import ssl

from sluicegate.gateway.auth.tokens import TokenAuthentication
from sluicegate.gateway.config import ServerSettings
from sluicegate.gateway.console.app import Console
from sluicegate.gateway.console.sources import CatalogHistory, OperationLiveQueries
from sluicegate.gateway.errors import AuthenticationError, ConfigError
from sluicegate.gateway.http.credentials import HttpAuthenticator
from sluicegate.gateway.http.server import ThriftHttpServer
from sluicegate.gateway.http.status import StatusServer
from sluicegate.gateway.service import GatewayService


def http_authenticator(service: GatewayService) -> HttpAuthenticator:
    """Who sent an HTTP request: passwords as the binary port checks them, tokens, the same login throttle."""
    auth = service.config.auth
    tokens = TokenAuthentication(auth.token_file or auth.password_file.with_name("tokens"))
    password_file = auth.password_file if auth.mode == "password" else None
    return HttpAuthenticator(service.authenticate, tokens, service.throttle, password_file)


def http_server(service: GatewayService, host: str, settings: ServerSettings, tls: ssl.SSLContext | None,
                max_connections: int) -> ThriftHttpServer:
    """Bound to `host`:`settings.http_port` (0 = a free port), not yet serving: `start()` it."""
    authenticator = http_authenticator(service)
    console = _console(service, authenticator, secure=tls is not None)
    try:
        return ThriftHttpServer(service, host, settings.http_port, settings, authenticator, tls, max_connections,
                                console)
    except OSError as exc:
        raise ConfigError(f"cannot serve HTTP on {host}:{settings.http_port} (server.http_port): {exc.strerror or exc}",
                          hint="choose a free port, 0 for any, or -1 for no HTTP port") from exc


def status_server(service: GatewayService, host: str, port: int, tls: ssl.SSLContext | None) -> StatusServer:
    """/health, /ready and /metrics on `host`:`port` (server.status_port), not yet serving: `start()` it."""
    try:
        return StatusServer(service, host, port, http_authenticator(service), tls)
    except OSError as exc:
        raise ConfigError(f"cannot serve the status port on {host}:{port} (server.status_port): {exc.strerror or exc}",
                          hint="choose a free port, 0 for any, or -1 for none") from exc


def _console(service: GatewayService, authenticator: HttpAuthenticator, secure: bool) -> Console | None:
    """The web console (console.enabled), whose login form is checked as a request's Basic header would be."""
    settings = service.config.console
    if not settings.enabled:
        return None

    def check_login(user: str, secret: str, address: str) -> str:
        if ":" in user:
            raise AuthenticationError("a user name has no ':'")
        header = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
        return authenticator.user_of(header, address)

    history = CatalogHistory(service.catalog, service.config.history.enabled)
    live = OperationLiveQueries(service.sessions, lambda user: service.policy.principal(user).is_admin,
                                service.runtime)
    return Console(service, check_login, idle_timeout=settings.session_timeout, secure_cookie=secure,
                   history=history, live=live)


__all__ = ["StatusServer", "ThriftHttpServer", "http_server", "status_server"]
