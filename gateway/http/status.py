"""`GET /health`, `/ready` and `/metrics`: what a load balancer, an orchestrator and Prometheus ask of a gateway.

Served on the HTTP port (`server.http_port`, beside Thrift's POSTs) and, when `server.status_port` is set, on a port
of their own that serves nothing else (same host and TLS), for a network where only the monitoring reaches it.

- `/health`: 200 while the process answers; no credentials, no work (a liveness probe).
- `/ready`: 200 when the JVM answers, the catalog answers a query and the streams were restored; else 503. Both with
  a JSON body naming each check and its outcome. No credentials: it says nothing about users or data.
- `/metrics`: Prometheus' text format (gateway/metrics.py); 404 when `metrics.enabled` is false; with
  `metrics.require_auth` (the default, as Trino's), the request carries the HTTP port's credentials (Basic or
  Bearer), checked and throttled as a Thrift request's; a refusal is a 401 and counts as a failed login.
"""

from __future__ import annotations

import json
import logging
import socket
import socketserver
import ssl
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from sluicegate.gateway.errors import AuthenticationError
from sluicegate.gateway.http.credentials import HttpAuthenticator
from sluicegate.gateway.metrics import CONTENT_TYPE
from sluicegate.gateway.metrics_collector import readiness
from sluicegate.gateway.service import GatewayService

log = logging.getLogger(__name__)

PATHS = frozenset({"/health", "/ready", "/metrics"})
JSON = "application/json"
CHALLENGE = (("WWW-Authenticate", 'Basic realm="sluicegate"'), ("WWW-Authenticate", 'Bearer realm="sluicegate"'))


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...] = ()


def _json(status: int, value: Any, headers: tuple[tuple[str, str], ...] = ()) -> Answer:
    return Answer(status, (json.dumps(value) + "\n").encode("utf-8"), JSON, headers)


def status_answer(service: GatewayService, authenticator: HttpAuthenticator, path: str,
                  authorization: str | None, address: str) -> Answer | None:
    """The answer to a GET of `path`, or None when it is none of the status paths."""
    path = path.split("?", 1)[0].rstrip("/") or "/"
    if path == "/health":
        return _json(200, {"status": "ok"})
    if path == "/ready":
        checks = readiness(service, service.metrics.collector, service.streams_restored, service.stopping)
        ready = all(outcome == "ok" for outcome in checks.values())
        failed = [name for name, outcome in checks.items() if outcome != "ok"]
        return _json(200 if ready else 503, {"status": "ready" if ready else "not ready", "failed": failed,
                                             "checks": checks})
    if path == "/metrics":
        settings = service.config.metrics
        if not settings.enabled:
            return _json(404, {"error": "metrics are off (metrics.enabled = false)"})
        if settings.require_auth:
            try:
                authenticator.user_of(authorization, address)
            except AuthenticationError as exc:
                log.info("metrics scrape from %s refused: %s", address, exc.message)
                return _json(401, {"error": f"Authentication failed: {exc.message}",
                                   "hint": "scrape with the HTTP port's credentials (Basic user:password or a Bearer "
                                           "token), or set metrics.require_auth = false"}, CHALLENGE)
        return Answer(200, service.metrics.exposition(), CONTENT_TYPE)
    return None


class _StatusRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "sluicegate"
    server: StatusServer

    def setup(self) -> None:
        self.request.settimeout(self.server.service.config.server.handshake_timeout)
        if self.server.tls is not None:
            self.request = self.server.tls.wrap_socket(self.request, server_side=True)
        super().setup()

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        answer = status_answer(self.server.service, self.server.authenticator, self.path,
                               self.headers.get("Authorization"), self.client_address[0])
        if answer is None:
            answer = _json(404, {"error": "this port serves /health, /ready and /metrics only"})
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        for name, value in answer.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(answer.body)


class StatusServer(ThreadingHTTPServer):
    """`server.status_port`: the three status paths and nothing else."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, service: GatewayService, host: str, port: int, authenticator: HttpAuthenticator,
                 tls: ssl.SSLContext | None) -> None:
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.service = service
        self.authenticator = authenticator
        self.tls = tls
        super().__init__((host, port), _StatusRequestHandler)

    def server_bind(self) -> None:
        """As HTTPServer's, without its reverse DNS lookup of the host."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("status connection %s closed with an error", client_address, exc_info=True)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def start(self) -> None:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.5}, name="sluicegate-status",
                         daemon=True).start()
        log.info("health, readiness and metrics on %s:%d%s", self.server_address[0], self.port,
                 " (TLS)" if self.tls else "")

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
