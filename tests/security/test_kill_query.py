"""Who may see and kill whose statements: `CALL system.runtime.kill_query` kills a statement of the caller's own
(admins: anyone's, tests/test_runtime_queries.py); another user gets 42501 and the statement runs on; an unknown id,
an unknown procedure and a malformed call are clean SQL errors. `system.runtime` shows a user their own sessions
and statements only, also through a view someone else owns."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from pyhive_helpers import poll_until
from security_helpers import refused, still_serves

LONG_QUERY = "SELECT count(*) AS n FROM range(0, 40000000000, 1, 400) WHERE id % 7 = 3"


def _state(cursor: Any) -> str:
    from TCLIService import ttypes

    return ttypes.TOperationState._VALUES_TO_NAMES[cursor.poll().operationState]


def test_another_user_cannot_kill_a_query_and_it_runs_on(as_user: Callable[[str], Any], spark: Any) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    alice.execute(LONG_QUERY, async_=True)
    try:
        query_id = alice._operationHandle.operationId.guid.hex()
        tracker = spark.sparkContext.statusTracker()
        poll_until(lambda: tracker.getJobIdsForGroup(query_id), "alice's query to start its job", 120)
        for sql in (f"CALL system.runtime.kill_query(query_id => '{query_id}', message => 'mine now')",
                    f"CALL system.runtime.kill_query('{query_id}')",
                    f"call SYSTEM.RUNTIME.KILL_QUERY('{query_id.upper()}', 'x')"):
            message = refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
            assert "only its owner or an admin" in message and "hint:" in message
        assert _state(alice) == "RUNNING_STATE"
        bob.execute(f"SELECT query_id FROM system.runtime.queries WHERE query_id = '{query_id}'")
        assert bob.fetchall() == []  # nor does bob see it
        still_serves(bob)
    finally:
        alice.cancel()


def test_unknown_ids_procedures_and_arguments_are_clean_errors(as_user: Callable[[str], Any]) -> None:
    bob = as_user("bob")
    message = refused(bob, f"CALL system.runtime.kill_query('{uuid.uuid4().hex}')", "QUERY_NOT_FOUND", "42704")
    assert "system.runtime.queries" in message
    refused(bob, "CALL system.runtime.drop_everything('x')", "PROCEDURE_NOT_FOUND", "42883")
    refused(bob, "CALL runtime.kill_query('x')", "PROCEDURE_NOT_FOUND", "42883")  # only under `system`
    refused(bob, "CALL system.runtime.kill_query(query_id => 42)", "INVALID_STATEMENT", "42000")
    refused(bob, "CALL system.runtime.kill_query(message => 'no id')", "INVALID_STATEMENT", "42000")
    refused(bob, "CALL system.runtime.kill_query(", "PARSE_SYNTAX_ERROR", "42601")
    refused(bob, "SELECT * FROM system.runtime.processes", "TABLE_OR_VIEW_NOT_FOUND", "42P01")
    still_serves(bob)


def test_a_view_over_runtime_shows_each_reader_their_own_rows(as_user: Callable[[str], Any]) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = f"peek_{uuid.uuid4().hex[:8]}"
    bob.execute(f"CREATE SCHEMA {schema}")
    bob.execute(f"CREATE VIEW {schema}.who AS SELECT user, statement_text FROM system.runtime.queries")
    bob.execute(f"GRANT SELECT ON VIEW {schema}.who TO alice")
    alice.execute(f"SELECT DISTINCT user FROM {schema}.who")
    assert alice.fetchall() == [("alice",)]
    bob.execute(f"SELECT DISTINCT user FROM {schema}.who")
    assert bob.fetchall() == [("bob",)]
    bob.execute(f"DROP SCHEMA {schema} CASCADE")
