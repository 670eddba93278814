"""Free loopback ports for the servers tests start (a store, a cluster), all held open together while picked so
that no two of them are the same."""

from __future__ import annotations

import socket


def free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
