"""TLS for the Thrift port: one server-side SSLContext, TLS 1.2 or newer, from the PEM files the configuration
names. Accepted sockets are wrapped in their connection's thread, so a slow or silent handshake holds only that
connection, and only until server.handshake_timeout."""

from __future__ import annotations

import ssl
from pathlib import Path

from sluicegate.gateway.errors import ConfigError


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.options |= ssl.OP_NO_COMPRESSION
    for name, path in (("server.tls_cert", cert), ("server.tls_key", key)):
        if not path.is_file():
            raise ConfigError(f"{name} = {str(path)!r} is not a file; give the PEM file's path, or \"\" for no TLS")
    try:
        context.load_cert_chain(certfile=str(cert), keyfile=str(key))
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(
            f"cannot load the TLS certificate {cert} with key {key}: {exc}; both must be PEM files and the key must "
            "belong to the certificate (and have no passphrase)") from exc
    return context
