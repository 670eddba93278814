"""Which object-store settings serve which prefix: the gateway registers its warehouse's prefix at start, and every
opener (`delta.open_table`, `files.filesystem`) finds the settings of a location here by its longest registered
prefix. A location under no registered prefix is refused: credentials are never guessed from the environment."""

from __future__ import annotations

import threading

from sluicegate.catalog.uris import ObjectLocation, as_location
from sluicegate.storage.errors import UnknownObjectStoreError
from sluicegate.storage.settings import ObjectStoreSettings

_lock = threading.Lock()
_stores: dict[ObjectLocation, ObjectStoreSettings] = {}


def register(prefix: str | ObjectLocation, settings: ObjectStoreSettings) -> None:
    """Serve every location under `prefix` with `settings` (registering the same prefix again replaces them)."""
    location = as_location(prefix) if isinstance(prefix, str) else prefix
    if not isinstance(location, ObjectLocation):
        raise TypeError(f"{prefix} is not an object URI")
    with _lock:
        _stores[location] = settings


def unregister(prefix: str | ObjectLocation) -> None:
    location = as_location(prefix) if isinstance(prefix, str) else prefix
    if isinstance(location, ObjectLocation):  # a local path is never registered
        with _lock:
            _stores.pop(location, None)


def settings_for(location: str | ObjectLocation) -> ObjectStoreSettings:
    """The settings of the longest registered prefix holding `location`; UnknownObjectStoreError if none does."""
    found = as_location(location) if isinstance(location, str) else location
    if not isinstance(found, ObjectLocation):
        raise TypeError(f"{location} is not an object URI")
    with _lock:
        matches = [(len(prefix.segments), settings) for prefix, settings in _stores.items()
                   if found.is_relative_to(prefix)]
    if not matches:
        raise UnknownObjectStoreError(f"no object store is configured for {found}",
                                      hint="the warehouse's prefix (warehouse.path) is the only one served")
    return max(matches, key=lambda match: match[0])[1]
