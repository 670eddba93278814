"""Access tokens for the HTTP transport (`Authorization: Bearer <token>`, or Basic `token:<token>`).

Tokens are managed like passwords: `sluicegate token create USER` prints a new one once, and only its salted PBKDF2
hash is kept, in a file of mode 0600 next to the password file (`auth.token_file`), written atomically and re-read
when it changes, so a revoke takes effect at the next request. A token reads `sgt_<id>_<secret>`: the id finds its
line (one hash to check, not one per token) and names it in `token list` and `token revoke` without revealing it.

Each line is `id:user:created:pbkdf2_sha256:iterations:salt_hex:hash_hex:comment` (created in epoch seconds; the
comment is last, so it may hold ':').
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from sluicegate.gateway.auth.providers import (
    DUMMY_HASH,
    WatchedSecretFile,
    check_file_mode,
    hash_password,
    verify_password,
)
from sluicegate.gateway.errors import AuthenticationError, ConfigError

log = logging.getLogger(__name__)

PREFIX = "sgt_"
_TOKEN = re.compile(r"sgt_([0-9a-f]{12})_([A-Za-z0-9_-]{20,})")
_ID = re.compile(r"[0-9a-f]{12}")


@dataclass(frozen=True)
class TokenRecord:
    token_id: str
    user: str
    created: int
    stored_hash: str
    comment: str = ""


def looks_like_token(text: str) -> bool:
    return text.startswith(PREFIX)


def token_id_of(text: str) -> str | None:
    """The id part of a full token, or the text itself when it is an id; None when it is neither."""
    match = _TOKEN.fullmatch(text)
    if match:
        return match.group(1)
    return text if _ID.fullmatch(text) else None


def read_token_file(path: Path) -> dict[str, TokenRecord]:
    records: dict[str, TokenRecord] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(":", 7)
        if len(parts) != 8 or not _ID.fullmatch(parts[0]) or not parts[1] or not parts[2].isdigit():
            raise ConfigError(f"{path}:{number}: expected `id:user:created:pbkdf2_sha256:iterations:salt:hash:comment`")
        token_id, user, created, *hashed, comment = parts
        records[token_id] = TokenRecord(token_id, user, int(created), ":".join(hashed), comment)
    return records


def _write_token_file(path: Path, records: dict[str, TokenRecord]) -> None:
    """Atomically (a temporary file, then rename), readable by its owner only, as the password file."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write("# sluicegate access tokens: written by `sluicegate token`; only hashes are kept\n")
        for r in sorted(records.values(), key=lambda r: (r.user, r.created, r.token_id)):
            out.write(f"{r.token_id}:{r.user}:{r.created}:{r.stored_hash}:{r.comment}\n")
    os.replace(tmp, path)


def _existing(path: Path) -> dict[str, TokenRecord]:
    if not path.exists():
        return {}
    check_file_mode(path)
    return read_token_file(path)


def create_token(path: Path, user: str, comment: str = "") -> tuple[TokenRecord, str]:
    """Add a new token of `user`; returns its record and the token text (shown once, never stored)."""
    if not user or ":" in user or any(ch.isspace() for ch in user):
        raise ConfigError(f"invalid user name {user!r}: use letters, digits and punctuation other than ':'")
    if "\n" in comment or "\r" in comment:
        raise ConfigError("a token's comment must fit on one line")
    records = _existing(path)
    token_id = secrets.token_hex(6)
    while token_id in records:
        token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    record = TokenRecord(token_id, user, int(time.time()), hash_password(secret), comment)
    records[token_id] = record
    _write_token_file(path, records)
    return record, f"{PREFIX}{token_id}_{secret}"


def list_tokens(path: Path, user: str | None = None) -> list[TokenRecord]:
    records = _existing(path).values()
    return sorted((r for r in records if user is None or r.user == user), key=lambda r: (r.user, r.created))


def revoke_tokens(path: Path, token_id: str | None = None, user: str | None = None) -> list[TokenRecord]:
    """Remove one token (by id, or by the token itself) or every token of `user`; returns what was removed."""
    records = _existing(path)
    if token_id is not None:
        key = token_id_of(token_id)
        removed = [records.pop(key)] if key is not None and key in records else []
    else:
        removed = [records.pop(r.token_id) for r in list(records.values()) if r.user == user]
    if removed:
        _write_token_file(path, records)
    return removed


class TokenAuthentication:
    """Checks tokens against the file, re-read when it changes. A missing file holds no tokens (every token is
    refused); a file others can read refuses every token until it is fixed, as the password file does."""

    def __init__(self, path: Path) -> None:
        self._file: WatchedSecretFile[dict[str, TokenRecord]] = WatchedSecretFile(path, read_token_file, "token",
                                                                                   missing={})

    @property
    def path(self) -> Path:
        return self._file.path

    def _current(self) -> dict[str, TokenRecord]:
        return self._file.current()

    def authenticate(self, token: str) -> str:
        """The user the token belongs to; AuthenticationError for a malformed, unknown or revoked token. Every
        refusal costs one PBKDF2, so timing does not tell a known id from an unknown one."""
        match = _TOKEN.fullmatch(token)
        record = self._current().get(match.group(1)) if match else None
        matches = verify_password(match.group(2) if match else "", record.stored_hash if record else DUMMY_HASH)
        if record is None or not matches:
            raise AuthenticationError(
                "authentication failed: the access token is invalid or was revoked",
                hint="create a new token with `sluicegate token create USER`, or check the one you sent")
        return record.user
