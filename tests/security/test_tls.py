"""TLS on the Thrift port: PyHive, beeline and the shell connect over it; a plaintext client is refused cleanly; and
passwords or a non-loopback host without TLS refuse to start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from security_helpers import TlsFiles, answers, client_context, pyhive_tls, sasl_login, tls_overrides

from sluicegate.gateway.config import load_config, require_secure_transport
from sluicegate.gateway.errors import ConfigError

SLUICEGATE = str(Path(sys.executable).parent / "sluicegate")


@pytest.fixture(scope="module")
def tls_gateway(start_gateway: Any, tls_files: TlsFiles) -> Any:
    return start_gateway(tls_overrides(tls_files))


def test_pyhive_over_tls(tls_gateway: Any, tls_files: TlsFiles) -> None:
    connection = pyhive_tls(tls_gateway.port, tls_files)
    try:
        assert answers(connection)
    finally:
        connection.close()


def test_a_plaintext_client_is_refused_and_the_gateway_still_answers(tls_gateway: Any, tls_files: TlsFiles) -> None:
    from pyhive import hive
    from thrift.transport.TTransport import TTransportException

    with pytest.raises((TTransportException, OSError, EOFError)):
        hive.connect("127.0.0.1", tls_gateway.port, username="tester").close()
    assert sasl_login(tls_gateway.port, "tester", "x", context=client_context(tls_files)) == (5, "")


def test_a_client_that_does_not_trust_the_certificate_fails_verification(tls_gateway: Any) -> None:
    import ssl

    with pytest.raises(ssl.SSLCertVerificationError):
        sasl_login(tls_gateway.port, "tester", "x", context=ssl.create_default_context())


def test_shell_over_tls(tls_gateway: Any, tls_files: TlsFiles) -> None:
    done = subprocess.run([SLUICEGATE, "shell", "--port", str(tls_gateway.port), "--tls-ca", str(tls_files.cert),
                           "-e", "SELECT 40 + 2 AS answer"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "42" in done.stdout
    untrusted = subprocess.run([SLUICEGATE, "shell", "--port", str(tls_gateway.port), "--tls", "-e", "SELECT 1"],
                               capture_output=True, text=True, timeout=120)
    assert untrusted.returncode == 2
    assert "certificate is not trusted" in untrusted.stderr and "--tls-ca" in untrusted.stderr


@pytest.mark.beeline
def test_beeline_over_tls(tls_gateway: Any, tls_files: TlsFiles, beeline: Any) -> None:
    done = beeline(tls_gateway.port, "-e", "SELECT 7 * 6 AS answer",
                   url_options=f";ssl=true;sslTrustStore={tls_files.truststore};"
                               f"trustStorePassword={tls_files.truststore_password}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "42"


@pytest.mark.parametrize("overrides, needle", [
    ({"auth": {"mode": "password"}}, 'auth.mode = "password" sends passwords'),
    ({"auth": {"mode": "ldap", "ldap_url": "ldap://127.0.0.1:1", "ldap_user_dn": "uid={user},dc=x"}},
     'auth.mode = "ldap" sends passwords'),
    ({"server": {"host": "0.0.0.0"}}, 'server.host = "0.0.0.0" serves other machines'),
])
def test_passwords_or_a_public_host_without_tls_refuse_to_start(overrides: dict[str, Any], needle: str,
                                                                 tmp_path: Path) -> None:
    config = load_config(warehouse=tmp_path, overrides=overrides)
    with pytest.raises(ConfigError) as refused:
        require_secure_transport(config.server, config.auth.mode)
    assert needle in refused.value.message
    assert "server.tls_cert" in refused.value.message and "allow_plaintext" in refused.value.message
    permissive = load_config(warehouse=tmp_path, overrides={**overrides, "server": {
        **overrides.get("server", {}), "allow_plaintext": True}})
    require_secure_transport(permissive.server, permissive.auth.mode)


def test_serve_refuses_before_starting_spark(tmp_path: Path) -> None:
    conf = tmp_path / "public.toml"
    conf.write_text('[server]\nhost = "0.0.0.0"\n')
    done = subprocess.run([SLUICEGATE, "serve", "--conf", str(conf), "--port", "0", "--warehouse",
                           str(tmp_path / "wh")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert 'server.host = "0.0.0.0" serves other machines' in done.stderr


def test_tls_settings_must_come_in_pairs_and_load(tmp_path: Path, tls_files: TlsFiles) -> None:
    with pytest.raises(ConfigError, match="go together"):
        load_config(warehouse=tmp_path, overrides={"server": {"tls_cert": str(tls_files.cert)}})
    from sluicegate.gateway.tls import server_context

    with pytest.raises(ConfigError, match="must belong to the certificate|PEM"):
        server_context(tls_files.cert, tls_files.cert)
    context = server_context(tls_files.cert, tls_files.key)
    import ssl

    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
