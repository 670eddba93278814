"""When Spark's JVM dies, `sluicegate serve` says so and exits with status 3 (a supervisor restarts it) instead of
living on as a zombie that fails every login (review row 6)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from gateway_process import GatewayProcess


def _java_children(pid: int) -> list[int]:
    """Java processes started by `pid` (PySpark's launcher execs java in place of spark-submit)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            comm = stat[stat.index("(") + 1: stat.rindex(")")]
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            continue
        if ppid == pid and comm == "java":
            found.append(int(entry.name))
    return found


@pytest.mark.timeout(300)
def test_the_gateway_exits_3_when_its_jvm_is_killed(tmp_path: Path) -> None:
    log = tmp_path / "gateway.log"
    gateway = GatewayProcess(tmp_path / "wh", None, log)
    try:
        gateway.start()
        process = gateway.process
        assert process is not None and process.stdout is not None
        javas = _java_children(process.pid)
        assert len(javas) == 1, f"expected one java child of the gateway, found {javas}"
        os.kill(javas[0], signal.SIGKILL)
        code = process.wait(timeout=30)
        rest = process.stdout.read()
        assert code == 3, log.read_text()[-3000:]
        stderr = log.read_text()
        assert f"Spark's JVM (pid {javas[0]}) exited with status -9" in stderr
        assert "exit status 3 so that a supervisor restarts it" in stderr
        assert "sluicegate stopped: Spark's JVM died" in rest
    finally:
        gateway.stop()
