"""Retention of a Delta table's removed files and old log entries, by Delta's rules, for VACUUM and the background
compactor.

A file removed from the table (by a compaction, an overwrite, a DELETE) is still part of every older version: time
travel and a reader pinned to such a version read it. Delta keeps it for `delta.deletedFileRetentionDuration` after
its REMOVAL, the `deletionTimestamp` of its remove action (a tombstone, in the JSON commits and in the checkpoint's
`remove` column), not after it was written: a small file written a week ago and compacted away a minute ago must
stay. Files the log never mentions (a write that crashed before its commit left its `_sg_write_*` staging folder)
go by their modification time. The log (`_delta_log/`) is never touched here, nor a file of the current version.

delta-rs's own vacuum skips every folder whose name starts with `_`, so it would never delete the gateway's files
(they all lie in `_sg_write_*` folders): this module lists and deletes through storage/files.py itself, which works
for local folders and object stores alike. Log entries are cleaned by delta-rs's `cleanup_metadata`, which deletes
the JSON commits and checkpoints older than `delta.logRetentionDuration` only up to a checkpoint that is itself that
old, so every version inside the window can still be loaded.

Statements hold the versions they read (storage/delta/holds.py); retention keeps every file a held version needs.

An AUTO CDC table's state tables (`_sg_cdc_state/<stream id>/`) are Delta tables of their own that VACUUM of the table
never touches; the table's background retention deletes their removed files an hour after their removal, since
their only reader, the table's next batch, reads their latest version.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from sluicegate.catalog.uris import is_object_uri
from sluicegate.storage.delta.errors import DeltaTableNotFoundError, DeltaUnsupportedFeatureError
from sluicegate.storage.delta.holds import holds, oldest_hold
from sluicegate.storage.delta.intervals import (
    InvalidIntervalError,
    Retentions,
    check_interval_properties,
    interval_seconds,
    table_retentions,
)
from sluicegate.storage.delta.tables import is_delta_table, open_table
from sluicegate.storage.files import StoredFile, delete_files, list_files, read_bytes

__all__ = [
    "CDC_STATE_FOLDER", "InvalidIntervalError", "RetentionResult", "Retentions", "VacuumResult",
    "cdc_states", "check_interval_properties", "clean_up_log", "effective_retentions", "expired_files",
    "interval_seconds", "maintain_retention", "tombstones", "vacuum",
]

LOG_FOLDER = "_delta_log"
# a commit file before it is put in place (storage/delta/log_commits.py, delta-rs): `_commit_<uuid>.json.tmp`
TEMPORARY_COMMIT = re.compile(r"_commit_[0-9a-f-]{32,36}\.json\.tmp")
# A Delta table of its own inside a table's folder, which the table's log does not know and retention of the table
# never touches: an AUTO CDC table's keys, ranks and tombstones, or SCD type 2's events (engine/streams/cdc_sink.py).
CDC_STATE_FOLDER = "_sg_cdc_state"
# Automatic retention never deletes a file the log does not know that is younger than this, whatever the table's
# retention: a write in flight has its files on disk before its commit, for as long as the write takes.
UNTRACKED_MIN_AGE_SECONDS = 3600.0
_COMMIT = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT = re.compile(r"^(\d{20})\.checkpoint(?:\.(\d+)\.(\d+)|\.[^.]+)?\.parquet$")


@dataclass(frozen=True)
class VacuumResult:
    paths: tuple[str, ...]     # deleted (or, on a dry run, to delete), relative to the table, `/`-separated
    bytes: int


@dataclass(frozen=True)
class RetentionResult:
    files_deleted: int
    bytes_freed: int
    log_entries_deleted: int


def effective_retentions(location: str) -> Retentions:
    """The table's retentions from its Delta log configuration, Delta's defaults where it sets none."""
    return table_retentions(open_table(location).metadata().configuration)


def _join(location: str, relative: str) -> str:
    return f"{location.rstrip('/')}/{relative}"


def _local_path(path: str) -> str | None:
    """A log path made relative to the table (URL-decoded), None for a file outside it (an absolute URI)."""
    decoded = unquote(path)
    if "://" in decoded or decoded.startswith("/"):
        return None
    return decoded


def _newest_checkpoint(log: list[StoredFile]) -> tuple[int, list[str]]:
    """(version, files) of the newest complete checkpoint in the listing of `_delta_log/`; (-1, []) for none."""
    found: dict[int, dict[str, list[str]]] = {}
    for stored in log:
        match = _CHECKPOINT.match(stored.path)
        if match:
            parts = match.group(3) or "1"
            found.setdefault(int(match.group(1)), {}).setdefault(parts, []).append(stored.path)
    for version in sorted(found, reverse=True):
        for parts, names in found[version].items():
            if len(names) == int(parts):
                return version, sorted(names)
    return -1, []


def _checkpoint_removes(location: str, names: list[str]) -> list[dict[str, Any]]:
    """The remove actions of a checkpoint (its sidecars too, for a v2 checkpoint)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    removes: list[dict[str, Any]] = []
    sidecars: list[str] = []
    for name in names:
        data = pq.read_table(pa.BufferReader(read_bytes(_join(location, f"{LOG_FOLDER}/{name}"))))
        if "remove" in data.column_names:
            removes += [r for r in data.column("remove").to_pylist() if r]
        if "sidecar" in data.column_names:
            sidecars += [s["path"] for s in data.column("sidecar").to_pylist() if s]
    for sidecar in sidecars:
        data = pq.read_table(pa.BufferReader(read_bytes(_join(location, f"{LOG_FOLDER}/_sidecars/{sidecar}"))))
        if "remove" in data.column_names:
            removes += [r for r in data.column("remove").to_pylist() if r]
    return removes


