"""auth.mode = "ldap" against a real OpenLDAP slapd: the right password logs in (PyHive, beeline), a wrong password,
an unknown user, an empty password and injection-looking names are refused with a clean error, and the gateway
still answers afterwards."""

from __future__ import annotations

from typing import Any

import pytest
from security_helpers import LDAP_USERS, PEOPLE_DN, Slapd, answers, sasl_login

from sluicegate.gateway.auth.ldap import user_dn


@pytest.fixture(scope="module")
def ldap_gateway(start_gateway: Any, slapd: Slapd) -> Any:
    return start_gateway({"auth": {"mode": "ldap", "ldap_url": slapd.url, "ldap_user_dn": slapd.user_dn,
                                   "max_failures": 1000, "max_failures_per_address": 1000},
                          "server": {"allow_plaintext": True}})


def _pyhive(port: int, user: str, password: str) -> Any:
    from pyhive import hive

    return hive.connect("127.0.0.1", port, username=user, password=password, auth="CUSTOM")


def test_the_right_password_logs_in(ldap_gateway: Any) -> None:
    connection = _pyhive(ldap_gateway.port, "alice", LDAP_USERS["alice"])
    try:
        assert answers(connection)
    finally:
        connection.close()


def test_a_name_with_a_comma_binds_its_own_entry(ldap_gateway: Any) -> None:
    assert sasl_login(ldap_gateway.port, "bob,admin", LDAP_USERS["bob,admin"]) == (5, "")


@pytest.mark.parametrize("user, password", [
    ("alice", "wrong"),
    ("mallory", "wonderland"),
    ("alice", ""),
    ("*", "wonderland"),
    ("alice,ou=people", "wonderland"),
    ("alice)(uid=*", "wonderland"),
    ("alice\0", "wonderland"),
    ("uid=alice,ou=people,dc=example,dc=org", "wonderland"),
    ("bob", "comma-in-name"),
    (" alice", "wonderland"),
])
def test_wrong_credentials_and_injection_are_refused(ldap_gateway: Any, user: str, password: str) -> None:
    status, message = sasl_login(ldap_gateway.port, user, password)
    if "\0" in user:  # SASL PLAIN itself cannot carry it: a malformed response (BAD)
        assert (status, message) == (3, "malformed PLAIN response")
    else:
        assert status == 4
        assert message.startswith("authentication failed for user"), message
    assert sasl_login(ldap_gateway.port, "alice", LDAP_USERS["alice"]) == (5, "")


def test_an_unreachable_directory_is_a_clear_error(start_gateway: Any) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    gateway = start_gateway({"auth": {"mode": "ldap", "ldap_url": f"ldap://127.0.0.1:{dead}",
                                      "ldap_user_dn": "uid={user},dc=x", "ldap_timeout": 2.0},
                             "server": {"allow_plaintext": True}})
    status, message = sasl_login(gateway.port, "alice", "wonderland")
    assert status == 4 and "LDAP directory does not answer" in message


def test_control_characters_and_empty_passwords_never_reach_the_directory(slapd: Slapd) -> None:
    from sluicegate.gateway.auth.ldap import LdapAuthentication
    from sluicegate.gateway.config import LdapSettings
    from sluicegate.gateway.errors import AuthenticationError

    ldap = LdapAuthentication(LdapSettings(slapd.url, slapd.user_dn, False, None, 5.0))
    ldap.authenticate("alice", LDAP_USERS["alice"])
    for user, password in (("alice\0", "wonderland"), ("alice\n", "wonderland"), ("alice", ""), ("alice", None)):
        with pytest.raises(AuthenticationError):
            ldap.authenticate(user, password)


def test_user_names_are_escaped_as_one_rdn() -> None:
    template = f"uid={{user}},{PEOPLE_DN}"
    assert user_dn(template, "alice") == f"uid=alice,{PEOPLE_DN}"
    assert user_dn(template, "a,ou=admins") == f"uid=a\\,ou\\=admins,{PEOPLE_DN}"
    assert user_dn(template, "x+cn=y") == f"uid=x\\+cn\\=y,{PEOPLE_DN}"
    assert user_dn(template, "#root ") == f"uid=\\#root\\ ,{PEOPLE_DN}"


@pytest.mark.beeline
def test_beeline_logs_in_through_ldap(ldap_gateway: Any, beeline: Any) -> None:
    done = beeline(ldap_gateway.port, "-e", "SELECT 6 * 7 AS answer", user="alice", password=LDAP_USERS["alice"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "42"
    refused = beeline(ldap_gateway.port, "-e", "SELECT 1", user="alice", password="wrong")
    assert refused.returncode != 0
    assert "authentication failed for user 'alice'" in refused.stdout + refused.stderr
