"""Operation states and the only transitions allowed between them (as HiveServer2 and Kyuubi define them)."""

from __future__ import annotations

from enum import Enum

from sluicegate.gateway.errors import InvalidOperationStateError


class OperationState(Enum):
    INITIALIZED = "INITIALIZED"
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    CANCELED = "CANCELED"
    TIMEDOUT = "TIMEDOUT"
    ERROR = "ERROR"
    CLOSED = "CLOSED"


_ENDINGS = {OperationState.CANCELED, OperationState.TIMEDOUT, OperationState.ERROR, OperationState.CLOSED}

TRANSITIONS: dict[OperationState, frozenset[OperationState]] = {
    OperationState.INITIALIZED: frozenset({OperationState.PENDING, OperationState.RUNNING, *_ENDINGS}),
    OperationState.PENDING: frozenset({OperationState.RUNNING, *_ENDINGS}),
    OperationState.RUNNING: frozenset({OperationState.FINISHED, *_ENDINGS}),
    OperationState.FINISHED: frozenset({OperationState.CLOSED}),
    OperationState.CANCELED: frozenset({OperationState.CLOSED}),
    OperationState.TIMEDOUT: frozenset({OperationState.CLOSED}),
    OperationState.ERROR: frozenset({OperationState.CLOSED}),
    OperationState.CLOSED: frozenset(),
}

TERMINAL = frozenset(
    {OperationState.FINISHED, OperationState.CANCELED, OperationState.TIMEDOUT, OperationState.ERROR,
     OperationState.CLOSED}
)


def check_transition(old: OperationState, new: OperationState) -> None:
    if new not in TRANSITIONS[old]:
        raise InvalidOperationStateError(f"an operation cannot go from {old.value} to {new.value}")