def tombstones(location: str) -> dict[str, int]:
    """Every file the log records as removed (relative path -> deletionTimestamp in ms, the latest when it was
    removed twice): the newest checkpoint's tombstones, then the JSON commits after it. A file added again after
    its removal is no tombstone."""
    log = list_files(_join(location, LOG_FOLDER))
    checkpoint, names = _newest_checkpoint(log)
    removed: dict[str, int] = {}

    def remove(action: dict[str, Any]) -> None:
        path = _local_path(action["path"])
        if path is not None:
            removed[path] = max(removed.get(path, 0), int(action.get("deletionTimestamp") or 0))

    for action in _checkpoint_removes(location, names):
        remove(action)
    commits = sorted((int(m.group(1)), s.path) for s in log if (m := _COMMIT.match(s.path)) and int(m.group(1)) >
                     checkpoint)
    for _, name in commits:
        for line in read_bytes(_join(location, f"{LOG_FOLDER}/{name}")).decode().splitlines():
            if not line.strip():
                continue
            action = json.loads(line)
            if "remove" in action:
                remove(action["remove"])
            elif "add" in action and (path := _local_path(action["add"]["path"])) is not None:
                removed.pop(path, None)
    return removed


def _live_files(table: Any) -> set[str]:
    """The files of the version `table` (a DeltaTable) is at, relative to the table."""
    return {p for p in (_local_path(path) for path in table.get_add_actions(flatten=True).column("path").to_pylist())
            if p is not None}


def _checksum_of(path: str) -> str | None:
    """The file a Hadoop checksum (`dir/.name.crc`, beside what Spark writes locally) is the checksum of."""
    folder, _, name = path.rpartition("/")
    if not (name.startswith(".") and name.endswith(".crc")):
        return None
    return f"{folder}/{name[1:-4]}" if folder else name[1:-4]


def _held_files(location: str, current: int) -> set[str] | None:
    """The files of every held version older than `current`; None when one of them can no longer be loaded (its
    log entries are gone): the caller then keeps every removed file."""
    from deltalake.exceptions import DeltaError as LoadError

    needed: set[str] = set()
    for version in sorted({h.version for h in holds(location) if h.version < current}):
        try:
            needed |= _live_files(open_table(location, version))
        except (LoadError, OSError):
            return None
    return needed


def expired_files(location: str, retention_seconds: float, now: float | None = None, *,
                  untracked_min_age: float = 0.0) -> list[StoredFile]:
    """The files VACUUM may delete from the table at `location` at time `now` (default: the clock): removed from the
    table more than `retention_seconds` ago, or never in the log and last modified before that (and at least
    `untracked_min_age` ago), and needed by no held version (storage/delta/holds.py) nor removed after the oldest
    hold was taken. Never a file of the current version, never the log."""
    now = time.time() if now is None else now
    listed = [s for s in list_files(location)
              if not s.path.startswith((f"{LOG_FOLDER}/", f"{CDC_STATE_FOLDER}/"))]
    current = open_table(location)
    if "deletionVectors" in (current.protocol().reader_features or ()):
        raise DeltaUnsupportedFeatureError(
            f"the table at {location} may use deletion vectors, whose files this gateway's retention does not know",
            hint="vacuum it with an engine that writes deletion vectors (Spark with Delta)")
    live = _live_files(current)
    removed = tombstones(location)
    cutoff_ms = (now - retention_seconds) * 1000
    untracked_cutoff_ms = min(cutoff_ms, (now - untracked_min_age) * 1000)
    held_since = oldest_hold(location)
    held = _held_files(location, current.version()) if held_since is not None else set()
    expired = []
    for stored in listed:
        if stored.path in live or _checksum_of(stored.path) in live:
            continue
        if stored.path in removed:
            removed_ms = removed[stored.path]
            if removed_ms > cutoff_ms or held is None or stored.path in held or (
                    held_since is not None and removed_ms >= held_since * 1000):
                continue
        elif stored.mtime_ms > untracked_cutoff_ms:
            continue
        expired.append(stored)
    return expired


