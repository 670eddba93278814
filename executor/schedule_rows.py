"""The refresh schedule on a refreshed object's catalog row (streaming tables and materialized views): what CREATE
stores, the checked change ALTER ... SCHEDULE makes, and the refresh rows DESCRIBE shows.

The schedule lives on the table's catalog row (`tables.schedule`, JSON), never in a stream's plan: changing it never
empties the table or moves the checkpoint. A CRON without AT TIME ZONE takes the session's `spark.sql.session.timeZone`
and stores it explicitly, so when an object refreshes never depends on who connects later. Who runs the passes is
each kind's business (executor/kinds.py): the stream manager for streaming tables, the view scheduler for
materialized views.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.clock import display_time, utc_now
from sluicegate.dialect import statements as st
from sluicegate.dialect.cron import InvalidTimeZoneError, time_zone
from sluicegate.dialect.schedule import Schedule
from sluicegate.executor.context import StatementContext
from sluicegate.storage.spark_errors import RuntimeQueryError

if TYPE_CHECKING:
    from sluicegate.catalog.store import StreamEntry, TableEntry

SESSION_TIME_ZONE = "spark.sql.session.timeZone"


class ScheduleAlreadyExistsError(RuntimeQueryError):
    error_class = "SCHEDULE_ALREADY_EXISTS"
    sqlstate = "42710"


class ScheduleDoesNotExistError(RuntimeQueryError):
    error_class = "SCHEDULE_DOES_NOT_EXIST"
    sqlstate = "42704"


def with_session_zone(ctx: StatementContext, schedule: Schedule | None) -> Schedule | None:
    """A CRON schedule without a zone gets the session's, written down; other schedules are returned as they are."""
    if schedule is None or schedule.kind != "cron" or schedule.time_zone:
        return schedule
    zone = str(ctx.spark.conf.get(SESSION_TIME_ZONE))
    try:
        time_zone(zone)
    except InvalidTimeZoneError as exc:
        raise InvalidTimeZoneError(
            f"the session's time zone {zone!r} ({SESSION_TIME_ZONE}) is not a zone a schedule can keep",
            hint="write AT TIME ZONE 'Region/City' after the cron expression, e.g. AT TIME ZONE 'UTC'") from exc
    return replace(schedule, time_zone=zone)


def schedule_json(ctx: StatementContext, schedule: Schedule | None) -> str | None:
    """What CREATE stores on the table's row (None: no schedule, a continuous stream)."""
    schedule = with_session_zone(ctx, schedule)
    return schedule.to_json() if schedule is not None else None


def change_schedule(ctx: StatementContext, statement: st.AlterSchedule, database: str, name: str,
                    line: int | None, column: int | None, none: str) -> None:
    """The checked change of the row's schedule, and its event (the caller holds the object's lock); `none`: what
    the event says the object does without a schedule."""
    current = Schedule.from_json(ctx.store.require_table(database, name).schedule)
    if statement.action == "ADD" and current is not None:
        raise ScheduleAlreadyExistsError(
            f"`{database}`.`{name}` already has a refresh schedule ({current.describe()})",
            line=line, column=column, hint="use ALTER SCHEDULE to change it, or DROP SCHEDULE first")
    if statement.action != "ADD" and current is None:
        raise ScheduleDoesNotExistError(
            f"`{database}`.`{name}` has no refresh schedule to {statement.action.lower()}",
            line=line, column=column, hint="use ADD SCHEDULE to give it one")
    new = with_session_zone(ctx, statement.schedule) if statement.action != "DROP" else None
    ctx.store.update_table(database, name, schedule=new.to_json() if new is not None else None)
    ctx.store.record_event(database, name, "SCHEDULE_CHANGED",
                           f"{statement.action} SCHEDULE: " + (new.describe() if new is not None else none))


def refresh_rows(table: TableEntry, stream: StreamEntry | None,
                 now: dt.datetime | None = None) -> list[tuple[str, Any]]:
    """DESCRIBE's refresh rows: `Refresh Schedule` exactly as dbt-databricks parses it (MANUAL without a schedule),
    how the table is kept fresh, the next pass, and the last refresh's time and status (for a continuous stream,
    its last micro-batch and its state)."""
    schedule = Schedule.from_json(table.schedule)
    now = now or utc_now()
    if schedule is None and table.kind == "MATERIALIZED_VIEW":
        mode = "MANUAL (no schedule: refreshed by REFRESH MATERIALIZED VIEW)"
    elif schedule is None:
        mode = "CONTINUOUS (no schedule: the stream processes input as it lands)"
    elif schedule.kind == "on_update":
        mode = "ON UPDATE (a pass when an input table gets a new version)"
    elif table.kind == "MATERIALIZED_VIEW":
        mode = "SCHEDULED (a refresh at each scheduled time)"
    else:
        mode = "SCHEDULED (an available-now pass at each scheduled time)"
    next_run = stream.next_run_at if stream is not None else None
    if next_run is None and schedule is not None and schedule.kind == "cron":
        next_run = schedule.next_run(now)
    last_at = status = None
    if stream is not None:
        last_at = stream.last_refresh_at or stream.last_batch_at
        status = stream.last_refresh_status or stream.status
    return [("Refresh Schedule", schedule.describe() if schedule is not None else "MANUAL"),
            ("Refresh Mode", mode), ("Next Refresh", display_time(next_run)), ("Last Refreshed", display_time(last_at)),
            ("Latest Refresh Status", status)]
