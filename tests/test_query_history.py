"""`system.query.history` through real clients (PyHive and beeline) on a real gateway: every statement shows with
its user, type, status, error class and SQLSTATE, and the rows its client fetched; a user reads only their own rows,
an admin everyone's; literals and secret options never reach the stored text; retention trims; the history is in the
catalog, so a restarted gateway still shows it."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyhive import exc as hive_exc
from pyhive import hive
from pyhive_helpers import error_status

from sluicegate.gateway import app
from sluicegate.gateway.app import RunningGateway
from sluicegate.gateway.config import load_config
from sluicegate.gateway.service import open_catalog

COLUMNS = ("statement_type, execution_status, error_class, sqlstate, produced_rows, statement_text, "
           "client_address, session_id, statement_id, error_message")


@pytest.fixture(scope="module")
def history_gateway(start_gateway: Callable[..., RunningGateway]) -> RunningGateway:
    return start_gateway({"security": {"admins": ["hq_admin"]}})


@pytest.fixture()
def users() -> Callable[[str], str]:
    """Unique user names per test (the history is the warehouse's, shared by every test of the session)."""
    suffix = uuid.uuid4().hex[:6]
    return lambda name: f"hq_{name}_{suffix}"


def run(gateway: RunningGateway, user: str, *statements: str) -> list[list[tuple[Any, ...]]]:
    """Each statement on a connection of `user`, its rows fetched, then the connection closed (so every operation
    is closed and recorded), and the history's writer flushed."""
    connection = hive.connect(gateway.host, gateway.port, username=user)
    results: list[list[tuple[Any, ...]]] = []
    try:
        cursor = connection.cursor()
        for sql in statements:
            cursor.execute(sql)
            results.append(cursor.fetchall() if cursor.description else [])
        cursor.close()
    finally:
        connection.close()
    flush(gateway)
    return results


def flush(gateway: RunningGateway) -> None:
    assert gateway.history is not None and gateway.history.flush(30)


def history_of(gateway: RunningGateway, reader: str, user: str) -> list[tuple[Any, ...]]:
    """`user`'s statements as `reader` sees them, but for the `USE default` PyHive sends as it connects."""
    (rows,) = run(gateway, reader, f"SELECT {COLUMNS} FROM system.query.history WHERE executed_by = '{user}' "
                                   "AND statement_type <> 'USE' ORDER BY start_time, statement_id")
    return rows


def test_two_users_statements_show_with_user_type_status_and_rows(history_gateway: RunningGateway,
                                                                   users: Callable[[str], str]) -> None:
    alice, bob = users("alice"), users("bob")
    run(history_gateway, alice, "SELECT 'Sekr1t-literal' AS s, id FROM range(3)")
    connection = hive.connect(history_gateway.host, history_gateway.port, username=alice)
    status = error_status(connection.cursor(), "SELECT * FROM hq_no_such_table_anywhere")
    connection.close()
    run(history_gateway, bob, "SELECT id FROM range(5)")

    mine = history_of(history_gateway, alice, alice)
    assert [(r[0], r[1]) for r in mine] == [("SELECT", "FINISHED"), ("SELECT", "FAILED")]
    ok, failed = mine
    assert ok[4] == 3 and ok[5] == "SELECT ? AS s, id FROM RANGE(?)" and ok[6] == "127.0.0.1"
    assert (failed[2], failed[3]) == ("TABLE_OR_VIEW_NOT_FOUND", status.sqlState) and failed[4] is None
    assert len(ok[8]) == 32 and ok[7] != failed[7]
    assert [(r[0], r[1], r[4]) for r in history_of(history_gateway, bob, bob)] == [("SELECT", "FINISHED", 5)]


def test_a_user_sees_only_their_own_an_admin_everyones(history_gateway: RunningGateway,
                                                       users: Callable[[str], str]) -> None:
    alice, bob = users("alice"), users("bob")
    run(history_gateway, alice, "SELECT 1")
    run(history_gateway, bob, "SELECT 2")
    assert history_of(history_gateway, bob, alice) == []
    (seen,) = run(history_gateway, bob, "SELECT DISTINCT executed_by FROM system.query.history")
    assert seen == [(bob,)]
    (admin_sees,) = run(history_gateway, "hq_admin", "SELECT DISTINCT executed_by FROM system.query.history "
                                                     f"WHERE executed_by IN ('{alice}', '{bob}') ORDER BY 1")
    assert admin_sees == [(alice,), (bob,)]


def test_history_joins_and_filters_as_any_table(history_gateway: RunningGateway, users: Callable[[str], str]) -> None:
    carol = users("carol")
    run(history_gateway, carol, "CREATE DATABASE IF NOT EXISTS hq_db", "CREATE TABLE IF NOT EXISTS hq_db.t (id INT)",
        "INSERT INTO hq_db.t VALUES (1), (2)", "SELECT * FROM hq_db.t")
    (rows,) = run(history_gateway, carol,
                  "SELECT h.statement_type, h.written_tables, h.read_tables, h.modified_rows "
                  "FROM system.query.history h JOIN (SELECT 'INSERT' AS kind UNION ALL SELECT 'SELECT') k "
                  f"ON h.statement_type = k.kind WHERE h.executed_by = '{carol}' ORDER BY h.start_time")
    assert rows[0][0] == "INSERT" and "hq_db.t" in rows[0][1] and rows[0][3] == 2
    assert rows[1][0] == "SELECT" and "hq_db.t" in rows[1][2]
    run(history_gateway, carol, "DROP DATABASE hq_db CASCADE")


def test_secrets_never_stored_even_with_the_text_kept_whole(start_gateway: Callable[..., RunningGateway],
                                                            users: Callable[[str], str]) -> None:
    whole = start_gateway({"history": {"keep_text_whole": True}})
    dave = users("dave")
    connection = hive.connect(whole.host, whole.port, username=dave)
    cursor = connection.cursor()
    cursor.execute("SELECT 'kept-literal' AS k")
    cursor.fetchall()
    for sql in ("CREATE TABLE hq_secret USING parquet OPTIONS (password 'pw-Sekr1t-42', "
                "'kafka.sasl.jaas.config' 'jaas-Sekr1t-42') AS SELECT 1 AS x",
                "SET spark.hadoop.fs.s3a.secret.key=s3-Sekr1t-42"):
        with contextlib.suppress(hive_exc.OperationalError):  # refused or not, it is recorded
            cursor.execute(sql)
    connection.close()
    flush(whole)
    rows = history_of(whole, dave, dave)
    texts = [r[5] for r in rows]
    assert texts[0] == "SELECT 'kept-literal' AS k" and len(texts) == 3
    stored = repr(rows)
    assert "Sekr1t-42" not in stored, stored


def test_beeline_statements_are_recorded(history_gateway: RunningGateway, beeline: Callable[..., Any],
                                         users: Callable[[str], str]) -> None:
    erin = users("erin")
    done = beeline(history_gateway.port, "-e", "SELECT 40 + 2; SELECT * FROM hq_missing_table_b;", user=erin)
    assert "42" in done.stdout
    flush(history_gateway)
    rows = history_of(history_gateway, erin, erin)
    statements = [(r[0], r[1], r[2]) for r in rows if r[5] is not None]
    assert ("SELECT", "FINISHED", None) in statements
    assert ("SELECT", "FAILED", "TABLE_OR_VIEW_NOT_FOUND") in statements
    assert all(r[6] == "127.0.0.1" for r in rows)


@pytest.fixture()
def own_gateway(spark: Any, warehouse: Path, streams: Any) -> Iterator[Callable[..., RunningGateway]]:
    """Gateways this test starts and stops itself (a restart), on the session's warehouse and catalog file."""
    started: list[RunningGateway] = []

    def start(overrides: dict[str, Any] | None = None) -> RunningGateway:
        config = load_config(port=0, warehouse=warehouse, overrides=overrides)
        running = app.start(config, spark, catalog=open_catalog(config), streams=streams, host="127.0.0.1", port=0)
        started.append(running)
        return running

    yield start
    for running in started:
        with contextlib.suppress(Exception):  # the test may have stopped it already
            running.stop(grace=0)


def test_history_survives_a_restart(own_gateway: Callable[..., RunningGateway], users: Callable[[str], str]) -> None:
    frank = users("frank")
    first = own_gateway()
    run(first, frank, "SELECT 'before the restart'")
    first.stop(grace=0)
    second = own_gateway()
    rows = history_of(second, frank, frank)
    assert rows[0][:2] == ("SELECT", "FINISHED") and rows[0][5] == "SELECT ?"


def test_retention_trims_to_max_rows(own_gateway: Callable[..., RunningGateway], users: Callable[[str], str]) -> None:
    """Last in the module: it trims the warehouse's history to a few rows."""
    grace = users("grace")
    small = own_gateway({"history": {"max_rows": 3}, "security": {"admins": [grace]}})
    run(small, grace, *[f"SELECT {n}" for n in range(6)])
    (rows,) = run(small, grace, "SELECT count(*) FROM system.query.history")
    assert rows[0][0] <= 3
