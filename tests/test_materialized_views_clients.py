"""Materialized views through beeline (the Hive JDBC driver) and `sluicegate shell`, against a real gateway,
asserting on what each client prints: a scheduled CREATE, DESCRIBE TABLE EXTENDED's rows (Type, View Text, Refresh
Schedule, the last refresh), REFRESH after an input changed, SHOW MATERIALIZED VIEWS, EXPLAIN CREATE MATERIALIZED VIEW,
ALTER ... ALTER SCHEDULE, DROP, and a query over STREAM refused as each client reports an error.

Both clients run the same script (one beeline JVM for all of it), cut into parts by marker queries as in
test_streaming_operations_clients.py; it ends with the failing statement, where both clients stop. (PyHive covers the
same statements per feature: tests/warehouse/test_materialized_views.py, test_materialized_view_async.py.)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import fresh_database
from test_beeline import csv_rows, describe_rows, script_sections
from test_shell import run_shell
from test_streaming_operations_clients import shell_details, shell_script_sections, shell_table

SCRIPT = """\
CREATE DATABASE {db};
USE {db};
CREATE TABLE orders (id INT, country STRING, amount DOUBLE);
INSERT INTO orders VALUES (1, 'FR', 10.0), (2, 'DE', 5.0), (3, 'FR', 2.5);
/* a gold view through {client}, refreshed every two hours */
CREATE MATERIALIZED VIEW revenue COMMENT 'gold'
  SCHEDULE EVERY 2 HOURS
