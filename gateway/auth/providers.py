"""Authenticators: `none` accepts any user; `password` checks salted PBKDF2 hashes kept in a file; `ldap` binds to
a directory (`gateway/auth/ldap.py`).

The file holds one `user:pbkdf2_sha256:iterations:salt_hex:hash_hex` line per user and is written by
`sluicegate passwd USER`. It is re-read when it changes, so adding a user needs no restart, and its mode is checked
at every read: a file others can read leaks every hash to offline guessing, so it is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from sluicegate.gateway.errors import AuthenticationError, ConfigError

if TYPE_CHECKING:
    from sluicegate.gateway.config import LdapSettings

log = logging.getLogger(__name__)

ITERATIONS = 200_000
SCHEME = "pbkdf2_sha256"
# Checked against when the user is unknown, so that an unknown name costs the same PBKDF2 as a wrong password and
# timing does not tell which user names exist. A fixed salt is fine: nothing can ever match it on purpose.
DUMMY_HASH = f"{SCHEME}:{ITERATIONS}:{'00' * 16}:{'00' * 32}"


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


def check_file_mode(path: Path) -> None:
    """Refuse a password file that others than its owner may read or write."""
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise ConfigError(
            f"the password file {path} has mode {mode:04o}: group or others may read it, and with it every password "
            f"hash; run `chmod 600 {path}`")


def read_password_file(path: Path) -> dict[str, str]:
    users: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
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
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # a leftover temporary file keeps its old mode through O_CREAT
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write("# sluicegate users: written by `sluicegate passwd`\n")
        for name, stored in sorted(users.items()):
            out.write(f"{name}:{stored}\n")
    os.replace(tmp, path)


def file_stamp(path: Path | None) -> tuple[int, int, int] | None:
    """What tells a rewritten file from the one read before (mtime in ns, size, inode); None when there is none."""
    if path is None:
        return None
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


_Secrets = TypeVar("_Secrets")


class WatchedSecretFile(Generic[_Secrets]):
    """A file of secrets (passwords, tokens) read again whenever it changes, and refused whole (every login) while it
    is unreadable or others may read it: the password file and the token file keep to the same rules."""

    def __init__(self, path: Path, read: Callable[[Path], _Secrets], what: str,
                 missing: _Secrets | None = None) -> None:
        """`what`: "password" or "token", for the log and the error; `missing`: what a missing file holds (None: a
        missing file is refused like an unreadable one)."""
        self.path = path
        self._read = read
        self._what = what
        self._missing = missing
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._secrets: _Secrets | None = None

    def current(self) -> _Secrets:
        with self._lock:
            stamp = file_stamp(self.path)
            if stamp is None and self._missing is not None:
                self._stamp, self._secrets = None, None
                return self._missing
            try:
                check_file_mode(self.path)
                if stamp is None:
                    raise ConfigError(f"the {self._what} file {self.path} does not exist")
                if stamp != self._stamp or self._secrets is None:
                    self._secrets = self._read(self.path)
                    self._stamp = stamp
            except (ConfigError, OSError) as exc:
                message = exc.message if isinstance(exc, ConfigError) else str(exc)
                log.error("refusing every %s until the %s file is fixed: %s",
                          "login" if self._what == "password" else self._what, self._what, message)
                state = "missing" if self._missing is None else "unreadable"
                raise AuthenticationError(
                    f"the server cannot check {self._what}s: its {self._what} file is {state} or readable by others",
                    error_class="AUTHENTICATION_UNAVAILABLE",
                    hint="ask the administrator to look at the gateway's log") from exc
            return self._secrets


class PasswordFileAuthentication:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._file = WatchedSecretFile(path, read_password_file, "password")
        if not path.exists():
            raise ConfigError(
                f"auth.mode is 'password' but the password file {path} does not exist; "
                "create a user with `sluicegate passwd USER`"
            )
        check_file_mode(path)

    def _current_users(self) -> dict[str, str]:
        return self._file.current()

    def authenticate(self, user: str, password: str | None) -> None:
        stored = self._current_users().get(user)
        # Unknown users cost one PBKDF2 as well, and get the same message as a wrong password: neither timing nor
        # text tells which user names exist.
        matches = verify_password(password or "", stored if stored is not None else DUMMY_HASH)
        if stored is None or not password or not matches:
            raise AuthenticationError(
                f"authentication failed for user '{user}': wrong user name or password",
                hint="check the password, or ask the administrator to set it with `sluicegate passwd USER`",
            )


def make_authenticator(mode: str, password_file: Path, ldap: LdapSettings | None = None) -> Authenticator:
    if mode == "password":
        return PasswordFileAuthentication(password_file)
    if mode == "ldap":
        from sluicegate.gateway.auth.ldap import LdapAuthentication

        if ldap is None:
            raise ConfigError("auth.mode is 'ldap' but auth.ldap_url and auth.ldap_user_dn are not set")
        return LdapAuthentication(ldap)
    return NoAuthentication()
