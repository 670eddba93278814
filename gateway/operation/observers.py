"""Who is told of an operation's life: the query history, the metrics and the statement log each observe operations
here instead of being called from the operation's code, so an operation runs the same whoever watches it.

An observer is told three times at most: `started` when the operation starts running, `ended` once when it reaches
a terminal state (FINISHED, ERROR, CANCELED, TIMEDOUT; a result may still be fetched after FINISHED), `closed` when
the client closes it or its session ends (the rows fetched are known then). Observers run on the operation's
thread and must be quick (hand the work to a thread of their own); an observer that raises is logged and skipped,
never failing the statement.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from sluicegate.gateway.operation.base import Watcher

if TYPE_CHECKING:
    from sluicegate.gateway.operation.base import Operation

log = logging.getLogger(__name__)


class Observers:
    """The observers of a gateway's operations, each a `Watcher`; the operation manager hands this fan-out to each
    operation it runs as that operation's own `Watcher`."""

    def __init__(self) -> None:
        self._observers: tuple[Watcher, ...] = ()
        self._lock = threading.Lock()

    def add(self, observer: Watcher) -> None:
        with self._lock:
            self._observers = (*self._observers, observer)

    def remove(self, observer: Watcher) -> None:
        with self._lock:
            self._observers = tuple(o for o in self._observers if o is not observer)

    def started(self, operation: Operation) -> None:
        self._tell("started", operation)

    def ended(self, operation: Operation) -> None:
        self._tell("ended", operation)

    def closed(self, operation: Operation) -> None:
        self._tell("closed", operation)

    def _tell(self, event: str, operation: Operation) -> None:
        for observer in self._observers:
            try:
                getattr(observer, event)(operation)
            except Exception:
                log.exception("observer %r failed on %s of operation %s", observer, event, operation.handle.hex)
