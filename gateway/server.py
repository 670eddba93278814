"""GatewayServer: the listening socket and one thread per connection.

`start()` binds (port 0 picks a free port, readable from `port`) and returns at once; `shutdown()` stops accepting,
lets running statements finish within the grace period, closes every session and connection. With TLS configured
the connection's thread runs the handshake first. Then the first byte of a connection tells its transport: 0x01
starts a SASL handshake, 0x80 is a bare binary-protocol message (NOSASL), 0x00 a framed one. Anything else, or
garbage later, closes that connection only.

Until its first OpenSession succeeds a connection has `server.handshake_timeout` seconds in all (TLS, SASL, the
request itself, however slowly trickled): the accept loop shuts overdue ones down. After that it may idle, as
clients keep connections open. One address may hold `server.max_connections_per_address` connections; a few more
are answered with a clear refusal, beyond that they are closed at once.

With `server.http_port` set (not -1), the same service also answers Thrift over HTTP on that port (`gateway/http/`),
with the same host, TLS and caps; it starts and stops with this server.
"""

from __future__ import annotations

import logging
import select
import socket
import ssl
import threading
import time
from collections import Counter

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TTransport import TTransportException

from sluicegate.gateway.auth.transport import (
    BufferedSocketTransport,
    FramedSocketTransport,
    ProtocolMismatch,
    SaslServerTransport,
)
from sluicegate.gateway.config import ServerSettings, require_secure_transport
from sluicegate.gateway.errors import GatewayError, LimitExceededError
from sluicegate.gateway.http import StatusServer, ThriftHttpServer, http_server, status_server
from sluicegate.gateway.service import GatewayService
from sluicegate.gateway.thrift import enable_fast_codec
from sluicegate.gateway.tls import server_context

log = logging.getLogger(__name__)

SASL_START = 0x01
BINARY_VERSION_BYTE = 0x80
FRAMED_FIRST_BYTE = 0x00
REFUSALS_AT_ONCE = 16      # over-cap connections answered with an error at once; more are closed without a word
REFUSAL_TIMEOUT = 5.0      # seconds an over-cap connection gets to say hello before it is closed


