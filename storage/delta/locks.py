"""One lock per Delta table in this process, held by every writer from the snapshot it commits against to its commit.

delta-rs checks a commit against the ones that landed since its read version, but it lets a commit pass that
removes files a concurrent *compaction* (files added and removed without `dataChange`) already removed: the rows
of those files would be in the table twice. So the writers that remove files (a stream's MERGE, an overwrite, a
rewrite, a compaction, OPTIMIZE) commit under this lock, each first checking that what it removes is still there
(`storage/delta/commit.py`). All of the gateway's writers run in this process (a stream's commit runs on the
driver), so one lock per location serializes them; the work before the commit (Spark writing files, a compaction
reading and writing Parquet) stays outside it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from sluicegate.catalog.uris import ObjectLocation, as_location, is_object_uri

_locks: dict[str, threading.RLock] = {}
_guard = threading.Lock()


def _key(location: str | Path | ObjectLocation) -> str:
    if is_object_uri(location):
        return str(as_location(location))
    return os.path.normpath(os.path.abspath(str(as_location(location))))


def table_lock(location: str | Path | ObjectLocation) -> threading.RLock:
    """The lock of the table at `location` (a path, a `file://` or object URI; re-entrant: a writer may take it
    again inside its commit)."""
    key = _key(location)
    with _guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = threading.RLock()
        return lock
