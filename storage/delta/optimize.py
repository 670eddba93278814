"""OPTIMIZE on a Delta table: delta-rs's bin-packing compaction or z-order rewrite, committed as one `dataChange=false`
transaction marked "OPTIMIZE" for DESCRIBE HISTORY.

delta-rs reads the files it rewrites, writes the new ones and commits in one call, so the whole call runs under the
table's lock (storage/delta/locks.py): a stream's MERGE or a DELETE that removes files commits under the same lock
after checking its files are still there (storage/delta/commit.py), and delta-rs alone would let such a commit remove
files this one already rewrote (their rows would then be in the table twice). The price is that the table's other
writers wait for the rewrite; their work before the commit (Spark writing files) does not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sluicegate.storage.delta.checkpoints import checkpoint_if_due, no_hooks
from sluicegate.storage.delta.commit import commit_properties
from sluicegate.storage.delta.errors import DeltaWriteError
from sluicegate.storage.delta.locks import table_lock
from sluicegate.storage.delta.tables import open_table
from sluicegate.storage.files import store_errors

# delta-rs's partition filter: (column, op, value or values), values as the Delta log writes partition values
PartitionFilter = tuple[str, str, str | list[str]]


@dataclass(frozen=True)
class OptimizeOutcome:
    version: int                # the table's version after OPTIMIZE (unchanged when nothing was rewritten)
    metrics: dict[str, Any]     # delta-rs's metrics, `filesAdded` / `filesRemoved` as dicts


def optimize(location: str, partition_filters: Sequence[PartitionFilter] = (), zorder: Sequence[str] = (),
             parameters: dict[str, str] | None = None) -> OptimizeOutcome:
    """Compact the files of the partitions `partition_filters` select (all when empty) into files of delta-rs's
    target size, or rewrite them in z-order of `zorder`; one commit, or none when nothing needed rewriting."""
    from deltalake.exceptions import DeltaError as DeltaRsError

    filters = list(partition_filters) or None
    properties = commit_properties("OPTIMIZE", parameters)
    with table_lock(location), store_errors(location):
        table = open_table(location)
        before = int(table.version())
        try:
            if zorder:
                raw = table.optimize.z_order(list(zorder), partition_filters=filters, commit_properties=properties,
                                             post_commithook_properties=no_hooks())
            else:
                raw = table.optimize.compact(partition_filters=filters, commit_properties=properties,
                                             post_commithook_properties=no_hooks())
        except DeltaRsError as exc:
            raise DeltaWriteError(
                f"OPTIMIZE could not rewrite the table's files: {exc}",
                hint="the table is unchanged; check the table's files and run OPTIMIZE again") from exc
        latest = open_table(location)
        version = latest.version()
        if version != before:
            checkpoint_if_due(latest, version)
    return OptimizeOutcome(version, {key: json.loads(value) if key in ("filesAdded", "filesRemoved") else value
                                     for key, value in raw.items()})
