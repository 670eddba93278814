"""The helper every test that starts a server process relies on: it finds the ready line, fails with the child's log
when the child dies first, and stops even a child that ignores SIGTERM (no JVM, a second or two)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from child_processes import ready_match, stop


def _child(code: str, new_session: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            start_new_session=new_session)


def test_the_ready_line_is_found_after_others_and_what_was_read_is_kept(tmp_path: Path) -> None:
    child = _child("import time; print('starting'); print('ready on 127.0.0.1:4242', flush=True); time.sleep(60)")
    try:
        seen: list[str] = []
        found = ready_match(child, r"ready on [\d.]+:(\d+)", tmp_path / "log", lines=seen)
        assert found.group(1) == "4242"
        assert seen == ["starting\n", "ready on 127.0.0.1:4242\n"]
    finally:
        stop(child, 5)
    assert child.returncode == -15


def test_a_child_that_exits_before_it_is_ready_fails_with_the_end_of_its_log(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    log.write_text("boot failed: the port is taken\n")
    child = _child("print('starting')")
    with pytest.raises(AssertionError, match=r"exited before it was ready(.|\n)*boot failed: the port is taken"):
        ready_match(child, r"ready on", log)
    stop(child, 5)
    assert child.returncode == 0


def test_a_child_ignoring_sigterm_is_killed_after_the_timeout_and_reaped() -> None:
    child = _child("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); "
                   "time.sleep(60)", new_session=True)
    assert child.stdout is not None and child.stdout.readline() == "up\n"
    stop(child, 0.5, group=True)
    assert child.returncode == -9
