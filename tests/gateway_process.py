"""`sluicegate serve` as a process of its own (for tests that kill it, restart it, or read its log)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import child_processes


class GatewayProcess:
    """`sluicegate serve` in a process group of its own, on a free port, over one warehouse (with the settings of
    `conf`, if given)."""

    def __init__(self, warehouse: Path, conf: Path | None, log: Path) -> None:
        self.warehouse, self.conf, self.log = warehouse, conf, log
        self.process: subprocess.Popen[str] | None = None
        self.port = 0
        self.banner: list[str] = []   # what the last start printed before its ready line

    def start(self, env: dict[str, str] | None = None) -> None:
        """`env`: variables added to this process's environment (a crash test arms SLUICEGATE_FAULT with it)."""
        output = open(self.log, "a", encoding="utf-8")  # noqa: SIM115 - kept open by the child
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sluicegate.gateway", "serve", "--port", "0", "--warehouse", str(self.warehouse),
             *(["--conf", str(self.conf)] if self.conf is not None else [])],
            stdout=subprocess.PIPE, stderr=output, text=True, start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        self.banner = []
        found = child_processes.ready_match(self.process, r"ready on [\d.]+:(\d+)", self.log, lines=self.banner)
        self.port = int(found.group(1))

    def kill(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)

    def stop(self) -> None:
        if self.process is not None:
            child_processes.stop(self.process, 60, group=True)


def restart_conf(folder: Path) -> Path:
    """`folder`/sluicegate.toml for a gateway that tests kill and start again: streams trigger every 0.3 s and retry
    after 0.5 s, the driver has 1 GB, files under `folder` may be read, and the compactor merges every 2 small files
    as soon as a table commits, never resting (so kills land while merges race the streams)."""
    conf = folder / "sluicegate.toml"
    conf.write_text('[streams]\ntrigger_interval = 0.3\nretry_initial = 0.5\n\n[spark]\ndriver_memory = "1g"\n\n'
                    '[compaction]\nfan_in = 2\ndelay = 0.0\ncpu_share = 1.0\n\n'
                    f'[security]\nallowed_paths = ["{folder}"]\n')
    return conf
