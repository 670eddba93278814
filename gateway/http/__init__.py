"""Thrift over HTTP: the HiveServer2 service on its own port (`server.http_port`), for Hive JDBC's http mode and
Databricks' clients. `server.py` is the transport, `credentials.py` who sent a request, `ownership.py` whose
sessions it may use."""

from __future__ import annotations

import ssl

from sluicegate.gateway.auth.tokens import TokenAuthentication
from sluicegate.gateway.config import ServerSettings
from sluicegate.gateway.errors import ConfigError
from sluicegate.gateway.http.credentials import HttpAuthenticator
from sluicegate.gateway.http.server import ThriftHttpServer
from sluicegate.gateway.service import GatewayService


def http_server(service: GatewayService, host: str, settings: ServerSettings, tls: ssl.SSLContext | None,
                max_connections: int) -> ThriftHttpServer:
    """Bound to `host`:`settings.http_port` (0 = a free port), not yet serving: `start()` it."""
    auth = service.config.auth
    tokens = TokenAuthentication(auth.token_file or auth.password_file.with_name("tokens"))
    password_file = auth.password_file if auth.mode == "password" else None
    authenticator = HttpAuthenticator(service.authenticate, tokens, service.throttle, password_file)
    try:
        return ThriftHttpServer(service, host, settings.http_port, settings, authenticator, tls, max_connections)
    except OSError as exc:
        raise ConfigError(f"cannot serve HTTP on {host}:{settings.http_port} (server.http_port): {exc.strerror or exc}",
                          hint="choose a free port, 0 for any, or -1 for no HTTP port") from exc


__all__ = ["ThriftHttpServer", "http_server"]
