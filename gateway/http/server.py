"""Thrift over HTTP/1.1 (Hive's `transportMode=http`, Databricks' clients): one POST per RPC, the body one
TBinaryProtocol message, answered 200 `application/x-thrift`. Any path is accepted (`/cliservice`,
`/sql/1.0/warehouses/x`, ...).

A standard-library ThreadingHTTPServer: one thread per connection, keep-alive, optional TLS (the binary port's
certificate, handshake in the connection's thread), the binary port's connection caps. Each POST is authenticated
from its `Authorization` header (`credentials.py`) before its body is decoded: a refusal is a 401 with Hive's
`WWW-Authenticate` and the `x-thriftserver-error-message` header Databricks' clients show, and nothing runs. Then a
fresh handler, bound to that user, answers the one message, so sessions are the service's, not a connection's:
they live until CloseSession or `session.idle_timeout`, and a request naming another user's session is refused
(`ownership.py`). A body over `server.max_message_bytes` gets 413 and one that is not a Thrift message gets 400.

Requests under `/console/` go to the web console (gateway/console/), which has its own login and cookie.

`GET /.well-known/databricks-config` answers 404 and the connector's feature-flag path an empty flag list, at once
and without credentials, so that clients probing them do not stall. `GET /health`, `/ready` and `/metrics` are
`status.py`'s.
"""

from __future__ import annotations

import json
import logging
import socket
import socketserver
import ssl
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocol, TBinaryProtocolAccelerated
from thrift.Thrift import TApplicationException, TMessageType
from thrift.transport.TTransport import TMemoryBuffer

from sluicegate.gateway.config import ServerSettings
from sluicegate.gateway.console.app import MAX_FORM_BYTES, Console, Request, is_console_path
from sluicegate.gateway.errors import AuthenticationError
from sluicegate.gateway.http.credentials import HttpAuthenticator
from sluicegate.gateway.http.ownership import OwnerCheckedHandler, processor_class
from sluicegate.gateway.http.status import status_answer
from sluicegate.gateway.service import GatewayService
from sluicegate.gateway.thrift import enable_fast_codec
from sluicegate.gateway.thrift.handler import TCLIServiceHandler

log = logging.getLogger(__name__)

THRIFT_CONTENT_TYPE = "application/x-thrift"
ERROR_HEADER = "x-thriftserver-error-message"
FEATURE_FLAGS_PATH = "/api/2.0/connector-service/feature-flags/"
WELL_KNOWN_PREFIX = "/.well-known/"


def _header_text(message: str) -> str:
    """A message as one header line: printable latin-1, bounded."""
    text = " ".join(message.split())[:1000]
    return text.encode("latin-1", "replace").decode("latin-1")


