"""What the query history learns beyond the statement, through real clients on a real gateway: the application each
client names (PyHive, beeline, `sluicegate shell`, the Databricks SQL connector; gateway/client_application.py), in
the history and in `system.runtime.sessions`; each statement's outcome (FINISHED, or FAILED with its class) as the
shell's and the connector's statements left it; the rows and bytes a query read, as Spark counted them; and the
materialized-view refreshes the gateway runs on its own (scheduled, triggered by an input, the pass of a REFRESH ...
ASYNC), recorded as user `system`'s with their source."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyhive import hive

from sluicegate.catalog import history
from sluicegate.catalog.history import HistoryRecord
from sluicegate.executor.materialized_views.background import REFRESHES
from sluicegate.executor.materialized_views.scheduler import MaterializedViewScheduler
from sluicegate.gateway.app import RunningGateway
from sluicegate.gateway.auth.tokens import create_token

sql = pytest.importorskip("databricks.sql")

SLUICEGATE = str(Path(sys.executable).parent / "sluicegate")


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hc_tokens") / "tokens"


@pytest.fixture(scope="module")
def clients_gateway(start_gateway: Callable[..., RunningGateway], token_file: Path) -> RunningGateway:
    return start_gateway({"server": {"http_port": 0}, "auth": {"token_file": str(token_file)},
                          "security": {"admins": ["hc_admin"]}})


@pytest.fixture()
def unique() -> Callable[[str], str]:
    suffix = uuid.uuid4().hex[:6]
    return lambda name: f"hc_{name}_{suffix}"


def recorded(gateway: RunningGateway, user: str) -> list[HistoryRecord]:
    """`user`'s statements as the history stored them, oldest first, but the `USE` PyHive sends as it connects."""
    assert gateway.history is not None and gateway.history.flush(30)
    return [r for r in reversed(history.read(gateway.service.catalog, user)) if r.statement_type != "USE"]


def applications(gateway: RunningGateway, user: str) -> set[str | None]:
    return {r.client_application for r in recorded(gateway, user)}


def pyhive(gateway: RunningGateway, user: str, *statements: str, **options: Any) -> list[Any]:
    connection = hive.connect(gateway.host, gateway.port, username=user, **options)
    try:
        cursor = connection.cursor()
        results = []
        for statement in statements:
            cursor.execute(statement)
            results.append(cursor.fetchall() if cursor.description else [])
        return results
    finally:
        connection.close()


def connector(gateway: RunningGateway, token_file: Path, user: str, **options: Any) -> Any:
    token = create_token(token_file, user, "history clients test")[1]
    return sql.connect(server_hostname="127.0.0.1", http_path="/cliservice", access_token=token,
                       _connection_uri=f"http://127.0.0.1:{gateway.server.http_port}/cliservice",
                       enable_telemetry=False, **options)


# -- client_application ------------------------------------------------------------------------------------------


def test_pyhive_is_named_by_its_protocol_or_by_the_name_it_gives(clients_gateway: RunningGateway,
                                                                 unique: Callable[[str], str]) -> None:
    plain, named = unique("pyhive"), unique("named")
    (live,) = pyhive(clients_gateway, plain, "SELECT client_application FROM system.runtime.sessions")
    assert live == [("hive",)]                 # PyHive sends its protocol version and user name, nothing else
    assert applications(clients_gateway, plain) == {"hive"}
    (live,) = pyhive(clients_gateway, named, "SELECT client_application FROM system.runtime.sessions",
                     configuration={"client_application": "nightly-report"})
    assert live == [("nightly-report",)]
    assert applications(clients_gateway, named) == {"nightly-report"}


def test_beeline_is_hive_jdbc_or_the_name_in_its_url(clients_gateway: RunningGateway, beeline: Callable[..., Any],
                                                      unique: Callable[[str], str]) -> None:
    plain, named = unique("bee"), unique("beename")
    done = beeline(clients_gateway.port, "-e", "SELECT 1;", user=plain)
    assert done.returncode == 0, done.stderr
    assert applications(clients_gateway, plain) == {"Hive JDBC"}
    done = beeline(clients_gateway.port, "-e", "SELECT 1;", user=named, url_options="?client_application=bee-report")
    assert done.returncode == 0, done.stderr
    assert applications(clients_gateway, named) == {"bee-report"}


def test_the_shell_names_itself(clients_gateway: RunningGateway, unique: Callable[[str], str],
                                tmp_path: Path) -> None:
    """... and its statements are recorded with their outcome: one that ran, one that failed with its class."""
    user = unique("shell")
    done = subprocess.run([SLUICEGATE, "shell", "--port", str(clients_gateway.port), "-u", user, "-e",
                           "SELECT 1; SELECT * FROM hc_no_such_table"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, HOME=str(tmp_path)))
    assert "TABLE_OR_VIEW_NOT_FOUND" in done.stdout + done.stderr, done.stdout + done.stderr
    assert applications(clients_gateway, user) == {"sluicegate shell"}
    assert [(r.statement_type, r.execution_status, r.error_class, r.sqlstate)
            for r in recorded(clients_gateway, user)] == [("SELECT", "FINISHED", None, None),
                                                          ("SELECT", "FAILED", "TABLE_OR_VIEW_NOT_FOUND", "42P01")]


