"""`auth.mode = "ldap"`: a simple bind to the directory as the user, the way HiveServer2's LDAP provider checks a
password.

The user name becomes one RDN value, escaped by RFC 4514, so a name with `,`, `=`, `+`, `\\` or a NUL cannot change
which entry is bound. Names with control characters are refused outright, and so is an empty password: an LDAP
simple bind with a DN and no password is an anonymous bind, which servers report as a success.
"""

from __future__ import annotations

import logging
import math
import ssl

from ldap3 import NONE, Connection, Server, Tls
from ldap3.core.exceptions import LDAPException
from ldap3.utils.dn import escape_rdn

from sluicegate.gateway.config import LdapSettings
from sluicegate.gateway.errors import AuthenticationError

log = logging.getLogger(__name__)

MAX_USER_LENGTH = 256


def _refused(user: str) -> AuthenticationError:
    return AuthenticationError(
        f"authentication failed for user '{user}': wrong user name or password",
        hint="check the user name and password of your directory account")


def user_dn(template: str, user: str) -> str:
    """The DN to bind as: `template` with `{user}` replaced by the RFC 4514-escaped user name."""
    return template.replace("{user}", escape_rdn(user))


class LdapAuthentication:
    def __init__(self, settings: LdapSettings) -> None:
        self._settings = settings
        tls = None
        if settings.url.startswith("ldaps://") or settings.start_tls:
            tls = Tls(validate=ssl.CERT_REQUIRED, version=ssl.PROTOCOL_TLS_CLIENT,
                      ca_certs_file=str(settings.ca_file) if settings.ca_file else None)
        self._server = Server(settings.url, get_info=NONE, tls=tls, connect_timeout=settings.timeout)

    def authenticate(self, user: str, password: str | None) -> None:
        # The directory ignores case and surrounding spaces in uid: refuse the spaces, so " alice" is not a second
        # name for alice (with its own lockout counter and its own grants).
        if (not user or len(user) > MAX_USER_LENGTH or user != user.strip()
                or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in user)):
            raise _refused(user.encode("unicode_escape").decode("ascii")[:MAX_USER_LENGTH])
        if not password:
            raise AuthenticationError(
                f"authentication failed for user '{user}': a password is required",
                hint="an empty password would be an anonymous LDAP bind; give your directory password")
        conn = Connection(self._server, user=user_dn(self._settings.user_dn, user), password=password,
                          auto_bind=False, raise_exceptions=False,
                          receive_timeout=math.ceil(self._settings.timeout),  # ldap3 packs it as an integer
                          read_only=True)
        try:
            conn.open()
            if self._settings.start_tls and not conn.start_tls():
                raise LDAPException(f"StartTLS failed: {conn.result}")
            bound = conn.bind()
        except LDAPException as exc:
            log.error("LDAP server %s cannot be used: %s", self._settings.url, exc)
            raise AuthenticationError(
                "the server cannot check passwords: its LDAP directory does not answer",
                error_class="AUTHENTICATION_UNAVAILABLE",
                hint="try again later, or ask the administrator to look at the gateway's log") from exc
        finally:
            conn.unbind()
        if not bound:
            log.info("LDAP bind as %s refused: %s", user, conn.result.get("description") if conn.result else None)
            raise _refused(user)