def vacuum(location: str, retention_seconds: float, dry_run: bool = False, now: float | None = None, *,
           untracked_min_age: float = 0.0) -> VacuumResult:
    """Delete (or, on a dry run, list) the table's expired files (`expired_files`); a local table's folders left
    empty by it go too. No lock: nothing is committed, no file of the version read is deleted, and a file
    committed after the log was read is younger than the retention unless its write took longer than that (which
    is why retentions under a week are refused by default, and automatic retention keeps young untracked files)."""
    now = time.time() if now is None else now
    expired = expired_files(location, retention_seconds, now, untracked_min_age=untracked_min_age)
    paths = tuple(stored.path for stored in expired)
    if not dry_run and paths:
        delete_files(location, list(paths))
        if not is_object_uri(location):
            emptied = {parent for path in paths for parent in _parents(path)}
            _remove_empty_folders(location, emptied, now - max(retention_seconds, untracked_min_age))
    return VacuumResult(paths, sum(stored.size for stored in expired))


def _parents(path: str) -> list[str]:
    """`a/b/c.parquet` -> [`a/b`, `a`]."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]


def _remove_empty_folders(location: str, emptied: set[str], cutoff: float) -> None:
    """Folders of a local table left empty, deepest first: those `emptied` held deleted files (the staging folders
    of expired writes, emptied just now), and any modified before `cutoff`; a younger empty folder may be a write's
    that has not written its files yet, and stays. A folder a writer filled meanwhile is not empty and stays too."""
    import errno

    root = os.path.abspath(location)
    for directory, _, _ in sorted(os.walk(root), key=lambda walk: -len(walk[0])):
        relative = os.path.relpath(directory, root)
        if directory == root or relative.split(os.sep)[0] == LOG_FOLDER or os.listdir(directory):
            continue
        if relative.replace(os.sep, "/") in emptied or os.path.getmtime(directory) <= cutoff:
            try:
                os.rmdir(directory)
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
                    raise


def clean_up_log(location: str, now: float | None = None) -> int:
    """Delete the log entries older than the table's `delta.logRetentionDuration` (delta-rs's `cleanup_metadata`:
    only those before a checkpoint that is itself older, so every version in the window stays loadable), and the
    temporary commit files a writer killed between writing one and putting it in place left behind (the
    gateway's and delta-rs's `_commit_<uuid>.json.tmp`, no reader's business) once they are an hour old: a live
    writer's is gone within milliseconds. Returns how many files of `_delta_log/` went. delta-rs reads the clock
    itself for the entries: `now` only ages the temporary files."""
    log = _join(location, LOG_FOLDER)
    listed = list_files(log)
    cutoff_ms = ((time.time() if now is None else now) - UNTRACKED_MIN_AGE_SECONDS) * 1000
    abandoned = [entry.path for entry in listed
                 if TEMPORARY_COMMIT.fullmatch(entry.path) and entry.mtime_ms < cutoff_ms]
    if abandoned:
        delete_files(log, abandoned)
    open_table(location).cleanup_metadata()
    return len(listed) - len(list_files(log))


def maintain_retention(location: str | Path, now: float | None = None) -> RetentionResult:
    """Apply the table's own retentions: its expired files deleted (untracked ones only past an hour too, and
    nothing a held version needs), its expired log entries cleaned. What the background compactor calls for each
    streaming table, flow target and materialized view."""
    location = str(location)
    if not is_delta_table(location):  # dropped since the caller listed it, say
        raise DeltaTableNotFoundError(f"no Delta table at {location}", hint="retention applies to Delta tables only")
    retentions = effective_retentions(location)
    result = vacuum(location, retentions.deleted_files, now=now, untracked_min_age=UNTRACKED_MIN_AGE_SECONDS)
    files, freed, entries = len(result.paths), result.bytes, clean_up_log(location, now)
    for state in cdc_states(location):
        # a state's batch reads its latest version only: its rewritten files go once a write in flight is done
        kept = vacuum(state, UNTRACKED_MIN_AGE_SECONDS, now=now, untracked_min_age=UNTRACKED_MIN_AGE_SECONDS)
        files, freed, entries = files + len(kept.paths), freed + kept.bytes, entries + clean_up_log(state, now)
    return RetentionResult(files, freed, entries)


def cdc_states(location: str) -> list[str]:
    """The AUTO CDC state tables inside the table's folder (`_sg_cdc_state/<stream id>/`, engine/streams/cdc_sink.py):
    each batch rewrites part of one, so their removed files are deleted with the table's retention, not kept."""
    root = f"{location.rstrip('/')}/{CDC_STATE_FOLDER}"
    names = sorted({stored.path.split("/")[0] for stored in list_files(root) if "/" in stored.path})
    return [f"{root}/{name}" for name in names if is_delta_table(f"{root}/{name}")]