def _hung_up(conn: socket.socket, timeout: float) -> bool:
    """Wait up to `timeout` s for the peer's end of file, without consuming anything it sent meanwhile."""
    readable, _, _ = select.select([conn], [], [], timeout)
    if not readable:
        return False
    try:
        # The TCP socket's own recv: an SSLSocket refuses flags, and a peek at the raw bytes is all this needs.
        if socket.socket.recv(conn, 1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
            time.sleep(timeout)  # a pipelined request waits unread for the call in progress; don't spin on it
            return False
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True


class _Prefixed:
    """A socket whose first byte, read to tell the transport, is put back in front (an SSLSocket cannot peek)."""

    def __init__(self, sock: socket.socket, prefix: bytes) -> None:
        self._sock = sock
        self._prefix = prefix

    def recv(self, n: int) -> bytes:
        if self._prefix:
            data, self._prefix = self._prefix[:n], self._prefix[n:]
            return data
        return self._sock.recv(n)

    def sendall(self, data: bytes) -> None:
        self._sock.sendall(data)

    def close(self) -> None:
        self._sock.close()


def _force_close(conn: socket.socket) -> None:
    """Wake a thread blocked on `conn` (from another thread): the TCP socket's shutdown, not TLS's."""
    try:
        socket.socket.shutdown(conn, socket.SHUT_RDWR)
    except OSError:
        pass


class GatewayServer:
    def __init__(self, service: GatewayService, host: str, port: int, max_connections: int,
                 settings: ServerSettings | None = None) -> None:
        """`settings`: TLS, timeouts and limits (default: the service's configuration); `host`, `port` and
        `max_connections` given here win over it."""
        enable_fast_codec()
        self.service = service
        self._settings = settings or service.config.server
        require_secure_transport(self._settings, service.config.auth.mode, host)
        self._tls: ssl.SSLContext | None = None
        if self._settings.tls_cert is not None and self._settings.tls_key is not None:
            self._tls = server_context(self._settings.tls_cert, self._settings.tls_key)
        self._host = host
        self._requested_port = port
        self._max_connections = max_connections
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._connections: dict[int, socket.socket] = {}
        self._per_address: Counter[str] = Counter()
        self._refusing = 0
        self._deadlines: dict[int, float] = {}  # connection id -> when it must have opened a session
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._next_id = 0
        self._http: ThriftHttpServer | None = None
        self._status: StatusServer | None = None

    @property
    def port(self) -> int:
        assert self._listener is not None, "start() first"
        return self._listener.getsockname()[1]

    @property
    def http_port(self) -> int | None:
        """The bound HTTP port; None when server.http_port is -1 (off)."""
        return self._http.port if self._http is not None else None

    @property
    def status_port(self) -> int | None:
        """The bound status port (/health, /ready, /metrics only); None when server.status_port is -1 (off)."""
        return self._status.port if self._status is not None else None

    @property
    def host(self) -> str:
        return self._host

    @property
    def tls(self) -> bool:
        return self._tls is not None

    def start(self) -> None:
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self._host, self._requested_port))
        listener.listen(128)
        listener.settimeout(0.5)  # so the accept loop notices shutdown
        self._listener = listener
        self._accept_thread = threading.Thread(target=self._accept_loop, name="sluicegate-accept", daemon=True)
        self._accept_thread.start()
        log.info("listening on %s:%d%s", self._host, self.port, " (TLS)" if self._tls else "")
        metrics = self.service.metrics
        metrics.count_connections("binary", self.connection_count)
        if self._settings.http_port >= 0:
            self._http = http_server(self.service, self._host, self._settings, self._tls, self._max_connections)
            self._http.start()
            metrics.count_connections("http", self._http.connection_count)
        if self._settings.status_port >= 0:
            self._status = status_server(self.service, self._host, self._settings.status_port, self._tls)
            self._status.start()

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            self._close_overdue()
            try:
                conn, address = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopping.is_set():
                    return
                log.exception("accept failed")
                continue
            self._admit(conn, address)

    def _admit(self, conn: socket.socket, address: tuple) -> None:
        ip = address[0]
        cap = self._settings.max_connections_per_address
        refusal: GatewayError | None = None
        with self._lock:
            if len(self._connections) >= self._max_connections:
                log.warning("refusing %s: %d connections are open (server.max_connections)", address,
                            self._max_connections)
                conn.close()
                return
            if cap and self._per_address[ip] >= cap:
                log.warning("refusing %s: %d connections from %s are open (server.max_connections_per_address)",
                            address, cap, ip)
                if self._refusing >= REFUSALS_AT_ONCE:
                    conn.close()
                    return
                self._refusing += 1
                refusal = LimitExceededError(
                    f"too many connections from {ip}: {cap} are open, the most allowed from one address",
                    hint="close connections you no longer use, or raise server.max_connections_per_address")
            else:
                self._per_address[ip] += 1
            self._next_id += 1
            conn_id = self._next_id
            self._connections[conn_id] = conn
            timeout = REFUSAL_TIMEOUT if refusal else self._settings.handshake_timeout
            self._deadlines[conn_id] = time.monotonic() + timeout
        threading.Thread(target=self._serve_connection, args=(conn_id, conn, address, refusal),
                         name=f"sluicegate-conn-{conn_id}", daemon=True).start()

    def _close_overdue(self) -> None:
        """Shut down connections that did not open a session in time (a slowloris holds no slot for long)."""
        now = time.monotonic()
        with self._lock:
            overdue = [(i, self._connections[i]) for i, due in self._deadlines.items()
                       if due < now and i in self._connections]
            for conn_id, _ in overdue:
                del self._deadlines[conn_id]
        for conn_id, conn in overdue:
            log.info("closing connection %d: no session opened within %.0f s (server.handshake_timeout)", conn_id,
                     self._settings.handshake_timeout)
            _force_close(conn)

    def _session_opened(self, conn_id: int, conn: socket.socket) -> None:
        """From the first successful OpenSession on, the connection may idle."""
        with self._lock:
            if self._deadlines.pop(conn_id, None) is None:
                return
        conn.settimeout(None)

    def _serve_connection(self, conn_id: int, conn: socket.socket, address: tuple,
                          refusal: GatewayError | None) -> None:
        from sluicegate.gateway.thrift.generated import Processor
        from sluicegate.gateway.thrift.handler import TCLIServiceHandler

        peer = f"{address[0]}:{address[1]}"
        ip = address[0]
        handler: TCLIServiceHandler | None = None
        settings = self._settings
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(settings.handshake_timeout)  # each read; the accept loop bounds the whole
            if self._tls is not None:
                conn = self._tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
                with self._lock:
                    if conn_id in self._connections:
                        self._connections[conn_id] = conn
                conn.do_handshake()
            first = conn.recv(1)
            if not first:
                return
            sock = _Prefixed(conn, first)
            sasl_user = sasl_password = None
            if first[0] == SASL_START:
                transport = SaslServerTransport(sock, settings.max_message_bytes)  # type: ignore[arg-type]

                def check(user: str, password: str) -> None:
                    if refusal is not None:
                        raise refusal
                    self.service.authenticate(user, password, ip)

                transport.negotiate(check)
                sasl_user, sasl_password = transport.user, transport.password
            elif first[0] == BINARY_VERSION_BYTE:
                transport = BufferedSocketTransport(sock)  # type: ignore[arg-type]
            elif first[0] == FRAMED_FIRST_BYTE:
                transport = FramedSocketTransport(sock, settings.max_message_bytes)  # type: ignore[arg-type]
            else:
                raise ProtocolMismatch(f"first byte 0x{first[0]:02x} is neither SASL nor the Thrift binary protocol")
            opened_conn = conn
            handler = TCLIServiceHandler(self.service, peer, sasl_user, sasl_password,
                                         hung_up=lambda timeout: _hung_up(opened_conn, timeout), address=ip,
                                         refusal=refusal,
                                         on_session_opened=lambda: self._session_opened(conn_id, opened_conn))
            processor = Processor(handler)
            protocol = TBinaryProtocolAccelerated(transport, string_length_limit=settings.max_message_bytes,
                                                  container_length_limit=settings.max_container_length)
            while not self._stopping.is_set():
                processor.process(protocol, protocol)
        except TTransportException as exc:
            if exc.type != TTransportException.END_OF_FILE:
                log.info("connection %s: %s", peer, exc)
        except GatewayError as exc:
            log.info("connection %s refused: %s", peer, exc.message)
        except ProtocolMismatch as exc:
            log.info("connection %s closed: %s", peer, exc)
        except ssl.SSLError as exc:
            log.info("connection %s: TLS failed: %s", peer, exc.reason or exc)
        except (OSError, EOFError) as exc:
            log.info("connection %s dropped: %s", peer, exc or type(exc).__name__)
        except Exception as exc:  # noqa: BLE001 - garbage on one socket must never reach the server
            log.info("connection %s closed after a malformed message: %s: %s", peer, type(exc).__name__, exc)
        finally:
            if handler is not None:
                handler.connection_closed()
            with self._lock:
                self._connections.pop(conn_id, None)
                self._deadlines.pop(conn_id, None)
                if refusal is not None:
                    self._refusing -= 1
                else:
                    self._per_address[ip] -= 1
                    if self._per_address[ip] <= 0:
                        del self._per_address[ip]
            try:
                conn.close()
            except OSError:
                pass

    def connection_count(self) -> int:
        with self._lock:
            return len(self._connections)

    def shutdown(self, grace: float) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._http is not None:
            self._http.stop()
        if self._status is not None:
            self._status.stop()
        if self._listener is not None:
            self._listener.close()
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=5)
        self.service.shutdown(grace)
        with self._lock:
            connections = list(self._connections.values())
        for conn in connections:
            _force_close(conn)
        log.info("stopped")
