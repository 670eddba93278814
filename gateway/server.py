"""GatewayServer: the listening socket and one thread per connection.

`start()` binds (port 0 picks a free port, readable from `port`) and returns at once; `shutdown()` stops accepting,
lets running statements finish within the grace period, closes every session and connection. The first byte of a
connection tells its transport: 0x01 starts a SASL handshake, 0x80 is a bare binary-protocol message (NOSASL),
0x00 a framed one. Anything else, or garbage later, closes that connection only.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TTransport import TBufferedTransport, TFramedTransport, TTransportException

from gateway.errors import AuthenticationError
from gateway.service import GatewayService
from gateway.thrift import enable_fast_codec
from gateway.auth.transport import ProtocolMismatch, SaslServerTransport, SocketTransport

log = logging.getLogger(__name__)

SASL_START = 0x01
BINARY_VERSION_BYTE = 0x80
FRAMED_FIRST_BYTE = 0x00
HANDSHAKE_TIMEOUT = 30.0


def _hung_up(conn: socket.socket, timeout: float) -> bool:
    """Wait up to `timeout` s for the peer's end of file, without consuming anything it sent meanwhile."""
    readable, _, _ = select.select([conn], [], [], timeout)
    if not readable:
        return False
    try:
        if conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
            time.sleep(timeout)  # a pipelined request waits unread for the call in progress; don't spin on it
            return False
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True


class GatewayServer:
    def __init__(self, service: GatewayService, host: str, port: int, max_connections: int) -> None:
        enable_fast_codec()
        self.service = service
        self._host = host
        self._requested_port = port
        self._max_connections = max_connections
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._connections: dict[int, socket.socket] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._next_id = 0

    @property
    def port(self) -> int:
        assert self._listener is not None, "start() first"
        return self._listener.getsockname()[1]

    @property
    def host(self) -> str:
        return self._host

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
        log.info("listening on %s:%d", self._host, self.port)

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                conn, address = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopping.is_set():
                    return
                log.exception("accept failed")
                continue
            with self._lock:
                if len(self._connections) >= self._max_connections:
                    log.warning("refusing %s: %d connections are open (server.max_connections)", address,
                                self._max_connections)
                    conn.close()
                    continue
                self._next_id += 1
                conn_id = self._next_id
                self._connections[conn_id] = conn
            threading.Thread(target=self._serve_connection, args=(conn_id, conn, address),
                             name=f"sluicegate-conn-{conn_id}", daemon=True).start()

    def _serve_connection(self, conn_id: int, conn: socket.socket, address: tuple) -> None:
        from TCLIService import TCLIService

        from gateway.thrift.handler import TCLIServiceHandler

        peer = f"{address[0]}:{address[1]}"
        handler: TCLIServiceHandler | None = None
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(HANDSHAKE_TIMEOUT)
            first = conn.recv(1, socket.MSG_PEEK)
            if not first:
                return
            sasl_user = sasl_password = None
            if first[0] == SASL_START:
                transport = SaslServerTransport(conn)
                transport.negotiate(self.service.authenticate)
                sasl_user, sasl_password = transport.user, transport.password
            elif first[0] == BINARY_VERSION_BYTE:
                transport = TBufferedTransport(SocketTransport(conn))
            elif first[0] == FRAMED_FIRST_BYTE:
                transport = TFramedTransport(SocketTransport(conn))
            else:
                raise ProtocolMismatch(f"first byte 0x{first[0]:02x} is neither SASL nor the Thrift binary protocol")
            conn.settimeout(None)
            handler = TCLIServiceHandler(self.service, peer, sasl_user, sasl_password,
                                         hung_up=lambda timeout: _hung_up(conn, timeout))
            processor = TCLIService.Processor(handler)
            protocol = TBinaryProtocolAccelerated(transport)
            while not self._stopping.is_set():
                processor.process(protocol, protocol)
        except TTransportException as exc:
            if exc.type != TTransportException.END_OF_FILE:
                log.info("connection %s: %s", peer, exc)
        except AuthenticationError as exc:
            log.info("connection %s refused: %s", peer, exc.message)
        except ProtocolMismatch as exc:
            log.info("connection %s closed: %s", peer, exc)
        except (OSError, EOFError) as exc:
            log.info("connection %s dropped: %s", peer, exc)
        except Exception as exc:  # noqa: BLE001 - garbage on one socket must never reach the server
            log.info("connection %s closed after a malformed message: %s: %s", peer, type(exc).__name__, exc)
        finally:
            if handler is not None:
                handler.connection_closed()
            with self._lock:
                self._connections.pop(conn_id, None)
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
        if self._listener is not None:
            self._listener.close()
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=5)
        self.service.shutdown(grace)
        with self._lock:
            connections = list(self._connections.values())
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        log.info("stopped")
