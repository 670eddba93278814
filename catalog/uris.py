"""Locations: a table folder, a warehouse or a prefix is either a local path or an object-store URI
(`s3://bucket/key`), and this is the one module that parses, joins, normalizes and compares both.

An object URI has no `..` to resolve and no symbolic link to follow, so instead of resolving it is refused whole
when it could mean two things: a `.` or `..` segment, an empty segment (a doubled slash: S3 keeps `a//b` and `a/b`
apart), a backslash, a control character, or a percent-escape of `.`, `/` or `\\` (a store or a later decoder could
read `%2e%2e` as `..`). What passes is normalized (no trailing slash), so two spellings of one prefix compare equal.
Standard library only: the catalog, the runtime and the gateway share it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from sluicegate.catalog.errors import PathOutsideWarehouseError

OBJECT_SCHEMES = ("s3",)
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]")
_ESCAPED_SEPARATOR = re.compile(r"%(2e|2f|5c)", re.IGNORECASE)


def _refused(text: str, why: str) -> PathOutsideWarehouseError:
    return PathOutsideWarehouseError(
        f"the location {text} is refused: {why}",
        hint="an object location is scheme://bucket/key/... with plain segments: no `.`, `..`, `//`, `\\` or "
             "escaped separators")


def _checked_segments(key: str, text: str) -> tuple[str, ...]:
    if not key:
        return ()
    if "\\" in key:
        raise _refused(text, "it contains a backslash")
    if _ESCAPED_SEPARATOR.search(key):
        raise _refused(text, "it contains a percent-escaped `.`, `/` or `\\`")
    if any(unicodedata.category(char)[0] == "C" for char in key):
        raise _refused(text, "it contains a control character")
    segments = tuple(key.split("/"))
    for segment in segments:
        if segment in ("", ".", ".."):
            raise _refused(text, "it has an empty, `.` or `..` segment")
    return segments


@dataclass(frozen=True)
class ObjectLocation:
    """`scheme://bucket/key`: a prefix (or an object) of an object store, normalized and checked. It offers the few
    `Path` operations the warehouse uses (`/`, `parent`, `name`, `resolve`, `is_relative_to`), so one code path
    derives folders for both kinds; it is never an `os.PathLike`, so no local file call can take it by mistake."""

    scheme: str
    bucket: str
    segments: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> ObjectLocation:
        scheme, sep, rest = text.partition("://")
        if not sep or scheme.lower() not in OBJECT_SCHEMES:
            raise _refused(text, f"it is not an object URI ({', '.join(s + '://' for s in OBJECT_SCHEMES)})")
        bucket, _, key = rest.partition("/")
        if _BUCKET.fullmatch(bucket) is None or ".." in bucket:
            raise _refused(text, "its bucket name is not valid (3-63 lower-case letters, digits, `.` and `-`)")
        return cls(scheme.lower(), bucket, _checked_segments(key.removesuffix("/"), text))

    @property
    def key(self) -> str:
        """The object key of this prefix, without a leading or trailing slash ("" = the bucket's root)."""
        return "/".join(self.segments)

    @property
    def name(self) -> str:
        return self.segments[-1] if self.segments else ""

    @property
    def parent(self) -> ObjectLocation:
        return ObjectLocation(self.scheme, self.bucket, self.segments[:-1])

    @property
    def arrow_path(self) -> str:
        """`bucket/key`, as pyarrow's S3FileSystem names it."""
        return f"{self.bucket}/{self.key}" if self.segments else self.bucket

    def __truediv__(self, part: str) -> ObjectLocation:
        return ObjectLocation(self.scheme, self.bucket, self.segments + _checked_segments(part, f"{self}/{part}"))

    def __str__(self) -> str:
        return f"{self.scheme}://{self.arrow_path}"

    def resolve(self) -> ObjectLocation:
        return self  # already normal: nothing to resolve on an object store

    def is_relative_to(self, other: Location) -> bool:
        return (isinstance(other, ObjectLocation) and (self.scheme, self.bucket) == (other.scheme, other.bucket)
                and self.segments[:len(other.segments)] == other.segments)

    def relative_to(self, other: ObjectLocation) -> str:
        if not self.is_relative_to(other):
            raise ValueError(f"{self} is not under {other}")
        return "/".join(self.segments[len(other.segments):])


Location = Path | ObjectLocation


def lies_under(location: Location, root: Location) -> bool:
    """Whether `location` is `root` or lies under it; a local path never lies under an object prefix, nor the
    reverse."""
    if isinstance(location, ObjectLocation):
        return location.is_relative_to(root)
    return isinstance(root, Path) and location.is_relative_to(root)


def is_object_uri(location: object) -> bool:
    """Whether `location` (a string, a Path or an ObjectLocation) names an object store rather than a local path."""
    if isinstance(location, ObjectLocation):
        return True
    if not isinstance(location, str):
        return False
    scheme, sep, _ = location.partition("://")
    return bool(sep) and scheme.lower() in OBJECT_SCHEMES


def as_location(location: str | Path | ObjectLocation) -> Location:
    """A location from a catalog row, the configuration or a caller: an ObjectLocation for an object URI, else a
    local Path (a `file://` URI becomes its path)."""
    if isinstance(location, (ObjectLocation, Path)):
        return location
    if is_object_uri(location):
        return ObjectLocation.parse(location)
    if location.startswith("file://"):
        return Path(location[len("file://"):])
    return Path(location)


def resolved(location: str | Path | ObjectLocation) -> Location:
    """`as_location`, resolved: a local path absolute with its links followed; an object location as it is."""
    return as_location(location).resolve()


def display_location(location: str) -> str:
    """A table's location as DESCRIBE and SHOW CREATE TABLE show it: `file:/path` (Spark's form) or the URI."""
    return location if is_object_uri(location) else f"file:{location}"
