"""The HTTP transport's credentials without a JVM: the token file (create, list, revoke, mode), the Authorization
header's forms, which user each one authenticates, remembered successes forgotten when a credentials file changes,
and failed tokens throttled like failed passwords."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from sluicegate.gateway.auth.providers import PasswordFileAuthentication, set_password
from sluicegate.gateway.auth.throttle import LoginThrottle
from sluicegate.gateway.auth.tokens import TokenAuthentication, create_token, list_tokens, revoke_tokens, token_id_of
from sluicegate.gateway.config import ThrottleSettings
from sluicegate.gateway.errors import AuthenticationError, ConfigError
from sluicegate.gateway.http.credentials import HttpAuthenticator, parse_authorization


def basic(user: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    passwords, tokens = tmp_path / "passwd", tmp_path / "tokens"
    set_password(passwords, "alice", "s3cret")
    set_password(passwords, "bob", "hunter2")
    return passwords, tokens


def authenticator(files: tuple[Path, Path], max_failures: int = 5) -> HttpAuthenticator:
    passwords, tokens = files
    checker = PasswordFileAuthentication(passwords)
    throttle = LoginThrottle(ThrottleSettings(max_failures, 100, 300.0, 30.0, 900.0))

    def check_password(user: str, password: str | None, address: str) -> None:
        throttle.check(user, address)
        try:
            checker.authenticate(user, password)
        except AuthenticationError:
            throttle.failed(user, address)
            raise

    return HttpAuthenticator(check_password, TokenAuthentication(tokens), throttle, passwords)


def test_the_token_file_keeps_hashes_only_readable_by_its_owner(files: tuple[Path, Path]) -> None:
    _, path = files
    record, token = create_token(path, "alice", "dbt: nightly")
    assert token.startswith("sgt_") and token_id_of(token) == record.token_id
    text = path.read_text()
    assert token not in text and token.split("_", 2)[2] not in text
    assert f"{record.token_id}:alice:" in text and text.rstrip().endswith(":dbt: nightly")
    assert path.stat().st_mode & 0o777 == 0o600
    assert [(r.token_id, r.user, r.comment) for r in list_tokens(path)] == [(record.token_id, "alice", "dbt: nightly")]
    assert TokenAuthentication(path).authenticate(token) == "alice"


def test_revoke_by_id_by_token_or_by_user(files: tuple[Path, Path]) -> None:
    _, path = files
    first, first_token = create_token(path, "alice")
    second, _ = create_token(path, "alice")
    third, _ = create_token(path, "bob")
    assert revoke_tokens(path, token_id=first_token) == [first]
    assert revoke_tokens(path, token_id=first.token_id) == []
    assert {r.token_id for r in revoke_tokens(path, user="alice")} == {second.token_id}
    assert [r.token_id for r in list_tokens(path)] == [third.token_id]


def test_bad_user_names_and_comments_are_refused(files: tuple[Path, Path]) -> None:
    _, path = files
    for user in ("", "a:b", "a b"):
        with pytest.raises(ConfigError):
            create_token(path, user)
    with pytest.raises(ConfigError):
        create_token(path, "alice", "two\nlines")


def test_a_token_file_others_can_read_refuses_every_token(files: tuple[Path, Path]) -> None:
    _, path = files
    _, token = create_token(path, "alice")
    os.chmod(path, 0o644)
    with pytest.raises(AuthenticationError) as refused:
        TokenAuthentication(path).authenticate(token)
    assert refused.value.error_class == "AUTHENTICATION_UNAVAILABLE"


@pytest.mark.parametrize("header, needle", [
    (None, "authentication required"),
    ("", "authentication required"),
    ("Digest abc", "unsupported Authorization scheme"),
    ("Basic !!!", "malformed Basic credentials"),
    ("Basic " + base64.b64encode(b"no-colon").decode(), "malformed Basic credentials"),
    ("Bearer", "unsupported Authorization scheme"),
])
def test_malformed_headers_are_refused_with_what_to_send(header: str | None, needle: str) -> None:
    with pytest.raises(AuthenticationError) as refused:
        parse_authorization(header)
    assert needle in refused.value.message


def test_each_form_of_the_header_names_its_user(files: tuple[Path, Path]) -> None:
    _, tokens = files
    _, alice_token = create_token(tokens, "alice")
    auth = authenticator(files)
    assert auth.user_of(basic("alice", "s3cret"), "10.0.0.1") == "alice"
    assert auth.user_of(f"Bearer {alice_token}", "10.0.0.1") == "alice"
    assert auth.user_of(f"bearer  {alice_token} ", "10.0.0.1") == "alice"
    assert auth.user_of(basic("token", alice_token), "10.0.0.1") == "alice"   # dbt-spark http, Simba drivers
    assert auth.user_of(basic("alice", alice_token), "10.0.0.1") == "alice"   # beeline -n alice -p <token>
    for header in (basic("alice", "wrong"), basic("carol", "s3cret"), basic("bob", alice_token),
                   "Bearer sgt_000000000000_" + "x" * 43, "Bearer not-a-token"):
        with pytest.raises(AuthenticationError):
            auth.user_of(header, "10.0.0.1")


def test_a_revoked_token_and_a_changed_password_are_refused_at_the_next_request(files: tuple[Path, Path]) -> None:
    passwords, tokens = files
    record, token = create_token(tokens, "alice")
    auth = authenticator(files)
    assert auth.user_of(f"Bearer {token}", "10.0.0.1") == "alice"
    assert auth.user_of(basic("bob", "hunter2"), "10.0.0.1") == "bob"
    revoke_tokens(tokens, token_id=record.token_id)
    with pytest.raises(AuthenticationError, match="invalid or was revoked"):
        auth.user_of(f"Bearer {token}", "10.0.0.1")
    set_password(passwords, "bob", "new-password")
    with pytest.raises(AuthenticationError, match="wrong user name or password"):
        auth.user_of(basic("bob", "hunter2"), "10.0.0.1")


def test_failed_tokens_are_throttled(files: tuple[Path, Path]) -> None:
    auth = authenticator(files, max_failures=3)
    guess = "Bearer sgt_0123456789ab_" + "y" * 43
    for _ in range(3):
        with pytest.raises(AuthenticationError, match="invalid or was revoked"):
            auth.user_of(guess, "10.0.0.2")
    with pytest.raises(AuthenticationError) as locked:
        auth.user_of(guess, "10.0.0.2")
    assert locked.value.error_class == "TOO_MANY_FAILED_LOGINS"
