"""Writing Delta tables and bytes in tests, through the product's own paths (storage/delta and storage/files): a
DataFrame as one commit, an Arrow table with the store's options, bytes at a location. The product composes the
same parts where it writes; these compositions are the tests' alone."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema

from sluicegate.catalog.uris import Location, ObjectLocation, is_object_uri
from sluicegate.storage.delta.tables import storage_options, table_uri
from sluicegate.storage.delta.write import AppTransaction, commit_files, write_files
from sluicegate.storage.files import filesystem, store_errors


def write_dataframe(df: DataFrame, table_path: str, mode: str = "append", *, partition_by: Sequence[str] = (),
                    app_transaction: AppTransaction | None = None) -> int:
    """Write `df` to the Delta table at `table_path` (created if absent) in one commit; returns the version."""
    if not is_object_uri(table_path):
        os.makedirs(table_path, exist_ok=True)
    files = write_files(df, table_path, partition_by)
    return commit_files(table_path, files, to_arrow_schema(df.schema), mode, partition_by=partition_by,
                        app_transaction=app_transaction)


def write_arrow(location: str | Path | ObjectLocation, data: Any, **kwargs: Any) -> None:
    """`deltalake.write_deltalake` at `location` with the store's options."""
    from deltalake import write_deltalake

    with store_errors(location):
        write_deltalake(table_uri(location), data, storage_options=storage_options(location), **kwargs)


def write_bytes(location: str | Location, data: bytes) -> None:
    fs, path = filesystem(location)
    with fs.open_output_stream(path) as stream:
        stream.write(data)
