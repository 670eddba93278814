"""Delta's interval strings (`interval 7 days`, `1 week`, `interval 1 day 12 hours`) and the two retention
properties written in them, read and checked by the gateway itself.

delta-rs takes any string as `delta.deletedFileRetentionDuration` or `delta.logRetentionDuration` and falls back to
its default when it cannot read one, so a typo would silently keep (or drop) a week of files. The gateway checks the
value where the property is written (CREATE ... TBLPROPERTIES, ALTER TABLE ... SET TBLPROPERTIES, through
`tables.delta_configuration`) and reads it with the same rule when it applies retention. Months and years are
refused, as Delta refuses them: their length in seconds is not fixed.

delta-rs (delta-kernel) reads less than Spark does: only `interval <integer> <lowercase unit>`; `7 days` or
`INTERVAL 1 WEEK` are its default to it. Since delta-rs uses the value too (its checkpoints drop tombstones past the
retention, its log cleanup deletes entries past the other), the Delta log gets the canonical form
(`canonical_interval`), which both read alike (SHOW TBLPROPERTIES shows the log's value).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from sluicegate.storage.delta.errors import DeltaError

DELETED_FILE_RETENTION = "delta.deletedFileRetentionDuration"
LOG_RETENTION = "delta.logRetentionDuration"
DEFAULT_DELETED_FILE_RETENTION = "interval 1 week"
DEFAULT_LOG_RETENTION = "interval 30 days"
INTERVAL_PROPERTIES = (DELETED_FILE_RETENTION, LOG_RETENTION)

_UNIT_SECONDS = {
    "microsecond": 1e-6, "millisecond": 1e-3, "second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0,
    "week": 7 * 86400.0,
}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s+([a-z]+)")


class InvalidIntervalError(DeltaError):
    error_class = "INVALID_INTERVAL_FORMAT"
    sqlstate = "22006"


def interval_seconds(text: str, what: str = "the interval") -> float:
    """Seconds in a Delta interval string: `[interval] <n> <unit> [<n> <unit> ...]`, units from microsecond to
    week, singular or plural, any case. Raises InvalidIntervalError naming `what` otherwise."""
    body = text.strip().lower()
    if body.startswith("interval"):
        body = body[len("interval"):].strip()
    seconds, position = 0.0, 0
    for match in _PART.finditer(body):
        unit = match.group(2).removesuffix("s")
        if body[position:match.start()].strip() or unit not in _UNIT_SECONDS:
            break
        seconds += float(match.group(1)) * _UNIT_SECONDS[unit]
        position = match.end()
    else:
        if position and not body[position:].strip():
            return seconds
    raise InvalidIntervalError(
        f"{what} is {text!r}, which is not an interval Delta reads",
        hint="write it as 'interval <number> <unit>' with a unit from second to week, e.g. 'interval 7 days' "
             "(months and years have no fixed length and are refused)",
    )


_CANONICAL_UNITS = (("week", 604_800_000_000), ("day", 86_400_000_000), ("hour", 3_600_000_000),
                    ("minute", 60_000_000), ("second", 1_000_000), ("millisecond", 1_000), ("microsecond", 1))


def canonical_interval(text: str, what: str = "the interval") -> str:
    """`text` as `interval <integer> <unit>` in the largest unit that holds it exactly (`7 days` -> `interval 1
    week`, `interval 1 day 12 hours` -> `interval 36 hours`): the form delta-rs reads as Spark does."""
    micros = round(interval_seconds(text, what) * 1_000_000)
    for unit, size in _CANONICAL_UNITS:
        if micros % size == 0:
            count = micros // size
            return f"interval {count} {unit}{'' if count == 1 else 's'}"
    raise AssertionError("every count of microseconds is a whole number of microseconds")


def check_interval_properties(properties: Mapping[str, str]) -> None:
    """Raise InvalidIntervalError when a retention property among `properties` is not an interval."""
    for key, value in properties.items():
        if key in INTERVAL_PROPERTIES:
            interval_seconds(value, key)


def canonical_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """`properties` with each retention property in its canonical form; raises InvalidIntervalError for a bad
    one."""
    return {key: canonical_interval(value, key) if key in INTERVAL_PROPERTIES else value
            for key, value in properties.items()}


@dataclass(frozen=True)
class Retentions:
    """A table's effective retentions, in seconds."""

    deleted_files: float
    log: float


def table_retentions(configuration: Mapping[str, str]) -> Retentions:
    """The retentions a table's Delta configuration sets, Delta's defaults for those it does not."""
    return Retentions(
        interval_seconds(configuration.get(DELETED_FILE_RETENTION, DEFAULT_DELETED_FILE_RETENTION),
                         DELETED_FILE_RETENTION),
        interval_seconds(configuration.get(LOG_RETENTION, DEFAULT_LOG_RETENTION), LOG_RETENTION),
    )
