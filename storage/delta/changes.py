"""What changed in a Delta table between two versions, read from its log: the data files the commits in between
added and removed. The rows of the added files minus the rows of the removed ones are the change, as a multiset
(a rewritten file's unchanged rows appear on both sides and cancel). A file added and removed within the range
counts for neither; a compaction (files added and removed without `dataChange`) changes no row.

Only what the log states exactly is answered: a schema change, a deletion vector, a log entry already cleaned up or
a removed file already vacuumed gives None, and the caller recomputes the view in full.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import unquote

from sluicegate.catalog.uris import as_location, is_object_uri
from sluicegate.storage.delta.read import snapshot_dataframe
from sluicegate.storage.delta.snapshots import load_snapshot
from sluicegate.storage.delta.tables import open_table
from sluicegate.storage.files import prefix_exists, read_bytes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class TableChange:
    location: str
    before: int                          # the version the view reflects
    after: int                           # the version it is refreshed to
    added: dict[str, int]                # file URI -> size in bytes
    removed: dict[str, int]

    @property
    def bytes(self) -> int:
        return sum(self.added.values()) + sum(self.removed.values())

    @property
    def empty(self) -> bool:
        return not self.added and not self.removed


def _uri(root: str, path: str) -> str:
    path = unquote(path)
    if "://" in path:
        return path
    if is_object_uri(root):
        return f"{root}/{path}"
    return "file://" + (path if os.path.isabs(path) else os.path.join(root, path))


def _log_lines(root: str, version: int) -> list[str] | None:
    """The lines of one commit's log entry, local or on the object store; None when it is gone (cleaned up)."""
    try:
        return read_bytes(f"{root}/_delta_log/{version:020d}.json").decode("utf-8").splitlines()
    except FileNotFoundError:
        return None


def _vacuumed(uri: str) -> bool:
    return not prefix_exists(uri.removeprefix("file://"))


def table_change(location: str, before: int, after: int) -> TableChange | None:
    """The files the commits `before`+1 .. `after` added and removed; None when the log cannot say it exactly."""
    root = str(as_location(location)) if is_object_uri(location) else os.path.abspath(location)
    added: dict[str, int] = {}
    removed: dict[str, int] = {}
    for version in range(before + 1, after + 1):
        lines = _log_lines(root, version)
        if lines is None:
            return None  # cleaned up: the change cannot be read
        for line in lines:
            action = json.loads(line) if line.strip() else {}
            if "metaData" in action:
                return None  # the schema or the table's definition may have changed
            add, remove = action.get("add"), action.get("remove")
            for file in (add, remove):
                if file is not None and file.get("deletionVector"):
                    return None
            if add is not None and add.get("dataChange", True):
                added[_uri(root, add["path"])] = int(add.get("size") or 0)
            elif remove is not None and remove.get("dataChange", True):
                uri = _uri(root, remove["path"])
                if uri in added:
                    del added[uri]  # added and removed within the range: never seen by the view
                else:
                    removed[uri] = int(remove.get("size") or 0)
    if any(_vacuumed(uri) for uri in removed):
        return None  # vacuumed: the removed rows cannot be read back
    return TableChange(location, before, after, added, removed)


def table_bytes(location: str, version: int) -> int:
    """The size of a version's data files, from its log (what a full read of the table costs)."""
    import pyarrow as pa

    actions = pa.table(open_table(location, version=version).get_add_actions(flatten=True))
    return sum(size or 0 for size in actions.column("size_bytes").to_pylist()) if actions.num_rows else 0


def change_frames(spark: SparkSession, change: TableChange,
                  net: bool = True) -> tuple[DataFrame | None, DataFrame | None]:
    """The rows the change added and the rows it removed (visible columns; None for a side without files). `net`:
    each side without the rows the other has too (a rewritten file's unchanged rows), so a change of 1 row in a
    rewritten file of 1,000 is 1 row; an aggregation does without (the unchanged rows cancel in its sums and counts,
    at less cost than comparing). Both sides have the schema of `after` (the range holds no schema change)."""
    snapshot = load_snapshot(change.location, change.after)

    def rows(files: dict[str, int]) -> DataFrame | None:
        return snapshot_dataframe(spark, replace(snapshot, files=tuple(files))) if files else None

    plus, minus = rows(change.added), rows(change.removed)
    if net and plus is not None and minus is not None and comparable(plus):
        return plus.exceptAll(minus), minus.exceptAll(plus)
    return plus, minus


def comparable(df: DataFrame) -> bool:
    """Whether rows can be compared whole (Spark cannot compare maps)."""
    from pyspark.sql.types import MapType

    return not any(isinstance(field.dataType, MapType) or "map<" in field.dataType.simpleString()
                   for field in df.schema.fields)
