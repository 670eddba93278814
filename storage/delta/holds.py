"""Holds on Delta snapshots: a statement that pinned a version of a table says so here until it is done reading.

A query binds its tables to pinned versions (executor/binding/binder.py) and may read their files for minutes. Files
removed from the table after that (a compaction, an overwrite) are still the pinned version's files, so automatic
retention (storage/delta/retention.py) must not delete them while the hold lasts, whatever the retention says.
The registry lives in this process, as do all of the gateway's readers and retention.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sluicegate.catalog.uris import ObjectLocation, as_location, is_object_uri


@dataclass(frozen=True)
class Hold:
    version: int
    taken_at: float      # wall time (time.time()) the hold was taken


_holds: dict[str, dict[int, Hold]] = {}
_ids = itertools.count()
_guard = threading.Lock()


def _key(location: str | Path | ObjectLocation) -> str:
    if is_object_uri(location):
        return str(as_location(location))
    return os.path.normpath(os.path.abspath(str(as_location(location))))


def hold(location: str | Path | ObjectLocation, version: int) -> Callable[[], None]:
    """Hold `version` of the table at `location`; returns the release (calling it twice is harmless)."""
    key, hold_id = _key(location), next(_ids)
    with _guard:
        _holds.setdefault(key, {})[hold_id] = Hold(version, time.time())

    def release() -> None:
        with _guard:
            table = _holds.get(key, {})
            table.pop(hold_id, None)
            if not table:
                _holds.pop(key, None)

    return release


def holds(location: str | Path | ObjectLocation) -> list[Hold]:
    """The live holds on the table at `location`."""
    with _guard:
        return list(_holds.get(_key(location), {}).values())


def oldest_hold(location: str | Path | ObjectLocation) -> float | None:
    """The wall time the oldest live hold on the table was taken, None when there is none."""
    return min((h.taken_at for h in holds(location)), default=None)
