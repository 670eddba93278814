"""Authenticators: `none` accepts any user; `password` checks salted PBKDF2 hashes kept in a file.

The file holds one `user:pbkdf2_sha256:iterations:salt_hex:hash_hex` line per user and is written by
`sluicegate passwd USER`. It is re-read when it changes, so adding a user needs no restart.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from pathlib import Path
from typing import Protocol

from gateway.errors import AuthenticationError, ConfigError

ITERATIONS = 200_000
SCHEME = "pbkdf2_sha256"


class Authenticator(Protocol):
    def authenticate(self, user: str, password: str | None) -> None:
        """Return if `user` may connect; raise AuthenticationError otherwise."""


class NoAuthentication:
    def authenticate(self, user: str, password: str | None) -> None:
        if not user:
            raise AuthenticationError("a user name is required")


def hash_password(password: str, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    return f"{SCHEME}:{iterations}:{salt.hex()}:{digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, iterations, salt_hex, digest_hex = stored.split(":")
    except ValueError:
        return False
    if scheme != SCHEME:
        return False
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), bytes.fromhex(salt_hex), int(iterations))
    return hmac.compare_digest(digest.hex(), digest_hex)


def read_password_file(path: Path) -> dict[str, str]:
    users: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, stored = line.partition(":")
        if not sep or not user:
            raise ConfigError(f"{path}:{number}: expected `user:{SCHEME}:iterations:salt:hash`")
        users[user] = stored
    return users


def set_password(path: Path, user: str, password: str) -> None:
    """Add or replace `user` in the file, atomically (write a temporary file, then rename), readable by owner only."""
    if not user or ":" in user or any(ch.isspace() for ch in user):
        raise ConfigError(f"invalid user name {user!r}: use letters, digits and punctuation other than ':'")
    users = read_password_file(path) if path.exists() else {}
    users[user] = hash_password(password)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write("# sluicegate users: written by `sluicegate passwd`\n")
        for name, stored in sorted(users.items()):
            out.write(f"{name}:{stored}\n")
    os.replace(tmp, path)


class PasswordFileAuthentication:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._mtime: float | None = None
        self._users: dict[str, str] = {}
        if not path.exists():
            raise ConfigError(
                f"auth.mode is 'password' but the password file {path} does not exist; "
                "create a user with `sluicegate passwd USER`"
            )

    def _current_users(self) -> dict[str, str]:
        with self._lock:
            mtime = self._path.stat().st_mtime
            if mtime != self._mtime:
                self._users = read_password_file(self._path)
                self._mtime = mtime
            return self._users

    def authenticate(self, user: str, password: str | None) -> None:
        stored = self._current_users().get(user)
        # The same message for an unknown user and a wrong password: do not tell which user names exist.
        if stored is None or password is None or not verify_password(password, stored):
            raise AuthenticationError(
                f"authentication failed for user '{user}': wrong user name or password",
                hint="check the password, or ask the administrator to set it with `sluicegate passwd USER`",
            )


def make_authenticator(mode: str, password_file: Path) -> Authenticator:
    if mode == "password":
        return PasswordFileAuthentication(password_file)
    return NoAuthentication()
