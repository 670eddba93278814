"""Checkpoints and the clean-up of expired log entries after the gateway's own commits, in place of delta-rs's
post-commit hook.

delta-rs runs a hook after every commit that lists `_delta_log/` three times and `stat`s every entry to decide
whether a checkpoint is due: measured at 5,000 log entries, 15,190 `stat` calls in one commit, and the commit's cost
grew with the table's age (a streaming table's log gains an entry a micro-batch). The decision needs no listing:
the version just committed says it. So every commit of the gateway turns the hook off (`NO_HOOKS`) and then calls
`checkpoint_if_due` with its version, which does what the hook did: a checkpoint of that version when (version + 1)
is a multiple of `delta.checkpointInterval` (100 by default; delta-rs's rule, checked against its hook), then, when
`delta.enableExpiredLogCleanup` is not false, delta-rs's clean-up of the log entries older than
`delta.logRetentionDuration` (storage/delta/retention.py says which it keeps).

The commit has landed before this runs: a checkpoint that fails is logged and left to the next one due, never
reported as a failed statement (a reader replays the JSON commits since the last checkpoint meanwhile).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from sluicegate.catalog.uris import ObjectLocation, is_object_uri

log = logging.getLogger(__name__)

DEFAULT_CHECKPOINT_INTERVAL = 100
CHECKPOINT_INTERVAL = "delta.checkpointInterval"
EXPIRED_LOG_CLEANUP = "delta.enableExpiredLogCleanup"


def no_hooks() -> Any:
    """delta-rs's post-commit properties for every commit the gateway makes: no checkpoint, no log clean-up (the
    gateway runs both itself, `checkpoint_if_due`)."""
    from deltalake import PostCommitHookProperties

    return PostCommitHookProperties(create_checkpoint=False, cleanup_expired_logs=False)


def checkpoint_interval(configuration: dict[str, str]) -> int:
    """The table's `delta.checkpointInterval`; the default for a value that is no positive whole number, as
    delta-rs reads it."""
    try:
        interval = int(configuration.get(CHECKPOINT_INTERVAL, DEFAULT_CHECKPOINT_INTERVAL))
    except ValueError:
        return DEFAULT_CHECKPOINT_INTERVAL
    return interval if interval > 0 else DEFAULT_CHECKPOINT_INTERVAL


def checkpoint_due(version: int, configuration: dict[str, str]) -> bool:
    return (version + 1) % checkpoint_interval(configuration) == 0


def checkpoint_if_due(table: Any, version: int) -> bool:
    """After the commit of `version` to the delta-rs `table` (at that version or before it; moved to it in place
    when a checkpoint is due): write the checkpoint and clean up the expired log when delta-rs's hook would have.
    Returns whether a checkpoint was written."""
    configuration = dict(table.metadata().configuration)
    if not checkpoint_due(version, configuration):
        return False
    try:
        if int(table.version()) != version:
            table.load_as_version(version)
        table.create_checkpoint()
        if configuration.get(EXPIRED_LOG_CLEANUP, "true").strip().lower() != "false":
            table.cleanup_metadata()
    except Exception as exc:  # noqa: BLE001 - the commit has landed; the next checkpoint due tries again
        log.warning("checkpoint of version %d of %s failed (the next one due is tried): %s",
                    version, table.table_uri, exc)
        return False
    return True


def last_checkpoint_version(location: str | Path | ObjectLocation) -> int | None:
    """The version `_delta_log/_last_checkpoint` names for a local table; None when there is none (or the table is
    on an object store, where reading it is a request)."""
    if is_object_uri(location):
        return None
    try:
        with open(os.path.join(str(location).removeprefix("file://"), "_delta_log", "_last_checkpoint")) as file:
            return int(json.load(file)["version"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
