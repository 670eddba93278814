"""What the security tests share: a throwaway TLS certificate (openssl) and its Java truststore (keytool), a real
OpenLDAP slapd on 127.0.0.1, a raw SASL PLAIN login that costs the client nothing (for timing and lockouts), and the
checks every attack test makes (a clean refusal, a victim folder untouched, a gateway that still answers)."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import socket
import ssl
import struct
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from child_processes import stop
from ports import free_ports
from pyhive_helpers import cursor_in, database_named_after, dropped_after, error_status

BASE_DN = "dc=example,dc=org"
PEOPLE_DN = f"ou=people,{BASE_DN}"
LDAP_USERS = {"alice": "wonderland", "bob,admin": "comma-in-name"}  # the second one needs its ',' escaped


@dataclass(frozen=True)
class TlsFiles:
    cert: Path
    key: Path
    truststore: Path | None
    truststore_password: str = "changeit"


def _tool(name: str) -> str:
    found = shutil.which(name) or (f"/usr/sbin/{name}" if os.access(f"/usr/sbin/{name}", os.X_OK) else None)
    if found is None:
        pytest.skip(f"`{name}` is not installed (CI installs it in .ci/run: apt-get install slapd ldap-utils)")
    return found


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    """A self-signed certificate for 127.0.0.1 and localhost, valid for a day, and a JKS truststore holding it."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([_tool("openssl"), "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
    from sluicegate.engine.java import find_java_home

    keytool = find_java_home() / "bin" / "keytool"
    truststore = folder / "truststore.jks"
    subprocess.run([str(keytool), "-importcert", "-noprompt", "-alias", "sluicegate", "-file", str(cert),
                    "-keystore", str(truststore), "-storetype", "JKS", "-storepass", "changeit"],
                   check=True, capture_output=True, timeout=120)
    return TlsFiles(cert, key, truststore)


def tls_overrides(files: TlsFiles, **server: Any) -> dict[str, Any]:
    return {"server": {"tls_cert": str(files.cert), "tls_key": str(files.key), **server}}


def client_context(files: TlsFiles) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(files.cert))


def pyhive_tls(port: int, files: TlsFiles, user: str = "tester", password: str = "x") -> Any:
    """A PyHive connection over TLS + SASL PLAIN, as a TLS-aware application builds one."""
    import thrift_sasl
    from pyhive import hive
    from pyhive.hive import get_installed_sasl
    from thrift.transport.TSSLSocket import TSSLSocket

    sock = TSSLSocket("127.0.0.1", port, ssl_context=client_context(files), server_hostname="127.0.0.1")
    transport = thrift_sasl.TSaslClientTransport(
        lambda: get_installed_sasl(host="127.0.0.1", sasl_auth="PLAIN", username=user, password=password),
        "PLAIN", sock)
    return hive.connect(thrift_transport=transport, username=user)


