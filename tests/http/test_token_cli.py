"""`sluicegate token create | list | revoke` as a user runs it: the token printed once on stdout, the file 0600,
list without secrets, revoke by id or by user, and in password mode only users of the password file get tokens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sluicegate.gateway.auth.providers import set_password
from sluicegate.gateway.auth.tokens import TokenAuthentication

SLUICEGATE = str(Path(sys.executable).parent / "sluicegate")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SLUICEGATE, "token", *args], check=False, capture_output=True, text=True, timeout=120)


def test_create_list_revoke(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    created = run("create", "alice", "--comment", "dbt prod", "--file", str(tokens))
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("sgt_") and "shown only now" in created.stderr
    assert tokens.stat().st_mode & 0o777 == 0o600 and token not in tokens.read_text()
    assert TokenAuthentication(tokens).authenticate(token) == "alice"
    assert run("create", "bob", "--file", str(tokens)).returncode == 0

    listed = run("list", "--file", str(tokens))
    assert listed.returncode == 0 and token not in listed.stdout
    header, *lines = listed.stdout.splitlines()
    assert header.split() == ["ID", "USER", "CREATED", "COMMENT"]
    rows = [line.split(None, 4) for line in lines]   # id, user, date, time, comment (which may hold spaces)
    assert [(r[1], r[4] if len(r) > 4 else "") for r in rows] == [("alice", "dbt prod"), ("bob", "")]
    assert all(line.index(r[1]) == header.index("USER") for line, r in zip(lines, rows, strict=True))  # aligned
    alice_id = rows[0][0]
    assert token.startswith(f"sgt_{alice_id}_")

    assert run("revoke", alice_id, "--file", str(tokens)).stdout.strip() == f"revoked token {alice_id} of alice"
    again = run("revoke", alice_id, "--file", str(tokens))
    assert again.returncode == 1 and "no such token" in again.stderr
    assert run("revoke", "--user", "bob", "--file", str(tokens)).returncode == 0
    empty = run("list", "--file", str(tokens))
    assert empty.stdout.split() == ["ID", "USER", "CREATED", "COMMENT"] and "no tokens in" in empty.stderr
    assert run("revoke", "--file", str(tokens)).returncode == 2


def test_password_mode_gives_tokens_only_to_known_users(tmp_path: Path) -> None:
    passwords = tmp_path / "passwd"
    set_password(passwords, "alice", "s3cret")
    conf = tmp_path / "sluicegate.toml"
    conf.write_text(f'[auth]\nmode = "password"\npassword_file = "{passwords}"\ntoken_file = "{tmp_path / "t"}"\n')
    refused = run("create", "mallory", "--conf", str(conf))
    assert refused.returncode == 1 and "sluicegate passwd mallory" in refused.stderr
    assert not (tmp_path / "t").exists()
    assert run("create", "alice", "--conf", str(conf)).returncode == 0
    assert (tmp_path / "t").stat().st_mode & 0o777 == 0o600
