"""The HTTP port is the same service as the binary port: TLS with the binary port's certificate (PyHive over https,
beeline with ssl=true), the same policy and the same grants (what bob may not do over SASL he may not do over HTTP),
the same LDAP users, and a plaintext client on the TLS port gets nothing."""

from __future__ import annotations

import base64
import http.client
import uuid
from pathlib import Path
from typing import Any

import pytest
from credentials import password_auth
from security_helpers import TlsFiles, client_context, refused, still_serves, tls_overrides
from thrift.transport.THttpClient import THttpClient

PASSWORDS = {"alice": "s3cret", "bob": "hunter2"}


@pytest.fixture(scope="module")
def tls_http_gateway(start_gateway: Any, tls_files: TlsFiles, tmp_path_factory: pytest.TempPathFactory) -> Any:
    overrides = tls_overrides(tls_files, http_port=0)
    overrides["auth"] = password_auth(tmp_path_factory.mktemp("http_tls_auth"), PASSWORDS)
    return start_gateway(overrides)


def https_cursor(gateway: Any, tls: TlsFiles, user: str) -> Any:
    from pyhive import hive

    transport = THttpClient(f"https://127.0.0.1:{gateway.server.http_port}/cliservice",
                            ssl_context=client_context(tls))
    secret = base64.b64encode(f"{user}:{PASSWORDS[user]}".encode()).decode()
    transport.setCustomHeaders({"Authorization": f"Basic {secret}"})
    return hive.connect(thrift_transport=transport).cursor()


def sasl_cursor(gateway: Any, tls: TlsFiles, user: str) -> Any:
    from security_helpers import pyhive_tls

    return pyhive_tls(gateway.port, tls, user=user, password=PASSWORDS[user]).cursor()


def test_pyhive_over_https(tls_http_gateway: Any, tls_files: TlsFiles) -> None:
    cursor = https_cursor(tls_http_gateway, tls_files, "alice")
    cursor.execute("SELECT current_user(), 6 * 7")
    assert cursor.fetchall() == [("alice", 42)]


def test_plain_http_on_the_tls_port_gets_no_answer(tls_http_gateway: Any, tls_files: TlsFiles) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", tls_http_gateway.server.http_port, timeout=30)
    with pytest.raises((http.client.HTTPException, OSError)):
        conn.request("GET", "/.well-known/databricks-config")
        conn.getresponse()
    conn.close()
    still_serves(https_cursor(tls_http_gateway, tls_files, "alice"))


def test_what_bob_may_not_do_over_sasl_he_may_not_do_over_http(tls_http_gateway: Any, tls_files: TlsFiles,
                                                                  tmp_path: Path) -> None:
    schema = f"alice_http_{uuid.uuid4().hex[:8]}"
    alice = sasl_cursor(tls_http_gateway, tls_files, "alice")
    alice.execute(f"CREATE SCHEMA {schema}")
    alice.execute(f"CREATE TABLE {schema}.t (id INT, secret STRING)")
    alice.execute(f"INSERT INTO {schema}.t VALUES (1, 'a')")
    bob_sasl, bob_http = (sasl_cursor(tls_http_gateway, tls_files, "bob"),
                          https_cursor(tls_http_gateway, tls_files, "bob"))
    for sql in (f"SELECT * FROM {schema}.t", f"DROP TABLE {schema}.t"):
        assert refused(bob_http, sql, "INSUFFICIENT_PERMISSIONS") == refused(bob_sasl, sql, "INSUFFICIENT_PERMISSIONS")
    marker = tmp_path / "sg-http-pwned"
    refused(bob_http, f"SELECT TRANSFORM(id) USING 'touch {marker}' AS (l STRING) FROM range(1)")
    refused(bob_http, "SELECT java_method('java.lang.System', 'exit', 0)")
    assert not marker.exists()
    alice.execute(f"SELECT * FROM {schema}.t")
    assert alice.fetchall() == [(1, "a")]
    still_serves(bob_http)


@pytest.mark.beeline
def test_beeline_over_https(tls_http_gateway: Any, tls_files: TlsFiles, beeline: Any) -> None:
    done = beeline(tls_http_gateway.server.http_port, "-e", "SELECT current_user() AS who",
                   user="bob", password="hunter2",
                   url_options=f";transportMode=http;httpPath=cliservice;ssl=true;sslTrustStore={tls_files.truststore};"
                               f"trustStorePassword={tls_files.truststore_password}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "bob"


def test_ldap_users_log_in_over_http(start_gateway: Any, slapd: Any) -> None:
    from pyhive import hive
    from security_helpers import LDAP_USERS

    gateway = start_gateway({"auth": {"mode": "ldap", "ldap_url": slapd.url, "ldap_user_dn": slapd.user_dn},
                             "server": {"allow_plaintext": True, "http_port": 0}})
    connection = hive.connect("127.0.0.1", gateway.server.http_port, scheme="http", username="alice",
                              password=LDAP_USERS["alice"])
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT current_user()")
        assert cursor.fetchall() == [("alice",)]
    finally:
        connection.close()
    transport = THttpClient(f"http://127.0.0.1:{gateway.server.http_port}/cliservice")
    transport.setCustomHeaders({"Authorization": "Basic " + base64.b64encode(b"alice:not-her-password").decode()})
    with pytest.raises(Exception):  # noqa: B017 - PyHive cannot decode a 401's text body; the status says it
        hive.connect(thrift_transport=transport)
    assert transport.code == 401
    assert "wrong user name or password" in transport.headers["x-thriftserver-error-message"]
