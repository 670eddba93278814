"""Quartz cron: parse-time errors that name the field and value, DST, and `next_fire` against an independent
second-by-second evaluation of each expression over short windows (month ends, leap February, mid-month)."""

from __future__ import annotations

import calendar
import datetime as dt

import pytest

from sluicegate.dialect.cron import InvalidCronError, InvalidTimeZoneError, next_fire, parse_cron, time_zone

UTC = dt.timezone.utc


def _at(*parts: int) -> dt.datetime:
    return dt.datetime(*parts)


@pytest.mark.parametrize("expression, zone, after, expected", [
    ("0 0 6 * * ?", "UTC", _at(2026, 11, 25, 14, 40), _at(2026, 11, 26, 6)),
    ("0 0 6 * * ?", "Europe/Paris", _at(2026, 11, 25, 4, 59, 59), _at(2026, 11, 25, 5)),
    ("0 0 6 * * ?", "Europe/Paris", _at(2026, 11, 25, 5), _at(2026, 11, 26, 5)),   # strictly after
    ("0/15 * * * * ?", "UTC", _at(2026, 1, 1, 0, 0, 7), _at(2026, 1, 1, 0, 0, 15)),
    ("0 0 12 ? * MON-FRI", "UTC", _at(2026, 11, 27, 13), _at(2026, 11, 30, 12)),  # Friday afternoon -> Monday
    ("0 0 0 L * ?", "UTC", _at(2028, 2, 1), _at(2028, 2, 29)),                    # leap year
    ("0 0 0 L-2 * ?", "UTC", _at(2027, 2, 1), _at(2027, 2, 26)),
    ("0 0 0 LW * ?", "UTC", _at(2026, 10, 1), _at(2026, 10, 30)),                 # Oct 31 2026 is a Saturday
    ("0 0 0 1W * ?", "UTC", _at(2026, 8, 1), _at(2026, 8, 3)),                    # Aug 1 2026 Saturday -> Monday 3rd
    ("0 0 0 31W * ?", "UTC", _at(2026, 5, 1), _at(2026, 5, 29)),                  # May 31 2026 Sunday -> Friday 29th
    ("0 0 0 ? * 6#3", "UTC", _at(2026, 12, 1), _at(2026, 12, 18)),               # third Friday
    ("0 0 0 ? * 6L", "UTC", _at(2026, 11, 1), _at(2026, 11, 27)),                # last Friday
    ("0 0 0 ? * 2#5", "UTC", _at(2026, 12, 1), _at(2027, 3, 29)),                # a month with five Mondays
    ("0 0 0 29 2 ?", "UTC", _at(2026, 3, 1), _at(2028, 2, 29)),
    ("0 0 22-2 * * ?", "UTC", _at(2026, 1, 1, 2, 30), _at(2026, 1, 1, 22)),      # a range that wraps midnight
    ("0 0 0 1 1 ? 2030", "UTC", _at(2026, 1, 1), _at(2030, 1, 1)),
    ("0 0 0 1 1 ? 2020", "UTC", _at(2026, 1, 1), None),                          # never again
    ("0 0 0 30 FEB ?", "UTC", _at(2026, 1, 1), None),
])
def test_next_fire(expression: str, zone: str, after: dt.datetime, expected: dt.datetime | None) -> None:
    assert next_fire(expression, zone, after) == expected


def test_spring_forward_gap_fires_as_the_clock_reads_it() -> None:
    # 2027-03-14 02:00 in New York jumps to 03:00: 02:30 does not exist and fires at 03:30 EDT (07:30 UTC)
    assert next_fire("0 30 2 * * ?", "America/New_York", _at(2027, 3, 14)) == _at(2027, 3, 14, 7, 30)
    assert next_fire("0 30 2 * * ?", "America/New_York", _at(2027, 3, 14, 7, 30)) == _at(2027, 3, 15, 6, 30)
    # an every-30-minutes job: 01:30 EST, then 03:00 EDT (02:00 and 02:30 fall in the gap, at 03:00 and 03:30)
    fires, t = [], _at(2027, 3, 14, 6, 0)
    for _ in range(4):
        t = next_fire("0 0/30 * * * ?", "America/New_York", t)
        fires.append(t)
    assert fires == [_at(2027, 3, 14, 6, 30), _at(2027, 3, 14, 7), _at(2027, 3, 14, 7, 30), _at(2027, 3, 14, 8)]


