"""One committed version of a Delta table, and the latest one kept between statements.

A `Snapshot` is what a statement pins: a version's files, schema and statistics, immutable. Pinning the latest
version by opening the table replays the log from its last checkpoint (up to 99 JSON commits, 27-30 ms for a
streaming table at 1,000 commits, more than the rest of a small query), and a streaming table is always near the
end of a checkpoint interval's worth of commits. So the latest snapshot of each local table is kept with the open
delta-rs table behind it: a statement first looks for the next commit file (one `stat`); when there is none the
kept snapshot is still the latest, and when there are new commits only they are read. The commit file of the kept
version is fingerprinted (inode, size, mtime): a table dropped and created again at the same place, or whose log
was cleaned past it, is opened anew (a dropped table's entry ages out of the KEPT_TABLES kept). Object-store
tables are opened each time (each probe would be a request).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sluicegate.catalog.uris import is_object_uri
from sluicegate.storage.delta.errors import (
    DeltaTableNotFoundError,
    DeltaUnsupportedFeatureError,
    DeltaVersionNotFoundError,
)
from sluicegate.storage.delta.kept import Fingerprint, bring_forward, fingerprint
from sluicegate.storage.delta.locks import table_key
from sluicegate.storage.delta.tables import is_delta_table, open_table

# The field metadata that marks a column readers do not see: a materialized view's state
# (executor/materialized_views/incremental.py), kept beside its rows so that one commit changes both (delta-rs keeps
# field metadata; it refuses table properties of its own naming).
HIDDEN_FIELD_KEY = "sluicegate.hidden"

# Reader features whose files Spark's plain Parquet reader reads correctly.
SUPPORTED_READER_FEATURES = frozenset({"timestampNtz", "vacuumProtocolCheck", "v2Checkpoint", "typeWidening"})

# How many tables' latest snapshots are kept (storage/delta/kept.py brings each forward).
KEPT_TABLES = 256


@dataclass(frozen=True)
class Snapshot:
    path: str
    version: int
    files: tuple[str, ...]
    schema: pa.Schema
    partition_columns: tuple[str, ...]
    hidden: tuple[str, ...] = ()       # columns of the files that readers do not see (HIDDEN_FIELD_KEY)
    # the table's id (Delta's metaData.id): a table dropped and created again at the same place, whose versions
    # count from 0 again, has another (the result cache keys by it with the version)
    table_id: str = ""
    # the files' add actions with their statistics (delta-rs' flattened form, in the order of `files`), loaded when
    # first asked for: only a query with predicates needs them (storage/delta/skipping.py)
    add_actions: Callable[[], pa.Table] | None = dataclasses.field(default=None, compare=False, repr=False)


def hidden_columns(schema: pa.Schema) -> tuple[str, ...]:
    return tuple(f.name for f in schema if (f.metadata or {}).get(HIDDEN_FIELD_KEY.encode()) == b"true")


def hide(schema: pa.Schema, names: set[str]) -> pa.Schema:
    """`schema` with the columns `names` marked hidden."""
    return pa.schema([f.with_metadata({**(f.metadata or {}), HIDDEN_FIELD_KEY.encode(): b"true"})
                      if f.name in names else f for f in schema])


def load_snapshot(path: str, version: int | None = None, timestamp: dt.datetime | None = None) -> Snapshot:
    """The table at `path` as of `version` or `timestamp` (the latest version when neither is given)."""
    if version is None and timestamp is None and not is_object_uri(path):
        return _latest.snapshot(path)
    return _open_snapshot(path, version, timestamp)


def _open_snapshot(path: str, version: int | None, timestamp: dt.datetime | None) -> Snapshot:
    table = _open(path, version, timestamp)
    return _snapshot_of(table, path, eager=False)


def open_version(path: str, version: int | None = None, timestamp: dt.datetime | None = None) -> Any:
    """The delta-rs table at `path` as of `version` or `timestamp` (the latest when neither is given); a version
    the table has not is DeltaVersionNotFoundError, no table DeltaTableNotFoundError."""
    return _open(path, version, timestamp)


def _open(path: str, version: int | None = None, timestamp: dt.datetime | None = None) -> Any:
    from deltalake.exceptions import DeltaError, TableNotFoundError

    if not is_delta_table(path):
        raise DeltaTableNotFoundError(f"no Delta table at {path}")
    try:
        table = open_table(path) if version is None else open_table(path, version=version)
        if timestamp is not None:
            table.load_as_version(timestamp)
    except TableNotFoundError as exc:
        raise DeltaTableNotFoundError(f"no Delta table at {path}") from exc
    except DeltaError as exc:
        latest = open_table(path).version()
        wanted = f"version {version}" if timestamp is None else f"timestamp {timestamp.isoformat()}"
        raise DeltaVersionNotFoundError(
            f"the table has no {wanted}: {exc}",
            hint=f"versions 0 to {latest} exist (DESCRIBE HISTORY lists them with their times)",
        ) from exc
    return table


def refuse_unreadable(table: Any, path: str) -> None:
    """DeltaUnsupportedFeatureError when the table's protocol has reader features whose files Spark's plain Parquet
    reader would misread (deletion vectors, column mapping)."""
    unsupported = set(table.protocol().reader_features or ()) - SUPPORTED_READER_FEATURES
    if unsupported:
        raise DeltaUnsupportedFeatureError(
            f"the table at {path} uses Delta reader features this gateway cannot read: "
            f"{', '.join(sorted(unsupported))}",
            hint="rewrite the table without them (for example disable deletion vectors and run OPTIMIZE)",
        )


def _snapshot_of(table: Any, path: str, *, eager: bool) -> Snapshot:
    """The snapshot of `table`'s loaded version. `eager`: read the add actions now, because `table` moves on to
    later versions (a kept table); otherwise they are read when first asked for."""
    refuse_unreadable(table, path)
    schema = pa.schema(table.schema().to_arrow())
    loaded: list[pa.Table] = [pa.table(table.get_add_actions(flatten=True))] if eager else []

    def add_actions() -> pa.Table:
        if not loaded:
            loaded.append(pa.table(table.get_add_actions(flatten=True)))
        return loaded[0]

    return Snapshot(
        path=path,
        version=table.version(),
        files=tuple(table.file_uris()),
        schema=schema,
        partition_columns=tuple(table.metadata().partition_columns),
        hidden=hidden_columns(schema),
        table_id=str(table.metadata().id),
        add_actions=add_actions,
    )


@dataclass
class _Kept:
    table: Any                     # the delta-rs table, loaded at `snapshot.version`
    snapshot: Snapshot
    fingerprint: Fingerprint | None
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


class _LatestSnapshots:
    """The latest snapshot of up to KEPT_TABLES local tables, each brought forward by the commits since."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._guard = threading.Lock()

    def snapshot(self, path: str) -> Snapshot:
        key = table_key(path)
        with self._guard:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
        if kept is not None:
            with kept.lock:
                current = self._bring_forward(kept, path)
            if current is not None:
                return current
            with self._guard:
                if self._kept.get(key) is kept:
                    del self._kept[key]
        table = _open(path)
        snapshot = _snapshot_of(table, path, eager=True)
        with self._guard:
            self._kept[key] = _Kept(table, snapshot, fingerprint(path, snapshot.version))
            self._kept.move_to_end(key)
            while len(self._kept) > KEPT_TABLES:
                self._kept.popitem(last=False)
        return snapshot

    def _bring_forward(self, kept: _Kept, path: str) -> Snapshot | None:
        """`kept`'s snapshot moved to the latest version, or None when the table must be opened anew."""
        version = kept.snapshot.version
        if not bring_forward(kept.table, path, version, kept.fingerprint):
            return None
        if kept.table.version() == version:
            return kept.snapshot
        try:
            snapshot = _snapshot_of(kept.table, path, eager=True)
        except Exception:  # noqa: BLE001 - any failure to bring it forward: open the table the ordinary way
            return None
        kept.snapshot, kept.fingerprint = snapshot, fingerprint(path, snapshot.version)
        return snapshot


_latest = _LatestSnapshots()
