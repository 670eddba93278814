"""The one way to open a Delta table: delta-rs, with the object store's options when the location is an object URI.

Every caller that used `DeltaTable(path)` goes through `open_table`, so a table on the store needs no code of its
own in the warehouse's statements. `table_uri` is what delta-rs gets: the URI itself for an object location, the
path for a local one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sluicegate.catalog.uris import ObjectLocation, as_location, is_object_uri
from sluicegate.storage.delta.intervals import canonical_properties
from sluicegate.storage.files import store_errors
from sluicegate.storage.registry import settings_for

# `delta.*` properties the gateway implements itself, kept in the catalog only: delta-rs cannot parse them (it has no
# typeWidening table feature; executor/tables/column_types.py reads the property from the catalog)
GATEWAY_ONLY = frozenset({"delta.enabletypewidening"})


def delta_configuration(properties: dict[str, str]) -> dict[str, str] | None:
    """The `delta.*` properties go into the Delta log (delta-rs refuses other keys), but for GATEWAY_ONLY's; all are
    kept in the catalog. A retention that is no interval is refused here, where every CREATE and ALTER passes
    (delta-rs would ignore it), and a good one is written in the form delta-rs reads as Spark does
    (storage/delta/intervals.py)."""
    return canonical_properties({k: v for k, v in properties.items()
                                 if k.startswith("delta.") and k.lower() not in GATEWAY_ONLY}) or None


def table_uri(location: str | Path | ObjectLocation) -> str:
    return str(as_location(location))


def storage_options(location: str | Path | ObjectLocation) -> dict[str, str] | None:
    """delta-rs's storage options for `location`: the registered store's for an object URI, None for a local path."""
    if not is_object_uri(location):
        return None
    return settings_for(str(location)).storage_options()


def open_table(location: str | Path | ObjectLocation, version: int | None = None) -> Any:
    """A `deltalake.DeltaTable` at `location` (as of `version` when given)."""
    from deltalake import DeltaTable

    with store_errors(location):
        return DeltaTable(table_uri(location), version=version, storage_options=storage_options(location))


def is_delta_table(location: str | Path | ObjectLocation) -> bool:
    from deltalake import DeltaTable

    with store_errors(location):
        return DeltaTable.is_deltatable(table_uri(location), storage_options=storage_options(location))


def create_table(location: str | Path | ObjectLocation, schema: Any, **kwargs: Any) -> Any:
    """`DeltaTable.create` at `location` with the store's options."""
    from deltalake import DeltaTable

    with store_errors(location):
        return DeltaTable.create(table_uri(location), schema, storage_options=storage_options(location), **kwargs)


def create_with_add_actions(location: str | Path | ObjectLocation, schema: Any, adds: Any, **kwargs: Any) -> None:
    """`deltalake.transaction.create_table_with_add_actions` at `location` with the store's options."""
    from deltalake.transaction import create_table_with_add_actions

    with store_errors(location):
        create_table_with_add_actions(table_uri(location), schema, adds, storage_options=storage_options(location),
                                  **kwargs)
