"""Who sent an HTTP request: the `Authorization` header checked against the binary port's users, or a token.

- `Bearer <token>`: a token of the token file (any auth mode: a token names its user, so there is no "any user").
- `Basic base64(user:secret)`: user `token` means the secret is a token (dbt-spark `method: http`, Simba drivers);
  a secret that is a token of `user` is accepted as one (a secret starting `sgt_` is always taken for a token);
  anything else is the user's password, checked as the binary port checks it (auth.mode none, password or ldap,
  with the same login throttling).

Every request carries its credentials (HTTP clients open several connections and send them each time), and a
password or token costs a PBKDF2 or an LDAP bind: a success is remembered for a short while under a keyed digest of
the header (never the header itself), and forgotten as soon as the password or token file changes, so a revoked
token or a new password is refused at the next request.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sluicegate.gateway.auth.providers import file_stamp
from sluicegate.gateway.auth.throttle import LoginThrottle
from sluicegate.gateway.auth.tokens import TokenAuthentication, looks_like_token, token_id_of
from sluicegate.gateway.errors import AuthenticationError

TOKEN_USER = "token"           # Basic `token:<secret>`: the Databricks convention for "the password is a token"
REMEMBER_SECONDS = 60.0        # a checked header is trusted this long, unless a credentials file changes first
MAX_REMEMBERED = 4096


@dataclass(frozen=True)
class Credentials:
    scheme: str                # "basic" or "bearer"
    user: str | None           # None for a bearer token: the token names its user
    secret: str


def parse_authorization(header: str | None) -> Credentials:
    """The header's scheme and secret; AuthenticationError for a missing or malformed one."""
    if not header or not header.strip():
        raise AuthenticationError(
            "authentication required: send an Authorization header (Basic user:password, or Bearer <token>)",
            hint="beeline: -n USER -p PASSWORD; PyHive: a THttpClient with a Basic header; Databricks clients: "
                 "access_token")
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer" and value:
        return Credentials("bearer", None, value)
    if scheme.lower() == "basic" and value:
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            decoded = ""
        user, colon, secret = decoded.partition(":")
        if colon and user:
            return Credentials("basic", user, secret)
        raise AuthenticationError("malformed Basic credentials: expected base64 of `user:password`")
    raise AuthenticationError(
        f"unsupported Authorization scheme {scheme[:20]!r}: use Basic (user:password) or Bearer (an access token)")


class HttpAuthenticator:
    def __init__(self, check_password: Callable[[str, str | None, str], None], tokens: TokenAuthentication,
                 throttle: LoginThrottle, password_file: Path | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """`check_password(user, password, address)`: the binary port's check (GatewayService.authenticate), which
        throttles failed logins itself. `throttle`: the same throttle, for failed tokens."""
        self._check_password = check_password
        self._tokens = tokens
        self._throttle = throttle
        self._password_file = password_file
        self._clock = clock
        self._key = secrets.token_bytes(32)
        self._remembered: dict[bytes, tuple[str, float, tuple]] = {}
        self._lock = threading.Lock()

    def _stamp(self) -> tuple:
        return (file_stamp(self._password_file), file_stamp(self._tokens.path))

    def user_of(self, header: str | None, address: str) -> str:
        """The authenticated user of a request's Authorization header; AuthenticationError when it is refused."""
        digest = hmac.new(self._key, (header or "").encode("utf-8", "surrogatepass"), hashlib.sha256).digest()
        stamp = self._stamp()
        now = self._clock()
        with self._lock:
            known = self._remembered.get(digest)
        if known is not None and known[1] > now and known[2] == stamp:
            return known[0]
        user = self._check(parse_authorization(header), address)
        with self._lock:
            if len(self._remembered) >= MAX_REMEMBERED:
                self._remembered.clear()
            self._remembered[digest] = (user, now + REMEMBER_SECONDS, stamp)
        return user

    def _check(self, credentials: Credentials, address: str) -> str:
        if credentials.scheme == "bearer" or credentials.user == TOKEN_USER:
            return self._check_token(credentials.secret, None, address)
        assert credentials.user is not None
        if looks_like_token(credentials.secret):
            return self._check_token(credentials.secret, credentials.user, address)
        self._check_password(credentials.user, credentials.secret, address)
        return credentials.user

    def _check_token(self, token: str, user: str | None, address: str) -> str:
        """A token's owner; with `user`, the token must be that user's own."""
        throttle_key = user or f"token {token_id_of(token) or '?'}"
        self._throttle.check(throttle_key, address)
        try:
            owner = self._tokens.authenticate(token)
            if user is not None and owner != user:
                raise AuthenticationError(
                    f"authentication failed for user '{user}': wrong user name or password",
                    hint="send the token with user `token`, or as Bearer, or with its owner's name")
        except AuthenticationError as exc:
            if exc.error_class != "AUTHENTICATION_UNAVAILABLE":
                self._throttle.failed(throttle_key, address)
            raise
        self._throttle.succeeded(throttle_key)
        return owner
