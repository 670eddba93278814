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
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from gateway.errors import AuthenticationError, ConfigError

if TYPE_CHECKING:
    from gateway.config import LdapSettings

log = logging.getLogger(__name__)

ITERATIONS = 200_000
SCHEME = "pbkdf2_sha256"
# Checked against when the user is unknown, so that an unknown name costs the same PBKDF2 as a wrong password and
# timing does not tell which user names exist. A fixed salt is fine: nothing can ever match it on purpose.
_DUMMY_HASH = f"{SCHEME}:{ITERATIONS}:{'00' * 16}:{'00' * 32}"


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
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # a leftover temporary file keeps its old mode through O_CREAT
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
        check_file_mode(path)

    def _current_users(self) -> dict[str, str]:
        with self._lock:
            try:
                check_file_mode(self._path)
                mtime = self._path.stat().st_mtime
                if mtime != self._mtime:
                    self._users = read_password_file(self._path)
                    self._mtime = mtime
            except (ConfigError, OSError) as exc:
                message = exc.message if isinstance(exc, ConfigError) else str(exc)
                log.error("refusing every login until the password file is fixed: %s", message)
                raise AuthenticationError(
                    "the server cannot check passwords: its password file is missing or readable by others",
                    error_class="AUTHENTICATION_UNAVAILABLE",
                    hint="ask the administrator to look at the gateway's log") from exc
            return self._users

    def authenticate(self, user: str, password: str | None) -> None:
        stored = self._current_users().get(user)
        # Unknown users cost one PBKDF2 as well, and get the same message as a wrong password: neither timing nor
        # text tells which user names exist.
        matches = verify_password(password or "", stored if stored is not None else _DUMMY_HASH)
        if stored is None or not password or not matches:
            raise AuthenticationError(
                f"authentication failed for user '{user}': wrong user name or password",
                hint="check the password, or ask the administrator to set it with `sluicegate passwd USER`",
            )


def make_authenticator(mode: str, password_file: Path, ldap: LdapSettings | None = None) -> Authenticator:
    if mode == "password":
        return PasswordFileAuthentication(password_file)
    if mode == "ldap":
        from gateway.auth.ldap import LdapAuthentication

        if ldap is None:
            raise ConfigError("auth.mode is 'ldap' but auth.ldap_url and auth.ldap_user_dn are not set")
        return LdapAuthentication(ldap)
    return NoAuthentication()
