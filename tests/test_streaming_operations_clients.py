"""Issue 13's statements on a streaming table through beeline (the Hive JDBC driver) and `sluicegate shell`, against
a real gateway, asserting on what each client prints: a scheduled CREATE, REFRESH and REFRESH FULL, ALTER ... ALTER
and DROP SCHEDULE, DESCRIBE TABLE EXTENDED's refresh rows, event_log(TABLE(t)), a poison record in _rescued_data,
SHOW STREAMING TABLES, and SCHEDULE_ALREADY_EXISTS as each client reports an error.

Both clients run the same script (one beeline JVM for all of it); marker queries (`SELECT 'rows' AS section`) cut the
output into the parts each test reads. The script ends with the failing statement: both clients stop there.
(PyHive covers the same statements per feature: tests/streaming/test_refresh.py, test_event_log.py,
test_bad_input.py, tests/warehouse/test_schedules.py.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import fresh_database
from test_beeline import csv_rows, describe_rows, script_sections
from test_shell import run_shell

SCRIPT = """\
CREATE DATABASE {db};
USE {db};
/* issue 13 through {client}: a scheduled table over files with one poison record */
CREATE STREAMING TABLE events
  SCHEDULE EVERY 1 HOUR
AS SELECT *
   FROM STREAM read_files('{folder}', format => 'json', schema => 'id INT, name STRING');
SELECT 'scheduled' AS section;
DESCRIBE TABLE EXTENDED events;
REFRESH STREAMING TABLE events;
SELECT 'rows' AS section;
SELECT id, name FROM events ORDER BY name;
SELECT 'rescued' AS section;
SELECT name, _rescued_data FROM events WHERE _rescued_data IS NOT NULL;
SELECT 'events' AS section;
SELECT event_type, count(*) AS n FROM event_log(TABLE(events)) GROUP BY event_type ORDER BY event_type;
ALTER STREAMING TABLE events ALTER SCHEDULE CRON '0 0 6 * * ?' AT TIME ZONE 'UTC';
SELECT 'cron' AS section;
DESCRIBE TABLE EXTENDED events;
ALTER STREAMING TABLE events DROP SCHEDULE;  -- continuous again, on the same checkpoint
SELECT 'manual' AS section;
DESCRIBE TABLE EXTENDED events;
REFRESH STREAMING TABLE events FULL;
SELECT 'full' AS section;
SELECT count(*) AS n FROM events;
SELECT 'show' AS section;
SHOW STREAMING TABLES;
ALTER STREAMING TABLE events ADD SCHEDULE CRON '0 0/15 * * * ?';
SELECT 'error' AS section;
ALTER STREAMING TABLE events ADD SCHEDULE EVERY 1 HOUR;
SELECT 'never' AS section;
"""

SECTIONS = ["scheduled", "rows", "rescued", "events", "cron", "manual", "full", "show", "error"]
POISON = {"id": "abc", "name": "poison"}


def _script(tmp: Path, client: str, db: str) -> Path:
    folder = tmp / "in"
    folder.mkdir()
    (folder / "part-0.json").write_text(json.dumps({"id": 1, "name": "good"}) + "\n" + json.dumps(POISON) + "\n")
    script = tmp / "script.sql"
    script.write_text(SCRIPT.format(db=db, client=client, folder=folder))
    return script



# -- beeline ----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def beeline_run(beeline: Any, gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = "clients_beeline"
    script = _script(tmp_path_factory.mktemp("clients_beeline"), "beeline", db)
    with fresh_database(gateway, db):
        yield beeline(gateway.port, "-f", str(script))


@pytest.fixture(scope="module")
def beeline_out(beeline_run: Any) -> dict[str, list[str]]:
    return script_sections(beeline_run, SECTIONS)


@pytest.mark.beeline
def test_beeline_scheduled_create_refresh_and_the_rescued_record(beeline_out: dict[str, list[str]]) -> None:
    details = describe_rows(beeline_out["scheduled"])
    assert details["Type"] == "STREAMING_TABLE" and details["Refresh Schedule"] == "EVERY 1 HOURS"
    assert details["Refresh Mode"].startswith("SCHEDULED")
    assert "FROM STREAM read_files(" in details["View Text"]
    assert beeline_out["rows"] == ["id,name", "1,good", "NULL,poison"]
    # the raw record holds the delimiter: csv2 wraps it in NUL characters
    assert csv_rows(beeline_out["rescued"]) == [["name", "_rescued_data"], ["poison", json.dumps(POISON)]]


@pytest.mark.beeline
def test_beeline_event_log_alter_drop_schedule_and_full_refresh(beeline_out: dict[str, list[str]]) -> None:
    header, *rows = csv_rows(beeline_out["events"])
    counts = {kind: int(n) for kind, n in rows}
    assert header == ["event_type", "n"] and counts["create_update"] >= 1 and counts["update_progress"] >= 1
    assert counts["flow_progress"] == 1   # one micro-batch: the first pass; the REFRESH found nothing new
    cron = describe_rows(beeline_out["cron"])
    assert cron["Refresh Schedule"] == "CRON '0 0 6 * * ?' AT TIME ZONE 'UTC'"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d 06:00:00", cron["Next Refresh"])
    assert cron["Latest Refresh Status"] == "COMPLETED"
    manual = describe_rows(beeline_out["manual"])
    assert manual["Refresh Schedule"] == "MANUAL" and manual["Refresh Mode"].startswith("CONTINUOUS")
    assert beeline_out["full"] == ["n", "2"]
    header, *rows = csv_rows(beeline_out["show"])
    assert header[:4] == ["namespace", "tableName", "status", "outputMode"]
    assert [row[:4] for row in rows] == [["clients_beeline", "events", "RUNNING", "append"]]


@pytest.mark.beeline
def test_beeline_reports_schedule_already_exists_and_stops(beeline_run: Any,
                                                           beeline_out: dict[str, list[str]]) -> None:
    assert beeline_run.returncode != 0
    errors = [line for line in beeline_run.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [("Error: [SCHEDULE_ALREADY_EXISTS] `clients_beeline`.`events` already has a refresh schedule "
                       "(CRON '0 0/15 * * * ?' AT TIME ZONE 'UTC')")], beeline_run.stderr
    assert "hint: use ALTER SCHEDULE to change it, or DROP SCHEDULE first (state=42710,code=0)" in beeline_run.stderr
    assert beeline_out["error"] == []       # nothing printed, and 'never' never ran


# -- sluicegate shell -------------------------------------------------------------------------------------------------


def shell_sections(stdout: str) -> dict[str, str]:
    """The shell's output by marker: each marker query prints a one-row table of its name."""
    parts = re.split(r"(?m)^ +section *\n-+\n (\w+) *\n\(1 row\)\n\n", stdout)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def shell_script_sections(run: Any, expected: list[str]) -> dict[str, str]:
    """A shell script's output by section; the sections must be `expected`, in order."""
    found = shell_sections(run.stdout)
    assert list(found) == expected, run.stdout + run.stderr
    return found


