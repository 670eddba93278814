"""The shell's progress line: its text and the counts it reads from Hive's progressUpdateResponse on their own
(no JVM), nothing written when standard error is not a terminal, and once through a pseudo-terminal against a real
gateway: a long statement shows the line moving, and Ctrl-C still cancels it."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from TCLIService import ttypes

from sluicegate.gateway.session import _long_poll_seconds
from sluicegate.gateway.shell.progress import Progress, ProgressLine, format_line, from_update

HEADER = ["STAGES", "ATTEMPT", "STATUS", "TOTAL", "COMPLETED", "RUNNING", "PENDING", "FAILED", ""]


def test_the_line_says_stages_tasks_share_and_elapsed_time() -> None:
    assert format_line(Progress(1, 2, 120, 400), 12.34) == "Stages 1/2  Tasks 120/400 (30%)  12.3 s"
    assert format_line(None, 1.05) == "Running  1.1 s"  # no stage known yet
    assert format_line(Progress(0, 1, 0, 0), 2.0) == "Stages 0/1  Tasks 0/0  2.0 s"
    assert format_line(Progress(1, 2, 120, 400), 12.34, width=20) == "Stages 1/2  Tasks 1"


def test_counts_are_read_from_the_rows_by_their_header() -> None:
    update = ttypes.TProgressUpdateResp(
        headerNames=HEADER, rows=[["Stage-0", "0", "SUCCEEDED", "8", "8", "0", "0", "0", ""],
                                  ["Stage-1", "0", "RUNNING", "200", "50", "2", "148", "0", ""]],
        progressedPercentage=0.28, status=ttypes.TJobExecutionStatus.IN_PROGRESS, footerSummary="STAGES: 01/02",
        startTime=1)
    assert from_update(update) == Progress(1, 2, 58, 208)
    assert from_update(None) is None
    assert from_update(ttypes.TProgressUpdateResp(headerNames=HEADER, rows=[])) is None
    assert from_update(ttypes.TProgressUpdateResp(headerNames=["A"], rows=[["x"]])) is None


def test_nothing_is_written_when_not_on_a_terminal() -> None:
    stream = io.StringIO()
    line = ProgressLine(stream)
    line.show(Progress(0, 1, 3, 10), 2.0)
    line.clear()
    assert not line.enabled and stream.getvalue() == ""


def test_the_long_poll_a_client_asks_for_is_read_as_hive_writes_it() -> None:
    assert _long_poll_seconds("1000ms") == 1.0
    assert _long_poll_seconds("2s") == 2.0
    assert _long_poll_seconds(" 500 ") == 0.5  # Hive's unit: milliseconds
    assert _long_poll_seconds("soon") is None


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_line_is_rewritten_in_place_and_erased() -> None:
    stream = _Tty()
    line = ProgressLine(stream)
    line.show(Progress(0, 1, 3, 10), 2.0)
    line.show(Progress(1, 1, 10, 10), 3.0)
    line.clear()
    assert stream.getvalue() == ("\rStages 0/1  Tasks 3/10 (30%)  2.0 s\x1b[K"
                                 "\rStages 1/1  Tasks 10/10 (100%)  3.0 s\x1b[K\r\x1b[K")


def test_a_long_statement_shows_moving_progress_on_a_terminal_and_ctrl_c_cancels(gateway: Any,
                                                                                  tmp_path: Path) -> None:
    from test_shell import Terminal

    terminal = Terminal(gateway.port, tmp_path)
    terminal.expect(r"sluicegate:default>")
    terminal.type("SELECT count(*) FROM range(0, 40000000000, 1, 400) WHERE id % 7 = 3;\r")
    terminal.expect(r"Stages 0/1  Tasks [1-9]\d*/400 \(\d+%\)  \d+\.\d s", timeout=120)
    first = int(re.findall(r"Tasks (\d+)/400", terminal.text)[-1])
    terminal.expect(rf"Tasks (?!{first}/)\d+/400", timeout=60)  # a later line counts other tasks
    terminal.wait_for_cooked_mode()
    terminal.type("\x03")
    terminal.expect(r"ERROR \[57014\] OPERATION_CANCELED[\s\S]*sluicegate:default>")
    terminal.type("\x04")
    assert terminal.wait() == 0
