"""`sluicegate serve` as a process of its own (for tests that kill it, restart it, or read its log)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path


class GatewayProcess:
    """`sluicegate serve` in a process group of its own, on a free port, over one warehouse."""

    def __init__(self, warehouse: Path, conf: Path, log: Path) -> None:
        self.warehouse, self.conf, self.log = warehouse, conf, log
        self.process: subprocess.Popen[str] | None = None
        self.port = 0
        self.banner: list[str] = []   # what the last start printed before its ready line

    def start(self, env: dict[str, str] | None = None) -> None:
        """`env`: variables added to this process's environment (a crash test arms SLUICEGATE_FAULT with it)."""
        output = open(self.log, "a", encoding="utf-8")  # noqa: SIM115 - kept open by the child
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gateway", "serve", "--port", "0", "--warehouse", str(self.warehouse),
             "--conf", str(self.conf)],
            stdout=subprocess.PIPE, stderr=output, text=True, start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        deadline = time.monotonic() + 180
        assert self.process.stdout is not None
        self.banner = []
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            self.banner.append(line)
            if not line:
                raise AssertionError(f"the gateway exited before it was ready; see {self.log}")
            found = re.search(r"ready on [\d.]+:(\d+)", line)
            if found:
                self.port = int(found.group(1))
                return
        raise AssertionError("the gateway did not print its ready line in 180 s")

    def kill(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
