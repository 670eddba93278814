"""The shell's progress line: a statement that runs longer than a second shows, on a terminal, one line that is
rewritten in place (stages, tasks, elapsed), read from the progress the server sends with GetOperationStatus
(Hive's progressUpdateResponse, filled from Spark's stages), and erased when the statement ends.

Nothing is written when standard error is not a terminal, so a script's output is the same as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TextIO

AFTER_SECONDS = 1.0  # a statement that ends sooner shows no line
_DONE_STATES = ("SUCCEEDED", "COMPLETE", "COMPLETED", "FINISHED")


@dataclass(frozen=True)
class Progress:
    stages_done: int
    stages_total: int
    tasks_done: int
    tasks_total: int


def from_update(update: Any) -> Progress | None:
    """The counts of a TProgressUpdateResp (its rows: one per stage, named by `headerNames`), or None when it has
    no stage yet."""
    if update is None or not update.rows or not update.headerNames:
        return None
    header = [str(name).upper() for name in update.headerNames]
    try:
        status, total, completed = header.index("STATUS"), header.index("TOTAL"), header.index("COMPLETED")
    except ValueError:
        return None
    stages_done = tasks_done = tasks_total = 0
    for row in update.rows:
        try:
            tasks_total += int(row[total])
            tasks_done += int(row[completed])
        except (ValueError, IndexError):
            continue
        stages_done += str(row[status]).upper() in _DONE_STATES
    return Progress(stages_done, len(update.rows), tasks_done, tasks_total)


def format_line(progress: Progress | None, elapsed: float, width: int = 80) -> str:
    """`Stages 1/2  Tasks 120/400 (30%)  12.3 s`, cut to `width`; before any stage only the time."""
    seconds = f"{elapsed:.1f} s"
    if progress is None:
        text = f"Running  {seconds}"
    else:
        share = f" ({progress.tasks_done * 100 // progress.tasks_total}%)" if progress.tasks_total else ""
        text = (f"Stages {progress.stages_done}/{progress.stages_total}  "
                f"Tasks {progress.tasks_done}/{progress.tasks_total}{share}  {seconds}")
    return text[: max(width - 1, 10)]


class ProgressLine:
    """Writes the line to `stream` (standard error) when it is a terminal; `clear()` erases it."""

    def __init__(self, stream: TextIO, width: int = 80) -> None:
        self._stream = stream
        self._width = width
        self.enabled = bool(getattr(stream, "isatty", lambda: False)())
        self._shown = False

    def show(self, progress: Progress | None, elapsed: float) -> None:
        if not self.enabled:
            return
        self._stream.write("\r" + format_line(progress, elapsed, self._width) + "\x1b[K")
        self._stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
            self._shown = False
