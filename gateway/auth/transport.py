"""Server-side transports for one connection: SASL PLAIN (beeline's and PyHive's default), NOSASL and framed,
told apart by the connection's first byte.

SASL as Thrift frames it: negotiation messages are `status:u8 length:u32 payload`; the client sends START with the
mechanism name, then its initial response (`authzid NUL authcid NUL password` for PLAIN); the server answers
COMPLETE, or ERROR with a message. After that every Thrift message travels as `length:u32 payload` frames.

Every read is linear in the bytes received, however they are trickled in: data is appended to a `bytearray`
(amortised growth), never to an immutable `bytes` (thrift's `readAll` does `buff += chunk`, which made a 12 MB
string sent in 512-byte pieces cost 8 CPU-s). All transports here are CReadableTransports, so thrift's C decoder
reads from them directly.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from io import BytesIO

from thrift.transport.TTransport import CReadableTransport, TTransportBase, TTransportException

from sluicegate.gateway.errors import GatewayError

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
DEFAULT_MAX_FRAME = 16 * 1024 * 1024
MAX_NEGOTIATION = 64 * 1024
_RECV_CHUNK = 64 * 1024


class ProtocolMismatch(Exception):
    """The peer does not speak a transport we serve; its connection is closed."""


def _closed() -> TTransportException:
    return TTransportException(TTransportException.END_OF_FILE, "connection closed by the client")


def read_exactly(sock: socket.socket, n: int) -> bytes:
    """`n` bytes from `sock`, in time linear in `n` whatever the size of the pieces they arrive in."""
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise _closed()
        buf += chunk  # bytearray: amortised O(len(chunk))
    return bytes(buf)


class _LinearReadable(TTransportBase, CReadableTransport):
    """Read side shared by the transports below: a BytesIO of unread bytes, refilled from `_more(reqlen)`."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._rbuf = BytesIO()

    def _more(self, at_least: int) -> bytes:
        """At least `at_least` further bytes (and maybe more) from the peer."""
        raise NotImplementedError

    def isOpen(self) -> bool:
        return True

    def read(self, sz: int) -> bytes:
        data = self._rbuf.read(sz)
        if data:
            return data
        self._rbuf = BytesIO(self._more(1))
        return self._rbuf.read(sz)

    def readAll(self, sz: int) -> bytes:
        data = self._rbuf.read(sz)
        if len(data) == sz:
            return data
        self._rbuf = BytesIO(self._fill(data, sz))
        return self._rbuf.read(sz)

    def _fill(self, partial: bytes, reqlen: int) -> bytes:
        buf = bytearray(partial)
        buf += self._rbuf.read()
        while len(buf) < reqlen:
            buf += self._more(reqlen - len(buf))
        return bytes(buf)

    def close(self) -> None:
        self._sock.close()

    @property
    def cstringio_buf(self) -> BytesIO:
        return self._rbuf

    def cstringio_refill(self, partialread: bytes, reqlen: int) -> BytesIO:
        """Called by the C decoder when the bytes in hand run short (a message may span frames or reads)."""
        self._rbuf = BytesIO(self._fill(partialread, reqlen))
        return self._rbuf


class BufferedSocketTransport(_LinearReadable):
    """NOSASL: the bare binary protocol on the socket, read in chunks, written on flush."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock)
        self._wbuf = BytesIO()

    def _more(self, at_least: int) -> bytes:
        buf = bytearray()
        while len(buf) < at_least:
            chunk = self._sock.recv(min(max(_RECV_CHUNK, at_least - len(buf)), 1 << 20))
            if not chunk:
                raise _closed()
            buf += chunk
        return bytes(buf)

    def write(self, buf: bytes) -> None:
        self._wbuf.write(buf)

    def flush(self) -> None:
        payload = self._wbuf.getvalue()
        self._wbuf = BytesIO()
        self._sock.sendall(payload)


class FramedSocketTransport(_LinearReadable):
    """Frames of `length:u32 payload` each way: the framed transport, and the data phase after SASL."""

    def __init__(self, sock: socket.socket, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__(sock)
        self._wbuf = BytesIO()
        self._max_frame = max_frame

    def _more(self, at_least: int) -> bytes:
        buf = bytearray()
        while len(buf) < at_least:
            (length,) = struct.unpack(">I", read_exactly(self._sock, 4))
            if length > self._max_frame:
                raise ProtocolMismatch(
                    f"frame of {length} bytes is larger than the {self._max_frame} allowed (server.max_message_bytes)")
            buf += read_exactly(self._sock, length)
        return bytes(buf)

    def write(self, buf: bytes) -> None:
        self._wbuf.write(buf)

    def flush(self) -> None:
        payload = self._wbuf.getvalue()
        self._wbuf = BytesIO()
        self._sock.sendall(struct.pack(">I", len(payload)) + payload)


class SaslServerTransport(FramedSocketTransport):
    """Framed transport after a SASL PLAIN handshake."""

    def __init__(self, sock: socket.socket, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        super().__init__(sock, max_frame)
        self.user: str | None = None
        self.password: str | None = None

    def negotiate(self, check: Callable[[str, str], None]) -> None:
        """Run the handshake; `check(user, password)` raises a GatewayError (its message goes to the client) to
        refuse."""
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
        try:
            user, password = parts[1].decode("utf-8"), parts[2].decode("utf-8")
        except UnicodeDecodeError as exc:
            self._send_message(BAD, b"user name and password must be UTF-8")
            raise ProtocolMismatch("SASL PLAIN credentials are not UTF-8") from exc
        try:
            check(user, password)
        except GatewayError as exc:
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
