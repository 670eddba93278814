"""librdkafka's own log lines, through Python's logging and rate-limited.

Left to itself librdkafka writes `%3|...|FAIL|rdkafka#consumer-1| ... Connection refused` to standard error for
every reconnect: about 20 lines a second per client while a broker is down. Every client the Kafka source makes gets
`logger` = this module's logger instead, so its lines carry the gateway's format and level, and a filter lets
through at most BURST lines per facility (FAIL, REQTMOUT, ...) and level in each WINDOW seconds, then one line that
says how many were left out.

The clients live in Spark's Python workers as well as in the gateway's process. A worker has no logging set up: there
the logger gets a handler of its own on standard error (which is the gateway's, relayed) in the gateway's format, at
the level the gateway was started with (SLUICEGATE_LOG_LEVEL, which the command line sets for the processes it
starts). In the gateway's own process the lines go to its handlers as any other.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable

LOGGER_NAME = "sluicegate.engine.streams.kafka_client"
LEVEL_VARIABLE = "SLUICEGATE_LOG_LEVEL"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
BURST = 3          # lines of one facility and level let through in a window
WINDOW = 30.0      # seconds


class RateLimit(logging.Filter):
    """At most `burst` records per key (the message's first word, librdkafka's facility, and the level) in each
    `window` seconds; the first record after a window in which some were dropped says how many."""

    def __init__(self, burst: int = BURST, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.burst, self.window, self.clock = burst, window, clock
        self._lock = threading.Lock()
        self._windows: dict[tuple[str, int], tuple[float, int, int]] = {}   # key -> (start, let through, dropped)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        key = (message.split(" ", 1)[0], record.levelno)
        now = self.clock()
        with self._lock:
            start, passed, dropped = self._windows.get(key, (now, 0, 0))
            if now - start >= self.window:
                if dropped:
                    record.msg, record.args = (f"{message} ({dropped} more like it left out in the last "
                                               f"{now - start:.0f} s)"), None
                self._windows[key] = (now, 1, 0)
                return True
            if passed < self.burst:
                self._windows[key] = (start, passed + 1, dropped)
                return True
            self._windows[key] = (start, passed, dropped + 1)
            return False


_set_up = threading.Lock()


def kafka_logger() -> logging.Logger:
    """The logger every Kafka client of the source is given (`logger` in its configuration)."""
    logger = logging.getLogger(LOGGER_NAME)
    with _set_up:
        if not any(isinstance(f, RateLimit) for f in logger.filters):
            logger.addFilter(RateLimit())
            if not logging.getLogger().handlers and not logger.handlers:   # a Spark worker: nothing set up
                handler = logging.StreamHandler(sys.stderr)
                handler.setFormatter(logging.Formatter(LOG_FORMAT))
                logger.addHandler(handler)
                logger.propagate = False
                level = os.environ.get(LEVEL_VARIABLE, "INFO").upper()
                logger.setLevel(level if isinstance(logging.getLevelName(level), int) else logging.INFO)
    return logger