def test_the_databricks_connector_is_named_by_its_user_agent(clients_gateway: RunningGateway, token_file: Path,
                                                             unique: Callable[[str], str]) -> None:
    plain, tagged = unique("dbx"), unique("dbxtag")
    connection = connector(clients_gateway, token_file, plain)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT client_application FROM system.runtime.sessions")
            (live,) = cursor.fetchall()
    finally:
        connection.close()
    assert live[0].startswith("PyDatabricksSqlConnector/") and "(" not in live[0]
    assert applications(clients_gateway, plain) == {live[0]}
    connection = connector(clients_gateway, token_file, tagged, user_agent_entry="hc-dashboard")
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchall()
            with pytest.raises(sql.exc.ServerOperationError, match="TABLE_OR_VIEW_NOT_FOUND"):
                cursor.execute("SELECT * FROM hc_no_such_table")
    finally:
        connection.close()   # a statement is recorded as its operation closes: the session's close closes them all
    assert clients_gateway.history is not None and clients_gateway.history.flush(30)
    connection = connector(clients_gateway, token_file, tagged, user_agent_entry="hc-dashboard")   # in SQL
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement_text, execution_status, error_message FROM system.query.history "
                           "WHERE executed_by = current_user() AND statement_type = 'SELECT' ORDER BY start_time")
            outcomes = [tuple(row) for row in cursor.fetchall()]
    finally:
        connection.close()
    assert [(text, status) for text, status, _ in outcomes] == [("SELECT ?", "FINISHED"),
                                                                ("SELECT * FROM hc_no_such_table", "FAILED")]
    assert outcomes[0][2] is None and "TABLE_OR_VIEW_NOT_FOUND" in outcomes[1][2]
    (name,) = applications(clients_gateway, tagged)
    assert name is not None and name.startswith("PyDatabricksSqlConnector/") and "(hc-dashboard)" in name


# -- rows read ---------------------------------------------------------------------------------------------------


def test_a_query_records_the_rows_and_bytes_spark_read(clients_gateway: RunningGateway,
                                                       unique: Callable[[str], str]) -> None:
    user = unique("reader")
    table = f"hc_db.{unique('rows')}"
    pyhive(clients_gateway, user, "CREATE DATABASE IF NOT EXISTS hc_db", f"CREATE TABLE {table} (id BIGINT)",
           f"INSERT INTO {table} SELECT id FROM range(1000)", f"INSERT INTO {table} SELECT id FROM range(500)",
           f"SELECT sum(id) FROM {table} WHERE id % 2 = 0", "SELECT 1")
    by_text = {r.statement_text: r for r in recorded(clients_gateway, user)}
    query = by_text[f"SELECT SUM(id) FROM {table} WHERE id % ? = ?"]
    assert query.read_tables == (table,)
    assert query.read_rows == 1500 and query.read_bytes is not None and query.read_bytes > 0
    constant = by_text["SELECT ?"]
    assert (constant.read_rows, constant.read_bytes) == (None, None)   # no table read: nothing to count


# -- the gateway's own refreshes ---------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.offset = dt.timedelta()

    def __call__(self) -> dt.datetime:
        return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) + self.offset


def test_refreshes_the_gateway_runs_are_system_statements(spark: Any, clients_gateway: RunningGateway,
                                                          unique: Callable[[str], str]) -> None:
    owner, database = unique("owner"), unique("mvdb")
    service = clients_gateway.service
    clock = Clock()
    scheduler = MaterializedViewScheduler(spark, service.catalog, clients_gateway.config.warehouse, service.policy,
                                          clock=clock)
    scheduler.system_work = clients_gateway.history
    pyhive(clients_gateway, owner, f"CREATE DATABASE {database}", f"CREATE TABLE {database}.src (id INT)",
           f"INSERT INTO {database}.src VALUES (1), (2)",
           f"CREATE MATERIALIZED VIEW {database}.triggered TRIGGER ON UPDATE AS SELECT count(*) AS n FROM "
           f"{database}.src",
           f"CREATE MATERIALIZED VIEW {database}.hourly SCHEDULE EVERY 1 HOUR AS SELECT max(id) AS m FROM "
           f"{database}.src",
           f"INSERT INTO {database}.src VALUES (3)")
    assert (database, "triggered") in scheduler.tick()
    clock.offset = dt.timedelta(hours=2)
    assert (database, "hourly") in scheduler.tick()
    pyhive(clients_gateway, owner, f"REFRESH MATERIALIZED VIEW {database}.hourly FULL ASYNC")
    assert REFRESHES.wait(120)
    mine = [r for r in recorded(clients_gateway, "system") if any(t.startswith(f"{database}.")
                                                                  for t in r.written_tables)]
    by_source = {r.source: r for r in mine}
    assert set(by_source) == {"TRIGGERED_REFRESH", "SCHEDULED_REFRESH", "ASYNC_REFRESH"}, mine
    for source, view in (("TRIGGERED_REFRESH", "triggered"), ("SCHEDULED_REFRESH", "hourly"),
                         ("ASYNC_REFRESH", "hourly")):
        row = by_source[source]
        assert (row.executed_by, row.statement_type, row.execution_status) == ("system", "REFRESH", "FINISHED")
        assert row.written_tables == (f"{database}.{view}",) and row.read_tables == (f"{database}.src",)
        assert row.statement_text is not None and row.statement_text.startswith("REFRESH MATERIALIZED VIEW")
        assert row.total_duration_ms is not None
    assert by_source["ASYNC_REFRESH"].statement_text == f"REFRESH MATERIALIZED VIEW {database}.hourly FULL"
    pyhive(clients_gateway, owner, f"DROP DATABASE {database} CASCADE")
