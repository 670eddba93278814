"""A compaction as the background compactor makes one, for tests of what follows it: delta-rs rewrites the table's
files into one and commits that with dataChange=false, under the table's lock as every writer that removes files."""

from __future__ import annotations

from pathlib import Path

from sluicegate.storage.delta.locks import table_lock
from sluicegate.storage.delta.tables import open_table


def compact(location: str | Path) -> int:
    """Rewrite the table's files into one; returns the compaction's version (asserting it removed files)."""
    with table_lock(str(location)):
        table = open_table(str(location))
        metrics = table.optimize.compact()
        assert metrics["numFilesRemoved"] > 1, metrics
        return int(open_table(str(location)).version())
