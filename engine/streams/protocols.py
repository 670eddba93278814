"""What statements ask of the stream engine, as protocols: the warehouse's statement context holds a `Streams`, not
the whole `StreamManager` (manager.py implements it), so a statement handler depends on these calls only and a test
may hand in anything that answers them."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sluicegate.catalog.store import StreamEntry
    from sluicegate.dialect.streaming.plan import StreamingPlan
    from sluicegate.engine.streams.manager import Key, StreamStatus
    from sluicegate.engine.streams.runner import BuiltStream
    from sluicegate.engine.streams.settings import StreamSettings


class Streams(Protocol):
    """The stream manager's calls a statement makes: build and start a stream, stop, drop or refresh it, wait for
    it, and the lock that makes statements on one name take turns."""

    settings: StreamSettings

    def lifecycle(self, database: str, name: str) -> AbstractContextManager[None]: ...

    def checkpoint_for(self, stream_id: str) -> str: ...

    def build(self, plan: StreamingPlan, flow: str | None = None) -> BuiltStream: ...

    def start(self, entry: StreamEntry, built: BuiltStream | None = None) -> StreamEntry: ...

    def stop(self, database: str, name: str, desired: str | None = ..., wait_seconds: float = ...,
             flow: str | None = None) -> None: ...

    def drop(self, database: str, name: str, keep_session: bool = False, flow: str | None = None) -> None: ...

    def remove_checkpoint(self, database: str, name: str, checkpoint: str) -> None: ...

    def refresh(self, database: str, name: str, flow: str | None = None) -> Future[None] | None: ...

    def reschedule(self, database: str, name: str) -> None: ...

    def record_failure(self, key: Key, stream_id: str, message: str) -> None: ...

    def status(self, database: str, name: str) -> StreamStatus | None: ...

    def catch_up(self, database: str, name: str, cancelled: Callable[[], bool], until: Future[None] | None = None,
                 poll_seconds: float = ..., flow: str | None = None) -> None: ...

    def first_update(self, database: str, name: str, cancelled: Callable[[], bool], timeout_seconds: float,
                     poll_seconds: float = ...) -> str: ...
