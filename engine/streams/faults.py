"""Crash points for crash tests only: the process dies (os._exit(137), as a SIGKILL would leave it) at one named
step of a multi-step change, so a test can prove that a restart completes or undoes it exactly, at every boundary.

TEST-ONLY. A point is armed solely by the environment variable SLUICEGATE_FAULT of the gateway process, read once
when this module is imported; nothing a client sends can set it (SET changes Spark or session variables, never the
process environment, and no statement reaches os.environ). Unset, `crash_point` does nothing.

Points: full_refresh.after_stop, full_refresh.after_row, full_refresh.after_checkpoint, full_refresh.after_empty
(executor/streaming_tables.py, the steps of REFRESH ... FULL).
"""

from __future__ import annotations

import logging
import os
import sys

FAULT_VARIABLE = "SLUICEGATE_FAULT"
_ARMED = os.environ.get(FAULT_VARIABLE) or None

log = logging.getLogger(__name__)


def crash_point(name: str) -> None:
    """Die here if this point is the armed one (a crash test); otherwise nothing."""
    if _ARMED is not None and name == _ARMED:
        log.critical("crash point %s reached: exiting with 137 (%s is set: a crash test)", name, FAULT_VARIABLE)
        sys.stderr.flush()
        os._exit(137)