def sasl_login(port: int, user: str, password: str, *, context: ssl.SSLContext | None = None,
               timeout: float = 30) -> tuple[int, str]:
    """One SASL PLAIN handshake by hand: (status, message) of the server's answer (5 = COMPLETE, 4 = ERROR)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw:
        sock = context.wrap_socket(raw, server_hostname="127.0.0.1") if context else raw
        response = b"\0" + user.encode() + b"\0" + password.encode()
        sock.sendall(struct.pack(">BI", 1, 5) + b"PLAIN" + struct.pack(">BI", 2, len(response)) + response)
        header = _recv_exactly(sock, 5)
        status, length = struct.unpack(">BI", header)
        return status, _recv_exactly(sock, length).decode() if length else ""


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"the server closed the connection after {len(data)} of {n} bytes")
        data += chunk
    return data


def answers(connection: Any) -> bool:
    cursor = connection.cursor()
    cursor.execute("SELECT 1")
    return cursor.fetchall() == [(1,)]


def _ssha(password: str) -> str:
    salt = os.urandom(8)
    return "{SSHA}" + base64.b64encode(hashlib.sha1(password.encode() + salt).digest() + salt).decode()


@dataclass(frozen=True)
class Slapd:
    url: str
    user_dn: str = f"uid={{user}},{PEOPLE_DN}"


@pytest.fixture(scope="session")
def slapd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slapd]:
    """A real OpenLDAP server on 127.0.0.1 with the users of LDAP_USERS, stopped at the end."""
    binary, slapadd = _tool("slapd"), _tool("slapadd")
    folder = tmp_path_factory.mktemp("slapd")
    (folder / "db").mkdir()
    schema = Path("/etc/ldap/schema")
    modules = next((p for p in (Path("/usr/lib/ldap"), Path("/usr/lib64/openldap"), Path("/usr/lib/openldap"))
                    if (p / "back_mdb.so").exists() or (p / "back_mdb.la").exists()), None)
    conf = folder / "slapd.conf"
    conf.write_text("\n".join([
        *(f"include {schema / name}.schema" for name in ("core", "cosine", "inetorgperson")),
        *([f"modulepath {modules}", "moduleload back_mdb"] if modules else []),
        f"pidfile {folder / 'slapd.pid'}",
        "database mdb", "maxsize 10485760", f'suffix "{BASE_DN}"', f'rootdn "cn=admin,{BASE_DN}"',
        f"directory {folder / 'db'}", "",
    ]))
    entries = [f"dn: {BASE_DN}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n",
               f"dn: {PEOPLE_DN}\nobjectClass: organizationalUnit\nou: people\n"]
    for user, password in LDAP_USERS.items():
        rdn = user.replace(",", "\\,")
        entries.append(f"dn: uid={rdn},{PEOPLE_DN}\nobjectClass: inetOrgPerson\nuid: {user}\ncn: {user}\nsn: x\n"
                       f"userPassword: {_ssha(password)}\n")
    ldif = folder / "users.ldif"
    ldif.write_text("\n".join(entries))
    subprocess.run([slapadd, "-f", str(conf), "-l", str(ldif)], check=True, capture_output=True, timeout=60)
    port = free_ports(1)[0]
    url = f"ldap://127.0.0.1:{port}"
    log = open(folder / "slapd.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen([binary, "-f", str(conf), "-h", f"{url}/", "-d", "0"], stdout=log,
                               stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"slapd did not start: {(folder / 'slapd.log').read_text()[-2000:]}") from None
                time.sleep(0.05)
        yield Slapd(url)
    finally:
        stop(process, 10)
        log.close()


def own_database(connect: Any, request: pytest.FixtureRequest, user: str = "mallory") -> Iterator[Any]:
    """For a test's `cursor` fixture (`yield from own_database(connect, request)`): `user`'s cursor in a database of
    the test's own (named after it; `cursor.database`), dropped with everything in it afterwards."""
    yield from dropped_after(cursor_in(connect, database_named_after(request, "sec_", 30), username=user))


def refused(cursor: Any, sql: str, error_class: str = "", sqlstate: str = "42501") -> str:
    """Run `sql`, expect a refusal with `sqlstate` (and `error_class` in the message); returns the message."""
    status = error_status(cursor, sql)
    assert status.sqlState == sqlstate, status.errorMessage
    if error_class:
        assert f"[{error_class}]" in status.errorMessage, status.errorMessage
    assert "\tat " not in status.errorMessage  # no JVM stack reaches the client
    return status.errorMessage


def secret_schema(owner: Any, prefix: str) -> str:
    """A new schema of the cursor's user, named `prefix` and a random suffix, holding `t (id INT, secret STRING)` with
    the rows (1, 'a') and (2, 'b'): what the grant tests try to reach as someone else."""
    schema = f"{prefix}_{uuid.uuid4().hex[:8]}"
    owner.execute(f"CREATE SCHEMA {schema}")
    owner.execute(f"CREATE TABLE {schema}.t (id INT, secret STRING)")
    owner.execute(f"INSERT INTO {schema}.t VALUES (1, 'a'), (2, 'b')")
    return schema


def still_serves(cursor: Any) -> None:
    cursor.execute("SELECT 40 + 2")
    assert cursor.fetchall() == [(42,)]


def untouched(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == ["important.txt"]
    assert (folder / "important.txt").read_text() == "keep me\n"
