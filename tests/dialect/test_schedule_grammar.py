"""Refresh schedules in the grammar: CREATE STREAMING TABLE's SCHEDULE / TRIGGER ON UPDATE clauses and ALTER ...
{ADD | ALTER} <schedule> | DROP SCHEDULE, parsed into nodes, classified into Schedule values, errors positioned."""

from __future__ import annotations

import pytest
import sqlglot

from sluicegate.dialect.classify import classify
from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import DialectError, StatementSyntaxError
from sluicegate.dialect.expressions import AlterScheduleCommand, RefreshSchedule
from sluicegate.dialect.schedule import Schedule
from sluicegate.dialect.statements import (
    AlterSchedule,
    CreateStreamingTable,
    ExplainStreamingTable,
    TableName,
)

QUERY = "AS SELECT * FROM STREAM(src)"


@pytest.mark.parametrize("clause, expected", [
    ("SCHEDULE EVERY 2 HOURS", Schedule("every", every=2, unit="HOUR")),
    ("SCHEDULE REFRESH EVERY 1 HOUR", Schedule("every", every=1, unit="HOUR")),
    ("schedule every 31 days", Schedule("every", every=31, unit="DAY")),
    ("SCHEDULE EVERY 8 WEEKS", Schedule("every", every=8, unit="WEEK")),
    ("SCHEDULE CRON '0 0 6 * * ?'", Schedule("cron", cron="0 0 6 * * ?")),
    ("SCHEDULE REFRESH CRON '0  15 * ? * MON' AT TIME ZONE 'Europe/Paris'",
     Schedule("cron", cron="0 15 * ? * MON", time_zone="Europe/Paris")),
    ("TRIGGER ON UPDATE", Schedule("on_update")),
    ("TRIGGER ON UPDATE AT MOST EVERY INTERVAL 5 MINUTES", Schedule("on_update", at_most_every_seconds=300)),
    ("TRIGGER ON UPDATE AT MOST EVERY INTERVAL 90 SECONDS", Schedule("on_update", at_most_every_seconds=90)),
    ("TRIGGER ON UPDATE AT MOST EVERY INTERVAL 1 HOUR", Schedule("on_update", at_most_every_seconds=3600)),
])
def test_create_clauses(clause: str, expected: Schedule) -> None:
    sql = f"/* {{\"app\": \"dbt\"}} */ CREATE OR REFRESH STREAMING TABLE db.t COMMENT 'c' {clause} " \
          f"TBLPROPERTIES ('k' = 'v') {QUERY}"
    statement = classify(sql)
    assert isinstance(statement, CreateStreamingTable)
    assert statement.schedule == expected
    assert statement.plan.properties == {"k": "v"} and statement.plan.comment == "c"
    node = sqlglot.parse_one(sql, read=StreamingSpark).find(RefreshSchedule)
    assert node is not None and sql[node.meta["start"]:].upper().startswith(clause.split()[0].upper())


def test_no_clause_no_schedule_and_the_plan_is_the_same() -> None:
    plain = classify(f"CREATE STREAMING TABLE t {QUERY}")
    scheduled = classify(f"CREATE STREAMING TABLE t SCHEDULE EVERY 3 HOURS {QUERY}")
    assert plain.schedule is None
    assert plain.plan == scheduled.plan  # the schedule lives beside the plan: CREATE OR REFRESH compares plans


@pytest.mark.parametrize("sql, action, schedule", [
    ("ALTER STREAMING TABLE db.t ADD SCHEDULE EVERY 2 HOURS", "ADD", Schedule("every", every=2, unit="HOUR")),
    ("alter streaming table db.t alter schedule cron '0 0 0 ? * SUN' at time zone 'UTC'", "ALTER",
     Schedule("cron", cron="0 0 0 ? * SUN", time_zone="UTC")),
    ("ALTER STREAMING TABLE db.t ADD TRIGGER ON UPDATE AT MOST EVERY INTERVAL 2 MINUTES", "ADD",
     Schedule("on_update", at_most_every_seconds=120)),
    ("/* dbt */ ALTER STREAMING TABLE db.t DROP SCHEDULE", "DROP", None),
])
def test_alter(sql: str, action: str, schedule: Schedule | None) -> None:
    assert classify(sql) == AlterSchedule(TableName("db", "t"), "STREAMING TABLE", action, schedule)
    assert isinstance(sqlglot.parse_one(sql, read=StreamingSpark), AlterScheduleCommand)