class _ThriftHttpRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    server_version = "sluicegate"
    server: ThriftHttpServer

    # -- connection ---------------------------------------------------------------------------------------------

    def setup(self) -> None:
        settings = self.server.settings
        self.request.settimeout(settings.handshake_timeout)
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.server.tls is not None:
            self.request = self.server.tls.wrap_socket(self.request, server_side=True)
        self.server.track(self.request)
        super().setup()

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.untrack(self.request)
            try:
                self.request.close()
            except OSError:
                pass

    def handle_one_request(self) -> None:
        """A kept-alive connection may wait `server.http_idle_timeout` for its next request; once a request
        starts, each read gets `server.handshake_timeout`."""
        settings = self.server.settings
        try:
            self.connection.settimeout(settings.http_idle_timeout)
            if not self.rfile.peek(1):
                self.close_connection = True
                return
            self.connection.settimeout(settings.handshake_timeout)
        except (OSError, ValueError):
            self.close_connection = True
            return
        super().handle_one_request()

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    # -- answers ------------------------------------------------------------------------------------------------

    def _answer(self, status: int, body: bytes, content_type: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        self._answer(status, (message + "\n").encode("utf-8"), "text/plain; charset=utf-8",
                     ((ERROR_HEADER, _header_text(message)), *headers))

    def _console(self, method: str) -> None:
        """A console page or action: its answer is the console's (`gateway/console/app.py`)."""
        body = b""
        if method == "POST":
            if int(self.headers.get("Content-Length") or 0) > MAX_FORM_BYTES:
                self.close_connection = True
                self._error(413, f"a console form has at most {MAX_FORM_BYTES} bytes")
                return
            read = self._read_body()
            if read is None:
                return
            body = read
        assert self.server.console is not None
        answer = self.server.console.handle(Request.of(method, self.path, self.headers.get("Cookie"),
                                                       self.client_address[0], body, self.headers.get("Origin"),
                                                       self.headers.get("Host")))
        self._answer(answer.status, answer.body, answer.content_type, answer.headers)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if self.server.console is not None and is_console_path(path):
            self._console("GET")
            return
        if path.startswith(FEATURE_FLAGS_PATH):
            self._answer(200, json.dumps({"flags": [], "ttl_seconds": 900}).encode(), "application/json")
            return
        if path.startswith(WELL_KNOWN_PREFIX):
            self._answer(404, b'{"error_code": "NOT_FOUND", "message": "not a Databricks workspace"}',
                         "application/json")
            return
        status = status_answer(self.server.service, self.server.authenticator, path,
                               self.headers.get("Authorization"), self.client_address[0])
        if status is not None:
            self._answer(status.status, status.body, status.content_type, status.headers)
            return
        self._error(404, "sluicegate speaks Thrift over HTTP POST here; GET serves /health, /ready and /metrics")

    def do_POST(self) -> None:
        if self.server.console is not None and is_console_path(self.path.split("?", 1)[0]):
            self._console("POST")
            return
        body = self._read_body()
        if body is None:
            return
        address = self.client_address[0]
        try:
            user = self.server.authenticator.user_of(self.headers.get("Authorization"), address)
        except AuthenticationError as exc:
            log.info("HTTP request from %s refused: %s", address, exc.message)
            message = f"Authentication failed: {exc.message}"
            challenge = (("WWW-Authenticate", 'Basic realm="sluicegate"'),
                         ("WWW-Authenticate", 'Bearer realm="sluicegate"'))
            refusal = thrift_refusal(body, message)
            if refusal is None:
                self._error(401, message, challenge)
            else:   # clients that decode the body whatever the status (PyHive's THttpClient) read the reason too
                self._answer(401, refusal, THRIFT_CONTENT_TYPE, ((ERROR_HEADER, _header_text(message)), *challenge))
            return
        try:
            reply = self.server.process(body, user, f"{address}:{self.client_address[1]}", address,
                                        self.headers.get("User-Agent"))
        except Exception as exc:  # noqa: BLE001 - a malformed body is the client's error, never the server's end
            log.info("HTTP request from %s is not a Thrift message: %s: %s", address, type(exc).__name__, exc)
            self._error(400, f"the request body is not a Thrift binary-protocol message: {type(exc).__name__}")
            return
        self._answer(200, reply, THRIFT_CONTENT_TYPE)

    def _read_body(self) -> bytes | None:
        """The whole body, or None after answering why not (no length, too long, cut short)."""
        if self.headers.get("Transfer-Encoding", "").lower() not in ("", "identity"):
            self.close_connection = True
            self._error(411, "send the request with a Content-Length (chunked bodies are not accepted)")
            return None
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self.close_connection = True
            self._error(411, "the request has no valid Content-Length")
            return None
        limit = self.server.settings.max_message_bytes
        if length < 0 or length > limit:
            self.close_connection = True
            self._error(413, f"the request body has {length} bytes; at most {limit} (server.max_message_bytes)")
            return None
        body = self.rfile.read(length)
        if len(body) != length:
            self.close_connection = True
            return None
        return body


def thrift_refusal(body: bytes, message: str) -> bytes | None:
    """A refused request's answer as a Thrift exception reply to the call it made, or None when the body is not a
    Thrift call. Thrift's THttpClient (PyHive's transport) decodes the body without looking at the status, so a text
    body showed as `Length exceeded max allowed` there; this way it raises TApplicationException with the reason.
    Clients that look at the status first (beeline, the Databricks connector) still see the 401 and its header."""
    try:
        name, kind, seqid = TBinaryProtocol(TMemoryBuffer(body)).readMessageBegin()
    except Exception:  # noqa: BLE001 - not a Thrift message: the plain-text 401 answers it
        return None
    if kind not in (TMessageType.CALL, TMessageType.ONEWAY):
        return None
    out = TMemoryBuffer()
    protocol = TBinaryProtocol(out)
    protocol.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
    TApplicationException(TApplicationException.UNKNOWN, message).write(protocol)
    protocol.writeMessageEnd()
    return out.getvalue()


class ThriftHttpServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, service: GatewayService, host: str, port: int, settings: ServerSettings,
                 authenticator: HttpAuthenticator, tls: ssl.SSLContext | None, max_connections: int,
                 console: Console | None = None) -> None:
        enable_fast_codec()
        self.console = console
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.service = service
        self.settings = settings
        self.authenticator = authenticator
        self.tls = tls
        self._max_connections = max_connections
        self._processor_class = processor_class()
        self._lock = threading.Lock()
        self._per_address: Counter[str] = Counter()
        self._admitted: dict[int, str] = {}  # id of an admitted request's socket -> its client address
        self._open: set[Any] = set()
        super().__init__((host, port), _ThriftHttpRequestHandler)

    def server_bind(self) -> None:
        """As HTTPServer's, without its reverse DNS lookup of the host (a slow resolver would stall the start)."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    # -- one RPC ------------------------------------------------------------------------------------------------

    def process(self, body: bytes, user: str, peer: str, address: str, user_agent: str | None = None) -> bytes:
        """Decode one message, answer it as `user` with a handler of its own, return the encoded reply;
        `user_agent`: the request's User-Agent (a session opened by it is named after it)."""
        handler = TCLIServiceHandler(self.service, peer, user, None, address=address, user_agent=user_agent)
        processor = self._processor_class(OwnerCheckedHandler(handler, self.service, user))
        settings = self.settings
        incoming, outgoing = TMemoryBuffer(body), TMemoryBuffer()
        processor.process(
            TBinaryProtocolAccelerated(incoming, string_length_limit=settings.max_message_bytes,
                                       container_length_limit=settings.max_container_length),
            TBinaryProtocolAccelerated(outgoing))
        return outgoing.getvalue()

    # -- connections: the binary port's caps ---------------------------------------------------------------------

    def verify_request(self, request: Any, client_address: Any) -> bool:
        ip = client_address[0]
        cap = self.settings.max_connections_per_address
        with self._lock:
            if len(self._admitted) >= self._max_connections or (cap and self._per_address[ip] >= cap):
                log.warning("refusing an HTTP connection from %s: server.max_connections(_per_address) reached", ip)
                return False
            self._admitted[id(request)] = ip
            self._per_address[ip] += 1
        return True

    def shutdown_request(self, request: Any) -> None:
        with self._lock:
            ip = self._admitted.pop(id(request), None)
            if ip is not None:
                self._per_address[ip] -= 1
                if self._per_address[ip] <= 0:
                    del self._per_address[ip]
        super().shutdown_request(request)

    def connection_count(self) -> int:
        with self._lock:
            return len(self._admitted)

    def track(self, conn: Any) -> None:
        with self._lock:
            self._open.add(conn)

    def untrack(self, conn: Any) -> None:
        with self._lock:
            self._open.discard(conn)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A failed TLS handshake or a dropped connection ends that connection only, with a line in the log."""
        exc = sys.exc_info()[1]
        log.info("HTTP connection %s closed: %s: %s", client_address, type(exc).__name__, exc)

    # -- lifecycle ----------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self.server_address[1]

    def start(self) -> None:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.5}, name="sluicegate-http",
                         daemon=True).start()
        log.info("Thrift over HTTP on %s:%d%s", self.server_address[0], self.port, " (TLS)" if self.tls else "")

    def stop(self) -> None:
        """Stop accepting and drop open connections (sessions are the service's: they stay until it closes them)."""
        self.shutdown()
        self.server_close()
        with self._lock:
            connections = list(self._open)
        for conn in connections:
            try:
                socket.socket.shutdown(conn, socket.SHUT_RDWR)
            except OSError:
                pass
