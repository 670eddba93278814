"""What an operator sees on the console of `sluicegate serve` (a process of its own, as `./run serve` starts it):
no JVM start-up chatter at INFO (Spark's warnings go to <warehouse>/_logs/spark.log), and a stop by SIGTERM to the
whole process group (Ctrl-C in a terminal, `timeout`, a supervisor) that ends cleanly with no py4j traceback.
`--log-level` after the subcommand: tests/test_cli_log_level.py."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from gateway_process import GatewayProcess
from pyhive import hive

# What the JVM and Spark printed before the ready line (newcomer report, 1.1): none of it is actionable.
START_UP_NOISE = ("Using incubator modules", "log4j", "setLogLevel", "NativeCodeLoader", "Setting default log level")


def test_the_console_has_no_jvm_chatter_and_a_group_sigterm_stops_cleanly(tmp_path: Path) -> None:
    gateway = GatewayProcess(tmp_path / "warehouse", None, tmp_path / "gateway.log")
    gateway.start()
    try:
        connection = hive.connect("127.0.0.1", gateway.port, username="tester")
        cursor = connection.cursor()
        cursor.execute("SELECT sum(id) FROM range(1000)")
        assert cursor.fetchall() == [(499500,)]
        connection.close()
        started = (tmp_path / "gateway.log").read_text(encoding="utf-8", errors="replace")
        assert "Spark 4" in started and "started (master" in started, started   # the log does work
        for noise in START_UP_NOISE:
            assert noise not in started and not any(noise in line for line in gateway.banner), (noise, started)
        spark_log = tmp_path / "warehouse" / "_logs" / "spark.log"
        assert str(spark_log) in started        # the log says where Spark's own warnings went
        assert "NativeCodeLoader" in spark_log.read_text(encoding="utf-8")   # kept, in the file
        assert gateway.process is not None
        os.killpg(gateway.process.pid, signal.SIGTERM)     # the whole group: the JVM gets it too
        remaining, _ = gateway.process.communicate(timeout=60)
        assert gateway.process.returncode == 0, remaining
        assert "sluicegate stopped" in remaining
    finally:
        gateway.stop()
    log = (tmp_path / "gateway.log").read_text(encoding="utf-8", errors="replace")
    assert "received SIGTERM, stopping" in log
    stopping = log.split("received SIGTERM")[1]
    assert "Traceback" not in stopping and "Py4J" not in stopping and "py4j" not in stopping, stopping
    assert "ERROR" not in stopping, stopping
