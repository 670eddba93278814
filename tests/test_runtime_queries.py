"""Live sessions and queries (`system.runtime.sessions`, `system.runtime.queries`), `kill_query` and the progress of
a running statement, through real clients: PyHive, the Thrift client PyHive is built on (GetOperationStatus with
getProgressUpdate), and beeline.

The long query counts 4*10^10 rows in 400 partitions: each task takes a fraction of a second, so tasks complete
while it runs (its progress moves), and the whole would take many minutes on two cores; every test kills or
cancels it in a `finally`. Spark schedules jobs first come, first served, so the listings read meanwhile only
filter and project (answered in the driver, without a job): an aggregate over them would wait for the long query.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pyhive import exc as hive_exc
from pyhive import hive
from pyhive_helpers import poll_until
from TCLIService import ttypes

LONG_QUERY = "SELECT count(*) AS n FROM range(0, 40000000000, 1, 400) WHERE id % 7 = 3"
QUERY_COLUMNS = ("query_id, session_id, user, client_address, state, statement_type, statement_text, started, "
                 "elapsed_ms, spark_job_ids, stages_done, stages_total, tasks_done, tasks_total, progress, "
                 "rows_fetched")


@pytest.fixture(scope="module")
def admin_gateway(start_gateway: Any) -> Any:
    return start_gateway({"security": {"admins": ["root_admin"]}})


@pytest.fixture()
def connect_to(admin_gateway: Any) -> Iterator[Any]:
    opened: list[Any] = []

    def open_as(user: str) -> Any:
        connection = hive.connect(admin_gateway.host, admin_gateway.port, username=user)
        opened.append(connection)
        return connection

    yield open_as
    for connection in opened:
        try:
            connection.close()
        except Exception:  # noqa: BLE001 - the test closed it, or its session is gone
            pass


def query_id(cursor: Any) -> str:
    return cursor._operationHandle.operationId.guid.hex()


def queries(cursor: Any, where: str = "") -> list[dict[str, Any]]:
    cursor.execute(f"SELECT {QUERY_COLUMNS} FROM system.runtime.queries {where}")
    names = [d[0].split(".")[-1] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def start_long(connection: Any) -> Any:
    cursor = connection.cursor()
    cursor.execute(LONG_QUERY, async_=True)
    return cursor


def cancel_quietly(cursor: Any) -> None:
    try:
        cursor.cancel()
    except Exception:  # noqa: BLE001 - killed already, or its connection is gone
        pass


def final_status(cursor: Any) -> Any:
    """Poll until the operation left its running states; the last GetOperationStatus response."""
    running = (ttypes.TOperationState.INITIALIZED_STATE, ttypes.TOperationState.PENDING_STATE,
               ttypes.TOperationState.RUNNING_STATE)
    return poll_until(lambda: (status := cursor.poll()).operationState not in running and status,
                      "the killed statement to end", 60)


def test_the_owner_sees_the_running_query_with_moving_progress_and_kills_it(connect_to: Any) -> None:
    alice = connect_to("alice")
    long = start_long(alice)
    watcher = alice.cursor()
    try:
        mine = query_id(long)
        first = poll_until(lambda: queries(watcher, f"WHERE query_id = '{mine}' AND tasks_done > 0"),
                           "the long query to complete tasks", 120)[0]
        assert first["user"] == "alice" and first["state"] == "RUNNING"
        assert first["statement_type"] == "SELECT"
        assert "RANGE(?, ?, ?, ?)" in first["statement_text"]   # redacted as the query history stores it
        assert first["stages_total"] >= 1 and first["tasks_total"] >= 400
        assert first["spark_job_ids"] and 0 < first["progress"] < 1
        assert first["client_address"].startswith("127.0.0.1:")
        later = poll_until(lambda: [q for q in queries(watcher, f"WHERE query_id = '{mine}'")
                                    if q["tasks_done"] > first["tasks_done"]], "the progress to move", 120)[0]
        assert later["elapsed_ms"] > first["elapsed_ms"]
        # the reading statement lists itself too: every statement is an open query while it runs
        assert any(q["statement_text"].startswith("SELECT query_id") for q in queries(watcher))

        watcher.execute(f"CALL system.runtime.kill_query(query_id => '{mine}', message => 'too slow for lunch')")
        status = final_status(long)
        assert status.operationState == ttypes.TOperationState.ERROR_STATE
        assert status.sqlState == "57014"
        assert "killed by alice: too slow for lunch" in status.errorMessage
        with pytest.raises(hive_exc.OperationalError, match="killed by alice: too slow for lunch"):
            long.fetchall()
        assert not queries(watcher, f"WHERE query_id = '{mine}' AND state = 'RUNNING'")
    finally:
        cancel_quietly(long)


def test_a_user_sees_only_their_own_queries_and_sessions_and_an_admin_all(connect_to: Any) -> None:
    alice, bob, admin = connect_to("alice"), connect_to("bob"), connect_to("root_admin")
    long = start_long(alice)
    try:
        mine = query_id(long)
        bobs = bob.cursor()
        assert all(q["user"] == "bob" for q in queries(bobs))
        assert not queries(bobs, f"WHERE query_id = '{mine}'")
        admins = admin.cursor()
        listed = poll_until(lambda: queries(admins, f"WHERE query_id = '{mine}'"), "the admin to see it", 60)
        assert listed[0]["user"] == "alice"

        bobs.execute("SELECT user, client_application, protocol, state FROM system.runtime.sessions")
        assert {row[0] for row in bobs.fetchall()} == {"bob"}
        admins.execute("SELECT user FROM system.runtime.sessions")
        assert {"alice", "bob", "root_admin"} <= {row[0] for row in admins.fetchall()}
        admins.execute("SELECT state, operations, client_application FROM system.runtime.sessions "
                       f"WHERE session_id = '{listed[0]['session_id']}'")
        assert admins.fetchall() == [("ACTIVE", 1, "hive")]
    finally:
        cancel_quietly(long)


def test_an_admin_kills_another_users_synchronous_query_and_its_client_gets_the_message(connect_to: Any) -> None:
    alice, admin = connect_to("alice"), connect_to("root_admin")
    failure: list[BaseException] = []

    def run() -> None:
        try:
            alice.cursor().execute(LONG_QUERY)  # synchronous: the client blocks in ExecuteStatement
        except BaseException as exc:  # noqa: BLE001 - what the client got is what the test asserts
            failure.append(exc)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    admins = admin.cursor()
    listed = poll_until(lambda: queries(admins, "WHERE user = 'alice' AND statement_text LIKE '%RANGE(?, ?, ?, ?)%'"),
                        "alice's query to be listed", 120)
    admins.execute(f"CALL system.runtime.kill_query('{listed[0]['query_id']}', 'maintenance window')")
    runner.join(60)
    assert not runner.is_alive(), "the killed client is still blocked"
    assert failure and isinstance(failure[0], hive_exc.OperationalError)
    status = failure[0].args[0].status
    assert status.sqlState == "57014"
    assert "[OPERATION_CANCELED]" in status.errorMessage
    assert "killed by root_admin: maintenance window" in status.errorMessage


def test_get_operation_status_answers_hive_progress_when_asked(connect_to: Any) -> None:
    alice = connect_to("alice")
    long = start_long(alice)
    try:
        request = ttypes.TGetOperationStatusReq(operationHandle=long._operationHandle, getProgressUpdate=True)

        def progressed() -> Any:
            update = alice.client.GetOperationStatus(request).progressUpdateResponse
            return update if update is not None and update.rows and int(update.rows[0][4]) > 0 else None

        update = poll_until(progressed, "a progress update with completed tasks", 120)
        assert update.headerNames == ["STAGES", "ATTEMPT", "STATUS", "TOTAL", "COMPLETED", "RUNNING", "PENDING",
                                      "FAILED", ""]
        assert update.status == ttypes.TJobExecutionStatus.IN_PROGRESS
        assert 0 < update.progressedPercentage < 1
        assert update.rows[0][0].startswith("Stage-") and update.rows[0][2] == "RUNNING"
        assert all(len(row) == len(update.headerNames) for row in update.rows)
        assert update.footerSummary == f"STAGES: 00/{len(update.rows):02d}"
        assert update.startTime > 0
        plain = alice.client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=long._operationHandle))
        assert plain.progressUpdateResponse is None  # only when asked: Spark's tracker is read on demand
    finally:
        cancel_quietly(long)


def test_beeline_lists_its_session_and_is_killed_by_its_owner_not_another_user(connect_to: Any, admin_gateway: Any,
                                                                                beeline: Any) -> None:
    """Through beeline: another user's kill_query is refused (42501) and the query runs on; its owner's own kill,
    from a second beeline, ends it with the message."""
    done = beeline(admin_gateway.port, "-e", "SELECT user, client_application FROM system.runtime.sessions",
                   user="bee")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()  # the header comes after beeline's prompt
    assert lines[0].endswith("user,client_application") and lines[1:] == ["bee,Hive JDBC"], done.stdout

    result: list[Any] = []
    runner = threading.Thread(target=lambda: result.append(
        beeline(admin_gateway.port, "-e", LONG_QUERY, user="bee")), daemon=True)
    runner.start()
    admins = connect_to("root_admin").cursor()
    listed = poll_until(lambda: queries(admins, "WHERE user = 'bee' AND state = 'RUNNING'"),
                        "beeline's query to run", 180)
    kill = f"CALL system.runtime.kill_query(query_id => '{listed[0]['query_id']}', message => 'beeline must stop');"
    refused = beeline(admin_gateway.port, "-e", kill, user="mallory")
    assert refused.returncode != 0 and "only its owner or an admin" in refused.stderr, refused.stderr
    assert "42501" in refused.stderr and queries(admins, "WHERE user = 'bee' AND state = 'RUNNING'")
    owned = beeline(admin_gateway.port, "-e", kill, user="bee")
    assert owned.returncode == 0, owned.stderr
    runner.join(120)
    assert result, "beeline did not end after the kill"
    assert result[0].returncode != 0
    assert "killed by bee: beeline must stop" in result[0].stderr
