"""Who reads whose statements in `system.query.history`: a user their own only, whatever the query (a filter on
another user, a view an admin made over the table, an EXPLAIN); the table cannot be written, and `query.history`
without the `system` catalog is an ordinary (missing) table, never the history. Every refusal is a clean SQL error,
and the gateway still answers after it."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from pyhive import hive
from pyhive_helpers import error_status
from security_helpers import still_serves

from sluicegate.gateway.app import RunningGateway


def _flushed(gateway: RunningGateway) -> None:
    assert gateway.history is not None and gateway.history.flush(30)


def _rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return cursor.fetchall()


def test_a_user_cannot_read_another_users_statements(start_gateway: Callable[..., RunningGateway]) -> None:
    suffix = uuid.uuid4().hex[:6]
    admin, victim, snoop = f"hqs_admin_{suffix}", f"hqs_victim_{suffix}", f"hqs_snoop_{suffix}"
    gateway = start_gateway({"security": {"admins": [admin]}})
    connect = lambda user: hive.connect(gateway.host, gateway.port, username=user)  # noqa: E731
    victim_conn = connect(victim)
    victim_conn.cursor().execute("SELECT 'victims-private-query' AS q")
    victim_conn.close()
    admin_cursor = connect(admin).cursor()
    schema = f"hqs_{suffix}"
    admin_cursor.execute(f"CREATE SCHEMA {schema}")
    admin_cursor.execute(f"CREATE VIEW {schema}.all_history AS SELECT * FROM system.query.history")
    admin_cursor.execute(f"GRANT SELECT ON VIEW {schema}.all_history TO {snoop}")
    admin_cursor.close()
    _flushed(gateway)

    snoop_cursor = connect(snoop).cursor()
    assert _rows(snoop_cursor, f"SELECT * FROM system.query.history WHERE executed_by = '{victim}'") == []
    assert _rows(snoop_cursor, "SELECT count(*) FROM system.query.history "
                               f"WHERE executed_by <> '{snoop}'") == [(0,)]
    # a view an admin shares reads with the reader's rights on the history, never its owner's
    assert _rows(snoop_cursor, f"SELECT * FROM {schema}.all_history WHERE executed_by = '{victim}'") == []
    admin_rows = _rows(connect(admin).cursor(), f"SELECT statement_text FROM {schema}.all_history "
                                                f"WHERE executed_by = '{victim}' AND statement_type = 'SELECT'")
    assert admin_rows == [("SELECT ? AS q",)]
    # not writable, and not reachable without the system catalog
    status = error_status(snoop_cursor, "INSERT INTO system.query.history (executed_by) VALUES ('x')")
    assert status.sqlState and status.sqlState != "00000"
    status = error_status(snoop_cursor, "SELECT * FROM query.history")
    assert "TABLE_OR_VIEW_NOT_FOUND" in status.errorMessage or "SCHEMA_NOT_FOUND" in status.errorMessage
    status = error_status(snoop_cursor, "SELECT * FROM system.query.other_table")
    assert "TABLE_OR_VIEW_NOT_FOUND" in status.errorMessage
    still_serves(snoop_cursor)
    _flushed(gateway)
    assert _rows(connect(admin).cursor(), "SELECT count(*) FROM system.query.history "
                                          "WHERE executed_by = 'x'") == [(0,)]
    connect(admin).cursor().execute(f"DROP SCHEMA {schema} CASCADE")
