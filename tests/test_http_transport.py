"""Thrift over HTTP (`server.http_port`) through real clients: PyHive over THttpClient with Basic and Bearer headers,
beeline in `transportMode=http`, the Databricks connector's view of a 401; refusals (wrong password, revoked token,
no header) open no session; a session outlives its HTTP connections; malformed or oversized bodies get 400 / 413 and
the port goes on serving; the Databricks probes answer at once."""

from __future__ import annotations

import base64
import http.client
import json
import time
from pathlib import Path
from typing import Any

import pytest
from credentials import password_auth
from thrift.Thrift import TApplicationException
from thrift.transport.THttpClient import THttpClient

from sluicegate.gateway.auth.tokens import create_token, revoke_tokens

PASSWORDS = {"alice": "s3cret", "bob": "hunter2"}


@pytest.fixture(scope="module")
def auth(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return password_auth(tmp_path_factory.mktemp("http_auth"), PASSWORDS)


@pytest.fixture(scope="module")
def http_gateway(start_gateway: Any, auth: dict[str, Any]) -> Any:
    return start_gateway({
        "server": {"http_port": 0, "allow_plaintext": True, "max_message_bytes": 1_000_000},
        "auth": auth,
    })


def basic(user: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()


def http_transport(gateway: Any, authorization: str | None, path: str = "/cliservice") -> THttpClient:
    transport = THttpClient(f"http://127.0.0.1:{gateway.server.http_port}{path}")
    if authorization is not None:
        transport.setCustomHeaders({"Authorization": authorization})
    return transport


def pyhive_http(gateway: Any, authorization: str | None, **kwargs: Any) -> Any:
    from pyhive import hive

    return hive.connect(thrift_transport=http_transport(gateway, authorization), **kwargs)


def current_user(connection: Any) -> str:
    cursor = connection.cursor()
    cursor.execute("SELECT current_user()")
    return cursor.fetchall()[0][0]


def post(gateway: Any, body: bytes, headers: dict[str, str]) -> tuple[int, Any, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", gateway.server.http_port, timeout=30)
    try:
        try:
            conn.request("POST", "/cliservice", body=body, headers=headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a refused body (413) is answered, and the socket closed, before all of it was sent: read the answer
        response = conn.getresponse()
        return response.status, response.msg, response.read()
    finally:
        conn.close()


def test_pyhive_with_a_basic_header(http_gateway: Any) -> None:
    connection = pyhive_http(http_gateway, basic("alice", "s3cret"), username="alice")
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT id, id * 2 AS twice FROM range(3)")
        assert cursor.fetchall() == [(0, 0), (1, 2), (2, 4)]
        assert current_user(connection) == "alice"
    finally:
        connection.close()


def test_pyhive_http_scheme_sends_basic_itself(http_gateway: Any) -> None:
    from pyhive import hive

    connection = hive.connect("127.0.0.1", http_gateway.server.http_port, scheme="http", username="bob",
                              password="hunter2")
    try:
        assert current_user(connection) == "bob"
    finally:
        connection.close()


def test_pyhive_with_a_bearer_token_acts_as_its_owner(http_gateway: Any, auth: dict[str, Any]) -> None:
    tokens = Path(auth["token_file"])
    _, token = create_token(tokens, "bob", "test")
    # the session's user is the token's owner, whatever name OpenSession carries
    connection = pyhive_http(http_gateway, f"Bearer {token}", username="alice")
    try:
        assert current_user(connection) == "bob"
    finally:
        connection.close()
    connection = pyhive_http(http_gateway, basic("token", token))  # dbt-spark `method: http`, Simba drivers
    try:
        assert current_user(connection) == "bob"
    finally:
        connection.close()


def _refused(gateway: Any, authorization: str | None) -> str:
    """PyHive fails to connect with the reason (thrift's THttpClient does not look at the status: it decodes the
    body, a Thrift exception carrying the reason), and the answer it got was a 401 with Hive's challenge and the
    header Databricks' clients show."""
    from pyhive import hive

    sessions_before = gateway.service.sessions.count()
    transport = http_transport(gateway, authorization)
    with pytest.raises(TApplicationException) as pyhive_saw:   # the reason, not "Length exceeded max allowed"
        hive.connect(thrift_transport=transport)
    assert transport.code == 401 and str(pyhive_saw.value).startswith("Authentication failed: ")
    assert gateway.service.sessions.count() == sessions_before  # no session was opened
    from TCLIService import TCLIService, ttypes
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.transport.TTransport import TMemoryBuffer

    buffer = TMemoryBuffer()
    TCLIService.Client(TBinaryProtocol(buffer)).send_OpenSession(ttypes.TOpenSessionReq(client_protocol=5))
    headers = {"Content-Type": "application/x-thrift"}
    if authorization is not None:
        headers["Authorization"] = authorization
    status, answer, _ = post(gateway, buffer.getvalue(), headers)
    assert status == 401
    assert 'Basic realm="sluicegate"' in answer.get_all("WWW-Authenticate")
    return answer["x-thriftserver-error-message"]


def test_a_wrong_password_is_a_401_with_the_reason(http_gateway: Any) -> None:
    message = _refused(http_gateway, basic("alice", "wrong"))
    assert "authentication failed for user 'alice': wrong user name or password" in message


def test_no_authorization_header_is_a_401(http_gateway: Any) -> None:
    assert "authentication required" in _refused(http_gateway, None)


def test_a_revoked_token_is_a_401(http_gateway: Any, auth: dict[str, Any]) -> None:
    tokens = Path(auth["token_file"])
    record, token = create_token(tokens, "alice")
    from pyhive import hive

    transport = http_transport(http_gateway, f"Bearer {token}")
    connection = hive.connect(thrift_transport=transport)
    assert current_user(connection) == "alice"
    revoke_tokens(tokens, token_id=record.token_id)
    with pytest.raises(TApplicationException, match="the access token is invalid or was revoked"):
        connection.cursor().execute("SELECT 1")
    assert transport.code == 401
    transport.setCustomHeaders({"Authorization": basic("alice", "s3cret")})
    connection.close()  # with valid credentials again, the owner closes the session the token opened
    assert "invalid or was revoked" in _refused(http_gateway, f"Bearer {token}")


def test_a_session_lives_across_http_connections(http_gateway: Any) -> None:
    """THttpClient opens a new TCP connection for every request, and a second client (its own connections) uses the
    same session: temp views and USE outlive each connection."""
    from TCLIService import TCLIService, ttypes
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol

    connection = pyhive_http(http_gateway, basic("alice", "s3cret"))
    try:
        cursor = connection.cursor()
        cursor.execute("CREATE DATABASE IF NOT EXISTS http_db")
        cursor.execute("USE http_db")
        cursor.execute("CREATE OR REPLACE TEMPORARY VIEW http_v AS SELECT 41 + 1 AS answer")
        session = connection._sessionHandle
        other = TCLIService.Client(TBinaryProtocol(http_transport(http_gateway, basic("alice", "s3cret"))))
        executed = other.ExecuteStatement(ttypes.TExecuteStatementReq(
            sessionHandle=session, statement="SELECT answer, current_database() FROM http_v"))
        assert executed.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, executed.status.errorMessage
        fetched = other.FetchResults(ttypes.TFetchResultsReq(operationHandle=executed.operationHandle,
                                                             orientation=ttypes.TFetchOrientation.FETCH_NEXT,
                                                             maxRows=10))
        answer, database = fetched.results.columns
        assert (answer.i32Val.values, database.stringVal.values) == ([42], ["http_db"])
        cursor.execute("SELECT answer FROM http_v")  # and the first client goes on with it
        assert cursor.fetchall() == [(42,)]
    finally:
        connection.close()
    handle_hex = bytes(session.sessionId.guid).hex()
    assert all(s.handle.hex != handle_hex for s in http_gateway.service.sessions.list())  # CloseSession closed it


def test_a_request_naming_another_users_session_is_refused(http_gateway: Any) -> None:
    from TCLIService import TCLIService, ttypes
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol

    alice = pyhive_http(http_gateway, basic("alice", "s3cret"))
    try:
        client = TCLIService.Client(TBinaryProtocol(http_transport(http_gateway, basic("bob", "hunter2"))))
        answer = client.ExecuteStatement(ttypes.TExecuteStatementReq(sessionHandle=alice._sessionHandle,
                                                                     statement="SELECT current_user()"))
        assert answer.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
        assert "SESSION_OF_ANOTHER_USER" in answer.status.errorMessage
        closing = client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=alice._sessionHandle))
        assert closing.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
        assert current_user(alice) == "alice"  # alice's session is untouched
    finally:
        alice.close()


def test_bad_bodies_get_400_or_413_and_the_port_still_serves(http_gateway: Any) -> None:
    auth = {"Authorization": basic("alice", "s3cret"), "Content-Type": "application/x-thrift"}
    status, headers, _ = post(http_gateway, b"\x80\x01\x00\x01garbage-not-thrift", auth)
    assert status == 400 and "not a Thrift binary-protocol message" in headers["x-thriftserver-error-message"]
    status, headers, _ = post(http_gateway, b"x" * 1_000_001, auth)
    assert status == 413 and "server.max_message_bytes" in headers["x-thriftserver-error-message"]
    connection = pyhive_http(http_gateway, basic("alice", "s3cret"))
    try:
        assert current_user(connection) == "alice"
    finally:
        connection.close()


def test_databricks_probes_answer_at_once_without_credentials(http_gateway: Any) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", http_gateway.server.http_port, timeout=5)
    try:
        started = time.monotonic()
        conn.request("GET", "/.well-known/databricks-config")
        well_known = conn.getresponse()
        well_known.read()
        conn.request("GET", "/api/2.0/connector-service/feature-flags/PYTHON/4.9.0")  # same connection: keep-alive
        flags = conn.getresponse()
        assert flags.status == 200 and json.loads(flags.read())["flags"] == []
        assert well_known.status == 404
        assert time.monotonic() - started < 2
    finally:
        conn.close()


def test_the_databricks_connector_shows_the_401_reason(http_gateway: Any) -> None:
    sql = pytest.importorskip("databricks.sql")
    with pytest.raises(Exception) as refused:
        sql.connect(server_hostname="127.0.0.1", http_path="/cliservice", access_token="sgt_000000000000_" + "z" * 43,
                    _connection_uri=f"http://127.0.0.1:{http_gateway.server.http_port}/cliservice",
                    enable_telemetry=False, _retry_stop_after_attempts_count=1)
    assert "the access token is invalid or was revoked" in str(refused.value)


@pytest.mark.beeline
def test_beeline_in_http_mode(http_gateway: Any, beeline: Any) -> None:
    done = beeline(http_gateway.server.http_port, "-e", "SELECT current_user() AS who, 6 * 7 AS answer",
                   user="alice", password="s3cret", url_options=";transportMode=http;httpPath=cliservice")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "alice,42"
    refused = beeline(http_gateway.server.http_port, "-e", "SELECT 1", user="alice", password="wrong",
                      url_options=";transportMode=http;httpPath=cliservice")
    assert refused.returncode != 0
    assert "401" in refused.stdout + refused.stderr


@pytest.fixture(scope="module")
def strict_gateway(start_gateway: Any) -> Any:
    """auth.mode none, short timeouts, three connections per address."""
    return start_gateway({"server": {"http_port": 0, "http_idle_timeout": 3.0, "handshake_timeout": 1.0,
                                     "max_connections_per_address": 3}})


def _closed_by_server(sock: Any, within: float = 15.0) -> bool:
    """Blocks until the server closes `sock` (True), or `within` seconds pass (False)."""

    sock.settimeout(within)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def _probe(sock: Any) -> bytes:
    """The first bytes of the answer to a feature-flag GET; b"" when the server closed the connection instead."""
    try:
        sock.sendall(b"GET /api/2.0/connector-service/feature-flags/PYTHON/1 HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(15)
        return sock.recv(65536)
    except (ConnectionResetError, BrokenPipeError):
        return b""


def test_auth_none_takes_any_basic_user_but_checks_tokens(strict_gateway: Any) -> None:
    connection = pyhive_http(strict_gateway, basic("anyone", "anything"))
    try:
        assert current_user(connection) == "anyone"
    finally:
        connection.close()
    assert "invalid or was revoked" in _refused(strict_gateway, "Bearer sgt_000000000000_" + "q" * 43)


def test_idle_and_trickling_connections_are_closed(strict_gateway: Any) -> None:
    import socket

    port = strict_gateway.server.http_port
    with socket.create_connection(("127.0.0.1", port)) as silent:
        assert _closed_by_server(silent)  # never sent a byte: closed after server.http_idle_timeout
    with socket.create_connection(("127.0.0.1", port)) as kept_alive:
        assert _probe(kept_alive).startswith(b"HTTP/1.1 200")
        assert _closed_by_server(kept_alive)  # kept alive, then idle
    with socket.create_connection(("127.0.0.1", port)) as trickling:
        trickling.sendall(b"POST /cliservice HTTP/1.1\r\nContent-Length: 100\r\n")
        assert _closed_by_server(trickling)  # a request started and stalled: server.handshake_timeout


def test_one_address_holds_at_most_its_cap_of_connections(strict_gateway: Any) -> None:
    import socket

    port = strict_gateway.server.http_port
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    try:
        for sock in held:
            assert _probe(sock).startswith(b"HTTP/1.1 200")  # admitted
        with socket.create_connection(("127.0.0.1", port)) as extra:
            assert _probe(extra) == b""  # over the cap: closed without an answer
    finally:
        for sock in held:
            sock.close()
    from pyhive_helpers import poll_until

    def answers() -> bool:
        with socket.create_connection(("127.0.0.1", port)) as fresh:
            return _probe(fresh).startswith(b"HTTP/1.1 200")

    poll_until(answers, "a connection once the held ones are closed", timeout=30)
