"""The console's logins: a random token in an HttpOnly, SameSite=Strict cookie, mapped on the server to the user
and a per-login CSRF token that every form posting an action carries. Only a keyed digest of the cookie is kept
(a memory dump names no live cookie); a login ends at logout, after `idle` seconds without a request, or after
`MAX_AGE` seconds whatever its use, and all end when the gateway stops (they live in memory only).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

COOKIE = "sluicegate_console"
MAX_AGE = 12 * 3600.0        # a login lasts at most this long, however busy
MAX_LOGINS = 10_000          # beyond this the oldest logins are dropped (a flood of logins cannot fill memory)


@dataclass
class Login:
    user: str
    csrf: str
    created: float
    last_seen: float


class Logins:
    def __init__(self, idle: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._idle = idle
        self._clock = clock
        self._key = secrets.token_bytes(32)
        self._logins: dict[bytes, Login] = {}
        self._lock = threading.Lock()

    def _digest(self, token: str) -> bytes:
        return hmac.new(self._key, token.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()

    def open(self, user: str) -> tuple[str, Login]:
        """A new login of `user`: the cookie's token (returned once, never stored) and the login."""
        token = secrets.token_urlsafe(32)
        now = self._clock()
        login = Login(user, secrets.token_urlsafe(32), now, now)
        with self._lock:
            self._expire(now)
            while len(self._logins) >= MAX_LOGINS:
                del self._logins[next(iter(self._logins))]
            self._logins[self._digest(token)] = login
        return token, login

    def get(self, token: str | None) -> Login | None:
        """The live login of a cookie's token, its idle clock restarted; None for none, an unknown or expired one."""
        if not token:
            return None
        now = self._clock()
        digest = self._digest(token)
        with self._lock:
            login = self._logins.get(digest)
            if login is None:
                return None
            if self._expired(login, now):
                del self._logins[digest]
                return None
            login.last_seen = now
            return login

    def close(self, token: str | None) -> None:
        if token:
            with self._lock:
                self._logins.pop(self._digest(token), None)

    def count(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return len(self._logins)

    def _expired(self, login: Login, now: float) -> bool:
        return now - login.last_seen > self._idle or now - login.created > MAX_AGE

    def _expire(self, now: float) -> None:
        """Under self._lock."""
        for digest in [d for d, login in self._logins.items() if self._expired(login, now)]:
            del self._logins[digest]


def csrf_matches(login: Login, sent: str | None) -> bool:
    return bool(sent) and hmac.compare_digest(login.csrf.encode(), (sent or "").encode("utf-8", "replace"))
