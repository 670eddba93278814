"""Load, cancel, timeouts and the life of sessions: real gateways, real PyHive clients, real Spark jobs.

Every long query here would run for hours: each test cancels it in a `finally`, and every wait polls against a
deadline instead of sleeping.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

import pytest
from pyhive import exc as hive_exc
from pyhive import hive
from pyhive_helpers import poll_until
from TCLIService import ttypes

# About 10^12 rows through a filter: hours of CPU on two cores, so it is always still running when cancelled.
LONG_QUERY = "SELECT count(*) AS n FROM range(0, 1000000000000) WHERE id % 7 = 3"
ACTIVE = (ttypes.TOperationState.INITIALIZED_STATE, ttypes.TOperationState.PENDING_STATE,
          ttypes.TOperationState.RUNNING_STATE)
STATE_NAMES = ttypes.TOperationState._VALUES_TO_NAMES


def job_group(cursor: Any) -> str:
    """The Spark job group of the cursor's operation: the gateway tags jobs with the operation id."""
    return cursor._operationHandle.operationId.guid.hex()


def running_jobs(spark: Any, group: str) -> list[int]:
    tracker = spark.sparkContext.statusTracker()
    jobs = []
    for job_id in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job_id)
        if info is not None and info.status == "RUNNING":
            jobs.append(job_id)
    return jobs


def no_active_jobs(spark: Any) -> bool:
    return not spark.sparkContext.statusTracker().getActiveJobsIds()


def operation_state(client: Any, handle: Any) -> ttypes.TGetOperationStatusResp:
    return client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=handle))


def cancel_quietly(client: Any, handle: Any) -> None:
    try:
        client.CancelOperation(ttypes.TCancelOperationReq(operationHandle=handle))
    except Exception:  # noqa: BLE001 - the test already ended the operation, or its connection
        pass


def start_long_query(connection: Any, spark: Any) -> Any:
    """Run LONG_QUERY asynchronously on `connection` and wait until its Spark job runs; returns the cursor."""
    cursor = connection.cursor()
    cursor.execute(LONG_QUERY, async_=True)
    group = job_group(cursor)
    poll_until(lambda: running_jobs(spark, group), "the long query's Spark job to start", 120)
    return cursor


