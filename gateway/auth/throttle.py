"""Failed logins back off, per user and per client address, so that passwords cannot be guessed at line speed.

After `max_failures` failures of one user (or `max_failures_per_address` from one address) within `failure_window`
seconds, that user (or address) is locked out for `lockout_initial` seconds, doubling with each further lockout up
to `lockout_max`. While locked, attempts are refused without looking at the password and do not count as failures
(so they cannot prolong the lock). A successful login clears its user's failures; an address's failures are not
cleared by one good account, or a single valid login would reset a guessing run from that address.

The throttle also counts what it saw since the gateway started (failures, lockouts by user and by address, attempts
refused while locked), for /metrics to read when scraped: plain integers under the lock it already holds.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from sluicegate.gateway.config import ThrottleSettings
from sluicegate.gateway.errors import AuthenticationError

log = logging.getLogger(__name__)

MAX_TRACKED = 10_000  # keys kept at most; idle ones are dropped first (a flood of made-up user names stays bounded)


@dataclass
class _Record:
    failures: deque[float] = field(default_factory=deque)
    locked_until: float = 0.0
    lockouts: int = 0
    last_seen: float = 0.0


class LoginThrottle:
    def __init__(self, settings: ThrottleSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self._settings = settings
        self._clock = clock
        self._records: dict[tuple[str, str], _Record] = {}
        self._lock = threading.Lock()
        self.failures_total = 0                                 # failed logins counted (not those refused locked)
        self.lockouts_total = {"user": 0, "address": 0}         # lockouts begun, by what was locked
        self.refused_total = 0                                  # attempts refused because a lockout was running

    def _keys(self, user: str, address: str) -> list[tuple[tuple[str, str], int]]:
        # Directories match names regardless of case and surrounding spaces: "Alice" must not get fresh tries.
        return [(("user", user.strip().casefold()), self._settings.max_failures),
                (("address", address), self._settings.max_failures_per_address)]

    def check(self, user: str, address: str) -> None:
        """Raise AuthenticationError while `user` or `address` is locked out."""
        now = self._clock()
        with self._lock:
            for key, _limit in self._keys(user, address):
                record = self._records.get(key)
                if record is not None and record.locked_until > now:
                    self.refused_total += 1
                    wait = math.ceil(record.locked_until - now)
                    what = f"user '{user}'" if key[0] == "user" else f"address {address}"
                    raise AuthenticationError(
                        f"too many failed logins for {what}, try again in {wait} s",
                        error_class="TOO_MANY_FAILED_LOGINS",
                        hint="wait, then log in with the right password; each further lockout lasts twice as long")

    def failed(self, user: str, address: str) -> None:
        now = self._clock()
        with self._lock:
            self._prune(now)
            self.failures_total += 1
            for key, limit in self._keys(user, address):
                record = self._records.setdefault(key, _Record())
                record.last_seen = now
                record.failures.append(now)
                while record.failures and record.failures[0] <= now - self._settings.failure_window:
                    record.failures.popleft()
                if len(record.failures) >= limit:
                    seconds = min(self._settings.lockout_initial * 2 ** record.lockouts, self._settings.lockout_max)
                    record.locked_until = now + seconds
                    record.lockouts += 1
                    self.lockouts_total[key[0]] += 1
                    record.failures.clear()
                    log.warning("%s %s locked out for %.0f s after %d failed logins (lockout %d)",
                                key[0], key[1], seconds, limit, record.lockouts)

    def succeeded(self, user: str) -> None:
        with self._lock:
            self._records.pop(("user", user.strip().casefold()), None)

    def _prune(self, now: float) -> None:
        if len(self._records) < MAX_TRACKED:
            return
        horizon = now - max(self._settings.failure_window, self._settings.lockout_max)
        for key in [k for k, r in self._records.items() if r.locked_until <= now and r.last_seen < horizon]:
            del self._records[key]
        if len(self._records) >= MAX_TRACKED:  # still full of recent records: forget the oldest unlocked ones
            idle = sorted((r.last_seen, k) for k, r in self._records.items() if r.locked_until <= now)
            for _, key in idle[: len(self._records) - MAX_TRACKED // 2]:
                del self._records[key]
