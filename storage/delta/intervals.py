"""Delta's interval strings (`interval 7 days`, `1 week`, `interval 1 day 12 hours`) and the two retention
properties written in them, read and checked by the gateway itself.

delta-rs takes any string as `delta.deletedFileRetentionDuration` or `delta.logRetentionDuration` and falls back to
its default when it cannot read one, so a typo would silently keep (or drop) a week of files. The gateway checks the
value where the property is written (CREATE ... TBLPROPERTIES, ALTER TABLE ... SET TBLPROPERTIES, through
`tables.delta_configuration`) and reads it with the same rule when it applies retention. Months and years are
refused, as Delta refuses them: their length in seconds is not fixed.
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


def check_interval_properties(properties: Mapping[str, str]) -> None:
    """Raise InvalidIntervalError when a retention property among `properties` is not an interval."""
    for key, value in properties.items():
        if key in INTERVAL_PROPERTIES:
            interval_seconds(value, key)


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
