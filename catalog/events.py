"""A streaming table's event log in Databricks' shape (the columns of `event_log(TABLE(t))`): what one stored event
reads back as, how the short kinds the runtime has always recorded (STARTED, FAILED, ...) map to Databricks' event
types and levels, and how long events are kept.

Databricks' vocabulary (https://docs.databricks.com/aws/dlt/monitor-event-log-schema): `details` is a JSON object
keyed by the event type, e.g. `{"update_progress": {"state": "RUNNING"}}`; `level` is INFO, WARN, ERROR or METRICS
(high-volume figures such as one `flow_progress` per micro-batch); `maturity_level` says whether the shape of
`details` is STABLE or EVOLVING (types sluicegate adds). Standard library only: the catalog stores events, the runtime
builds the details of its own (engine/streams/events.py).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LEVELS = ("INFO", "WARN", "ERROR", "METRICS")
STABLE = "STABLE"
EVOLVING = "EVOLVING"

# Databricks' event types sluicegate writes; any other type is stored as given with maturity EVOLVING.
CREATE_UPDATE = "create_update"
UPDATE_PROGRESS = "update_progress"
FLOW_PROGRESS = "flow_progress"
STABLE_TYPES = frozenset({CREATE_UPDATE, UPDATE_PROGRESS, FLOW_PROGRESS, "user_action", "flow_definition"})

INSTANCE = "sluicegate"  # the data plane of `sequence`: one gateway per warehouse writes its streams' events


@dataclass(frozen=True)
class EventRetention:
    """How long a table's events are kept (conf `[events]`): trimmed as events are written, so the log stays small
    without a sweeper. 0 turns a bound off."""

    days: float = 30.0
    max_rows_per_table: int = 10_000


@dataclass(frozen=True)
class EventShape:
    """Databricks' columns of one event, before it is stored: type, level and the JSON objects."""

    event_type: str
    level: str
    details: dict[str, Any]
    error: dict[str, Any] | None = None

    @property
    def maturity_level(self) -> str:
        return STABLE if self.event_type in STABLE_TYPES else EVOLVING


@dataclass(frozen=True)
class EventRecord:
    """One row of `event_log(...)`: Databricks' ten columns, JSON ones as text."""

    id: str
    sequence: str
    origin: str
    timestamp: dt.datetime      # UTC, timezone-aware
    message: str
    level: str
    maturity_level: str | None
    error: str | None
    details: str
    event_type: str


def sequence_json(seq_no: int) -> str:
    """Databricks' `sequence`: orders the events of one table (`seq_no` grows by one per event of the table)."""
    return json.dumps({"data_plane_id": {"instance": INSTANCE, "seq_no": seq_no}, "control_plane_seq_no": seq_no})


_ERROR_CLASS = re.compile(r"^\[?([A-Za-z_][\w.]*?(?:Error|Exception|[A-Z][A-Z_]+))\]?:?\s")


def error_object(message: str, *, fatal: bool = False, class_name: str | None = None) -> dict[str, Any]:
    """Databricks' `error` column: whether the failure ends the update, and the exceptions with class and message.
    The class is read off the message (`DeltaWriteError: ...`, `[CAST_INVALID_INPUT] ...`) when not given."""
    if class_name is None:
        found = _ERROR_CLASS.match(message)
        class_name = found.group(1) if found else "StreamError"
    return {"fatal": fatal, "exceptions": [{"class_name": class_name, "message": message}]}


def _update(state: str) -> Callable[[str], dict[str, Any]]:
    return lambda message: {UPDATE_PROGRESS: {"state": state}}


def _create(cause: str, full_refresh: bool = False) -> Callable[[str], dict[str, Any]]:
    return lambda message: {CREATE_UPDATE: {"cause": cause, "full_refresh": full_refresh}}


def _action(action: str) -> Callable[[str], dict[str, Any]]:
    return lambda message: {"user_action": {"action": action, "message": message}}


def _stopped(message: str) -> dict[str, Any]:
    return {UPDATE_PROGRESS: {"state": "COMPLETED" if message == "the query ended" else "CANCELED"}}


# The runtime's short kinds (record_event's fourth argument) as Databricks' events: (type, level, details).
KINDS: dict[str, tuple[str, str, Callable[[str], dict[str, Any]]]] = {
    "CREATED": (CREATE_UPDATE, "INFO", _create("USER_ACTION")),
    "STARTED": (UPDATE_PROGRESS, "INFO", _update("RUNNING")),
    "STOPPED": (UPDATE_PROGRESS, "INFO", _stopped),
    "FAILED": (UPDATE_PROGRESS, "ERROR", _update("FAILED")),
    "RESTART": (CREATE_UPDATE, "INFO", _create("INPUT_CHANGED")),
    "REFRESH_UNCHANGED": (CREATE_UPDATE, "INFO", _create("USER_ACTION")),
    "REFRESH_CONTINUE": (CREATE_UPDATE, "INFO", _create("USER_ACTION")),
    "REFRESH_FULL": (CREATE_UPDATE, "INFO", _create("USER_ACTION", full_refresh=True)),
    "LATE_ROWS_DROPPED": ("late_rows_dropped", "WARN", lambda message: {"late_rows_dropped": {"message": message}}),
    # the supervisor's: a REFRESH or a retry starts an update, a pass ends one, a scheduled table waits queued
    "REFRESH": (CREATE_UPDATE, "INFO", _create("USER_ACTION")),
    "RETRY": (CREATE_UPDATE, "INFO", _create("RETRY_ON_FAILURE")),
    "REFRESH_COMPLETED": (UPDATE_PROGRESS, "INFO", _update("COMPLETED")),
    "SCHEDULED": (UPDATE_PROGRESS, "INFO", _update("QUEUED")),
    # a schedule set by ALTER ... SCHEDULE (the statement) and taken on by the stream (the supervisor)
    "SCHEDULE_CHANGED": ("user_action", "INFO", _action("SCHEDULE_CHANGED")),
    "SCHEDULE": ("user_action", "INFO", _action("SCHEDULE_APPLIED")),
}


def shape_of_kind(kind: str, message: str) -> EventShape:
    """The Databricks event a short kind stands for; a kind not listed becomes its own type (lower case), INFO."""
    found = KINDS.get(kind.upper())
    if found is None:
        event_type = kind.lower()
        return EventShape(event_type, "INFO", {event_type: {}})
    event_type, level, details = found
    error = error_object(message) if level == "ERROR" else None
    return EventShape(event_type, level, details(message), error)


def kind_of_type(event_type: str) -> str:
    """The short kind stored beside an event given by its type only (DESCRIBE's `Event` rows show it)."""
    return event_type.upper()[:32]
