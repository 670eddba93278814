"""What Spark's JVM may print to the gateway's console, and where the rest of its log goes.

At start-up the JVM prints lines an operator cannot act on: `WARNING: Using incubator modules` (Spark's launcher
always adds `--add-modules=jdk.incubator.vector`; the JDK prints that warning itself, before any logging exists),
`Using Spark's default log4j profile`, `Setting default log level`, `To adjust logging level use sc.setLogLevel`
(there is no `sc` for a gateway's user), `WARN NativeCodeLoader`. Two measures keep them out:

- log4j2's configuration is ours (`-Dlog4j2.configurationFile`): every WARN and ERROR of Spark goes to
  `<warehouse>/_logs/spark.log`, and only ERROR (WARN when the gateway logs at DEBUG) to the console. With a
  configuration given, Spark prints none of its "default profile" lines.
- the JVM's standard error passes through a relay thread that drops the JDK's own start-up notices (a fixed list)
  and copies every other byte to the gateway's standard error, so nothing else is lost.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

LOG_FOLDER = "_logs"
SPARK_LOG = "spark.log"
# Lines the JDK writes to standard error by itself (no logging framework involved): dropped by the relay.
JDK_NOTICES = (re.compile(rb"^WARNING: Using incubator modules: "),)

_PROPERTIES = """\
# Written by sluicegate at every start (engine/jvm_logging.py): edits here are overwritten.
status = error
name = sluicegate

appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yyyy-MM-dd HH:mm:ss,SSS}} %p jvm.%c{{1}}: %m%n%ex
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = {console_level}

appender.file.type = RollingFile
appender.file.name = file
appender.file.fileName = {log_file}
appender.file.filePattern = {log_file}.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{yyyy-MM-dd HH:mm:ss,SSS}} %p %c: %m%n%ex
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 10MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 3

rootLogger.level = warn
rootLogger.appenderRef.console.ref = console
rootLogger.appenderRef.file.ref = file
"""


def spark_log_file(warehouse: Path) -> Path:
    return warehouse / LOG_FOLDER / SPARK_LOG


def console_level() -> str:
    """ERROR at the gateway's INFO and above; WARN once the gateway logs at DEBUG (Spark's warnings on the console
    while chasing a problem)."""
    return "WARN" if logging.getLogger("sluicegate").isEnabledFor(logging.DEBUG) else "ERROR"


def write_log4j_config(warehouse: Path) -> Path:
    """The log4j2 properties for this start, under `<warehouse>/_logs` (next to the log file they name)."""
    folder = warehouse / LOG_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "log4j2.properties"
    path.write_text(_PROPERTIES.format(console_level=console_level(), log_file=spark_log_file(warehouse)),
                    encoding="utf-8")
    return path


def java_options(warehouse: Path) -> str:
    """The driver's extra Java options that make log4j2 read our configuration."""
    return f"-Dlog4j2.configurationFile={write_log4j_config(warehouse)}"


def _relay(source: int, target: int) -> None:
    """Copy lines from `source` to `target` until the writers are gone, dropping the JDK's start-up notices."""
    with os.fdopen(source, "rb", buffering=0) as reader:
        pending = b""
        while True:
            try:
                chunk = reader.read(65536)
            except OSError:
                return
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            kept = b"".join(line + b"\n" for line in lines if not any(p.match(line) for p in JDK_NOTICES))
            if kept:
                with contextlib.suppress(OSError):
                    os.write(target, kept)
        if pending:
            with contextlib.suppress(OSError):
                os.write(target, pending)


@contextlib.contextmanager
def relayed_stderr() -> Iterator[None]:
    """While the JVM is launched inside this block, it (and every process it starts: Python workers) inherits a
    pipe as standard error instead of the gateway's; the relay thread copies it to the gateway's standard error
    without the JDK's start-up notices. The gateway's own standard error is back when the block ends."""
    sys.stderr.flush()
    original = os.dup(2)
    read_end, write_end = os.pipe()
    os.set_inheritable(write_end, True)
    threading.Thread(target=_relay, args=(read_end, original), name="sluicegate-jvm-stderr", daemon=True).start()
    os.dup2(write_end, 2)
    os.close(write_end)           # fd 2 holds the pipe for the child; the relay ends when the JVM's copies close
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(original, 2)      # the gateway writes straight to its standard error again
