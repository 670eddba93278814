"""Files under a location, local or on the object store: the one way to get a pyarrow filesystem for a location,
and to list, test, copy and delete a prefix (a table's folder). Object stores have no folders: a prefix exists
when some object lies under it, and deleting it deletes every object under it."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sluicegate.catalog.names import remove_folder
from sluicegate.catalog.uris import Location, ObjectLocation, as_location, is_object_uri
from sluicegate.storage.errors import ObjectStoreUnavailableError
from sluicegate.storage.registry import settings_for

log = logging.getLogger(__name__)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@contextmanager
def store_errors(location: str | Location) -> Iterator[None]:
    """An object store's failure (unreachable, a refused key, a missing bucket) raised as ObjectStoreUnavailableError
    naming the location and the store's own last words; a missing file stays FileNotFoundError, local paths' errors
    stay theirs. The message never holds a credential: neither delta-rs's nor pyarrow's errors carry them."""
    try:
        yield
    except FileNotFoundError:
        raise
    except OSError as exc:
        if not is_object_uri(location):
            raise
        lines = [line.strip(" ↳") for line in _ANSI.sub("", str(exc)).splitlines() if line.strip(" ↳")]
        cause = " <- ".join(reversed(lines[-3:])) if lines else type(exc).__name__
        raise ObjectStoreUnavailableError(
            f"the object store holding {location} failed: {cause}",
            hint="check storage.endpoint, the keys and the bucket in the configuration, and that the store is up",
        ) from exc


@dataclass(frozen=True)
class StoredFile:
    path: str          # relative to the prefix listed, `/`-separated
    size: int
    mtime_ms: int


def filesystem(location: str | Location) -> tuple[Any, str]:
    """(a pyarrow FileSystem, the path of `location` on it): S3FileSystem with the registered store's settings for
    an object URI, the local filesystem otherwise."""
    found = as_location(location)
    if isinstance(found, ObjectLocation):
        return settings_for(found).arrow_filesystem(), found.arrow_path
    from pyarrow.fs import LocalFileSystem

    return LocalFileSystem(), str(found.absolute())


def list_files(prefix: str | Location) -> list[StoredFile]:
    """Every file under `prefix` (recursively), sorted by path; [] when there is none."""
    from pyarrow.fs import FileSelector, FileType

    fs, root = filesystem(prefix)
    with store_errors(prefix):
        infos = fs.get_file_info(FileSelector(root, recursive=True, allow_not_found=True))
    files = [StoredFile(info.path[len(root):].lstrip("/"), info.size or 0,
                        int(info.mtime.timestamp() * 1000) if info.mtime else 0)
             for info in infos if info.type == FileType.File]
    return sorted(files, key=lambda f: f.path)


def prefix_exists(prefix: str | Location) -> bool:
    """Whether anything lies at `prefix` (a local file or folder; an object under an object prefix)."""
    found = as_location(prefix)
    if isinstance(found, Path):
        return found.exists()
    from pyarrow.fs import FileSelector, FileType

    fs, root = filesystem(found)
    with store_errors(found):
        if fs.get_file_info(root).type == FileType.File:
            return True
        return bool(fs.get_file_info(FileSelector(root, recursive=True, allow_not_found=True)))


def delete_prefix(prefix: str | Location, what: str) -> None:
    """Delete everything under `prefix` (`what` says which, for the log). Already gone is fine; a failure is logged
    and the files are left for a person: the statement that asked has already succeeded or failed."""
    found = as_location(prefix)
    if isinstance(found, Path):
        remove_folder(found, what)
        return
    try:
        fs, root = filesystem(found)
        fs.delete_dir_contents(root, missing_dir_ok=True)
        try:
            fs.delete_dir(root)
        except FileNotFoundError:
            pass
    except OSError as exc:
        log.warning("could not remove %s, %s: %s; remove it by hand", found, what, exc)


def delete_files(prefix: str | Location, paths: list[str]) -> None:
    """Delete the files `paths` (relative to `prefix`, as `list_files` names them)."""
    fs, root = filesystem(prefix)
    for path in paths:
        fs.delete_file(f"{root}/{path}")


def copy_prefix(source: str | Location, target: str | Location) -> None:
    """Copy every file under `source` to the same relative path under `target` (both on one store)."""
    fs, root = filesystem(source)
    _, target_root = filesystem(target)
    for stored in list_files(source):
        fs.copy_file(f"{root}/{stored.path}", f"{target_root}/{stored.path}")


def read_bytes(location: str | Location) -> bytes:
    fs, path = filesystem(location)
    with fs.open_input_stream(path) as stream:
        return stream.read()
