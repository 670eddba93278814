"""Which files a user may name: paths under the configured roots, never the gateway's own files.

A path is resolved first (`~`, `..` and symbolic links, as the operating system will follow them), then it must lie
under one of the allowed roots and, if it also lies under a protected location (the warehouse, the checkpoints, the
catalog and password files), under an allowed root that is itself inside that location (`WAREHOUSE/landing`). Only
local paths are understood: any other URI scheme is refused.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from runtime.policy.errors import PathNotAllowedError

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


def _within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


@dataclass(frozen=True)
class PathPolicy:
    allowed: tuple[Path, ...]
    protected: tuple[Path, ...]

    @classmethod
    def of(cls, allowed: Iterable[str | Path], protected: Iterable[str | Path]) -> PathPolicy:
        return cls(tuple(_resolved(p) for p in allowed), tuple(_resolved(p) for p in protected))

    def allows(self, path: Path) -> bool:
        for root in self.allowed:
            if not _within(path, root):
                continue
            if all(not _within(path, guarded) or _within(root, guarded) and root != guarded
                   for guarded in self.protected):
                return True
        return False

    def check(self, text: str, *, purpose: str = "read") -> Path:
        """The resolved path, or PathNotAllowedError saying where the user may read from instead."""
        path = local_path(text)
        if not self.allows(path):
            roots = ", ".join(str(r) for r in self.allowed) or "(none configured)"
            raise PathNotAllowedError(
                f"cannot {purpose} '{text}': it is outside the folders users may {purpose}",
                hint=f"put the files under one of: {roots} (security.allowed_paths); an admin can add roots")
        return path
