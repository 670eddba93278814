"""The storage layer (storage/, catalog/uris.py) against a real S3 store (weed mini), without Spark: locations
are parsed and contained, a Delta table on the store is created, appended and read by delta-rs with the registered
store's options, and prefixes are listed, copied and deleted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import delta_writes
import pyarrow as pa
import pytest
from object_store import S3Store, seaweed_s3

from sluicegate.catalog.errors import PathOutsideWarehouseError
from sluicegate.catalog.names import owned_table_folder, table_folder
from sluicegate.catalog.uris import ObjectLocation, as_location, is_object_uri
from sluicegate.storage import files, registry
from sluicegate.storage.delta import tables as delta
from sluicegate.storage.delta.compaction import compact
from sluicegate.storage.delta.compaction_policy import CompactionPolicy
from sluicegate.storage.errors import ObjectStoreUnavailableError, UnknownObjectStoreError
from sluicegate.storage.settings import ObjectStoreSettings


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Store]:
    with seaweed_s3(tmp_path_factory.mktemp("weed")) as running:
        yield running


@pytest.fixture()
def warehouse(store: S3Store, request: pytest.FixtureRequest) -> Iterator[ObjectLocation]:
    root = ObjectLocation.parse(f"s3://{store.bucket}/{request.node.name.replace('[', '_').replace(']', '')}")
    registry.register(root, settings_of(store))
    yield root
    registry.unregister(root)


def settings_of(store: S3Store) -> ObjectStoreSettings:
    return ObjectStoreSettings(endpoint=store.endpoint, region=store.region, access_key=store.access_key,
                               secret_key=store.secret_key, allow_http=True)


# -- locations (pure) ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "s3://lake/wh/../x", "s3://lake/wh//x", "s3://lake/wh/./x", "s3://lake/wh/%2e%2E/x", "s3://lake/wh/a%2Fb",
    "s3://lake/wh/a\\b", "s3://lake/wh/a\nb", "s3://LAKE/wh", "s3://../wh", "s3://lake..x/wh",
])
def test_ambiguous_object_locations_are_refused(text: str) -> None:
    with pytest.raises(PathOutsideWarehouseError) as caught:
        ObjectLocation.parse(text)
    assert caught.value.error_class == "LOCATION_OUTSIDE_WAREHOUSE" and "refused" in caught.value.message


def test_a_location_is_normalized_and_joined() -> None:
    root = ObjectLocation.parse("s3://lake/wh/")
    assert str(root) == "s3://lake/wh" and root.key == "wh" and root.arrow_path == "lake/wh"
    assert str(root / "db.db" / "t") == "s3://lake/wh/db.db/t"
    assert (root / "db.db/t").parent.name == "db.db"
    assert is_object_uri("s3://lake/x") and not is_object_uri("/tmp/x") and not is_object_uri(Path("/tmp"))
    assert as_location("file:///tmp/x") == Path("/tmp/x")
    with pytest.raises(PathOutsideWarehouseError):
        root / ".."


def test_table_folders_stay_under_the_prefix() -> None:
    assert str(table_folder("s3://lake/wh", "db", "T")) == "s3://lake/wh/db.db/t"
    assert str(owned_table_folder("s3://lake/wh", "s3://lake/wh/db.db/t/")) == "s3://lake/wh/db.db/t"
    for row in ("s3://lake/wh", "s3://lake/whx/db.db/t", "s3://other/wh/db.db/t", "s3://lake/wh/db.db/t/x",
                "s3://lake/wh/x/t", "/tmp/wh/db.db/t", "s3://lake/wh/db.db/../../t"):
        with pytest.raises(PathOutsideWarehouseError):
            owned_table_folder("s3://lake/wh", row)
    with pytest.raises(PathOutsideWarehouseError):
        owned_table_folder("/tmp/wh", "s3://lake/wh/db.db/t")


def test_settings_never_show_the_secret() -> None:
    settings = ObjectStoreSettings(endpoint="http://127.0.0.1:1", access_key="AK", secret_key="TOPSECRET-42")
    assert "TOPSECRET-42" not in repr(settings) and "TOPSECRET-42" not in str(settings)
    assert settings.storage_options()["AWS_SECRET_ACCESS_KEY"] == "TOPSECRET-42"
    assert settings.storage_options()["aws_conditional_put"] == "etag"


def test_an_unregistered_prefix_gets_no_credentials() -> None:
    with pytest.raises(UnknownObjectStoreError) as caught:
        delta.storage_options("s3://nobody-registered-this/x")
    assert caught.value.error_class == "OBJECT_STORE_NOT_CONFIGURED"


# -- against the store -----------------------------------------------------------------------------------------------

def test_delta_table_on_the_store(store: S3Store, warehouse: ObjectLocation) -> None:
    from deltalake import DeltaTable

    location = warehouse / "db.db" / "t"
    assert not delta.is_delta_table(location) and not files.prefix_exists(location)
    delta_writes.write_arrow(location, pa.table({"id": [1, 2, 3]}))
    delta_writes.write_arrow(location, pa.table({"id": [4]}), mode="append")
    assert delta.is_delta_table(str(location))
    assert sorted(delta.open_table(location).to_pyarrow_table().column("id").to_pylist()) == [1, 2, 3, 4]
    assert delta.open_table(location, version=0).to_pyarrow_table().num_rows == 3
    # another reader, with nothing of the gateway's, opens the same table
    other = DeltaTable(str(location), storage_options=store.storage_options())
    assert other.version() == 1
    listed = files.list_files(location)
    assert any(f.path.startswith("_delta_log/") for f in listed) and all(f.size > 0 for f in listed)


def test_compaction_on_the_store(warehouse: ObjectLocation) -> None:
    """Small files of a table on the store merge into one object, as for a local table: same rows, no folder marker
    objects left, the old version still readable."""
    location = str(warehouse / "db.db" / "small")
    for start in range(0, 40, 10):
        delta_writes.write_arrow(location, pa.table({"id": list(range(start, start + 10))}), mode="append")
    (merged,) = compact(location, CompactionPolicy(fan_in=4))
    assert merged.files_removed == 4 and merged.version == 4
    assert sorted(delta.open_table(location).to_pyarrow_table().column("id").to_pylist()) == list(range(40))
    assert len(delta.open_table(location).file_uris()) == 1
    assert delta.open_table(location, version=3).to_pyarrow_table().num_rows == 40
    assert all(f.size > 0 for f in files.list_files(location))   # objects only, no empty "folders"


def test_prefixes_are_copied_and_deleted(warehouse: ObjectLocation) -> None:
    source, target = warehouse / "a.db" / "t", warehouse / "a.db" / "u"
    delta_writes.write_bytes(source / "x" / "one.bin", b"1")
    delta_writes.write_bytes(source / "two.bin", b"22")
    delta_writes.write_bytes(warehouse / "a.db" / "t2" / "keep.bin", b"3")   # a sibling sharing the name's start
    files.copy_prefix(source, target)
    assert [(f.path, f.size) for f in files.list_files(target)] == [("two.bin", 2), ("x/one.bin", 1)]
    assert files.read_bytes(target / "x" / "one.bin") == b"1"
    files.delete_prefix(source, "a test's folder")
    assert not files.prefix_exists(source) and files.prefix_exists(target)
    assert files.list_files(warehouse / "a.db" / "t2")[0].path == "keep.bin"
    files.delete_prefix(source, "already gone")   # no error


def test_the_secret_key_file_must_be_private(tmp_path: Path) -> None:
    from sluicegate.gateway.config import load_config
    from sluicegate.gateway.errors import ConfigError

    secret = tmp_path / "secret"
    secret.write_text("TOPSECRET-43\n")
    secret.chmod(0o644)
    overrides = {"warehouse": {"path": "s3://lake/wh", "local_state": str(tmp_path / "state")},
                 "storage": {"endpoint": "http://127.0.0.1:9", "allow_http": True, "access_key": "AK",
                             "secret_key_file": str(secret)}}
    with pytest.raises(ConfigError) as caught:
        load_config(overrides=overrides)
    assert "chmod 600" in caught.value.message and "TOPSECRET" not in caught.value.message
    secret.chmod(0o600)
    config = load_config(overrides=overrides)
    assert config.object_store is not None and config.object_store.secret_key == "TOPSECRET-43"
    assert "TOPSECRET-43" not in repr(config)
    assert config.local_state == tmp_path / "state"
    assert config.streams is not None and config.streams.checkpoints == tmp_path / "state" / "_checkpoints"
    assert config.spark.warehouse == tmp_path / "state"       # Spark's own folders stay local


@pytest.mark.parametrize(("storage", "expected"), [
    ({"endpoint": "http://127.0.0.1:9"}, "allow_http"),
    ({"endpoint": "ftp://x"}, "http:// or https://"),
    ({"access_key": "AK"}, "go together"),
    ({"conditional_put": "dynamo"}, "conditional_put"),
])
def test_bad_storage_settings_are_refused(tmp_path: Path, storage: dict[str, object], expected: str) -> None:
    from sluicegate.gateway.config import load_config
    from sluicegate.gateway.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        load_config(overrides={"warehouse": {"path": "s3://lake/wh", "local_state": str(tmp_path)},
                               "storage": storage})
    assert expected in caught.value.message


def test_a_whole_bucket_or_a_bad_uri_is_not_a_warehouse(tmp_path: Path) -> None:
    from sluicegate.gateway.config import load_config
    from sluicegate.gateway.errors import ConfigError

    for path, expected in (("s3://lake", "whole bucket"), ("s3://lake/a/../b", "refused"), ("gs://lake/a", "folder")):
        with pytest.raises(ConfigError) as caught:
            load_config(overrides={"warehouse": {"path": path, "local_state": str(tmp_path)}})
        assert expected in caught.value.message, caught.value.message


def test_an_unreachable_store_is_a_clear_error(tmp_path: Path) -> None:
    """Nothing listens at the endpoint: a typed error naming the location and the store's own cause, no secret;
    the gateway refuses to start on it (gateway/service.open_storage) instead of failing every statement."""
    from sluicegate.gateway.config import load_config
    from sluicegate.gateway.errors import ConfigError
    from sluicegate.gateway.service import open_storage
    from sluicegate.storage.errors import ObjectStoreUnavailableError

    root = ObjectLocation.parse("s3://nowhere/wh")
    registry.register(root, ObjectStoreSettings(endpoint="http://127.0.0.1:9", access_key="AK",
                                                secret_key="TOPSECRET-44", allow_http=True))
    try:
        for action in (lambda: delta.is_delta_table(root / "d.db" / "t"), lambda: files.list_files(root)):
            with pytest.raises(ObjectStoreUnavailableError) as caught:
                action()
            assert caught.value.sqlstate == "08001" and "s3://nowhere/wh" in caught.value.message
            assert "TOPSECRET" not in caught.value.message and "\x1b" not in caught.value.message
    finally:
        registry.unregister(root)
    secret = tmp_path / "secret"
    secret.write_text("TOPSECRET-44")
    secret.chmod(0o600)
    config = load_config(overrides={
        "warehouse": {"path": "s3://nowhere/wh", "local_state": str(tmp_path / "state")},
        "storage": {"endpoint": "http://127.0.0.1:9", "allow_http": True, "access_key": "AK",
                    "secret_key_file": str(secret)}})
    with pytest.raises(ConfigError) as refused:
        open_storage(config)
    assert "warehouse.path s3://nowhere/wh" in refused.value.message and "TOPSECRET" not in refused.value.message
    registry.unregister(root)


def test_a_wrong_key_is_refused_by_the_store(store: S3Store) -> None:
    root = ObjectLocation.parse(f"s3://{store.bucket}/wrong-key")
    registry.register(root, ObjectStoreSettings(endpoint=store.endpoint, access_key=store.access_key,
                                                secret_key="not-the-secret", allow_http=True))
    try:
        with pytest.raises(ObjectStoreUnavailableError) as caught:
            files.list_files(root)
        assert "not-the-secret" not in caught.value.message
    finally:
        registry.unregister(root)
