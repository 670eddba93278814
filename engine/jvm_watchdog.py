"""Notice when Spark's JVM dies, so the gateway can say so and exit instead of living on as a zombie that answers
every login with a connection error (review row 6).

Once a second: the JVM process PySpark started (`proc.poll()`), or, when this Python did not start it, a trivial
Py4J call. Three failed calls in a row, or an exited process, count as death; `on_death(reason)` is called once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

FAILED_PINGS = 3


class JvmWatchdog:
    def __init__(self, spark: Any, on_death: Callable[[str], None], interval: float = 1.0) -> None:
        self._spark = spark
        self._on_death = on_death
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="sluicegate-jvm-watchdog", daemon=True)
        self._failed_pings = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _death(self) -> str | None:
        """Why the JVM counts as dead, or None while it lives."""
        gateway = getattr(self._spark.sparkContext, "_gateway", None)
        proc = getattr(gateway, "proc", None)
        if proc is not None:
            code = proc.poll()
            return None if code is None else f"Spark's JVM (pid {proc.pid}) exited with status {code}"
        try:
            self._spark.sparkContext._jvm.java.lang.System.currentTimeMillis()
            self._failed_pings = 0
            return None
        except Exception as exc:  # noqa: BLE001 - any failure of a trivial call is what this counts
            self._failed_pings += 1
            if self._failed_pings >= FAILED_PINGS:
                return f"Spark's JVM does not answer: {type(exc).__name__}: {exc}"
            return None

    def _watch(self) -> None:
        while not self._stop.wait(self._interval):
            reason = self._death()
            if reason is not None:
                log.error("%s; the gateway cannot serve without it and stops", reason)
                self._on_death(reason)
                return
