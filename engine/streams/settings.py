"""The stream manager's settings (from `[streams]` in conf), kept free of PySpark so configuration loads without it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sluicegate.engine.streams.checkpoint_mirror import CheckpointStore


@dataclass(frozen=True)
class StreamSettings:
    trigger_seconds: float          # when the table sets no pipelines.trigger.interval
    retry_initial: float            # first wait before restarting a failed stream; doubles on each failure in a row
    retry_max: float                # the longest wait
    checkpoints: Path               # where stream checkpoints live
    static_check_interval: float = 5.0  # how often joined static tables are checked for new versions; 0 = never
    max_attempts: int = 5           # failures in a row (no batch committed between them) before a stream is FAILED
    tick_seconds: float = 1.0       # how often the supervisor looks for due retries and scheduled passes
    create_waits: bool = True       # CREATE STREAMING TABLE waits for the first update (a session may say otherwise)
    first_update_timeout: float = 600.0   # the longest CREATE waits for it; then it returns, the stream at work
    # with the warehouse on an object store: where the checkpoints' copies live (the local folders are a cache)
    checkpoint_store: CheckpointStore | None = None
