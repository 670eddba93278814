"""CREATE TABLE ... {SHALLOW | DEEP} CLONE: a new Delta table whose first (or, over a table it replaces, next) commit
holds the source's schema, partitioning and properties and the source's data files as of one version.

The clone is independent, as Databricks has it: its log is its own, and a write to either table never changes the
other (Delta never changes a data file in place: a write adds new files and removes old ones from its own log only).
Its add actions name files inside its own folder, never the source's: on a local warehouse a shallow clone
hard-links the source's files there (no byte is copied, and a VACUUM of the source, which unlinks its own name of a
file, leaves the clone's), a deep clone copies them; on an object store, which has no links, both copy. Every file
the source's log names is checked to lie inside the source's folder, and its new name inside the clone's
(catalog/names.py `inside`): a log naming `../elsewhere` or an absolute path is refused, never followed.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa

from sluicegate.catalog.errors import PathOutsideWarehouseError
from sluicegate.catalog.names import inside
from sluicegate.catalog.uris import Location, ObjectLocation
from sluicegate.storage.delta.checkpoints import checkpoint_if_due
from sluicegate.storage.delta.commit import commit_properties
from sluicegate.storage.delta.errors import DeltaWriteError
from sluicegate.storage.delta.files import json_value
from sluicegate.storage.delta.kept import latest_version
from sluicegate.storage.delta.locks import table_lock
from sluicegate.storage.delta.snapshots import open_version, refuse_unreadable
from sluicegate.storage.delta.tables import create_with_add_actions, open_table
from sluicegate.storage.files import filesystem, store_errors

OPERATION = "CLONE"
_CONSTRAINT_PREFIX = "delta.constraints."
_WRITER_VERSION = "delta.minWriterVersion"


@dataclass(frozen=True)
class Cloned:
    """What a clone committed: the clone's version, and the source's version it holds."""

    version: int
    source_version: int
    files: int
    schema: pa.Schema


def clone_table(source: Location, target: Location, *, shallow: bool, replace: bool, source_name: str,
                version: int | None = None, timestamp: dt.datetime | None = None,
                configuration: dict[str, str] | None = None, name: str | None = None,
                description: str | None = None) -> Cloned:
    """Clone the Delta table in the folder `source` (as of `version` or `timestamp`, else its latest) into the
    folder `target` (both already checked to be table folders of the warehouse): a new table there, or a new version
    of the table there when `replace`. `configuration`: the clone's `delta.*` properties."""
    table = open_version(str(source), version, timestamp)
    refuse_unreadable(table, str(source))
    actions = pa.table(table.get_add_actions(flatten=False)).to_pylist()
    adds = [_placed(source, target, action, shallow) for action in actions]
    config = dict(configuration or {})
    constraints = {k: v for k, v in config.items() if k.startswith(_CONSTRAINT_PREFIX)}
    parameters = {"source": source_name, "sourceVersion": str(table.version()), "isShallow": str(shallow).lower()}
    with table_lock(str(target)):
        create_with_add_actions(
            target, table.schema(), adds, mode="overwrite" if replace else "error",
            partition_by=list(table.metadata().partition_columns) or None, name=name, description=description,
            configuration={k: v for k, v in config.items() if k not in constraints} or None,
            commit_properties=commit_properties(OPERATION, parameters))
        clone = open_table(target)
        if constraints:  # delta-rs creates a table from known properties only: its CHECK constraints follow
            clone.alter.set_table_properties(
                {**constraints, _WRITER_VERSION: "3"}, raise_if_not_exists=False,
                commit_properties=commit_properties("ADD CONSTRAINT", constraints))
            clone = open_table(target)
        checkpoint_if_due(clone, latest_version(str(target), int(clone.version())))
    return Cloned(int(clone.version()), int(table.version()), len(adds), pa.schema(table.schema().to_arrow()))


def _placed(source: Location, target: Location, action: dict[str, Any], shallow: bool) -> Any:
    """The clone's add action for one of the source's files, once the file lies in the clone's folder."""
    from deltalake.transaction import AddAction

    relative = unquote(action["path"])  # the log's path is URL-encoded; the file's name on disk is not
    if "://" in relative or relative.startswith(("/", "\\")):
        raise PathOutsideWarehouseError(
            f"the source table's log names the file {relative} outside its folder; nothing was cloned",
            hint="a table whose log names files elsewhere (itself a clone made by another engine) cannot be cloned")
    origin = inside(source, _under(source, relative))
    destination = inside(target, _under(target, relative))
    _place(origin, destination, shallow)
    return AddAction(relative, int(action["size_bytes"]), _partition_values(action.get("partition")),
                     int(action["modification_time"]), True, _stats(action))


def _under(folder: Location, relative: str) -> Location:
    return folder / relative if isinstance(folder, ObjectLocation) else Path(folder, relative)


def _place(origin: Location, destination: Location, shallow: bool) -> None:
    """Put the source's file `origin` at `destination`: a hard link for a local shallow clone (a copy when the two
    lie on different filesystems), a copy otherwise. A file already there (a clone replaced by a clone of the same
    source) is kept only if it is that very file."""
    if isinstance(origin, ObjectLocation) or isinstance(destination, ObjectLocation):
        fs, origin_path = filesystem(origin)
        with store_errors(origin):
            fs.copy_file(origin_path, filesystem(destination)[1])
        return
    destination.parent.mkdir(parents=True, exist_ok=True)
    if destination.exists():
        if os.path.samefile(origin, destination):
            return
        raise DeltaWriteError(f"the clone's folder already holds another file named {destination.name}",
                              hint="drop the table and clone it again")
    if shallow:
        try:
            os.link(origin, destination)
            return
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
    shutil.copyfile(origin, destination)


def _partition_values(partition: dict[str, Any] | None) -> dict[str, str | None]:
    """Delta's partitionValues (strings) from delta-rs's typed partition struct."""
    return {key: None if value is None else str(value).lower() if isinstance(value, bool) else str(value)
            for key, value in (partition or {}).items()}


def _stats(action: dict[str, Any]) -> str:
    """Delta's JSON statistics of a file, from delta-rs's typed add action: what skipping reads, kept in the clone."""
    stats: dict[str, Any] = {"numRecords": action.get("num_records")}
    for key, field in (("minValues", "min"), ("maxValues", "max"), ("nullCount", "null_count")):
        if action.get(field) is not None:
            stats[key] = _json_tree(action[field])
    return json.dumps(stats, default=str)


def _json_tree(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _json_tree(item) for key, item in value.items() if item is not None}
    return json_value(value)