def test_alter_materialized_view_parses_the_same() -> None:
    assert classify("ALTER MATERIALIZED VIEW mv DROP SCHEDULE") == AlterSchedule(
        TableName(None, "mv"), "MATERIALIZED VIEW", "DROP", None)


def test_other_alters_are_untouched() -> None:
    assert type(classify("ALTER TABLE t ADD COLUMNS (a INT)")).__name__ == "AddColumns"
    assert type(classify("ALTER VIEW v AS SELECT 1")).__name__ == "Passthrough"


def _error(sql: str) -> DialectError:
    with pytest.raises(DialectError) as raised:
        classify(sql)
    return raised.value


@pytest.mark.parametrize("clause, error_class, at", [
    ("SCHEDULE EVERY 73 HOURS", "INVALID_SCHEDULE", "73"),
    ("SCHEDULE EVERY 0 DAYS", "INVALID_SCHEDULE", "0"),
    ("SCHEDULE EVERY 32 DAYS", "INVALID_SCHEDULE", "32"),
    ("SCHEDULE EVERY 9 WEEKS", "INVALID_SCHEDULE", "9"),
    ("SCHEDULE CRON '0 0 6 * * *'", "INVALID_CRON_EXPRESSION", "'0 0 6"),
    ("SCHEDULE CRON '0 0 6 ? * MON' AT TIME ZONE 'Mars/Olympus'", "INVALID_TIME_ZONE", "'Mars"),
    ("TRIGGER ON UPDATE AT MOST EVERY INTERVAL 30 SECONDS", "INVALID_SCHEDULE", "TRIGGER"),
    ("SCHEDULE EVERY 2 HOURS TRIGGER ON UPDATE", "INVALID_SCHEDULE", "TRIGGER"),
])
def test_errors_name_the_problem_at_its_place(clause: str, error_class: str, at: str) -> None:
    sql = f"CREATE STREAMING TABLE t\n  {clause} {QUERY}"
    error = _error(sql)
    assert error.error_class == error_class and error.sqlstate == "22023" and error.hint
    assert (error.line, error.column) == (2, sql.split("\n")[1].index(at) + 1), error.message


def test_cron_error_names_field_and_value() -> None:
    error = _error(f"CREATE STREAMING TABLE t SCHEDULE CRON '0 0 25 * * ?' {QUERY}")
    assert "hours field '25'" in error.message and "0-23" in error.message


def test_explain_checks_the_schedule_too() -> None:
    assert isinstance(classify(f"EXPLAIN CREATE STREAMING TABLE t SCHEDULE EVERY 1 WEEK {QUERY}"),
                      ExplainStreamingTable)
    sql = f"EXPLAIN CREATE STREAMING TABLE t SCHEDULE EVERY 99 WEEKS {QUERY}"
    assert _error(sql).column == sql.index("99") + 1


@pytest.mark.parametrize("sql", [
    "ALTER STREAMING TABLE t SET TAGS ('a' = 'b')",
    "ALTER STREAMING TABLE t ADD SCHEDULE EVERY 2 MONTHS",
    "ALTER STREAMING TABLE t ADD SCHEDULE",
    "ALTER STREAMING TABLE t DROP SCHEDULE now",
    "ALTER STREAMING TABLE t ADD SCHEDULE CRON",
    "CREATE STREAMING TABLE t SCHEDULE HOURLY AS SELECT * FROM STREAM(src)",
    "CREATE STREAMING TABLE t TRIGGER ON INSERT AS SELECT * FROM STREAM(src)",
])
def test_syntax_errors_in_owned_statements_are_reported(sql: str) -> None:
    with pytest.raises(StatementSyntaxError) as raised:
        classify(sql)
    assert raised.value.line == 1 and raised.value.column


def test_generated_sql_round_trips() -> None:
    for sql in ("ALTER STREAMING TABLE db.t ADD SCHEDULE EVERY 2 HOURS",
                "ALTER MATERIALIZED VIEW t DROP SCHEDULE",
                "CREATE STREAMING TABLE t SCHEDULE CRON '0 0 6 * * ?' AT TIME ZONE 'UTC' "
                "AS SELECT * FROM STREAM (src)"):
        assert sqlglot.parse_one(sql, read=StreamingSpark).sql(StreamingSpark) == sql
