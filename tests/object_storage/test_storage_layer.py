"""The storage layer (runtime/storage, catalog/uris.py) against a real S3 store (weed mini), without Spark: locations
are parsed and contained, a Delta table on the store is created, appended and read by delta-rs with the registered
store's options, and prefixes are listed, copied and deleted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from catalog.errors import PathOutsideWarehouseError
from catalog.names import owned_table_folder, table_folder
from catalog.uris import ObjectLocation, as_location, is_object_uri
from runtime.storage import delta, files, registry
from runtime.storage.errors import UnknownObjectStoreError
from runtime.storage.settings import ObjectStoreSettings
from tests.object_store import S3Store, seaweed_s3


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
    delta.write_arrow(location, pa.table({"id": [1, 2, 3]}))
    delta.write_arrow(location, pa.table({"id": [4]}), mode="append")
    assert delta.is_delta_table(str(location))
    assert sorted(delta.open_table(location).to_pyarrow_table().column("id").to_pylist()) == [1, 2, 3, 4]
    assert delta.open_table(location, version=0).to_pyarrow_table().num_rows == 3
    # another reader, with nothing of the gateway's, opens the same table
    other = DeltaTable(str(location), storage_options=store.storage_options())
    assert other.version() == 1
    listed = files.list_files(location)
    assert any(f.path.startswith("_delta_log/") for f in listed) and all(f.size > 0 for f in listed)


def test_prefixes_are_copied_and_deleted(warehouse: ObjectLocation) -> None:
    source, target = warehouse / "a.db" / "t", warehouse / "a.db" / "u"
    files.write_bytes(source / "x" / "one.bin", b"1")
    files.write_bytes(source / "two.bin", b"22")
    files.write_bytes(warehouse / "a.db" / "t2" / "keep.bin", b"3")   # a sibling sharing the name's start
    files.copy_prefix(source, target)
    assert [(f.path, f.size) for f in files.list_files(target)] == [("two.bin", 2), ("x/one.bin", 1)]
    assert files.read_bytes(target / "x" / "one.bin") == b"1"
    files.delete_prefix(source, "a test's folder")
    assert not files.prefix_exists(source) and files.prefix_exists(target)
    assert files.list_files(warehouse / "a.db" / "t2")[0].path == "keep.bin"
    files.delete_prefix(source, "already gone")   # no error
