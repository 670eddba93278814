"""Quartz cron expressions, as Databricks' `SCHEDULE CRON '...'` takes them: checked at parse time with an error that
names the field and the value, and evaluated to the next fire time in a time zone.

    seconds minutes hours day-of-month month day-of-week [year]

Each field takes `*`, a value, a range `a-b` (wrapping: `FRI-MON`, `22-2`), a list `a,b`, a step `a/n`, `*/n` or
`a-b/n`; months JAN-DEC, days of the week SUN-SAT (1 = SUN ... 7 = SAT, as Quartz counts). Exactly one of
day-of-month and day-of-week is `?`. Day-of-month also takes `L` (last day), `L-n` (n days before it), `nW` (the
weekday nearest to day n, within the month) and `LW` (the last weekday); day-of-week `nL` (the last such day of the
month) and `n#k` (the k-th such day).

Time zones: a wall time that does not exist (spring forward) fires as the clock reads it (`02:30` in a one-hour gap
fires at 03:30), as Quartz's lenient calendar does; a wall time that happens twice (fall back) fires once, at its
first occurrence.
"""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sluicegate.dialect.errors import DialectError

MONTHS = {name: number for number, name in enumerate(
    ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), start=1)}
DAYS = {name: number for number, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"), start=1)}
FIELDS = ("seconds", "minutes", "hours", "day-of-month", "month", "day-of-week", "year")
_BOUNDS = {"seconds": (0, 59), "minutes": (0, 59), "hours": (0, 23), "day-of-month": (1, 31), "month": (1, 12),
           "day-of-week": (1, 7), "year": (1970, 2099)}
_NAMES = {"month": MONTHS, "day-of-week": DAYS}
_HINT = ("write six or seven fields: seconds minutes hours day-of-month month day-of-week [year], with `?` in exactly "
         "one of day-of-month and day-of-week, e.g. '0 0 6 * * ?' (every day at 06:00)")


class InvalidCronError(DialectError):
    error_class = "INVALID_CRON_EXPRESSION"
    sqlstate = "22023"


class InvalidTimeZoneError(DialectError):
    error_class = "INVALID_TIME_ZONE"
    sqlstate = "22023"


@dataclass(frozen=True)
class DayOfMonth:
    """Day-of-month: `days` as a set, or one of Quartz's special forms."""

    days: frozenset[int] = frozenset()
    last: bool = False             # L or L-n
    last_offset: int = 0           # the n of L-n
    nearest_weekday: int | None = None  # nW
    last_weekday: bool = False     # LW

    def matches(self, year: int, month: int) -> list[int]:
        """The days of `month` this field selects, in order."""
        length = calendar.monthrange(year, month)[1]
        if self.last:
            day = length - self.last_offset
            return [day] if day >= 1 else []
        if self.last_weekday:
            return [_nearest_weekday(year, month, length, length)]
        if self.nearest_weekday is not None:
            if self.nearest_weekday > length:
                return []
            return [_nearest_weekday(year, month, self.nearest_weekday, length)]
        return [day for day in sorted(self.days) if day <= length]


@dataclass(frozen=True)
class DayOfWeek:
    """Day-of-week (1 = SUN ... 7 = SAT): `days` as a set, `nL` or `n#k`."""

    days: frozenset[int] = frozenset()
    last_of_month: int | None = None     # nL: the last day n of the month
    nth: tuple[int, int] | None = None   # n#k: the k-th day n of the month

    def matches(self, year: int, month: int) -> list[int]:
        length = calendar.monthrange(year, month)[1]
        quartz = [(dt.date(year, month, day).isoweekday() % 7) + 1 for day in range(1, length + 1)]
        if self.last_of_month is not None:
            found = [day for day in range(1, length + 1) if quartz[day - 1] == self.last_of_month]
            return found[-1:]
        if self.nth is not None:
            weekday, k = self.nth
            found = [day for day in range(1, length + 1) if quartz[day - 1] == weekday]
            return [found[k - 1]] if k <= len(found) else []
        return [day for day in range(1, length + 1) if quartz[day - 1] in self.days]


@dataclass(frozen=True)
class CronSchedule:
    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    day_of_month: DayOfMonth | None    # None: `?`
    months: tuple[int, ...]
    day_of_week: DayOfWeek | None      # None: `?`
    years: tuple[int, ...]

    def days(self, year: int, month: int) -> list[int]:
        if self.day_of_month is not None:
            return self.day_of_month.matches(year, month)
        assert self.day_of_week is not None
        return self.day_of_week.matches(year, month)


def _nearest_weekday(year: int, month: int, day: int, length: int) -> int:
    """Quartz's `W`: the Monday-to-Friday day nearest `day`, never leaving the month."""
    weekday = dt.date(year, month, day).weekday()  # Monday 0 ... Sunday 6
    if weekday == 5:    # Saturday: Friday before, or Monday after when day is the 1st
        return day - 1 if day > 1 else day + 2
    if weekday == 6:    # Sunday: Monday after, or Friday before when day is the last
        return day + 1 if day < length else day - 2
    return day


def _fail(field: str, value: str, why: str) -> InvalidCronError:
    return InvalidCronError(f"invalid cron expression: {field} field {value!r}: {why}", hint=_HINT)


def _number(field: str, text: str, whole: str) -> int:
    names = _NAMES.get(field, {})
    if text.upper() in names:
        return names[text.upper()]
    if not text.isdigit():
        raise _fail(field, whole, f"{text!r} is not a number" + (
            f" or a name ({', '.join(names)})" if names else ""))
    value = int(text)
    low, high = _BOUNDS[field]
    if not low <= value <= high:
        raise _fail(field, whole, f"{value} is out of range {low}-{high}")
    return value


def _values(field: str, text: str) -> frozenset[int]:
    """`*`, values, ranges (wrapping), lists and steps: the set of values the field selects."""
    low, high = _BOUNDS[field]
    found: set[int] = set()
    for part in text.split(","):
        if not part:
            raise _fail(field, text, "an empty item in the list")
        base, _, step_text = part.partition("/")
        step = 1
        if _:
            if not step_text.isdigit() or int(step_text) == 0:
                raise _fail(field, text, f"the step {step_text!r} is not a positive number")
            step = int(step_text)
        if base == "*":
            start, end = low, high
        elif "-" in base:
            first, _, last = base.partition("-")
            start, end = _number(field, first, text), _number(field, last, text)
        else:
            start = _number(field, base, text)
            end = high if _ else start  # `a/n`: from a to the end of the range
        span = (end - start) % (high - low + 1)  # a range that wraps (22-2, FRI-MON) goes round the field
        found.update(low + (start - low + offset) % (high - low + 1) for offset in range(0, span + 1, step))
    return frozenset(found)


def _day_of_month(text: str) -> DayOfMonth | None:
    field = "day-of-month"
    upper = text.upper()
    if upper == "?":
        return None
    if upper == "L":
        return DayOfMonth(last=True)
    if upper == "LW":
        return DayOfMonth(last_weekday=True)
    if upper.startswith("L-"):
        offset = upper[2:]
        if not offset.isdigit() or not 0 <= int(offset) <= 30:
            raise _fail(field, text, "L-n takes a number of days 0-30")
        return DayOfMonth(last=True, last_offset=int(offset))
    if upper.endswith("W"):
        return DayOfMonth(nearest_weekday=_number(field, upper[:-1], text))
    if "L" in upper or "W" in upper or "#" in upper:
        raise _fail(field, text, "L and W stand alone (L, L-3, 15W, LW), never in a list or range")
    return DayOfMonth(days=_values(field, text))


def _day_of_week(text: str) -> DayOfWeek | None:
    field = "day-of-week"
    upper = text.upper()
    if upper == "?":
        return None
    if upper == "L":
        return DayOfWeek(days=frozenset({7}))  # Quartz: L alone in day-of-week is 7, Saturday
    if "#" in upper:
        day, _, k = upper.partition("#")
        if not k.isdigit() or not 1 <= int(k) <= 5:
            raise _fail(field, text, "n#k takes k from 1 to 5 (the k-th such day of the month)")
        return DayOfWeek(nth=(_number(field, day, text), int(k)))
    if upper.endswith("L"):
        return DayOfWeek(last_of_month=_number(field, upper[:-1], text))
    return DayOfWeek(days=_values(field, text))


@lru_cache(maxsize=256)
def parse_cron(expression: str) -> CronSchedule:
    """The checked expression, or an InvalidCronError naming the field, its value and what is wrong."""
    parts = expression.split()
    if len(parts) not in (6, 7):
        raise InvalidCronError(f"invalid cron expression {expression!r}: it has {len(parts)} fields, a Quartz "
                               "expression has 6 or 7", hint=_HINT)
    values = dict(zip(FIELDS, parts, strict=False))  # six fields: no year
    for field in ("seconds", "minutes", "hours", "month", "year"):
        if field in values and values[field] == "?":
            raise _fail(field, "?", "? is only for day-of-month or day-of-week")
    dom_text, dow_text = values["day-of-month"], values["day-of-week"]
    if (dom_text == "?") == (dow_text == "?"):
        raise InvalidCronError(
            f"invalid cron expression {expression!r}: exactly one of day-of-month ({dom_text!r}) and day-of-week "
            f"({dow_text!r}) must be '?'", hint="write '?' in the one you do not use, e.g. '0 0 6 ? * MON-FRI' or "
                                                "'0 0 6 1 * ?'")
    return CronSchedule(
        seconds=tuple(sorted(_values("seconds", values["seconds"]))),
        minutes=tuple(sorted(_values("minutes", values["minutes"]))),
        hours=tuple(sorted(_values("hours", values["hours"]))),
        day_of_month=_day_of_month(dom_text),
        months=tuple(sorted(_values("month", values["month"]))),
        day_of_week=_day_of_week(dow_text),
        years=tuple(sorted(_values("year", values.get("year", "*")))),
    )


def time_zone(name: str) -> ZoneInfo:
    """An IANA zone by name (`UTC`, `Europe/Paris`, `America/Los_Angeles`), or an InvalidTimeZoneError."""
    try:
        if not name or name != name.strip() or ".." in name or name.startswith("/"):
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise InvalidTimeZoneError(f"unknown time zone {name!r}",
                                   hint="name an IANA zone such as 'UTC', 'Europe/Paris' or 'America/New_York'"
                                   ) from exc


def _to_utc(wall: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    """A wall time in `zone` as naive UTC: its first occurrence (fold 0); one in a gap reads with the offset before
    the gap, so it moves forward by the gap (02:30 -> 03:30)."""
    return wall.replace(tzinfo=zone, fold=0).astimezone(dt.timezone.utc).replace(tzinfo=None)


def next_fire(expression: str, zone_name: str, after: dt.datetime) -> dt.datetime | None:
    """The first fire time strictly after `after` (naive UTC), as naive UTC; None when the expression never fires
    again (its years are past, or it names a day no month has, such as 31 in February only)."""
    cron = parse_cron(expression)
    zone = time_zone(zone_name)
    local = after.replace(tzinfo=dt.timezone.utc).astimezone(zone).replace(tzinfo=None)
    start = (local - dt.timedelta(days=1)).date()  # a wall time moved by a gap may land on the next day
    for year in (y for y in cron.years if y >= start.year):
        for month in (m for m in cron.months if (year, m) >= (start.year, start.month)):
            for day in cron.days(year, month):
                date = dt.date(year, month, day)
                if date < start:
                    continue
                found = _first_on(cron, date, zone, after)
                if found is not None:
                    return found
    return None


def _first_on(cron: CronSchedule, date: dt.date, zone: ZoneInfo, after: dt.datetime) -> dt.datetime | None:
    """The first wall time of `date` that fires after `after`. Within an hour wall time and instant move together,
    so an hour (then a minute) whose last second is not after `after` is skipped whole."""
    y, m, d = date.year, date.month, date.day
    for hour in cron.hours:
        if _to_utc(dt.datetime(y, m, d, hour, 59, 59), zone) <= after:
            continue
        for minute in cron.minutes:
            if _to_utc(dt.datetime(y, m, d, hour, minute, 59), zone) <= after:
                continue
            for second in cron.seconds:
                fire = _to_utc(dt.datetime(y, m, d, hour, minute, second), zone)
                if fire > after:
                    return fire
    return None