def test_fall_back_overlap_fires_once() -> None:
    # 2026-11-01 01:00-02:00 happens twice in New York: a daily 01:30 job runs at the first (EDT, 05:30 UTC) only
    first = next_fire("0 30 1 * * ?", "America/New_York", _at(2026, 11, 1))
    assert first == _at(2026, 11, 1, 5, 30)
    assert next_fire("0 30 1 * * ?", "America/New_York", first) == _at(2026, 11, 2, 6, 30)


@pytest.mark.parametrize("expression, field, value", [
    ("0 0 25 * * ?", "hours", "25"),
    ("60 * * * * ?", "seconds", "60"),
    ("0 0 0 ? * FOO", "day-of-week", "FOO"),
    ("0 0 0 ? * 8", "day-of-week", "8"),
    ("0 0 0 32 * ?", "day-of-month", "32"),
    ("0 0 0 1 13 ?", "month", "13"),
    ("0 0 0 1 JANUARY ?", "month", "JANUARY"),
    ("0 */0 * * * ?", "minutes", "*/0"),
    ("0 0 0 L,3 * ?", "day-of-month", "L,3"),
    ("0 0 0 ? * 2#6", "day-of-week", "2#6"),
    ("0 0 0 1 1 ? 1900", "year", "1900"),
    ("? 0 0 1 1 ?", "seconds", "?"),
    ("0 1,,2 0 1 1 ?", "minutes", "1,,2"),
])
def test_a_bad_field_is_named_with_its_value(expression: str, field: str, value: str) -> None:
    with pytest.raises(InvalidCronError) as raised:
        parse_cron(expression)
    error = raised.value
    assert f"{field} field {value!r}" in error.message, error.message
    assert error.error_class == "INVALID_CRON_EXPRESSION" and error.sqlstate == "22023" and error.hint


@pytest.mark.parametrize("expression, why", [
    ("0 0 6 * * *", "exactly one of day-of-month"),
    ("0 0 6 ? * ?", "exactly one of day-of-month"),
    ("0 6 * * *", "5 fields"),
    ("0 0 0 1 1 ? 2030 x", "8 fields"),
])
def test_shape_errors(expression: str, why: str) -> None:
    with pytest.raises(InvalidCronError, match=why):
        parse_cron(expression)


def test_names_and_case() -> None:
    assert parse_cron("0 0 0 ? jan-mar mon,Wed,FRI").months == (1, 2, 3)
    assert parse_cron("0 0 0 ? * SUN,SAT").day_of_week.days == frozenset({1, 7})
    assert parse_cron("0 0 0 ? * FRI-MON").day_of_week.days == frozenset({6, 7, 1, 2})  # wraps round the week


def test_unknown_time_zone() -> None:
    for name in ("Mars/Olympus", "", "../etc/passwd", "/etc/localtime"):
        with pytest.raises(InvalidTimeZoneError):
            time_zone(name)
    with pytest.raises(InvalidTimeZoneError):
        next_fire("0 0 0 * * ?", "Nowhere/City", _at(2026, 1, 1))


# --- an independent oracle: every field value judged on its own, then every second of a window --------------------

