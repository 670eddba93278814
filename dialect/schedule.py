"""A refresh schedule, as Databricks writes it on streaming tables and materialized views, as pure data.

    SCHEDULE [REFRESH] EVERY n {HOUR[S] | DAY[S] | WEEK[S]}
    SCHEDULE [REFRESH] CRON '<quartz cron>' [AT TIME ZONE '<tz>']
    TRIGGER ON UPDATE [AT MOST EVERY INTERVAL n {SECOND[S] | MINUTE[S] | HOUR[S]}]

The catalog stores it as JSON on the table's row (`tables.schedule`); the stream supervisor asks `next_run` when the
next pass is due; `describe()` is the text of DESCRIBE EXTENDED's `Refresh Schedule` row, in exactly the shapes
dbt-databricks parses (`EVERY n HOURS`, `CRON '<c>' AT TIME ZONE '<tz>'`, `TRIGGER ON UPDATE [AT MOST EVERY INTERVAL
n SECONDS]`). No schedule means MANUAL for a materialized view and a continuous stream for a streaming table.

`schedule_clause` and `create_schedule` turn the grammar's RefreshSchedule node into a checked Schedule, every error
positioned at the clause's value.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass
from typing import Literal

from sqlglot import exp

from sluicegate.dialect.cron import InvalidCronError, InvalidTimeZoneError, next_fire, parse_cron, time_zone
from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.expressions import RefreshSchedule
from sluicegate.dialect.positions import line_column, start_of

ScheduleKind = Literal["every", "cron", "on_update"]
EVERY_UNITS: dict[str, dt.timedelta] = {"HOUR": dt.timedelta(hours=1), "DAY": dt.timedelta(days=1),
                                        "WEEK": dt.timedelta(weeks=1)}
# Databricks' bounds for EVERY n <unit>.
EVERY_BOUNDS: dict[str, tuple[int, int]] = {"HOUR": (1, 72), "DAY": (1, 31), "WEEK": (1, 8)}


@dataclass(frozen=True)
class Schedule:
    kind: ScheduleKind
    every: int | None = None               # kind "every": n
    unit: str | None = None                # kind "every": HOUR | DAY | WEEK (singular, upper case)
    cron: str | None = None                # kind "cron": the Quartz expression as written
    time_zone: str | None = None           # kind "cron": an IANA zone; None: the session's zone at CREATE (UTC)
    at_most_every_seconds: int | None = None   # kind "on_update": the least time between two passes

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Schedule | None:
        return cls(**json.loads(text)) if text else None

    def describe(self) -> str:
        """DESCRIBE EXTENDED's `Refresh Schedule` (what dbt-databricks' regexes read back)."""
        if self.kind == "every":
            return f"EVERY {self.every} {self.unit}S"
        if self.kind == "cron":
            return f"CRON '{self.cron}' AT TIME ZONE '{self.time_zone or 'UTC'}'"
        if self.at_most_every_seconds:
            return f"TRIGGER ON UPDATE AT MOST EVERY INTERVAL {self.at_most_every_seconds} SECONDS"
        return "TRIGGER ON UPDATE"

    def next_run(self, after: dt.datetime) -> dt.datetime | None:
        """The first time a pass is due strictly after `after` (naive UTC, as the catalog stores times); None for
        TRIGGER ON UPDATE, which runs when an input gets a new version, not at a time."""
        if self.kind == "every":
            return after + EVERY_UNITS[self.unit or "HOUR"] * int(self.every or 1)
        if self.kind == "cron":
            return next_fire(self.cron or "", self.time_zone or "UTC", after)
        return None


class InvalidScheduleError(DialectError):
    error_class = "INVALID_SCHEDULE"
    sqlstate = "22023"


_INTERVAL_SECONDS = {"SECOND": 1, "MINUTE": 60, "HOUR": 3600}


_INTERVAL_SECONDS = {"SECOND": 1, "MINUTE": 60, "HOUR": 3600}


def _positioned(sql: str, node: exp.Expr, error: DialectError) -> DialectError:
    start = start_of(node)
    if start is not None and error.line is None:
        error.line, error.column = line_column(sql, start)
    return error


def schedule_clause(sql: str, node: RefreshSchedule) -> Schedule:
    """A schedule clause as a checked Schedule: EVERY within Databricks' bounds, a valid Quartz expression, a known
    time zone, AT MOST EVERY at least a minute; every error at the clause's value."""
    kind = node.args["kind"]
    if kind == "EVERY":
        every = node.args["every"]
        unit = str(node.args["unit"]).rstrip("S")
        low, high = EVERY_BOUNDS[unit]
        if not every.name.isdigit() or not low <= int(every.name) <= high:
            raise _positioned(sql, every, InvalidScheduleError(
                f"SCHEDULE EVERY {every.name} {node.args['unit']} is out of range: {unit}S takes {low} to {high}",
                hint=f"write a whole number of {unit.lower()}s from {low} to {high}, or a CRON schedule"))
        return Schedule("every", every=int(every.name), unit=unit)
    if kind == "CRON":
        cron, zone = node.args["cron"], node.args.get("time_zone")
        try:
            parse_cron(cron.name)
        except InvalidCronError as exc:
            raise _positioned(sql, cron, exc) from None
        if zone is not None:
            try:
                time_zone(zone.name)
            except InvalidTimeZoneError as exc:
                raise _positioned(sql, zone, exc) from None
        return Schedule("cron", cron=" ".join(cron.name.split()), time_zone=zone.name if zone is not None else None)
    interval = node.args.get("at_most_every")
    if interval is None:
        return Schedule("on_update")
    unit = interval.text("unit").upper().rstrip("S")
    amount = interval.this.name if interval.this is not None else ""
    if unit not in _INTERVAL_SECONDS or not amount.isdigit():
        raise _positioned(sql, node, InvalidScheduleError(
            f"AT MOST EVERY takes INTERVAL <number> SECONDS, MINUTES or HOURS, not {interval.sql(StreamingSpark)}",
            hint="write e.g. TRIGGER ON UPDATE AT MOST EVERY INTERVAL 5 MINUTES"))
    seconds = int(amount) * _INTERVAL_SECONDS[unit]
    if seconds < 60:
        raise _positioned(sql, node, InvalidScheduleError(
            f"AT MOST EVERY {interval.sql(StreamingSpark)} is shorter than the least interval, one minute",
            hint="write AT MOST EVERY INTERVAL 1 MINUTE or more, or leave it out"))
    return Schedule("on_update", at_most_every_seconds=seconds)


def create_schedule(sql: str, tree: exp.Create) -> Schedule | None:
    """The one schedule clause among a CREATE's properties, checked; None when there is none."""
    container = tree.args.get("properties")
    clauses = [p for p in (container.expressions if container else []) if isinstance(p, RefreshSchedule)]
    if len(clauses) > 1:
        raise _positioned(sql, clauses[1], InvalidScheduleError(
            "a table has one schedule: SCHEDULE ... and TRIGGER ON UPDATE cannot be combined or repeated",
            hint="keep one SCHEDULE EVERY, SCHEDULE CRON or TRIGGER ON UPDATE clause"))
    return schedule_clause(sql, clauses[0]) if clauses else None
