"""A Delta table kept open by one writer and brought forward to the latest commit by reading only the new commits.

Opening a table replays its log from the last checkpoint, and a streaming table's checkpoint grows with its age: it
carries a `remove` for every file compaction took out within the 7-day deleted-file retention. Measured with
delta-rs: 5.9 ms an open with 1,000 removed files, 21 ms with 4,000; at 10,000 batches the stream's sink, which
opened its table four times a batch, spent ~220 ms a batch just opening it (the commit went from 322 to 607 ms).
A kept table first looks for the next commit files (one `stat` each) and, when there are some, loads just them
(0.4 ms for one). The commit file of the kept version is fingerprinted (inode, size, mtime): a table dropped and
created again at the same place, or whose log was cleaned up past the kept version, is opened anew, and so is one
far behind (its last checkpoint is then the shorter way). Object-store tables are opened each time (each probe
would be a request).

A kept table is also opened anew once it has been brought forward through `REOPEN_AFTER_COMMITS` commits and a
checkpoint newer than its opening exists: delta-rs's table carries every commit loaded since it was opened, and its
commits and loads cost more with them (measured: 10 ms a commit right after the open, 25 ms 300 commits later, at
one log length). Opened from the new checkpoint it starts small again; that costs one open per ~100 commits.

A kept table belongs to one user at a time (a stream's sink, the compactor): `load_as_version` moves it in place.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from sluicegate.catalog.uris import ObjectLocation, as_location, is_object_uri
from sluicegate.storage.delta.checkpoints import last_checkpoint_version
from sluicegate.storage.delta.tables import is_delta_table, open_table

# how far behind a kept table may be before it is opened anew from its last checkpoint
MAX_COMMITS_TO_CATCH_UP = 50
# how many commits a kept table is brought forward through before it is opened anew from a newer checkpoint
REOPEN_AFTER_COMMITS = 100

Fingerprint = tuple[int, int, int]


def table_location(table: Any) -> str:
    """Where the delta-rs `table` lies: the decoded path of a local table (delta-rs gives a `file://` URI whose
    characters are %-encoded), the URI of one on an object store."""
    uri = str(table.table_uri)
    if uri.startswith("file://"):
        return unquote(uri.removeprefix("file://")).rstrip("/") or "/"
    return str(as_location(uri))


def _log_folder(location: str | Path | ObjectLocation) -> str:
    path = str(location)
    return os.path.join(path.removeprefix("file://"), "_delta_log")


def commit_file(location: str | Path | ObjectLocation, version: int) -> str:
    return os.path.join(_log_folder(location), f"{version:020d}.json")


def fingerprint(location: str | Path | ObjectLocation, version: int) -> Fingerprint | None:
    """The identity of a local table's commit file of `version` (None when there is none)."""
    try:
        stat = os.stat(commit_file(location, version))
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def newest_version(location: str | Path | ObjectLocation, known: int, limit: int | None = None) -> int | None:
    """The latest version of the local table at `location`, probing commit files after the `known` one; None when
    more than `limit` commits landed since."""
    latest = known
    while os.path.exists(commit_file(location, latest + 1)):
        latest += 1
        if limit is not None and latest - known > limit:
            return None
    return latest


def latest_version(location: str | Path | ObjectLocation, known: int) -> int:
    """The table's latest version, `known` being one it has: a probe of the commit files after it for a local
    table, an open for one on an object store."""
    if is_object_uri(location):
        return int(open_table(location).version())
    found = newest_version(location, known)
    return known if found is None else found


def bring_forward(table: Any, location: str | Path | ObjectLocation, known: int, kept: Fingerprint | None) -> bool:
    """Move the local `table` to the latest version in place; False when it must be opened anew instead (dropped and
    created again or cleaned up past, which the fingerprint `kept` of its commit file of version `known` tells;
    far behind). The table may already be past `known` (a MERGE moves the table it runs on)."""
    if kept is None or fingerprint(location, known) != kept:
        return False
    version = int(table.version())
    latest = newest_version(location, version, MAX_COMMITS_TO_CATCH_UP)
    if latest is None:
        return False
    if latest == version:
        return True
    try:
        table.load_as_version(latest)
    except Exception:  # noqa: BLE001 - any failure to bring it forward: open the table the ordinary way
        return False
    return True


class KeptTable:
    """The delta-rs table at `location`, kept between the calls of its one user."""

    def __init__(self, location: str) -> None:
        self.location = location
        self._table: Any = None
        self._known = -1                              # the version `_fingerprint` is of
        self._fingerprint: Fingerprint | None = None
        self._opened = -1                             # the version the table was opened at

    def latest(self) -> Any:
        """The table at its latest version, or None when there is no Delta table at `location`."""
        table = self._table
        if table is not None and not is_object_uri(self.location) and \
                bring_forward(table, self.location, self._known, self._fingerprint) and not self._outgrown(table):
            self._remember(table)
            return table
        self._table = None
        if not is_delta_table(self.location):
            return None
        self._table = open_table(self.location)
        self._known = -1
        self._opened = int(self._table.version())
        self._remember(self._table)
        return self._table

    def _outgrown(self, table: Any) -> bool:
        """Whether `table` has been brought forward through `REOPEN_AFTER_COMMITS` commits since it was opened
        and a checkpoint newer than its opening exists to open it from."""
        if int(table.version()) - self._opened < REOPEN_AFTER_COMMITS:
            return False
        checkpoint = last_checkpoint_version(self.location)
        return checkpoint is not None and checkpoint > self._opened

    def existing(self) -> Any:
        """`latest()` for a writer that needs the table: a missing one raises delta-rs's error, as an open does."""
        table = self.latest()
        return table if table is not None else open_table(self.location)

    def _remember(self, table: Any) -> None:
        version = int(table.version())
        if version != self._known:
            self._known = version
            self._fingerprint = None if is_object_uri(self.location) else fingerprint(self.location, version)

    def forget(self) -> None:
        """Open the table anew next time (after a failure that may have left it half moved)."""
        self._table = None