_NAMES = {"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6, "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10,
          "NOV": 11, "DEC": 12, "SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}


def _n(text: str) -> int:
    return _NAMES[text.upper()] if text.upper() in _NAMES else int(text)


def _item_matches(item: str, value: int, low: int, high: int) -> bool:
    base, slash, step = item.partition("/")
    if base == "*":
        first, last = low, high
    elif "-" in base:
        first, last = (_n(x) for x in base.split("-"))
    else:
        first = _n(base)
        last = high if slash else first
    inside = first <= value <= last if first <= last else (value >= first or value <= last)
    return inside and (not slash or (value - first) % (high - low + 1) % int(step) == 0)


def _field_matches(text: str, value: int, low: int, high: int) -> bool:
    return any(_item_matches(item, value, low, high) for item in text.split(","))


def _quartz_weekday(day: dt.date) -> int:
    return {6: 1, 0: 2, 1: 3, 2: 4, 3: 5, 4: 6, 5: 7}[day.weekday()]


def _day_matches(dom: str, dow: str, day: dt.date) -> bool:
    last = calendar.monthrange(day.year, day.month)[1]
    weekdays = [d for d in range(1, last + 1) if dt.date(day.year, day.month, d).weekday() < 5]
    if dom != "?":
        if dom == "L":
            return day.day == last
        if dom.startswith("L-"):
            return day.day == last - int(dom[2:])
        if dom == "LW":
            return day.day == max(weekdays)
        if dom.endswith("W"):
            target = int(dom[:-1])
            return target <= last and day.day == min(weekdays, key=lambda d: abs(d - target))
        return _field_matches(dom, day.day, 1, 31)
    weekday = _quartz_weekday(day)
    if "#" in dow:
        wanted, k = dow.split("#")
        return weekday == _n(wanted) and (day.day - 1) // 7 + 1 == int(k)
    if dow == "L":
        return weekday == 7  # Quartz: L alone in day-of-week is Saturday
    if dow.endswith("L"):
        return weekday == _n(dow[:-1]) and day.day + 7 > last
    return _field_matches(dow, weekday, 1, 7)


def _brute_force(expression: str, offset: dt.timedelta, start: dt.datetime, days: int) -> list[dt.datetime]:
    """Every second of `days` wall days from `start`, in a zone `offset` from UTC (no DST), that the expression
    matches, as naive UTC."""
    sec, minute, hour, dom, month, dow, *year = expression.split()
    seconds = [_field_matches(sec, s, 0, 59) for s in range(60)]  # each value judged once, then looked up
    minutes = [_field_matches(minute, m, 0, 59) for m in range(60)]
    hours = [_field_matches(hour, h, 0, 23) for h in range(24)]
    fires = []
    for index in range(days):
        day = (start + dt.timedelta(days=index)).date()
        if not (_field_matches(month, day.month, 1, 12) and _day_matches(dom, dow, day)
                and (not year or _field_matches(year[0], day.year, 1970, 2099))):
            continue
        midnight = dt.datetime(day.year, day.month, day.day) - offset
        for second in range(86400):
            h, m, s = second // 3600, second // 60 % 60, second % 60
            if seconds[s] and minutes[m] and hours[h]:
                fires.append(midnight + dt.timedelta(seconds=second))
    return fires


ORACLE_EXPRESSIONS = (
    "0 0 * * * ?", "0/20 * 3 * * ?", "15,45 10/15 6-7 * * ?", "0 0 12 ? * MON-FRI", "0 30 9 ? * SAT,SUN",
    "0 0 0 L * ?", "0 0 6 L-1 * ?", "0 0 8 LW * ?", "0 0 8 1W * ?", "0 0 8 15W * ?", "0 0 8 31W * ?",
    "0 0 9 ? * 6L", "0 0 9 ? * 2#1", "0 0 9 ? * 4#3", "0 0 9 ? * 1#5", "59 59 23 * * ?", "0 0 22-2 * * ?",
    "*/7 0 0 1,28-31 * ?", "0 5 4 ? JAN-MAR,DEC FRI-MON", "0 0 0 29 FEB ?", "0 0/45 * * * ? 2027-2028",
    "30 1 1 ? * 7", "0 0 0 ? * L", "0 0 5-20/5 * * ?",
)
WINDOWS = (dt.datetime(2028, 2, 27), dt.datetime(2026, 11, 28), dt.datetime(2027, 5, 30), dt.datetime(2026, 8, 1),
           dt.datetime(2027, 1, 14), dt.datetime(2027, 1, 18), dt.datetime(2026, 11, 25))
ZONES = (("UTC", dt.timedelta(0)), ("Asia/Kolkata", dt.timedelta(hours=5, minutes=30)),
         ("America/Sao_Paulo", dt.timedelta(hours=-3)))


@pytest.mark.parametrize("expression", ORACLE_EXPRESSIONS)
def test_next_fire_agrees_with_a_second_by_second_evaluation(expression: str) -> None:
    for number, start in enumerate(WINDOWS):
        zone, offset = ZONES[(number + len(expression)) % len(ZONES)]
        days = 4
        expected = _brute_force(expression, offset, start, days)
        end = start - offset + dt.timedelta(days=days)
        found, t = [], start - offset - dt.timedelta(seconds=1)
        while True:
            t = next_fire(expression, zone, t)
            if t is None or t >= end:
                break
            found.append(t)
        assert found == expected, (expression, zone, start)