def open_connection(gateway: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("username", "tester")
    return hive.connect(gateway.host, gateway.port, **kwargs)


def close_quietly(connection: Any) -> None:
    try:
        connection.close()
    except Exception:  # noqa: BLE001 - the server may have closed it first
        pass


# -- many clients at once ---------------------------------------------------------------------------------------


def test_eight_concurrent_sessions_each_get_their_own_results(gateway):
    sessions = 8
    barrier = threading.Barrier(sessions)
    results: dict[int, list[Any]] = {}
    errors: list[BaseException] = []

    def client(number: int) -> None:
        try:
            connection = open_connection(gateway)
            try:
                cursor = connection.cursor()
                barrier.wait(timeout=120)
                seen = []
                cursor.execute(f"SELECT {number} AS who, id * {number} AS v FROM range(0, 1000, 1, 2) ORDER BY id")
                seen.append(cursor.fetchall())
                cursor.execute(f"CREATE OR REPLACE TEMPORARY VIEW mine AS SELECT {number} AS who")
                cursor.execute("SELECT who FROM mine")
                seen.append(cursor.fetchall())
                cursor.execute(f"SELECT sum(id) FROM range(0, {number * 100000})")
                seen.append(cursor.fetchall())
                results[number] = seen
            finally:
                connection.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(n,), name=f"client-{n}") for n in range(1, sessions + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not [t.name for t in threads if t.is_alive()], "a client never finished"
    assert not errors, errors
    for number in range(1, sessions + 1):
        rows, view, total = results[number]
        assert rows == [(number, i * number) for i in range(1000)]
        assert view == [(number,)], "temporary views must stay in their own session"
        n = number * 100000
        assert total == [(n * (n - 1) // 2,)]


def test_a_long_query_does_not_stall_other_clients(gateway, spark):
    hog_connection = open_connection(gateway)
    hog = start_long_query(hog_connection, spark)
    try:
        other = open_connection(gateway)
        try:
            cursor = other.cursor()
            for statement, expected in (("SELECT 1", [(1,)]), ("SELECT 'still here' AS s", [("still here",)])):
                started = time.monotonic()
                cursor.execute(statement)
                assert cursor.fetchall() == expected
                elapsed = time.monotonic() - started
                assert elapsed < 10, f"{statement} took {elapsed:.1f} s while another client's query ran"
        finally:
            other.close()
        assert hog.poll().operationState == ttypes.TOperationState.RUNNING_STATE
    finally:
        cancel_quietly(hog_connection.client, hog._operationHandle)
        close_quietly(hog_connection)


# -- cancel --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["cursor_cancel_from_a_thread", "cancel_rpc_from_another_connection"])
def test_cancel_ends_the_operation_and_its_spark_job(gateway, spark, how, caplog):
    caplog.set_level(logging.DEBUG, logger="sluicegate.gateway.operation.base")
    owner = open_connection(gateway)
    canceller = open_connection(gateway)
    cursor = start_long_query(owner, spark)
    group = job_group(cursor)
    try:
        started = time.monotonic()
        if how == "cursor_cancel_from_a_thread":
            thread = threading.Thread(target=cursor.cancel)
            thread.start()
            thread.join(timeout=30)
            assert not thread.is_alive(), "cursor.cancel() did not return"
        else:
            response = canceller.client.CancelOperation(
                ttypes.TCancelOperationReq(operationHandle=cursor._operationHandle))
            assert response.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, response.status
        poll_until(lambda: cursor.poll().operationState == ttypes.TOperationState.CANCELED_STATE, "CANCELED_STATE", 10)
        poll_until(lambda: not running_jobs(spark, group), "the Spark job to be cancelled", 30)
        poll_until(lambda: no_active_jobs(spark), "no active Spark job", 30)
        assert time.monotonic() - started < 40
        with pytest.raises(hive_exc.OperationalError) as raised:
            cursor.fetchall()
        status = raised.value.args[0].status
        assert status.sqlState == "57014"
        assert "cancel" in status.errorMessage.lower()
        # Cancel is idempotent, and the session goes on.
        again = canceller.client.CancelOperation(ttypes.TCancelOperationReq(operationHandle=cursor._operationHandle))
        assert again.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS
        fresh = owner.cursor()
        fresh.execute("SELECT 2")
        assert fresh.fetchall() == [(2,)]
        # Spark's error after the cancel is its echo: logged at DEBUG, in words ("cancelled by the client" once)
        echo = poll_until(lambda: [r for r in caplog.records if "already ended (CANCELED)" in r.getMessage()],
                          "the cancelled statement's own error to reach the operation", 10)
        assert all(r.levelno == logging.DEBUG and "cancelled cancelled" not in r.getMessage() for r in echo), echo
    finally:
        cancel_quietly(canceller.client, cursor._operationHandle)
        close_quietly(owner)
        close_quietly(canceller)


def test_cancel_of_a_synchronous_execute_fails_that_execute(gateway, spark):
    """A client blocked in a synchronous ExecuteStatement learns that its statement was cancelled."""
    owner = open_connection(gateway)
    other = open_connection(gateway)
    outcome: dict[str, Any] = {}

    def run() -> None:
        cursor = owner.cursor()
        try:
            cursor.execute(LONG_QUERY)
            outcome["rows"] = cursor.fetchall()
        except BaseException as exc:  # noqa: BLE001 - inspected by the test
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    session = None
    try:
        session = poll_until(lambda: _session_running(gateway, owner), "the synchronous statement to run", 120)
        operation = next(op for op in session.operations() if op.state.value == "RUNNING")
        poll_until(lambda: running_jobs(spark, operation.handle.hex), "its Spark job to start", 120)
        handle = ttypes.TOperationHandle(
            operationId=ttypes.THandleIdentifier(guid=operation.handle.guid, secret=operation.handle.secret),
            operationType=ttypes.TOperationType.EXECUTE_STATEMENT, hasResultSet=True)
        response = other.client.CancelOperation(ttypes.TCancelOperationReq(operationHandle=handle))
        assert response.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS
        thread.join(timeout=30)
        assert not thread.is_alive(), "the synchronous execute did not return after its cancel"
        error = outcome.get("error")
        assert isinstance(error, hive_exc.OperationalError), outcome
        assert error.args[0].status.sqlState == "57014"
        poll_until(lambda: not running_jobs(spark, operation.handle.hex), "the Spark job to be cancelled", 30)
    finally:
        if session is not None:
            for op in session.operations():
                op.cancel()
        thread.join(timeout=30)
        close_quietly(owner)
        close_quietly(other)


def _session_running(gateway: Any, connection: Any) -> Any:
    guid = bytes(connection.sessionHandle.sessionId.guid)
    for session in gateway.service.sessions.list():
        if session.handle.guid == guid and any(op.state.value == "RUNNING" for op in session.operations()):
            return session
    return None


# -- query timeout -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("run_async", [True, False])
def test_query_timeout_ends_in_timedout_state_with_57014(gateway, spark, run_async):
    connection = open_connection(gateway)
    client = connection.client
    try:
        started = time.monotonic()
        response = client.ExecuteStatement(ttypes.TExecuteStatementReq(
            sessionHandle=connection.sessionHandle, statement=LONG_QUERY, runAsync=run_async, queryTimeout=2))
        if not run_async:
            # A synchronous statement that times out answers the call itself with the timeout.
            assert response.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
            assert response.status.sqlState == "57014"
            assert "timeout of 2 s" in response.status.errorMessage
            assert "QUERY_TIMEOUT" in response.status.errorMessage
            assert time.monotonic() - started < 40
            poll_until(lambda: no_active_jobs(spark), "no active Spark job", 30)
            return
        assert response.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, response.status
        handle = response.operationHandle
        try:
            status = poll_until(lambda: (s := operation_state(client, handle)).operationState not in ACTIVE and s,
                                "the statement to end", 60)
            elapsed = time.monotonic() - started
            assert STATE_NAMES[status.operationState] == "TIMEDOUT_STATE"
            assert status.sqlState == "57014"
            assert "QUERY_TIMEOUT" in status.errorMessage
            assert "timeout of 2 s" in status.errorMessage
            assert 2 <= elapsed < 40
            poll_until(lambda: not running_jobs(spark, handle.operationId.guid.hex()),
                       "the Spark job to be cancelled", 30)
            poll_until(lambda: no_active_jobs(spark), "no active Spark job", 30)
            fetch = client.FetchResults(ttypes.TFetchResultsReq(operationHandle=handle, orientation=0, maxRows=10))
            assert fetch.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
            assert fetch.status.sqlState == "57014"
        finally:
            cancel_quietly(client, handle)
    finally:
        close_quietly(connection)


def test_query_timeout_leaves_quick_statements_alone(gateway):
    connection = open_connection(gateway)
    try:
        response = connection.client.ExecuteStatement(ttypes.TExecuteStatementReq(
            sessionHandle=connection.sessionHandle, statement="SELECT 40 + 2", runAsync=True, queryTimeout=30))
        handle = response.operationHandle
        status = poll_until(
            lambda: (s := operation_state(connection.client, handle)).operationState not in ACTIVE and s,
            "the statement to end", 60)
        assert STATE_NAMES[status.operationState] == "FINISHED_STATE"
        fetch = connection.client.FetchResults(
            ttypes.TFetchResultsReq(operationHandle=handle, orientation=0, maxRows=10))
        assert fetch.results.columns[0].i32Val.values == [42]
    finally:
        close_quietly(connection)


# -- closing sessions and dropping connections ----------------------------------------------------------------


def test_closing_a_session_cancels_its_running_query(start_gateway, spark):
    gateway = start_gateway()
    connection = open_connection(gateway)
    cursor = start_long_query(connection, spark)
    group = job_group(cursor)
    try:
        assert gateway.service.sessions.count() == 1
        connection.close()
        poll_until(lambda: not running_jobs(spark, group), "the Spark job to be cancelled", 30)
        poll_until(lambda: no_active_jobs(spark), "no active Spark job", 30)
        assert gateway.service.sessions.count() == 0
        assert gateway.service.operations.count() == 0
    finally:
        for session in gateway.service.sessions.list():
            for op in session.operations():
                op.cancel()


@pytest.mark.parametrize("statement_mode", ["async", "sync"])
def test_dropping_the_connection_closes_its_sessions_and_cancels_their_work(start_gateway, spark, statement_mode):
    gateway = start_gateway()
    bystander = open_connection(gateway)
    victim = open_connection(gateway)
    victim.cursor().execute("CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1")
    assert gateway.service.sessions.count() == 2
    sock: socket.socket = victim._transport._trans.handle
    thread = None
    try:
        if statement_mode == "async":
            cursor = start_long_query(victim, spark)
            group = job_group(cursor)
        else:
            thread = threading.Thread(target=_execute_ignoring_errors, args=(victim, LONG_QUERY), daemon=True)
            thread.start()
            session = poll_until(lambda: _session_running(gateway, victim), "the synchronous statement", 120)
            group = next(op for op in session.operations() if op.state.value == "RUNNING").handle.hex
            poll_until(lambda: running_jobs(spark, group), "its Spark job to start", 120)
        # Drop the TCP connection without CloseSession, as a killed client does.
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        poll_until(lambda: gateway.service.sessions.count() == 1, "the dropped connection's session to close", 30)
        poll_until(lambda: not running_jobs(spark, group), "the Spark job to be cancelled", 30)
        poll_until(lambda: no_active_jobs(spark), "no active Spark job", 30)
        poll_until(lambda: gateway.server.connection_count() == 1, "the server to forget the connection", 30)
        cursor = bystander.cursor()
        cursor.execute("SELECT 'unharmed'")
        assert cursor.fetchall() == [("unharmed",)]
    finally:
        for session in gateway.service.sessions.list():
            for op in session.operations():
                op.cancel()
        if thread is not None:
            thread.join(timeout=30)
        close_quietly(bystander)


def _execute_ignoring_errors(connection: Any, statement: str) -> None:
    try:
        connection.cursor().execute(statement)
    except Exception:  # noqa: BLE001 - the test drops this connection under the statement
        pass


# -- idle timeouts ---------------------------------------------------------------------------------------------


def test_idle_session_is_closed_and_later_use_says_so(start_gateway):
    gateway = start_gateway({"session": {"idle_timeout": 1, "check_interval": 0.2}})
    connection = open_connection(gateway)
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == [(1,)]
        poll_until(lambda: gateway.service.sessions.count() == 0, "the idle session to be closed", 30)
        with pytest.raises(hive_exc.OperationalError) as raised:
            connection.cursor().execute("SELECT 2")
        status = raised.value.args[0].status
        assert status.sqlState == "08003"
        assert "INVALID_SESSION_HANDLE" in status.errorMessage
        assert "timed out" in status.errorMessage and "open a new session" in status.errorMessage
        # The connection itself is fine: a new session on it works.
        response = connection.client.OpenSession(ttypes.TOpenSessionReq(
            client_protocol=ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6, username="tester"))
        assert response.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS
    finally:
        close_quietly(connection)


def test_a_session_with_a_running_statement_is_not_idle(start_gateway, spark):
    gateway = start_gateway({"session": {"idle_timeout": 1, "check_interval": 0.2}})
    connection = open_connection(gateway)
    cursor = start_long_query(connection, spark)
    try:
        session = gateway.service.sessions.list()[0]
        # No RPC for three idle timeouts, while its statement runs: the session must stay.
        poll_until(lambda: time.monotonic() - session.last_access > 3, "three idle timeouts to pass", 30)
        assert gateway.service.sessions.count() == 1
        assert cursor.poll().operationState == ttypes.TOperationState.RUNNING_STATE
    finally:
        cancel_quietly(connection.client, cursor._operationHandle)
        close_quietly(connection)


def test_idle_operation_is_closed_but_its_session_lives_on(start_gateway):
    gateway = start_gateway({"operation": {"idle_timeout": 1}, "session": {"check_interval": 0.2}})
    connection = open_connection(gateway)
    try:
        cursor = connection.cursor()
        cursor.execute("SELECT id FROM range(10)")  # finished, never fetched
        poll_until(lambda: gateway.service.operations.count() == 0, "the idle operation to be closed", 30)
        request = ttypes.TFetchResultsReq(operationHandle=cursor._operationHandle, orientation=0, maxRows=10)
        response = connection.client.FetchResults(request)
        assert response.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
        assert response.status.sqlState == "HY010"
        assert "was closed after 1 s without a fetch or close" in response.status.errorMessage
        assert "run the statement again" in response.status.errorMessage
        assert gateway.service.sessions.count() == 1
        # The client comes back to the same cursor: PyHive closes the old operation first, and that succeeds.
        cursor.execute("SELECT 'alive'")
        assert cursor.fetchall() == [("alive",)]
        # An operation never opened, or closed by its client, is still an unknown handle.
        closed = cursor._operationHandle
        cursor.close()
        response = connection.client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=closed))
        assert response.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
        assert "does not exist" in response.status.errorMessage
    finally:
        close_quietly(connection)


def test_status_long_polls_until_the_statement_ends(connect):
    """dbt-spark polls with a 5 s sleep between polls: the first GetOperationStatus waits for the statement to end
    (as Hive's long polling does), so a quick statement costs no poll interval."""
    cursor = connect().cursor()
    cursor.execute("SELECT count(*) FROM range(100000)", async_=True)
    assert cursor.poll().operationState == ttypes.TOperationState.FINISHED_STATE
    assert cursor.fetchall() == [(100000,)]


def test_long_poll_of_a_long_statement_answers_running_within_its_bound(connect):
    cursor = connect().cursor()
    cursor.execute(LONG_QUERY, async_=True)
    try:
        started = time.monotonic()
        assert cursor.poll().operationState == ttypes.TOperationState.RUNNING_STATE
        waited = time.monotonic() - started
        assert 3.0 <= waited < 30.0, f"one status call waited {waited:.1f} s; the long-poll bound is 5 s"
    finally:
        cursor.cancel()