AS SELECT country, count(*) AS n, sum(amount) AS total FROM orders GROUP BY country;
SELECT 'created' AS section;
DESCRIBE TABLE EXTENDED revenue;
INSERT INTO orders VALUES (4, 'DE', 1.0);
REFRESH MATERIALIZED VIEW revenue;
SELECT 'rows' AS section;
SELECT country, n, total FROM revenue ORDER BY country;
SELECT 'refreshed' AS section;
DESCRIBE TABLE EXTENDED revenue;
SELECT 'show' AS section;
SHOW MATERIALIZED VIEWS;
SELECT 'explain' AS section;
EXPLAIN CREATE MATERIALIZED VIEW big AS SELECT id, amount FROM orders WHERE amount > 3;
ALTER MATERIALIZED VIEW revenue ALTER SCHEDULE CRON '0 0 6 * * ?' AT TIME ZONE 'UTC';
SELECT 'altered' AS section;
DESCRIBE TABLE EXTENDED revenue;
DROP MATERIALIZED VIEW revenue;
SELECT 'dropped' AS section;
SHOW MATERIALIZED VIEWS;
SELECT 'error' AS section;
CREATE MATERIALIZED VIEW streamed AS
SELECT id FROM STREAM(orders);
SELECT 'never' AS section;
"""

SECTIONS = ["created", "rows", "refreshed", "show", "explain", "altered", "dropped", "error"]
VIEW_TEXT = "SELECT country, count(*) AS n, sum(amount) AS total FROM orders GROUP BY country"
STREAMED = "SELECT id FROM STREAM(orders)"
ERROR = ("[INVALID_FLOW_QUERY_TYPE.STREAMING_RELATION_FOR_MATERIALIZED_VIEW] Streaming relations cannot be used in the "
         "query of a materialized view: STREAM reads a source incrementally, a materialized view recomputes a batch "
         "query")
HINT = "remove STREAM(...) to read the table's current rows, or CREATE STREAMING TABLE instead"
EXPLAINED = ["Refresh policy: AUTO", "Refresh schedule: MANUAL"]   # then whether and how it is incremental


def _script(tmp: Path, client: str, db: str) -> Path:
    script = tmp / "script.sql"
    script.write_text(SCRIPT.format(db=db, client=client))
    return script


@pytest.fixture(scope="module")
def beeline_run(beeline: Any, gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = "mv_clients_beeline"
    script = _script(tmp_path_factory.mktemp("mv_clients_beeline"), "beeline", db)
    with fresh_database(gateway, db):
        yield beeline(gateway.port, "-f", str(script))


def _check_created(details: dict[str, str], db: str) -> None:
    assert details["Type"] == "MATERIALIZED_VIEW" and details["Comment"] == "gold"
    assert details["View Text"] == VIEW_TEXT
    assert details["Refresh Schedule"] == "EVERY 2 HOURS"
    assert details["Refresh Mode"] == "SCHEDULED (a refresh at each scheduled time)"
    assert details["Latest Refresh Status"] == "COMPLETED" and details["Last Refresh Type"] == "FULL"
    assert details["Last Refresh Reason"] == "full recompute (the view is new)"
    assert details["Input Versions"] == f"{db}.orders@v1"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", details["Last Refreshed"])


def _check_refreshed_and_altered(refreshed: dict[str, str], altered: dict[str, str], db: str) -> None:
    """REFRESH after an insert recomputed the view at the input's new version; ALTER ... ALTER SCHEDULE changed
    the schedule and its next run and nothing else."""
    assert refreshed["Input Versions"] == f"{db}.orders@v2"
    assert refreshed["Last Refresh Type"] in ("FULL", "INCREMENTAL")    # the aggregate over an append: either
    assert f"{db}.orders" in refreshed["Last Refresh Reason"] and "v1 -> v2" in refreshed["Last Refresh Reason"]
    assert refreshed["Refresh Schedule"] == "EVERY 2 HOURS"
    assert altered["Refresh Schedule"] == "CRON '0 0 6 * * ?' AT TIME ZONE 'UTC'"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d 06:00:00", altered["Next Refresh"])
    assert {k: v for k, v in altered.items() if k not in ("Refresh Schedule", "Next Refresh")} == \
        {k: v for k, v in refreshed.items() if k not in ("Refresh Schedule", "Next Refresh")}


# -- beeline ----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def beeline_out(beeline_run: Any) -> dict[str, list[str]]:
    return script_sections(beeline_run, SECTIONS)


@pytest.mark.beeline
def test_beeline_create_describe_refresh_and_rows(beeline_out: dict[str, list[str]]) -> None:
    created = describe_rows(beeline_out["created"])
    _check_created(created, "mv_clients_beeline")
    assert [created[c] for c in ("country", "n", "total")] == ["string", "bigint", "double"]
    assert beeline_out["rows"] == ["country,n,total", "DE,2,6.0", "FR,2,12.5"]


@pytest.mark.beeline
def test_beeline_show_explain_alter_and_drop(beeline_out: dict[str, list[str]]) -> None:
    _check_refreshed_and_altered(describe_rows(beeline_out["refreshed"]), describe_rows(beeline_out["altered"]),
                                 "mv_clients_beeline")
    header, *rows = csv_rows(beeline_out["show"])
    assert header == ["namespace", "viewName", "lastRefreshStatus", "lastRefreshedAt", "lastRefreshType", "lastError"]
    assert [row[:3] + row[5:] for row in rows] == [["mv_clients_beeline", "revenue", "COMPLETED", "NULL"]]
    assert rows[0][4] == describe_rows(beeline_out["refreshed"])["Last Refresh Type"]
    plan = [row[0] for row in csv_rows(beeline_out["explain"])]
    assert plan[:4] == ["plan", "Materialized view mv_clients_beeline.big", *EXPLAINED]
    assert plan[4].startswith("Incremental: yes, ")              # a filter and projection of one Delta table
    assert beeline_out["dropped"] == [",".join(header)]        # DROP left no view: the header only


@pytest.mark.beeline
def test_beeline_reports_a_stream_in_the_query_with_class_and_sqlstate(beeline_run: Any,
                                                                       beeline_out: dict[str, list[str]]) -> None:
    assert beeline_run.returncode != 0
    assert beeline_out["error"] == []                          # nothing printed, and 'never' never ran
    lines = beeline_run.stderr.splitlines()
    start = lines.index(f"Error: {ERROR}")
    assert lines[start + 1:start + 5] == ["  at line 2, column 23:", f"    {STREAMED}",
                                          " " * (4 + len("SELECT id FROM STREAM(")) + "^",
                                          f"  hint: {HINT} (state=42000,code=0)"], beeline_run.stderr


# -- sluicegate shell -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shell_run(gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = "mv_clients_shell"
    tmp = tmp_path_factory.mktemp("mv_clients_shell")
    with fresh_database(gateway, db):
        yield run_shell(gateway.port, "-f", str(_script(tmp, "the shell", db)), home=tmp, timeout=300)


@pytest.fixture(scope="module")
def shell_out(shell_run: Any) -> dict[str, str]:
    return shell_script_sections(shell_run, SECTIONS)


def test_shell_create_describe_refresh_and_rows(shell_run: Any, shell_out: dict[str, str]) -> None:
    # CREATE DATABASE, USE, CREATE TABLE, INSERT, CREATE MATERIALIZED VIEW
    assert shell_run.stdout.startswith("OK\nOK\nOK\nOK\nOK\n section\n")
    _check_created(shell_details(shell_out["created"]), "mv_clients_shell")
    assert re.search(r"\n\(\d+ rows\)\n\nOK\nOK\n$", shell_out["created"])  # DESCRIBE, then INSERT and REFRESH
    assert shell_out["rows"] == (" country | n | total\n"
                                 "---------+---+-------\n"
                                 " DE      | 2 |   6.0\n"
                                 " FR      | 2 |  12.5\n"
                                 "(2 rows)\n\n")


def test_shell_show_explain_alter_and_drop(shell_out: dict[str, str]) -> None:
    _check_refreshed_and_altered(shell_details(shell_out["refreshed"]), shell_details(shell_out["altered"]),
                                 "mv_clients_shell")
    header, *rows = shell_table(shell_out["show"])
    assert header == ["namespace", "viewName", "lastRefreshStatus", "lastRefreshedAt", "lastRefreshType", "lastError"]
    assert [row[:3] + row[5:] for row in rows] == [["mv_clients_shell", "revenue", "COMPLETED", "NULL"]]
    assert rows[0][4] == shell_details(shell_out["refreshed"])["Last Refresh Type"]
    plan = [row[0] for row in shell_table(shell_out["explain"])]
    assert plan[:4] == ["plan", "Materialized view mv_clients_shell.big", *EXPLAINED]
    assert plan[4].startswith("Incremental: yes, ")
    assert re.search(r"\n\(\d+ rows\)\n\nOK\n$", shell_out["explain"])    # then ALTER ... ALTER SCHEDULE's OK
    assert re.search(r"\n\(\d+ rows\)\n\nOK\n$", shell_out["altered"])    # then DROP MATERIALIZED VIEW's OK
    assert shell_table(shell_out["dropped"]) == [header]


def test_shell_reports_a_stream_in_the_query_with_sqlstate_caret_and_hint(shell_run: Any,
                                                                          shell_out: dict[str, str]) -> None:
    assert shell_run.returncode == 1
    assert shell_out["error"] == ""
    class_and_message = ERROR.removeprefix("[").replace("] ", ": ", 1)
    assert shell_run.stderr.splitlines() == [
        f"ERROR [42000] {class_and_message}",
        f"LINE 2: {STREAMED}",
        " " * len("LINE 2: SELECT id FROM STREAM(") + "^",
        f"HINT: {HINT}",
        f"in {shell_run.args[-1]}, statement at line {SCRIPT.splitlines().index('SELECT id FROM STREAM(orders);')}",
    ]
