"""A stream's checkpoint kept on an object store: Spark writes a local folder (a cache), the store holds the truth.

Spark has no S3 filesystem here, so its checkpoint must be a local folder. With the warehouse on an object store that
folder is only a cache: `restore` replaces it by the store's copy before the query starts (local leftovers are thrown
away), and `upload` copies to the store what Spark wrote or changed since the last upload, in the order Spark wrote
it (by modification time), so the store's copy is always a prefix of Spark's own writes: a `sources/0/N` before the
`offsets/N` that names it, a batch's state files before its `commits/N`. Files Spark removed (its cleanup of old
batches) are removed from the store lazily, after the uploads of the same pass. Hidden files (Spark's `.name.tmp`
of a write under way, Hadoop's `.crc` checksums) are never copied: Spark only renames a whole file into place.

Exactly once with the store as the truth. The Delta sink (engine/streams/sink.py) calls `upload` at the start of
its call for batch N, before anything of N is committed to Delta. Spark wrote `offsets/N` (and the file source's
`sources/0/N`) before calling the sink, and batch N-1's state store files and `commits/N-1` before planning N, so
after that upload the store holds offsets/N and the state batch N starts from. Then, whatever the Delta table
holds when the gateway dies:
- nothing of N: the restored checkpoint replays N from offsets/N (or plans it afresh when offsets/N did not reach the
  store; then no Delta commit carries N either, as the upload precedes the commit);
- N committed (txn(stream id, N) in the log): the restored checkpoint has offsets/N and no commits/N (or commits/N if
  a later upload made it), so Spark replays N from the same offsets and the state of N-1; the sink finds txn N
  already in the table and writes nothing, while the batch still runs so its state stores commit state N.
A replayed batch reads the same input (replayable sources: file lists, Delta versions, Kafka offsets from offsets/N)
and Spark's stateful operators are deterministic, so the table ends equal to the result over the whole input. The
local cache may be wiped at any moment between runs. A clean stop uploads once more (commits/N included) so the next
start replays nothing.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem

    from sluicegate.catalog.uris import ObjectLocation

log = logging.getLogger(__name__)

Stamp = tuple[int, int]          # (size, mtime in ns): a local file changed when its stamp did


def _hidden(relative: str) -> bool:
    """Spark's temporary files and Hadoop's checksums: never part of a checkpoint's truth."""
    name = relative.rsplit("/", 1)[-1]
    return name.startswith(".") or name.endswith((".tmp", ".crc"))


def _local_files(root: Path) -> dict[str, tuple[Stamp, int]]:
    """Relative path (with '/') -> (stamp, mtime) of each file Spark has put in place under `root`."""
    files: dict[str, tuple[Stamp, int]] = {}
    for directory, _, names in os.walk(root):
        for name in names:
            full = os.path.join(directory, name)
            relative = os.path.relpath(full, root).replace(os.sep, "/")
            if _hidden(relative):
                continue
            try:
                status = os.stat(full)
            except FileNotFoundError:   # removed by Spark's cleanup while we looked: nothing to copy
                continue
            files[relative] = ((status.st_size, status.st_mtime_ns), status.st_mtime_ns)
    return files


class CheckpointMirror:
    """The checkpoint folder `local` mirrored to `remote` (a `bucket/prefix` path) on `filesystem`."""

    def __init__(self, filesystem: FileSystem, remote: str, local: Path) -> None:
        self.filesystem = filesystem
        self.remote = remote.rstrip("/")
        self.local = Path(local)
        self._uploaded: dict[str, Stamp] = {}
        self._lock = threading.Lock()

    def restore(self) -> int:
        """Replace the local folder by the store's copy (an empty folder when the store has none); returns the
        number of files restored."""
        from pyarrow.fs import FileSelector, FileType

        with self._lock:
            if self.local.exists():
                shutil.rmtree(self.local)
            self.local.mkdir(parents=True)
            self._uploaded = {}
            infos = self.filesystem.get_file_info(FileSelector(self.remote, recursive=True, allow_not_found=True))
            for info in infos:
                if info.type != FileType.File:
                    continue
                relative = info.path[len(self.remote) + 1:]
                if _hidden(relative):
                    continue
                target = self.local / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                with self.filesystem.open_input_stream(info.path) as source, open(target, "wb") as out:
                    shutil.copyfileobj(source, out, 1 << 20)
                status = target.stat()
                self._uploaded[relative] = (status.st_size, status.st_mtime_ns)
            if self._uploaded:
                log.info("checkpoint %s restored from the store (%d files)", self.local.name, len(self._uploaded))
            return len(self._uploaded)

    def upload(self) -> int:
        """Copy what is new or changed since the last upload to the store, oldest first, then remove from the store
        what Spark removed locally; returns the number of files copied."""
        with self._lock:
            files = _local_files(self.local)
            changed = sorted((mtime, relative) for relative, (stamp, mtime) in files.items()
                             if self._uploaded.get(relative) != stamp)
            copied = 0
            for _, relative in changed:
                stamp = files[relative][0]
                try:
                    with open(self.local / relative, "rb") as source, \
                            self.filesystem.open_output_stream(f"{self.remote}/{relative}") as out:
                        shutil.copyfileobj(source, out, 1 << 20)
                except FileNotFoundError:   # removed by Spark meanwhile (an old batch's file): nothing to keep
                    continue
                self._uploaded[relative] = stamp
                copied += 1
            for relative in [r for r in self._uploaded if r not in files]:
                try:
                    self.filesystem.delete_file(f"{self.remote}/{relative}")
                except FileNotFoundError:
                    pass
                del self._uploaded[relative]
            return copied


@dataclass(frozen=True)
class CheckpointStore:
    """Where the streams' checkpoints live on the store: the prefix `root` (`s3://bucket/warehouse/_checkpoints`),
    served by the settings registered for it (storage/registry.py); a stream's copy is
    `root/<the local folder's name>` (its stream id, never a user's name)."""

    root: str

    def mirror(self, local: str | Path) -> CheckpointMirror:
        from sluicegate.storage.files import filesystem

        fs, path = filesystem(self._copy(local))
        return CheckpointMirror(fs, path, Path(local))

    def remove(self, local: str | Path) -> None:
        """Remove the store's copy of a dropped stream's checkpoint (a failure is logged: the copy of a stream id
        no catalog row names is never read again)."""
        from sluicegate.storage.files import delete_prefix

        delete_prefix(self._copy(local), "the checkpoint copy of a dropped stream")

    def _copy(self, local: str | Path) -> ObjectLocation:
        from sluicegate.catalog.uris import ObjectLocation

        return ObjectLocation.parse(self.root) / Path(local).name   # refuses a name that is not one segment
