"""Object URIs users name in read_files: with the warehouse on a store, only its `landing` prefix by default; never
another bucket or prefix, never the warehouse's own tables or checkpoints, never a `..` or an escape that a store
could read as one. Pure policy (no JVM); tests/object_storage/test_object_streams.py refuses them through a client."""

from __future__ import annotations

from pathlib import Path

import pytest

from sluicegate.catalog.uris import ObjectLocation
from sluicegate.gateway.config import load_config
from sluicegate.policy.errors import PathNotAllowedError
from sluicegate.policy.paths import PathPolicy


@pytest.fixture()
def policy(tmp_path: Path) -> PathPolicy:
    secret = tmp_path / "secret"
    secret.write_text("x")
    secret.chmod(0o600)
    config = load_config(overrides={
        "warehouse": {"path": "s3://lake/wh", "local_state": str(tmp_path / "state")},
        "storage": {"endpoint": "http://127.0.0.1:9", "access_key": "k", "secret_key_file": str(secret),
                    "allow_http": True}})
    assert config.security is not None
    return PathPolicy.of(config.security.allowed_paths, config.security.protected_paths)


def test_the_warehouse_landing_prefix_is_allowed_by_default(policy: PathPolicy) -> None:
    assert policy.check("s3://lake/wh/landing/orders") == ObjectLocation("s3", "lake", ("wh", "landing", "orders"))
    assert policy.check("S3://lake/wh/landing/") == ObjectLocation("s3", "lake", ("wh", "landing"))


@pytest.mark.parametrize("uri", [
    "s3://other-bucket/wh/landing/orders",          # another bucket
    "s3://lake/elsewhere/orders",                   # another prefix of the same bucket
    "s3://lake/wh/sales.db/orders",                 # a table of the warehouse
    "s3://lake/wh/_checkpoints/0123",               # the warehouse's own files
    "s3://lake/wh",                                 # the warehouse itself
    "s3://lake/wh/landing/../sales.db/orders",      # climbing out
    "s3://lake/wh/landing/%2e%2e/sales.db/orders",  # climbing out, escaped
    "s3://lake/wh/landing//orders",                 # a doubled slash: another key on S3
    "s3://lake/wh/landing/*",                       # a glob
    "s3a://lake/wh/landing/orders",                 # a scheme nothing here serves
])
def test_anything_else_on_the_store_is_refused(policy: PathPolicy, uri: str) -> None:
    with pytest.raises(PathNotAllowedError) as refused:
        policy.check(uri)
    assert refused.value.error_class == "PATH_NOT_ALLOWED" and refused.value.sqlstate == "42501"


def test_local_roots_stay_as_they_were(policy: PathPolicy, tmp_path: Path) -> None:
    landing = tmp_path / "state" / "landing"
    assert policy.check(str(landing / "x")) == (landing / "x").resolve()
    with pytest.raises(PathNotAllowedError):
        policy.check(str(tmp_path / "state" / "_checkpoints"))


def test_an_admin_given_object_root_inside_the_warehouse_itself_opens_nothing_of_it(tmp_path: Path) -> None:
    roots = PathPolicy.of([ObjectLocation.parse("s3://lake/wh")], [ObjectLocation.parse("s3://lake/wh")])
    with pytest.raises(PathNotAllowedError):
        roots.check("s3://lake/wh/sales.db/orders")
