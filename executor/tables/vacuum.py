"""VACUUM: delete the data files the current version does not reference and that are older than the retention,
including the staging folders (`_sg_write_*`) of writes that crashed before their commit.

Spark's rule holds: a retention under 168 hours is refused unless
`spark.databricks.delta.retentionDurationCheck.enabled` is false, because a running reader may still need them.
"""

from __future__ import annotations

import os
import time
from urllib.parse import unquote

from sluicegate.catalog.uris import is_object_uri
from sluicegate.dialect.statements import Vacuum
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import WarehouseError
from sluicegate.executor.lookups import require_table
from sluicegate.executor.output import rows_result
from sluicegate.storage.delta.tables import open_table
from sluicegate.storage.files import delete_files, list_files

DEFAULT_RETENTION_HOURS = 168.0
_CHECK_KEY = "spark.databricks.delta.retentionDurationCheck.enabled"


def vacuum(ctx: StatementContext, stmt: Vacuum) -> StatementResult:
    entry = require_table(ctx, stmt.table, "VACUUM")
    hours = DEFAULT_RETENTION_HOURS if stmt.retain_hours is None else stmt.retain_hours
    if hours < DEFAULT_RETENTION_HOURS and (ctx.spark.conf.get(_CHECK_KEY, "true") or "true").lower() != "false":
        raise WarehouseError(
            f"VACUUM with a retention of {hours:g} hours may delete files that running readers still need.",
            error_class="DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT", sqlstate="22023",
            hint=f"SET {_CHECK_KEY} = false to allow it, or RETAIN {DEFAULT_RETENTION_HOURS:g} HOURS or more",
        )
    if is_object_uri(entry.location or ""):
        _vacuum_prefix(entry.location or "", hours)
        return rows_result([("path", "string")], [(entry.location,)])
    root = os.path.abspath(entry.location or "")
    table = open_table(root)
    live = {os.path.normpath(os.path.join(root, unquote(path))) for path in table.get_add_actions(flatten=True)
            .column("path").to_pylist()}
    cutoff = time.time() - hours * 3600
    deleted = []
    for directory, folders, files in os.walk(root, topdown=True):
        if os.path.abspath(directory) == root:
            folders[:] = [f for f in folders if f != "_delta_log"]
        for name in files:
            full = os.path.normpath(os.path.join(directory, name))
            if full in live or os.path.getmtime(full) > cutoff:
                continue
            os.remove(full)
            deleted.append(full)
    for directory, _, _ in sorted(os.walk(root), key=lambda w: -len(w[0])):
        inside_log = os.path.relpath(directory, root).split(os.sep)[0] == "_delta_log"
        if directory != root and not inside_log and not os.listdir(directory):
            os.rmdir(directory)
    return rows_result([("path", "string")], [(f"file:{root}",)])


def _vacuum_prefix(location: str, hours: float) -> None:
    """VACUUM on an object store: every object under the table's prefix that the current version does not reference
    and that is older than the retention (the log aside) is deleted; a store has no empty folders to remove."""
    live = {unquote(path) for path in open_table(location).get_add_actions(flatten=True).column("path").to_pylist()}
    cutoff_ms = (time.time() - hours * 3600) * 1000
    stale = [stored.path for stored in list_files(location)
             if not stored.path.startswith("_delta_log/") and stored.path not in live and stored.mtime_ms <= cutoff_ms]
    delete_files(location, stale)
