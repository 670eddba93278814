"""The catalog's clock: naive UTC, as every timestamp column of the catalog stores it (SQLite keeps no zone), and
the one display of such a time in listings."""

from __future__ import annotations

import datetime as dt


def utc_now() -> dt.datetime:
    """Now in UTC without a zone: what the catalog's rows hold on every backend, and compare against."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def display_time(value: dt.datetime | None) -> str | None:
    """A catalog time as SHOW and DESCRIBE print it: to the second, a space between date and time."""
    return value.replace(microsecond=0).isoformat(sep=" ") if value is not None else None
