"""Which files a user may name: paths under the configured roots, never the gateway's own files.

A path is resolved first (`~`, `..` and symbolic links, as the operating system will follow them), then it must lie
under one of the allowed roots and, if it also lies under a protected location (the warehouse, the checkpoints, the
catalog and password files), under an allowed root that is itself inside that location (`WAREHOUSE/landing`).

Object URIs (`s3://bucket/prefix`, a warehouse on an object store) follow the same two rules against the object roots
(by default the warehouse's `landing` prefix) and the protected object prefixes (the warehouse's own): parsed by
catalog/uris.py, which refuses `..`, `.`, `//`, backslashes and escaped separators instead of resolving them. Any
other URI scheme is refused.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from sluicegate.catalog.errors import PathOutsideWarehouseError
from sluicegate.catalog.uris import Location, ObjectLocation, is_object_uri
from sluicegate.policy.errors import PathNotAllowedError

_LOCAL_SCHEMES = ("", "file")
# Hadoop expands these in paths (`{a/..,b}` climbs out of any folder after the check), so users may not write them.
_GLOB_CHARACTERS = frozenset("{}[]*?\\")


def _resolved(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def local_path(text: str) -> Path:
    """`text` as a resolved local path; `file:` URIs are accepted, other schemes refused."""
    parsed = urlparse(text)
    if len(parsed.scheme) > 1 and parsed.scheme.lower() not in _LOCAL_SCHEMES:
        raise PathNotAllowedError(
            f"'{text}' is not a local path: the scheme '{parsed.scheme}:' is not served here",
            hint="name a folder under the allowed roots (security.allowed_paths)")
    raw = unquote(parsed.path) if parsed.scheme.lower() == "file" else text
    if "\x00" in raw:
        raise PathNotAllowedError("a path may not contain a NUL character")
    if _GLOB_CHARACTERS & set(raw):
        raise PathNotAllowedError(
            f"'{text}' has glob characters ({{ }} [ ] * ? \\), which Spark expands after this check",
            hint="name one folder or file; to pick files in a folder use pathGlobFilter => '*.csv'")
    if not os.path.isabs(os.path.expanduser(raw)):
        raise PathNotAllowedError(f"'{text}' is a relative path",
                                  hint="give an absolute path under the allowed roots (security.allowed_paths)")
    return _resolved(raw)


def object_location(text: str) -> ObjectLocation:
    """`text` as an object location; refused (never normalized) when it could mean two things."""
    if _GLOB_CHARACTERS & set(text):
        raise PathNotAllowedError(
            f"'{text}' has glob characters ({{ }} [ ] * ? \\), which a reader could expand after this check",
            hint="name one folder; to pick files in a folder use pathGlobFilter => '*.csv'")
    try:
        return ObjectLocation.parse(text)
    except PathOutsideWarehouseError as exc:
        raise PathNotAllowedError(exc.message, hint=exc.hint) from None


def any_location(text: str) -> Location:
    """An object location for an object URI, else the resolved local path (other schemes refused)."""
    return object_location(text) if is_object_uri(text) else local_path(text)


def _within(path: Location, root: Location) -> bool:
    """`path` is `root` or under it; the callers compare locations of one kind only."""
    if isinstance(path, Path):
        return path == root or (isinstance(root, Path) and path.is_relative_to(root))
    return path == root or path.is_relative_to(root)


def _as_root(root: str | Path | ObjectLocation) -> Location:
    if isinstance(root, ObjectLocation) or is_object_uri(root):
        return root if isinstance(root, ObjectLocation) else ObjectLocation.parse(str(root))
    return _resolved(root)


@dataclass(frozen=True)
class PathPolicy:
    allowed: tuple[Location, ...]
    protected: tuple[Location, ...]

    @classmethod
    def of(cls, allowed: Iterable[str | Path | ObjectLocation],
           protected: Iterable[str | Path | ObjectLocation]) -> PathPolicy:
        return cls(tuple(_as_root(p) for p in allowed), tuple(_as_root(p) for p in protected))

    def allows(self, path: Location) -> bool:
        for root in self.allowed:
            if type(root) is not type(path) or not _within(path, root):
                continue
            if all(type(guarded) is not type(path) or not _within(path, guarded)
                   or (_within(root, guarded) and root != guarded) for guarded in self.protected):
                return True
        return False

    def check(self, text: str, *, purpose: str = "read") -> Location:
        """The resolved path (or object location), or PathNotAllowedError saying where the user may read from
        instead."""
        path = any_location(text)
        if not self.allows(path):
            roots = ", ".join(str(r) for r in self.allowed) or "(none configured)"
            raise PathNotAllowedError(
                f"cannot {purpose} '{text}': it is outside the folders users may {purpose}",
                hint=f"put the files under one of: {roots} (security.allowed_paths); an admin can add roots")
        return path
