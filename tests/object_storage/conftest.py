"""A gateway whose warehouse lives on a real S3 store (weed mini on loopback), one store per test module, on the
test process's shared Spark session. The catalog, checkpoints and landing stay in a local state folder."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sluicegate.gateway.auth.providers import make_authenticator
from sluicegate.gateway.config import load_config
from sluicegate.gateway.server import GatewayServer
from sluicegate.gateway.service import GatewayService
from tests.conftest import RunningGateway
from tests.object_store import S3Store, seaweed_s3

WAREHOUSE_PREFIX = "warehouse"


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Store]:
    with seaweed_s3(tmp_path_factory.mktemp("weed")) as store:
        yield store


def s3_overrides(store: S3Store, state: Path, secret_file: Path) -> dict[str, Any]:
    """The configuration of a warehouse on `store`: the secret key in a 0600 file, as an operator would keep it."""
    secret_file.write_text(store.secret_key + "\n")
    secret_file.chmod(0o600)
    return {
        "warehouse": {"path": f"s3://{store.bucket}/{WAREHOUSE_PREFIX}", "local_state": str(state)},
        "storage": {"endpoint": store.endpoint, "region": store.region, "access_key": store.access_key,
                    "secret_key_file": str(secret_file), "allow_http": True},
        "security": {"allowed_paths": [str(state / "landing"), f"s3://{store.bucket}/{WAREHOUSE_PREFIX}/landing"]},
    }


@pytest.fixture(scope="module")
def s3_gateway(spark: Any, s3: S3Store, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    state = tmp_path_factory.mktemp("s3-state")
    overrides = s3_overrides(s3, state, tmp_path_factory.mktemp("secrets") / "s3-secret")
    config = load_config(port=0, overrides=overrides)
    service = GatewayService(config, spark, make_authenticator(config.auth.mode, config.auth.password_file,
                                                               config.auth.ldap))
    server = GatewayServer(service, "127.0.0.1", 0, config.server.max_connections)
    server.start()
    yield RunningGateway(config, service, server)
    server.shutdown(grace=0)
    if service.catalog is not None:
        service.catalog.close()


@pytest.fixture()
def s3_connect(s3_gateway: RunningGateway) -> Iterator[Callable[..., Any]]:
    from pyhive import hive

    opened = []

    def open_connection(**kwargs: Any) -> Any:
        kwargs.setdefault("username", "tester")
        conn = hive.connect(s3_gateway.host, s3_gateway.port, **kwargs)
        opened.append(conn)
        return conn

    yield open_connection
    for conn in opened:
        with contextlib.suppress(Exception):   # a test may have closed it
            conn.close()


def database_cursor(gateway: RunningGateway, database: str) -> Iterator[Any]:
    """For a module's `cursor` fixture (`yield from database_cursor(s3_gateway, NAME)`): a PyHive cursor of
    `tester` in `database`, dropped with everything in it (streams stopped) afterwards."""
    from pyhive import hive

    connection = hive.connect(gateway.host, gateway.port, username="tester")
    cur = connection.cursor()
    cur.execute(f"CREATE DATABASE IF NOT EXISTS {database}")
    cur.execute(f"USE {database}")
    yield cur
    cur.execute(f"DROP DATABASE IF EXISTS {database} CASCADE")
    connection.close()
