"""Table folders: the one place where a table's name becomes a folder, and where a folder is created, moved or
removed, with the undo step of each.

The rules (the names and the containment check themselves are `catalog/names.py`):
- a new table's folder is WAREHOUSE/<database>.db/<table>, checked to lie inside the warehouse, and must not exist:
  a folder already there was not made by this statement, so it is an error (LOCATION_ALREADY_EXISTS), never
  removed or reused;
- an undo step removes only the folder its statement created;
- DROP removes only the folder a catalog row names, and only when it has the shape of a table folder of this
  warehouse; a row pointing anywhere else loses its row and keeps its files, with a warning;
- RENAME moves a table folder only to a new table folder that does not exist yet.
Every removal that fails is logged, never ignored in silence.
A warehouse on an object store keeps the same rules over prefixes (storage/files.py): a prefix "exists" when
an object lies under it, creating one writes nothing, removing one deletes its objects, and a RENAME copies them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sluicegate.catalog.errors import LocationExistsError, PathOutsideWarehouseError
from sluicegate.catalog.names import NameKind, owned_table_folder, table_folder
from sluicegate.catalog.uris import Location, ObjectLocation, resolved
from sluicegate.storage.files import copy_prefix, delete_prefix, prefix_exists

log = logging.getLogger(__name__)


def _exists_error(folder: Location, database: str, name: str) -> LocationExistsError:
    return LocationExistsError(
        f"Cannot create the table `{database}`.`{name}`: its folder {folder} already exists and the catalog has no "
        "table there.", hint="drop or move that folder by hand, or choose another name")


@contextmanager
def new_table_folder(warehouse: Location, database: str, name: str,
                     kind: NameKind = "table") -> Iterator[Location]:
    """Create the folder of a new table and yield it; if the block raises, the folder (made here) is removed.

    The database's folder is created when missing and kept: other tables share it."""
    folder = table_folder(warehouse, database, name, kind)
    if isinstance(folder, ObjectLocation):
        if prefix_exists(folder):
            raise _exists_error(folder, database, name)
    else:
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            folder.mkdir()
        except FileExistsError:
            raise _exists_error(folder, database, name) from None
    try:
        yield folder
    except BaseException:
        remove_created(folder)
        raise


def remove_created(folder: Location) -> None:
    """Undo: remove a folder this statement created."""
    delete_prefix(folder, "created by a statement that failed")


def owned_folder(warehouse: Location, location: str | None) -> Location | None:
    """The folder a catalog row names, if it is a table folder of this warehouse; None (with a warning) if not."""
    if not location:
        return None
    try:
        return owned_table_folder(warehouse, location)
    except PathOutsideWarehouseError as exc:
        log.warning("%s", exc.message)
        return None


def drop_table_folder(warehouse: Location, location: str | None) -> None:
    """Remove the folder of a table whose catalog row is gone (DROP TABLE, DROP DATABASE CASCADE)."""
    folder = owned_folder(warehouse, location)
    if folder is None:
        return
    delete_prefix(folder, "the folder of a dropped table")


def existing_table_folder(warehouse: Location, location: str | None) -> Location:
    """The folder of an existing table that a statement is about to rewrite (CREATE OR REPLACE, a full refresh):
    refused unless it is a table folder of this warehouse."""
    if not location:
        raise PathOutsideWarehouseError("the table has no folder in the catalog", hint="drop it and create it again")
    return owned_table_folder(warehouse, location)


def move_table_folder(warehouse: Location, location: str, new_database: str, new_name: str) -> Location:
    """RENAME: move a table's folder to the new name's folder and return it. The source must be a table folder of
    the warehouse and the target must not exist; `restore_table_folder` undoes it. On an object store the objects
    are copied, then the source's deleted (a Delta log names its files relative to the table: the copy is whole)."""
    source = owned_table_folder(warehouse, location)
    target = table_folder(warehouse, new_database, new_name)
    if prefix_exists(target):
        raise _exists_error(target, new_database, new_name)
    if isinstance(target, ObjectLocation):
        _move_prefix(source, target)
        return target
    assert isinstance(source, Path)  # one warehouse: a local target's source is a local folder too
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(source, target)
    return target


def _move_prefix(source: Location, target: Location) -> None:
    try:
        copy_prefix(source, target)
    except BaseException:
        delete_prefix(target, "a partial copy of a failed RENAME")
        raise
    delete_prefix(source, "the old folder of a renamed table")


def restore_table_folder(moved_to: Location, location: str) -> None:
    """Undo `move_table_folder`; a failure is logged with both paths."""
    try:
        if isinstance(moved_to, ObjectLocation):
            _move_prefix(moved_to, ObjectLocation.parse(location))
        else:
            os.rename(moved_to, location)
    except OSError as exc:
        log.error("could not move %s back to %s after a failed RENAME: %s; move it by hand", moved_to, location, exc)


def sibling_table_folder(location: str, name: str) -> Location:
    """The folder of the table `name` in the database of the table at `location` (a streaming table's quarantine
    table lies beside it): checked to be a table folder of the warehouse that folder is in."""
    folder = resolved(location)
    warehouse = folder.parent.parent
    owned = owned_table_folder(warehouse, folder)
    return table_folder(warehouse, owned.parent.name.removesuffix(".db"), name)
