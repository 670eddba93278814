"""A long query through the Databricks SQL connector (the real `databricks.sql.connect`, HTTP port, Bearer token) is
listed in `system.runtime.queries` with its progress, killed by `CALL system.runtime.kill_query(...)` from another
connection (an admin's, or its owner's through the connector; another user's is refused), and the connector's cursor
gets a clear error: the class, who killed it and why, the SQLSTATE.

Progress: the connector never asks for it (its GetOperationStatus polls send `getProgressUpdate=False`, and its
cursor has no progress call), so a connector user follows a running statement in `system.runtime.queries` by the
cursor's `query_id` (a UUID; kill_query takes it with or without the dashes). Asserted below from the listing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyhive import hive
from pyhive_helpers import poll_until

from sluicegate.gateway.app import RunningGateway
from sluicegate.gateway.auth.tokens import create_token

sql = pytest.importorskip("databricks.sql")

LONG_QUERY = "SELECT count(*) AS n FROM range(0, 40000000000, 1, 400) WHERE id % 7 = 3"  # many minutes of tasks
USER, ADMIN = "dk_user", "dk_admin"


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dk_tokens") / "tokens"


@pytest.fixture(scope="module")
def kill_gateway(start_gateway: Callable[..., RunningGateway], token_file: Path) -> RunningGateway:
    return start_gateway({"server": {"http_port": 0}, "auth": {"token_file": str(token_file)},
                          "security": {"admins": [ADMIN]}})


def connect(gateway: RunningGateway, token_file: Path, user: str) -> Any:
    token = create_token(token_file, user, "kill test")[1]
    return sql.connect(server_hostname="127.0.0.1", http_path="/cliservice", access_token=token,
                       _connection_uri=f"http://127.0.0.1:{gateway.server.http_port}/cliservice",
                       enable_telemetry=False)


@pytest.fixture()
def connector(kill_gateway: RunningGateway, token_file: Path) -> Iterator[Any]:
    connection = connect(kill_gateway, token_file, USER)
    yield connection
    try:
        connection.close()
    except Exception:  # noqa: BLE001 - its session may be gone with the killed statement's failure
        pass


@pytest.fixture()
def admin(kill_gateway: RunningGateway) -> Iterator[Any]:
    connection = hive.connect(kill_gateway.host, kill_gateway.port, username=ADMIN)
    yield connection.cursor()
    connection.close()


def listed(admin: Any, query_id: str) -> list[dict[str, Any]]:
    """The statement's row of system.runtime.queries with its session's application (two reads that only filter:
    a join or an aggregate would need a Spark job, which waits behind the long query's tasks)."""
    admin.execute("SELECT query_id, session_id, user, state, tasks_done, progress FROM system.runtime.queries "
                  f"WHERE query_id = '{query_id.replace('-', '')}'")
    names = [d[0].split(".")[-1] for d in admin.description]
    rows = [dict(zip(names, row, strict=True)) for row in admin.fetchall()]
    for row in rows:
        admin.execute("SELECT client_application FROM system.runtime.sessions "
                      f"WHERE session_id = '{row['session_id']}'")
        row["client_application"] = admin.fetchall()[0][0]
    return rows


def running_with_progress(admin: Any, query_id: str) -> dict[str, Any]:
    return poll_until(lambda: [q for q in listed(admin, query_id) if q["state"] == "RUNNING" and q["tasks_done"] > 0],
                      "the connector's query to be listed with completed tasks", 120)[0]


def test_a_connector_query_is_listed_killed_and_its_cursor_told_why(connector: Any, admin: Any) -> None:
    cursor = connector.cursor()
    outcome: list[Any] = []

    def run() -> None:
        try:
            cursor.execute(LONG_QUERY)   # synchronous: the connector polls the status until the statement ends
            outcome.append(cursor.fetchall())
        except Exception as exc:  # noqa: BLE001 - what the connector raised is what the test asserts
            outcome.append(exc)

    worker = threading.Thread(target=run, name="dbx-killed-query", daemon=True)
    worker.start()
    try:
        query_id = poll_until(lambda: cursor.query_id, "the statement's query id", 60)
        assert "-" in query_id   # the connector's UUID form of the operation handle
        row = running_with_progress(admin, query_id)
        assert row["user"] == USER and 0 < row["progress"] < 1
        assert row["client_application"].startswith("PyDatabricksSqlConnector/")
        admin.execute(f"CALL system.runtime.kill_query(query_id => '{query_id}', message => 'over the budget')")
        worker.join(60)
        assert not worker.is_alive(), "the killed statement's cursor is still waiting"
    finally:
        if worker.is_alive():
            cursor.cancel()
    assert len(outcome) == 1 and isinstance(outcome[0], sql.exc.ServerOperationError), outcome
    message = str(outcome[0])
    assert "[OPERATION_CANCELED]" in message, message
    assert "killed by dk_admin: over the budget" in message and "SQLSTATE: 57014" in message
    assert not [q for q in listed(admin, query_id) if q["state"] == "RUNNING"]


def test_an_async_connector_query_shows_running_then_the_kill(connector: Any, admin: Any,
                                                               kill_gateway: RunningGateway, token_file: Path) -> None:
    """`execute_async` and the connector's own state polls: RUNNING while it runs; through the connector another
    user's kill_query is refused (42501) and the query runs on, then its owner's own kill ends it."""
    cursor = connector.cursor()
    cursor.execute_async(LONG_QUERY)
    try:
        assert cursor.is_query_pending()
        running_with_progress(admin, cursor.query_id)
        kill = f"CALL system.runtime.kill_query('{cursor.query_id.replace('-', '')}', 'maintenance')"
        with connect(kill_gateway, token_file, "dk_other") as other, other.cursor() as refused, \
                pytest.raises(sql.exc.ServerOperationError, match="only its owner or an admin") as raised:
            refused.execute(kill)
        assert "42501" in str(raised.value) and cursor.is_query_pending()
        with connect(kill_gateway, token_file, USER) as owner, owner.cursor() as killer:
            killer.execute(kill)
        with pytest.raises(sql.exc.ServerOperationError, match=f"killed by {USER}: maintenance"):
            poll_until(lambda: not cursor.is_query_pending(), "the connector to see the kill", 60)
    finally:
        try:
            cursor.cancel()
        except Exception:  # noqa: BLE001 - killed already
            pass
