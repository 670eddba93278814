"""A gateway whose warehouse lives on a real S3 store (weed mini on loopback), one store per test module, on the
test process's shared Spark session. The catalog, checkpoints and landing stay in a local state folder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from object_store import S3Store, s3_overrides, seaweed_s3
from pyhive_helpers import connections

from sluicegate.gateway import app
from sluicegate.gateway.app import RunningGateway
from sluicegate.gateway.config import load_config


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Store]:
    with seaweed_s3(tmp_path_factory.mktemp("weed")) as store:
        yield store


@pytest.fixture(scope="module")
def s3_gateway(spark: Any, s3: S3Store, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    state = tmp_path_factory.mktemp("s3-state")
    overrides = s3_overrides(s3, state, tmp_path_factory.mktemp("secrets") / "s3-secret")
    running = app.start(load_config(port=0, overrides=overrides), spark, host="127.0.0.1", port=0)
    yield running
    running.stop(grace=0)


@pytest.fixture()
def s3_connect(s3_gateway: RunningGateway) -> Iterator[Callable[..., Any]]:
    yield from connections(s3_gateway)
