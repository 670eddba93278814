"""Password logins: unknown users cost as much as known ones, failed logins lock the user and the address out for a
growing time, and the password file must be private to its owner (and lives outside the warehouse by default)."""

from __future__ import annotations

import logging
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from security_helpers import sasl_login

from sluicegate.gateway.auth.providers import PasswordFileAuthentication, set_password
from sluicegate.gateway.config import load_config
from sluicegate.gateway.errors import AuthenticationError, ConfigError

SLUICEGATE = str(Path(sys.executable).parent / "sluicegate")
COMPLETE, ERROR = 5, 4


@pytest.fixture(scope="module")
def password_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("auth") / "passwd"
    set_password(path, "alice", "s3cret")
    return path


def _gateway(start_gateway: Any, password_file: Path, **auth: Any) -> Any:
    return start_gateway({"auth": {"mode": "password", "password_file": str(password_file), **auth},
                          "server": {"allow_plaintext": True}})


def test_unknown_users_cost_as_much_as_wrong_passwords(password_file: Path) -> None:
    authenticator = PasswordFileAuthentication(password_file)

    def cost(user: str) -> float:
        start = time.perf_counter()
        with pytest.raises(AuthenticationError):
            authenticator.authenticate(user, "wrong")
        return time.perf_counter() - start

    cost("alice"), cost("nobody")  # warm the file cache
    known = statistics.median(cost("alice") for _ in range(7))
    unknown = statistics.median(cost(f"nobody{i}") for i in range(7))
    assert unknown >= 0.5 * known, f"unknown user {unknown * 1000:.1f} ms vs wrong password {known * 1000:.1f} ms"


def test_a_hundred_wrong_passwords_lock_the_user_out_until_the_lock_expires(
        start_gateway: Any, password_file: Path, caplog: pytest.LogCaptureFixture) -> None:
    gateway = _gateway(start_gateway, password_file, max_failures=5, max_failures_per_address=1000,
                       lockout_initial=4.0, lockout_max=8.0)
    caplog.set_level(logging.WARNING, logger="sluicegate.gateway.auth.throttle")
    answers = [sasl_login(gateway.port, "alice", f"guess{i}") for i in range(100)]
    assert all(status == ERROR for status, _ in answers)
    assert answers[0][1].startswith("authentication failed for user 'alice'")
    assert any(message.startswith("too many failed logins for user 'alice', try again in ") for _, message in answers)
    status, message = sasl_login(gateway.port, "alice", "s3cret")
    assert status == ERROR and message.startswith("too many failed logins for user 'alice', try again in "), message
    assert any("locked out" in record.getMessage() for record in caplog.records)
    # other users are not locked out by alice's lock
    assert sasl_login(gateway.port, "bob", "x")[1].startswith("authentication failed for user 'bob'")
    deadline = time.monotonic() + 30
    while (status := sasl_login(gateway.port, "alice", "s3cret")[0]) != COMPLETE and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status == COMPLETE
    # a success clears alice's failures: four more wrong ones do not lock her out again
    for i in range(4):
        assert sasl_login(gateway.port, "alice", f"again{i}")[1].startswith("authentication failed")
    assert sasl_login(gateway.port, "alice", "s3cret") == (COMPLETE, "")


def test_failures_from_one_address_lock_that_address_out(start_gateway: Any, password_file: Path) -> None:
    gateway = _gateway(start_gateway, password_file, max_failures=1000, max_failures_per_address=10,
                       lockout_initial=2.0, lockout_max=2.0)
    for i in range(10):
        assert sasl_login(gateway.port, f"user{i}", "guess")[0] == ERROR
    status, message = sasl_login(gateway.port, "alice", "s3cret")
    assert status == ERROR and message.startswith("too many failed logins for address 127.0.0.1"), message
    deadline = time.monotonic() + 20
    while (status := sasl_login(gateway.port, "alice", "s3cret")[0]) != COMPLETE and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status == COMPLETE


def test_a_password_file_others_can_read_is_refused(start_gateway: Any, tmp_path: Path) -> None:
    path = tmp_path / "passwd"
    set_password(path, "alice", "s3cret")
    assert path.stat().st_mode & 0o777 == 0o600
    gateway = _gateway(start_gateway, path)
    assert sasl_login(gateway.port, "alice", "s3cret") == (COMPLETE, "")
    path.chmod(0o644)
    try:
        status, message = sasl_login(gateway.port, "alice", "s3cret")
        assert status == ERROR and "password file is missing or readable by others" in message
        with pytest.raises(ConfigError, match=r"mode 0644.*chmod 600"):
            PasswordFileAuthentication(path)
    finally:
        path.chmod(0o600)
    assert sasl_login(gateway.port, "alice", "s3cret") == (COMPLETE, "")


def test_the_password_file_defaults_outside_the_warehouse_and_passwd_writes_it(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"))
    done = subprocess.run([SLUICEGATE, "passwd", "carol", "--password-stdin", "--warehouse", str(tmp_path / "wh")],
                          input="pa55word\n", capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "config" / "sluicegate" / "passwd"
    assert f"set in {path}" in done.stdout
    assert path.stat().st_mode & 0o777 == 0o600
    PasswordFileAuthentication(path).authenticate("carol", "pa55word")
    config = load_config(warehouse=tmp_path / "wh")
    assert not str(config.auth.password_file).startswith(str(config.warehouse))
