"""A refresh schedule, as Databricks writes it on streaming tables and materialized views, as pure data.

    SCHEDULE [REFRESH] EVERY n {HOUR[S] | DAY[S] | WEEK[S]}
    SCHEDULE [REFRESH] CRON '<quartz cron>' [AT TIME ZONE '<tz>']
    TRIGGER ON UPDATE [AT MOST EVERY INTERVAL n {SECOND[S] | MINUTE[S] | HOUR[S]}]

The catalog stores it as JSON on the table's row (`tables.schedule`); the stream supervisor asks `next_run` when the
next pass is due; `describe()` is the text of DESCRIBE EXTENDED's `Refresh Schedule` row, in exactly the shapes
dbt-databricks parses (`EVERY n HOURS`, `CRON '<c>' AT TIME ZONE '<tz>'`, `TRIGGER ON UPDATE [AT MOST EVERY INTERVAL
n SECONDS]`). No schedule means MANUAL for a materialized view and a continuous stream for a streaming table.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass
from typing import Literal

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
            from sluicegate.dialect.cron import next_fire

            return next_fire(self.cron or "", self.time_zone or "UTC", after)
        return None
