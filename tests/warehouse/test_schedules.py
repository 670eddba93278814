"""Refresh schedules through PyHive: CREATE with each schedule kind, ALTER ... ADD / ALTER / DROP SCHEDULE and their
errors, DESCRIBE [TABLE] EXTENDED rows in the shapes dbt-databricks' regexes read, DESCRIBE STREAMING TABLE's refresh
rows, and CREATE OR REFRESH with only a new schedule keeping the table's rows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import cursor_in, error_status, land_named, sorted_rows

from sluicegate.dialect.schedule import Schedule

DB = "st_schedules"
# dbt-databricks' regexes for the `Refresh Schedule` row (relation_configs/refresh.py and the research notes)
CRON = re.compile(r"^CRON '(.*)' AT TIME ZONE '(.*)'$")
EVERY = re.compile(r"^EVERY (\d+) (HOURS?|DAYS?|WEEKS?)$")
ON_UPDATE = re.compile(r"^TRIGGER ON UPDATE(?: AT MOST EVERY INTERVAL (\d+) SECONDS?)?$")


@pytest.fixture()
def cursor(connect: Any) -> Any:
    return cursor_in(connect, DB)



def _create(cursor: Any, table: str, folder: Path, clauses: str = "", verb: str = "CREATE") -> None:
    cursor.execute(f"{verb} STREAMING TABLE {table} {clauses} AS SELECT country, count(*) AS n "
                   f"FROM STREAM read_files('{folder}', format => 'json', schema => 'country STRING') GROUP BY country")


def _extended(cursor: Any, table: str) -> dict[str, str]:
    cursor.execute(f"DESCRIBE TABLE EXTENDED {table}")
    return {row[0]: row[1] for row in cursor.fetchall()}


def _described(cursor: Any, table: str) -> dict[str, str]:
    cursor.execute(f"DESCRIBE STREAMING TABLE {table}")
    return {row[0]: row[1] for row in cursor.fetchall() if row[0] != "Event"}


def _stored(streams: Any, table: str) -> Schedule | None:
    return Schedule.from_json(streams.store.require_table(DB, table).schedule)


@pytest.mark.parametrize("clause, pattern, groups", [
    ("SCHEDULE EVERY 2 HOURS", EVERY, ("2", "HOURS")),
    ("SCHEDULE REFRESH EVERY 1 WEEK", EVERY, ("1", "WEEKS")),
    ("SCHEDULE CRON '0 0 6 * * ?' AT TIME ZONE 'Europe/Paris'", CRON, ("0 0 6 * * ?", "Europe/Paris")),
    ("TRIGGER ON UPDATE", ON_UPDATE, (None,)),
    ("TRIGGER ON UPDATE AT MOST EVERY INTERVAL 5 MINUTES", ON_UPDATE, ("300",)),
])
def test_create_with_a_schedule_describes_it_as_dbt_databricks_reads_it(
        cursor: Any, landing_root: Path, clause: str, pattern: re.Pattern[str], groups: tuple[str | None, ...]) -> None:
    folder = landing_root / "sched_create"
    land_named(folder, "a.json", [{"country": "fr"}])
    cursor.execute("DROP TABLE IF EXISTS created")
    _create(cursor, "created", folder, f"COMMENT 'scheduled' {clause}")
    details = _extended(cursor, "created")
    match = pattern.match(details["Refresh Schedule"])
    assert match is not None and match.groups() == groups, details["Refresh Schedule"]
    assert details["Type"] == "STREAMING_TABLE" and details["Refresh Mode"].split()[0] in ("SCHEDULED", "ON")
    described = _described(cursor, "created")
    assert described["Refresh Schedule"] == details["Refresh Schedule"]
    if pattern is CRON:  # the next pass of a cron schedule is known from the expression alone
        assert re.fullmatch(r"\d{4}-\d\d-\d\d 0[45]:00:00", described["Next Refresh"]), described["Next Refresh"]


def test_no_schedule_is_manual_and_continuous(cursor: Any, landing_root: Path) -> None:
    folder = landing_root / "sched_none"
    land_named(folder, "a.json", [{"country": "fr"}, {"country": "de"}])
    cursor.execute("DROP TABLE IF EXISTS continuous")
    _create(cursor, "continuous", folder)
    cursor.execute("REFRESH STREAMING TABLE continuous")
    details = _extended(cursor, "continuous")
    assert details["Refresh Schedule"] == "MANUAL"  # exactly: dbt-databricks compares the text
    assert details["Refresh Mode"].startswith("CONTINUOUS")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", details["Last Refreshed"])
    assert details["Latest Refresh Status"] in ("RUNNING", "COMPLETED")
    assert "Next Refresh" not in details
    cursor.execute("SHOW TBLPROPERTIES continuous")
    properties = dict(cursor.fetchall())
    assert properties["delta.minReaderVersion"] and properties["delta.minWriterVersion"]


def test_cron_without_a_zone_stores_the_session_zone(cursor: Any, landing_root: Path, streams: Any) -> None:
    folder = landing_root / "sched_zone"
    land_named(folder, "a.json", [{"country": "fr"}])
    cursor.execute("DROP TABLE IF EXISTS zoned")
    cursor.execute("SET spark.sql.session.timeZone = America/New_York")
    try:
        _create(cursor, "zoned", folder, "SCHEDULE CRON '0 30 2 ? * MON-FRI'")
        cursor.execute("REFRESH STREAMING TABLE zoned")  # first batch done before ALTER restarts it
        assert _stored(streams, "zoned") == Schedule("cron", cron="0 30 2 ? * MON-FRI",
                                                     time_zone="America/New_York")
        cursor.execute("ALTER STREAMING TABLE zoned ALTER SCHEDULE CRON '0 0 3 * * ?'")
    finally:
        cursor.execute("SET spark.sql.session.timeZone = UTC")
    assert _extended(cursor, "zoned")["Refresh Schedule"] == "CRON '0 0 3 * * ?' AT TIME ZONE 'America/New_York'"


def test_alter_add_alter_drop_and_their_errors(cursor: Any, landing_root: Path, streams: Any) -> None:
    folder = landing_root / "sched_alter"
    land_named(folder, "a.json", [{"country": "fr"}])
    cursor.execute("DROP TABLE IF EXISTS altered")
    _create(cursor, "altered", folder)
    # first batch done before the restarts below: Spark 4.1 refuses to restart a stateful query stopped in its first
    # batch (STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY), a hazard of the stream manager's restarts, not of schedules
    cursor.execute("REFRESH STREAMING TABLE altered")
    for action in ("ALTER SCHEDULE EVERY 2 HOURS", "DROP SCHEDULE"):
        status = error_status(cursor, f"ALTER STREAMING TABLE altered {action}")
        assert "[SCHEDULE_DOES_NOT_EXIST]" in status.errorMessage and status.sqlState == "42704"
        assert "ADD SCHEDULE" in status.errorMessage  # the hint
    assert _stored(streams, "altered") is None

    cursor.execute("/* {\"app\": \"dbt\"} */ ALTER STREAMING TABLE altered ADD SCHEDULE EVERY 3 DAYS")
    assert _stored(streams, "altered") == Schedule("every", every=3, unit="DAY")
    assert _extended(cursor, "altered")["Refresh Schedule"] == "EVERY 3 DAYS"
    status = error_status(cursor, "ALTER STREAMING TABLE altered ADD SCHEDULE EVERY 1 HOUR")
    assert "[SCHEDULE_ALREADY_EXISTS]" in status.errorMessage and status.sqlState == "42710"
    assert "EVERY 3 DAYS" in status.errorMessage and "ALTER SCHEDULE" in status.errorMessage

    cursor.execute(f"ALTER STREAMING TABLE {DB}.altered ALTER TRIGGER ON UPDATE AT MOST EVERY INTERVAL 2 MINUTES")
    assert _extended(cursor, "altered")["Refresh Schedule"] == "TRIGGER ON UPDATE AT MOST EVERY INTERVAL 120 SECONDS"
    cursor.execute("ALTER STREAMING TABLE altered DROP SCHEDULE")
    assert _stored(streams, "altered") is None and _extended(cursor, "altered")["Refresh Schedule"] == "MANUAL"
    cursor.execute("DESCRIBE STREAMING TABLE altered")
    events = [row[1] for row in cursor.fetchall() if row[0] == "Event"]
    assert any("SCHEDULE_CHANGED" in event for event in events), events

    # the stream still runs after each change (it was restarted on its checkpoint)
    land_named(folder, "b.json", [{"country": "fr"}])
    cursor.execute("REFRESH STREAMING TABLE altered")
    assert sorted_rows(cursor, "SELECT * FROM altered") == [("fr", 2)]


def test_alter_errors_on_other_objects_and_bad_clauses(cursor: Any) -> None:
    cursor.execute("CREATE OR REPLACE TABLE plain_t (x INT) USING delta")
    status = error_status(cursor, "ALTER STREAMING TABLE plain_t ADD SCHEDULE EVERY 2 HOURS")
    assert "EXPECT_STREAMING_TABLE" in status.errorMessage
    assert "TABLE_OR_VIEW_NOT_FOUND" in error_status(cursor, "ALTER STREAMING TABLE nowhere DROP SCHEDULE"
                                                     ).errorMessage
    status = error_status(cursor, "ALTER MATERIALIZED VIEW plain_t ADD SCHEDULE EVERY 2 HOURS")
    assert "EXPECT_MATERIALIZED_VIEW" in status.errorMessage and "not a materialized view" in status.errorMessage
    sql = "ALTER STREAMING TABLE plain_t ADD SCHEDULE EVERY 100 HOURS"
    status = error_status(cursor, sql)
    assert "[INVALID_SCHEDULE]" in status.errorMessage and status.sqlState == "22023"
    assert f"line 1, column {sql.index('100') + 1}" in status.errorMessage
    status = error_status(cursor, "ALTER STREAMING TABLE plain_t ADD SCHEDULE CRON '0 0 6 * * *'")
    assert "[INVALID_CRON_EXPRESSION]" in status.errorMessage and "day-of-week" in status.errorMessage
    status = error_status(cursor, "ALTER STREAMING TABLE plain_t ADD SCHEDULE CRON '0 0 6 * * ?' "
                                  "AT TIME ZONE 'Mars/Olympus'")
    assert "[INVALID_TIME_ZONE]" in status.errorMessage
    status = error_status(cursor, "ALTER STREAMING TABLE plain_t SET TAGS ('a' = 'b')")
    assert "PARSE_SYNTAX_ERROR" in status.errorMessage, status.errorMessage
    assert "ADD, ALTER, DROP SCHEDULE or CLUSTER BY" in status.errorMessage, status.errorMessage


def test_create_with_a_bad_schedule_creates_nothing(cursor: Any, landing_root: Path) -> None:
    folder = landing_root / "sched_bad"
    land_named(folder, "a.json", [{"country": "fr"}])
    sql = (f"CREATE STREAMING TABLE never\n  SCHEDULE CRON '0 0 24 * * ?' AS SELECT * FROM STREAM read_files("
           f"'{folder}', format => 'json', schema => 'country STRING')")
    status = error_status(cursor, sql)
    assert "[INVALID_CRON_EXPRESSION]" in status.errorMessage and "hours field '24'" in status.errorMessage
    assert "line 2, column 17" in status.errorMessage, status.errorMessage
    cursor.execute("SHOW TABLES LIKE 'never'")
    assert cursor.fetchall() == []


def test_create_or_refresh_with_only_a_new_schedule_keeps_the_rows(cursor: Any, landing_root: Path,
                                                                     streams: Any) -> None:
    folder = landing_root / "sched_refresh"
    land_named(folder, "a.json", [{"country": "fr"}, {"country": "fr"}, {"country": "de"}])
    cursor.execute("DROP TABLE IF EXISTS kept")
    _create(cursor, "kept", folder)
    cursor.execute("REFRESH STREAMING TABLE kept")
    checkpoint = streams.store.get_stream(DB, "kept").checkpoint
    _create(cursor, "kept", folder, "SCHEDULE EVERY 6 HOURS", verb="CREATE OR REFRESH")
    assert _stored(streams, "kept") == Schedule("every", every=6, unit="HOUR")
    assert streams.store.get_stream(DB, "kept").checkpoint == checkpoint
    assert sorted_rows(cursor, "SELECT * FROM kept") == [("de", 1), ("fr", 2)]
    # without the clause, CREATE OR REFRESH leaves no schedule (what dbt-databricks expects before ADD SCHEDULE)
    _create(cursor, "kept", folder, verb="CREATE OR REFRESH")
    assert _stored(streams, "kept") is None
    land_named(folder, "b.json", [{"country": "de"}])
    cursor.execute("REFRESH STREAMING TABLE kept")
    assert sorted_rows(cursor, "SELECT * FROM kept") == [("de", 2), ("fr", 2)]
