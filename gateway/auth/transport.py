"""Server-side transports for one connection: SASL PLAIN (beeline's and PyHive's default) and NOSASL, told apart by
the connection's first byte.

SASL as Thrift frames it: negotiation messages are `status:u8 length:u32 payload`; the client sends START with the
mechanism name, then its initial response (`authzid NUL authcid NUL password` for PLAIN); the server answers
COMPLETE, or ERROR with a message. After that every Thrift message travels as `length:u32 payload` frames.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from io import BytesIO

from thrift.transport.TTransport import CReadableTransport, TTransportBase, TTransportException

from gateway.errors import AuthenticationError

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
MAX_FRAME = 256 * 1024 * 1024
MAX_NEGOTIATION = 64 * 1024


class ProtocolMismatch(Exception):
    """The peer does not speak a transport we serve; its connection is closed."""


def read_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise TTransportException(TTransportException.END_OF_FILE, "connection closed by the client")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


class SocketTransport(TTransportBase):
    """A raw accepted socket as a Thrift transport (wrapped in a buffered or framed transport by the caller)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def isOpen(self) -> bool:  # noqa: N802 - Thrift's name
        return True

    def read(self, sz: int) -> bytes:
        data = self._sock.recv(sz)
        if not data:
            raise TTransportException(TTransportException.END_OF_FILE, "connection closed by the client")
        return data

    def write(self, buf: bytes) -> None:
        self._sock.sendall(buf)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self._sock.close()


class SaslServerTransport(TTransportBase, CReadableTransport):
    """Framed transport after a SASL PLAIN handshake. A CReadableTransport, so thrift's C decoder reads from it."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._rbuf = BytesIO()
        self._wbuf = BytesIO()
        self.user: str | None = None
        self.password: str | None = None

    def negotiate(self, check: Callable[[str, str], None]) -> None:
        """Run the handshake; `check(user, password)` raises AuthenticationError to refuse."""
        status, mechanism = self._read_message()
        if status != START:
            raise ProtocolMismatch(f"expected a SASL START message, got status {status}")
        if mechanism.decode("ascii", "replace").upper() != "PLAIN":
            self._send_message(BAD, f"unsupported SASL mechanism {mechanism!r}; use PLAIN".encode())
            raise ProtocolMismatch(f"unsupported SASL mechanism {mechanism!r}")
        status, response = self._read_message()
        if status not in (OK, COMPLETE):
            raise ProtocolMismatch(f"expected the SASL PLAIN response, got status {status}")
        parts = response.split(b"\0")
        if len(parts) != 3:
            self._send_message(BAD, b"malformed PLAIN response")
            raise ProtocolMismatch("malformed SASL PLAIN response")
        user, password = parts[1].decode("utf-8"), parts[2].decode("utf-8")
        try:
            check(user, password)
        except AuthenticationError as exc:
            self._send_message(ERROR, exc.message.encode("utf-8"))
            raise
        self.user, self.password = user, password
        self._send_message(COMPLETE, b"")

    def _read_message(self) -> tuple[int, bytes]:
        status, length = struct.unpack(">BI", read_exactly(self._sock, 5))
        if length > MAX_NEGOTIATION:
            raise ProtocolMismatch(f"SASL message of {length} bytes is too large")
        return status, read_exactly(self._sock, length) if length else b""

    def _send_message(self, status: int, payload: bytes) -> None:
        self._sock.sendall(struct.pack(">BI", status, len(payload)) + payload)

    # -- Thrift transport --------------------------------------------------------------------------------------

    def isOpen(self) -> bool:  # noqa: N802
        return True

    def _read_frame(self) -> None:
        (length,) = struct.unpack(">I", read_exactly(self._sock, 4))
        if length > MAX_FRAME:
            raise ProtocolMismatch(f"frame of {length} bytes is larger than the {MAX_FRAME} allowed")
        self._rbuf = BytesIO(read_exactly(self._sock, length))

    def read(self, sz: int) -> bytes:
        data = self._rbuf.read(sz)
        if data:
            return data
        self._read_frame()
        return self._rbuf.read(sz)

    def write(self, buf: bytes) -> None:
        self._wbuf.write(buf)

    def flush(self) -> None:
        payload = self._wbuf.getvalue()
        self._wbuf = BytesIO()
        self._sock.sendall(struct.pack(">I", len(payload)) + payload)

    def close(self) -> None:
        self._sock.close()

    @property
    def cstringio_buf(self) -> BytesIO:
        return self._rbuf

    def cstringio_refill(self, partialread: bytes, reqlen: int) -> BytesIO:
        """Called by the C decoder when the frame in hand runs short: messages may span frames."""
        data = partialread
        while len(data) < reqlen:
            self._read_frame()
            data += self._rbuf.read()
        self._rbuf = BytesIO(data)
        return self._rbuf
