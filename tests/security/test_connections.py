"""Connections: a silent or trickling client is cut off after server.handshake_timeout (an open session may idle),
caps per address and per user refuse cleanly, reads are linear in the bytes received, and over-long strings or
frames close only their own connection."""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

import pytest
from security_helpers import answers, sasl_login
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport.TTransport import TMemoryBuffer


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` within `seconds` (reads until end of file or the deadline)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            if not sock.recv(4096):
                return True
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True
    return False


def _open_session_message(username: str) -> bytes:
    from TCLIService import ttypes as T
    from TCLIService.TCLIService import OpenSession_args

    buffer = TMemoryBuffer()
    protocol = TBinaryProtocol(buffer)
    protocol.writeMessageBegin("OpenSession", 1, 1)
    OpenSession_args(req=T.TOpenSessionReq(client_protocol=5, username=username)).write(protocol)
    protocol.writeMessageEnd()
    return buffer.getvalue()


@pytest.fixture(scope="module")
def tight_gateway(start_gateway: Any) -> Any:
    return start_gateway({"server": {"handshake_timeout": 1.5, "max_connections_per_address": 4,
                                     "max_message_bytes": 1024 * 1024},
                          "session": {"max_per_user": 2}})


def test_a_client_that_sends_one_byte_and_waits_is_cut_off(tight_gateway: Any, connect: Any) -> None:
    slow = [socket.create_connection(("127.0.0.1", tight_gateway.port)) for _ in range(3)]
    try:
        for sock in slow:
            sock.sendall(b"\x80")
        assert all(_closed_within(sock, 10) for sock in slow)
    finally:
        for sock in slow:
            sock.close()
    assert answers(connect(port=tight_gateway.port))


def test_a_trickled_request_is_cut_off_however_slowly_it_arrives(tight_gateway: Any) -> None:
    message = _open_session_message("x" * 1000)
    with socket.create_connection(("127.0.0.1", tight_gateway.port)) as sock:
        started = time.monotonic()
        for byte in message:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            if _closed_within(sock, 0.2):
                break
        assert time.monotonic() - started < 8, "the handshake deadline did not bound a trickled request"


def test_an_open_session_may_idle_beyond_the_handshake_timeout(tight_gateway: Any, connect: Any) -> None:
    connection = connect(port=tight_gateway.port)
    assert answers(connection)
    deadline = time.monotonic() + 3  # twice the handshake timeout, measured, not slept blindly
    while time.monotonic() < deadline:
        time.sleep(0.5)
    assert answers(connection)


def _wait_for_connection_count(gateway: Any, wanted: int, seconds: float = 5) -> None:
    """Waits until the server counts `wanted` open connections: a connection a previous test closed is let go by
    its server thread a moment later, and would otherwise take one of this test's places under the cap."""
    deadline = time.monotonic() + seconds
    while gateway.server.connection_count() != wanted and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gateway.server.connection_count() == wanted


def test_connections_per_address_are_capped(tight_gateway: Any, connect: Any) -> None:
    _wait_for_connection_count(tight_gateway, 0, seconds=15)
    held = [socket.create_connection(("127.0.0.1", tight_gateway.port)) for _ in range(4)]
    try:
        _wait_for_connection_count(tight_gateway, 4)
        status, message = sasl_login(tight_gateway.port, "tester", "x")
        assert status == 4 and message.startswith("too many connections from 127.0.0.1: 4 are open"), message
    finally:
        for sock in held:
            sock.close()
    _wait_for_connection_count(tight_gateway, 0)
    assert answers(connect(port=tight_gateway.port))


def test_sessions_per_user_are_capped(tight_gateway: Any, connect: Any) -> None:
    from pyhive.exc import OperationalError

    first, second = connect(port=tight_gateway.port, username="sam"), connect(port=tight_gateway.port, username="sam")
    with pytest.raises(OperationalError, match="user 'sam' already has 2 open sessions"):
        connect(port=tight_gateway.port, username="sam")
    assert answers(connect(port=tight_gateway.port, username="other"))
    second.close()
    assert answers(connect(port=tight_gateway.port, username="sam"))
    assert answers(first)


def test_a_string_over_the_limit_closes_only_its_connection(tight_gateway: Any, connect: Any) -> None:
    with socket.create_connection(("127.0.0.1", tight_gateway.port)) as sock:
        sock.sendall(_open_session_message("x" * (2 * 1024 * 1024))[: 64 * 1024])
        assert _closed_within(sock, 10)
    with socket.create_connection(("127.0.0.1", tight_gateway.port)) as sock:  # SASL frame claiming 100 MB
        response = b"\0tester\0x"
        sock.sendall(struct.pack(">BI", 1, 5) + b"PLAIN" + struct.pack(">BI", 2, len(response)) + response)
        assert sock.recv(5)[0] == 5
        sock.sendall(struct.pack(">I", 100 * 1024 * 1024) + b"\x80")
        assert _closed_within(sock, 10)
    assert answers(connect(port=tight_gateway.port))


def test_reads_are_linear_in_the_bytes_received(start_gateway: Any) -> None:
    """Review row 19: 12 MB trickled in 512-byte pieces cost 8 CPU-s. Here 4 MB in 512-byte pieces (quadratic
    reading would copy about 16 GB); the gateway runs in this process, so its CPU time is ours."""
    gateway = start_gateway({"server": {"handshake_timeout": 120.0}})
    message = _open_session_message("u" * (4 * 1024 * 1024))
    with socket.create_connection(("127.0.0.1", gateway.port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cpu = time.process_time()
        for start in range(0, len(message), 512):
            sock.sendall(message[start:start + 512])
        sock.settimeout(60)
        reply = sock.recv(4096)
        cpu = time.process_time() - cpu
    assert reply, "the gateway answered the OpenSession"
    assert cpu < 4.0, f"reading 4 MB in 512-byte pieces took {cpu:.1f} CPU-s"
