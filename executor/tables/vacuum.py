"""VACUUM: delete the files of a Delta table that no version inside the retention needs, by Delta's rule
(storage/delta/retention.py): a removed file once its removal is older than the retention, a file the log never
knew (the staging folder, `_sg_write_*`, of a write that crashed before its commit) once it is older than that.
Files a running statement's pinned version reads stay whatever the retention (storage/delta/holds.py).

Without RETAIN the table's `delta.deletedFileRetentionDuration` applies (a week by default), as on Databricks.
Spark's rule holds: an explicit RETAIN under 168 hours is refused unless
`spark.databricks.delta.retentionDurationCheck.enabled` is false, because a running reader may still need the files;
a shorter table property is its owner's choice. `DRY RUN` lists the files (Databricks' answer: one `path` column,
the first 1000), a real run answers with the table's location.
"""

from __future__ import annotations

import os

from sluicegate.catalog.uris import is_object_uri
from sluicegate.dialect.statements import Vacuum
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import WarehouseError
from sluicegate.executor.lookups import require_table
from sluicegate.executor.output import rows_result
from sluicegate.storage.delta import retention

DEFAULT_RETENTION_HOURS = 168.0
DRY_RUN_LIMIT = 1000
_CHECK_KEY = "spark.databricks.delta.retentionDurationCheck.enabled"


def vacuum(ctx: StatementContext, stmt: Vacuum) -> StatementResult:
    entry = require_table(ctx, stmt.table, "VACUUM")
    hours = stmt.retain_hours
    if hours is not None and hours < DEFAULT_RETENTION_HOURS \
            and (ctx.spark.conf.get(_CHECK_KEY, "true") or "true").lower() != "false":
        raise WarehouseError(
            f"VACUUM with a retention of {hours:g} hours may delete files that running readers still need.",
            error_class="DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT", sqlstate="22023",
            hint=f"SET {_CHECK_KEY} = false to allow it, or RETAIN {DEFAULT_RETENTION_HOURS:g} HOURS or more",
        )
    location = entry.location or ""
    seconds = retention.effective_retentions(location).deleted_files if hours is None else hours * 3600
    result = retention.vacuum(location, seconds, dry_run=stmt.dry_run)
    shown = location if is_object_uri(location) else f"file:{os.path.abspath(location)}"
    if stmt.dry_run:
        return rows_result([("path", "string")],
                           [(f"{shown.rstrip('/')}/{path}",) for path in result.paths[:DRY_RUN_LIMIT]])
    return rows_result([("path", "string")], [(shown,)])
