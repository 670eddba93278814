"""A streaming table's stream as a state machine: its states, the only transitions between them, and the pure policy
that picks one (retry or fail, when a scheduled pass is due). No Spark and no clock here: the supervisor passes
`now` in, so the policy is tested with a fake clock.

    STARTING    a query is being started (continuous, or one pass of a scheduled table)
    RUNNING     a continuous query runs (no schedule on the table)
    REFRESHING  one available-now pass of a scheduled table runs
    SCHEDULED   a scheduled table between passes: no query, `next_run_at` (or a new input version) says when
    RETRYING    the last attempt failed; the next starts at `retry_at` (exponential backoff)
    FAILED      failed `max_attempts` times in a row, or with an error that no retry can cure; only REFRESH,
                CREATE OR REFRESH or a gateway restart start it again (no tick does)
    STOPPED     stopped by a statement or with the gateway; the next boot or a REFRESH starts it again
    DROPPED     the table is gone (terminal)
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import Enum

from sluicegate.dialect.schedule import Schedule
from sluicegate.engine.streams.errors import StreamError, failure_classes, retryable


class StreamState(str, Enum):
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    REFRESHING = "REFRESHING"
    SCHEDULED = "SCHEDULED"
    RETRYING = "RETRYING"
    FAILED = "FAILED"
    STOPPED = "STOPPED"
    DROPPED = "DROPPED"


S = StreamState
_LEAVE = frozenset({S.STOPPED, S.DROPPED})  # a statement or the gateway's shutdown may end any live state

TRANSITIONS: dict[StreamState, frozenset[StreamState]] = {
    S.STARTING: frozenset({S.RUNNING, S.REFRESHING, S.RETRYING, S.FAILED, *_LEAVE}),
    # STARTING: a restart on its checkpoint; SCHEDULED: a schedule was added (ALTER ... ADD SCHEDULE)
    S.RUNNING: frozenset({S.STARTING, S.SCHEDULED, S.RETRYING, S.FAILED, *_LEAVE}),
    S.REFRESHING: frozenset({S.SCHEDULED, S.STARTING, S.RETRYING, S.FAILED, *_LEAVE}),
    S.SCHEDULED: frozenset({S.STARTING, *_LEAVE}),
    S.RETRYING: frozenset({S.STARTING, S.FAILED, *_LEAVE}),
    S.FAILED: frozenset({S.STARTING, *_LEAVE}),
    # SCHEDULED: taken on at boot with its next pass still to come; RETRYING, FAILED: a start that failed
    S.STOPPED: frozenset({S.STARTING, S.SCHEDULED, S.RETRYING, S.FAILED, *_LEAVE}),
    S.DROPPED: frozenset(),
}

TERMINAL = frozenset({S.DROPPED})
# States only a command leaves (REFRESH, CREATE OR REFRESH, a boot): the supervisor's tick never starts them.
RESTING = frozenset({S.FAILED, S.STOPPED})
# States with a Spark query behind them.
LIVE = frozenset({S.STARTING, S.RUNNING, S.REFRESHING})


class StreamTransitionError(StreamError):
    """A transition the table does not allow: a defect of the supervisor, never a user's doing."""

    error_class = "STREAM_INVALID_TRANSITION"
    sqlstate = "XX000"


def check_transition(old: StreamState, new: StreamState) -> None:
    if new not in TRANSITIONS[old]:
        raise StreamTransitionError(f"a stream cannot go from {old.value} to {new.value}")


@dataclass(frozen=True)
class RetryPolicy:
    initial_seconds: float
    max_seconds: float
    max_attempts: int

    def delay(self, attempts: int) -> float:
        """Seconds before attempt `attempts + 1`: doubles with each failure in a row, up to the maximum."""
        return min(self.initial_seconds * 2 ** max(attempts - 1, 0), self.max_seconds)


@dataclass(frozen=True)
class FailureOutcome:
    state: StreamState                 # RETRYING or FAILED
    attempts: int                      # failures in a row, this one included
    retry_at: dt.datetime | None       # RETRYING: when the next attempt starts
    reason: str                        # why it stops retrying, or when it retries (for the event and the log)


def after_failure(attempts_before: int, message: str, now: dt.datetime, policy: RetryPolicy,
                  raised_class: str | None = None) -> FailureOutcome:
    """What a failure leads to: another attempt after the backoff, or FAILED for good when the error cannot be
    cured by retrying or this was the last attempt allowed. `raised_class`: the error class the batch's typed error
    carried (errors.RAISED_IN_BATCH), read instead of the text when there is one."""
    attempts = attempts_before + 1
    if not retryable(message, raised_class):
        classes = ", ".join(sorted(failure_classes(message, raised_class)))
        return FailureOutcome(S.FAILED, attempts, None, f"{classes} is not retried")
    if attempts >= policy.max_attempts:
        return FailureOutcome(S.FAILED, attempts, None, f"attempt {attempts} of {policy.max_attempts}: no more retries")
    delay = policy.delay(attempts)
    return FailureOutcome(S.RETRYING, attempts, now + dt.timedelta(seconds=delay),
                          f"attempt {attempts} of {policy.max_attempts}; retry in {delay:g} s")


def first_pass_at(schedule: Schedule, next_run_at: dt.datetime | None, now: dt.datetime) -> dt.datetime:
    """When a scheduled table's next pass runs once the supervisor takes it on (at boot or CREATE): a pass that was
    due while the gateway was down (or never ran) runs now."""
    if next_run_at is None or next_run_at <= now or schedule.kind == "on_update":
        return now
    return next_run_at


def next_pass_at(schedule: Schedule, now: dt.datetime) -> dt.datetime | None:
    """After a pass: the time of the next one, None for TRIGGER ON UPDATE (a new input version decides)."""
    return schedule.next_run(now)


def pass_due(schedule: Schedule, next_run_at: dt.datetime | None, now: dt.datetime, inputs_changed: bool,
             last_pass_at: dt.datetime | None) -> bool:
    """Whether a SCHEDULED table's pass should start now. TRIGGER ON UPDATE: when an input has a new Delta version,
    at most once per `at_most_every_seconds`; otherwise when `next_run_at` has come."""
    if schedule.kind == "on_update":
        if not inputs_changed:
            return False
        wait = dt.timedelta(seconds=schedule.at_most_every_seconds or 0)
        return last_pass_at is None or now - last_pass_at >= wait
    return next_run_at is not None and next_run_at <= now


def retry_due(retry_at: dt.datetime | None, now: dt.datetime) -> bool:
    return retry_at is not None and retry_at <= now
