"""The servers tests start as child processes (a gateway, an object store, a directory server): the line a server
prints once it is ready, and a stop that always ends the child, even one that ignores SIGTERM.

Standard library only: tests_dbt imports it too, from its own environments (its runners put tests/ on PYTHONPATH).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import Any


def ready_match(process: subprocess.Popen[str], pattern: str, log: Path, timeout: float = 180.0,
                lines: list[str] | None = None) -> re.Match[str]:
    """The match of `pattern` in the first line of the child's stdout that has it. Fails with the end of the child's
    `log` if it exits first, or if `timeout` passes (checked between lines). `lines` collects what it read."""
    assert process.stdout is not None, "start the child with stdout=subprocess.PIPE"
    child = shlex.join(str(arg) for arg in process.args)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if lines is not None:
            lines.append(line)
        if not line:
            raise AssertionError(f"`{child}` exited before it was ready (no line matched /{pattern}/); "
                                 f"{_log_end(log)}")
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"`{child}` was not ready in {timeout:g} s (no line matched /{pattern}/); "
                         f"{_log_end(log)}")


def stop(process: subprocess.Popen[Any], timeout: float = 60.0, *, group: bool = False) -> None:
    """SIGTERM, then SIGKILL if the child has not exited within `timeout`, and reap it. `group`: signal its whole
    process group (a child started with start_new_session=True, whose own children, a JVM say, must go too)."""
    if process.poll() is None:
        _signal(process, signal.SIGTERM, group)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _signal(process, signal.SIGKILL, group)
    process.wait(timeout=timeout)


def _signal(process: subprocess.Popen[Any], signum: int, group: bool) -> None:
    try:
        if group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
    except ProcessLookupError:
        pass  # exited (a group whose leader is reaped but not yet gone) between the check and the signal


def _log_end(log: Path) -> str:
    try:
        return f"its log {log} ends with:\n{log.read_text(encoding='utf-8', errors='replace')[-3000:]}"
    except OSError:
        return f"no log at {log}"