def shell_table(text: str) -> list[list[str]]:
    """An aligned table's header and rows as cells (no cell here holds a `|`)."""
    lines = text.split("\n")
    end = next(i for i, line in enumerate(lines) if re.fullmatch(r"\(\d+ rows?\)", line))
    return [[cell.strip() for cell in line.split("|")] for i, line in enumerate(lines[:end]) if i != 1]


def shell_details(text: str) -> dict[str, str]:
    """DESCRIBE TABLE EXTENDED as the shell prints it: each row's name and value (beeline's: describe_rows)."""
    header, *rows = shell_table(text)
    assert header == ["col_name", "data_type", "comment"]
    return {row[0]: row[1] for row in rows}


@pytest.fixture(scope="module")
def shell_run(gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = "clients_shell"
    tmp = tmp_path_factory.mktemp("clients_shell")
    script = _script(tmp, "the shell", db)
    with fresh_database(gateway, db):
        yield run_shell(gateway.port, "-f", str(script), home=tmp, timeout=300)


@pytest.fixture(scope="module")
def shell_out(shell_run: Any) -> dict[str, str]:
    return shell_script_sections(shell_run, SECTIONS)


def test_shell_scheduled_create_refresh_and_the_rescued_record(shell_run: Any, shell_out: dict[str, str]) -> None:
    assert shell_run.stdout.startswith("OK\nOK\nOK\n")       # CREATE DATABASE, USE, CREATE STREAMING TABLE
    details = shell_details(shell_out["scheduled"])
    assert details["Type"] == "STREAMING_TABLE" and details["Refresh Schedule"] == "EVERY 1 HOURS"
    assert details["View Text"].startswith("SELECT *\\n   FROM STREAM read_files(")   # a newline shows as \n
    assert re.search(r"\n\(\d+ rows\)\n\nOK\n$", shell_out["scheduled"])  # DESCRIBE's rows, then REFRESH
    assert shell_out["rows"] == ("  id  |  name\n"
                                 "------+--------\n"
                                 "    1 | good\n"
                                 " NULL | poison\n"
                                 "(2 rows)\n\n")
    assert shell_table(shell_out["rescued"]) == [["name", "_rescued_data"], ["poison", json.dumps(POISON)]]


def test_shell_event_log_alter_drop_schedule_and_full_refresh(shell_out: dict[str, str]) -> None:
    header, *rows = shell_table(shell_out["events"])
    counts = {kind: int(n) for kind, n in rows}
    assert header == ["event_type", "n"] and counts["create_update"] >= 1 and counts["flow_progress"] == 1
    assert shell_out["events"].endswith("OK\n")               # ALTER ... ALTER SCHEDULE
    cron = shell_details(shell_out["cron"])
    assert cron["Refresh Schedule"] == "CRON '0 0 6 * * ?' AT TIME ZONE 'UTC'"
    assert cron["Refresh Mode"].startswith("SCHEDULED") and cron["Latest Refresh Status"] == "COMPLETED"
    manual = shell_details(shell_out["manual"])
    assert manual["Refresh Schedule"] == "MANUAL" and "Next Refresh" not in manual
    assert shell_out["full"] == " n\n---\n 2\n(1 row)\n\n"
    header, *rows = shell_table(shell_out["show"])
    assert header[:4] == ["namespace", "tableName", "status", "outputMode"]
    assert [row[:4] for row in rows] == [["clients_shell", "events", "RUNNING", "append"]]


def test_shell_reports_schedule_already_exists_with_caret_and_hint(shell_run: Any,
                                                                   shell_out: dict[str, str]) -> None:
    assert shell_run.returncode == 1
    assert shell_out["error"] == ""
    statement = "ALTER STREAMING TABLE events ADD SCHEDULE EVERY 1 HOUR"
    assert shell_run.stderr.splitlines() == [
        ("ERROR [42710] SCHEDULE_ALREADY_EXISTS: `clients_shell`.`events` already has a refresh schedule "
         "(CRON '0 0/15 * * * ?' AT TIME ZONE 'UTC')"),
        f"LINE 1: {statement}",
        " " * len("LINE 1: ALTER STREAMING TABLE ") + "^",
        "HINT: use ALTER SCHEDULE to change it, or DROP SCHEDULE first",
        f"in {shell_run.args[-1]}, statement at line {SCRIPT.splitlines().index(statement + ';') + 1}",
    ]


def test_shell_e_runs_a_scheduled_create_with_comments_and_a_quartz_cron(gateway: Any, tmp_path: Path) -> None:
    """One `-e` argument: a `;` inside a block comment, a `'` inside a line comment and the `/` and `?` of a
    Quartz expression all stay inside their statement."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.json").write_text('{"id": 1}\n{"id": 2}\n')
    db = "clients_shell_e"
    with fresh_database(gateway, db):
        done = run_shell(gateway.port, "-e", (
            f"CREATE DATABASE {db}; CREATE STREAMING TABLE {db}.quarterly /* every quarter; on the hour too */\n"
            "  SCHEDULE CRON '0 0/15 * * * ?' AT TIME ZONE 'UTC' -- Quartz: seconds first; 'L' not used\n"
            f"AS SELECT id FROM STREAM read_files('{folder}', format => 'json', schema => 'id INT');\n"
            f"REFRESH STREAMING TABLE {db}.quarterly SYNC; SELECT count(*) AS n FROM {db}.quarterly;\n"
            f"ALTER STREAMING TABLE {db}.quarterly DROP SCHEDULE; SHOW STREAMING TABLES IN {db}"), home=tmp_path)
    assert done.returncode == 0, done.stderr
    head, show = done.stdout.split("OK\n n\n---\n 2\n(1 row)\n\nOK\n")
    assert head == "OK\nOK\n"                                   # CREATE DATABASE, CREATE STREAMING TABLE, then REFRESH
    header, *rows = shell_table(show)
    assert header[:3] == ["namespace", "tableName", "status"] and [row[:3] for row in rows] == [
        [db, "quarterly", "RUNNING"]]                             # DROP SCHEDULE: continuous again


EXPECTING = ("CREATE STREAMING TABLE t (\n  id INT,\n  CONSTRAINT positive EXPECT (id > 0) ON VIOLATION DROP ROW,\n"
             "  CONSTRAINT named EXPECT (name <> ';') ON VIOLATION FAIL UPDATE\n) AS SELECT * FROM STREAM(src)")


@pytest.mark.parametrize("text, statements", [
    ("ALTER STREAMING TABLE t ADD SCHEDULE CRON '0 0/15 * * * ?' AT TIME ZONE 'UTC';SELECT 1",
     ["ALTER STREAMING TABLE t ADD SCHEDULE CRON '0 0/15 * * * ?' AT TIME ZONE 'UTC'", "SELECT 1"]),
    ("/* a scheduled table; refreshed */ REFRESH STREAMING TABLE t FULL; -- don't wait\nSELECT 2",
     ["REFRESH STREAMING TABLE t FULL", "SELECT 2"]),
    (EXPECTING + ";\nSELECT * FROM event_log(TABLE(t))", [EXPECTING, "SELECT * FROM event_log(TABLE(t))"]),
])
def test_shell_splitter_keeps_issue_13_statements_whole(text: str, statements: list[str]) -> None:
    from sluicegate.gateway.shell.splitter import split

    assert [statement.text for statement in split(text)] == statements
