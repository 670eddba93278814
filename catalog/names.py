"""Names are names, never paths: what a database, table or view name may be, the folder a name maps to, and how a
name is written into Spark SQL.

The rule (`check_name`, run by the catalog before a row is written and by the runtime before any folder work): a
name is 1 to 128 characters among the ASCII letters, the digits and `_`. That is the rule of Spark's own session
catalog and of the Hive metastore (`INVALID_SCHEMA_OR_RELATION_NAME`, "Valid names only contain alphabet characters,
numbers and _"), so what a Spark or Hive user can name there they can name here, and nothing more: every database is
also created in Spark's session catalog, which refuses any other name anyway, and one rule for databases, tables,
views and streaming tables is one rule to learn. It leaves out every character a filesystem or a SQL text gives a
meaning to: `/` and `\\` (path separators), `.` (so no `.`, `..` or hidden folder), NUL and every control character,
backticks and quotes, spaces. 128 is what GetInfo announces as the longest name (MAX_TABLE_NAME_LENGTH). Names are
case-insensitive and stored lower-cased, as Spark's are, so one table never has two folders.

One database name is reserved: `catalog`, whose folder `WAREHOUSE/catalog.db` is the SQLite catalog file itself.
The gateway's other files in the warehouse (`_checkpoints`, `passwd`, `spark-warehouse`, `derby`, landing folders)
cannot collide with a database folder, which always ends in `.db`, nor with a table folder, always inside one.

`inside` is the containment check every folder derived from a name, or read from a catalog row, goes through before
anything is created, renamed or deleted: the resolved path (symbolic links followed) must lie under the resolved
root. A warehouse on an object store (`s3://bucket/prefix`) is handled alike through `catalog/uris.py`: the same
`<database>.db/<table>` shape under the prefix, checked segment by segment.

This module uses the standard library only, so the catalog, the runtime and the gateway share it.
"""

from __future__ import annotations

import logging
import re
import shutil
import unicodedata
from pathlib import Path
from typing import Literal

from sluicegate.catalog.errors import InvalidNameError, PathOutsideWarehouseError
from sluicegate.catalog.uris import Location, ObjectLocation, as_location, lies_under, resolved

log = logging.getLogger(__name__)

NameKind = Literal["database", "table", "view", "streaming table", "flow", "materialized view", "function"]

MAX_NAME_LENGTH = 128
RESERVED_DATABASES = frozenset({"catalog"})
INFORMATION_SCHEMA = "information_schema"   # the schema of the catalog's views, in every catalog
ALLOWED = "ASCII letters, digits and `_`, at most 128 characters"
_VALID = re.compile(r"[A-Za-z0-9_]+")


def _described(char: str) -> str:
    if unicodedata.category(char)[0] == "C":
        return f"the control character U+{ord(char):04X}"
    return "a backtick" if char == "`" else "a space" if char == " " else f"`{char}`"


def name_problem(name: str, kind: NameKind = "table") -> str | None:
    """Why `name` cannot name a `kind`, or None when it can."""
    if not name:
        return "it is empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"it is {len(name)} characters long (at most {MAX_NAME_LENGTH})"
    if _VALID.fullmatch(name) is None:
        bad = next(char for char in name if _VALID.fullmatch(char) is None)
        return f"it contains {_described(bad)}"
    if kind == "database" and name.lower() in RESERVED_DATABASES:
        return f"`{name.lower()}` is reserved: its folder would be the gateway's catalog file"
    if kind == "database" and name.lower() == INFORMATION_SCHEMA:
        return f"`{INFORMATION_SCHEMA}` is reserved: it holds the catalog's views (dialect/catalogs.py)"
    return None


def _shown(name: str) -> str:
    """The name as an error message can show it: control characters escaped, long names cut."""
    text = name.encode("unicode_escape").decode("ascii") if any(
        unicodedata.category(c)[0] == "C" for c in name) else name
    return text if len(text) <= 80 else text[:77] + "..."


def check_name(name: str, kind: NameKind = "table", *, line: int | None = None,
               column: int | None = None) -> str:
    """`name` lower-cased, as the catalog stores it; raises InvalidNameError (42602) saying what is wrong."""
    problem = name_problem(name, kind)
    if problem is not None:
        raise InvalidNameError(
            f"`{_shown(name)}` is not a valid {kind} name: {problem}.",
            hint=f"a name may contain {ALLOWED}; it is never a path", line=line, column=column)
    return name.lower()


def inside(root: Path | str | ObjectLocation, path: Path | str | ObjectLocation) -> Location:
    """`path` resolved, once it is certain to lie strictly under `root` (resolved too); else
    PathOutsideWarehouseError. Symbolic links are followed, so a link inside the warehouse pointing out is refused.
    Either both are local paths or both object URIs (catalog/uris.py refuses `..`, `//` and escapes in those)."""
    base = resolved(root)
    found = resolved(path)
    if found == base or not lies_under(found, base):
        raise PathOutsideWarehouseError(
            f"the folder {found} is not inside {base}; nothing was created, renamed or deleted",
            hint="names map to folders inside the warehouse only; check for a symbolic link or a bad catalog row")
    return found


def database_folder(warehouse: Path | str | ObjectLocation, database: str) -> Location:
    """WAREHOUSE/<database>.db, checked and resolved."""
    database = check_name(database, "database")
    return inside(warehouse, as_location(warehouse) / f"{database}.db")


def table_folder(warehouse: Path | str | ObjectLocation, database: str, name: str,
                 kind: NameKind = "table") -> Location:
    """WAREHOUSE/<database>.db/<name>: a managed table's folder, checked and resolved. Folders are lower-cased as
    the names are, so one table never has two folders."""
    name = check_name(name, kind)
    folder = database_folder(warehouse, database) / name
    return inside(warehouse, folder)


def quote_identifier(name: str) -> str:
    """`name` as a Spark SQL identifier: in backticks, each backtick inside doubled. Every piece of Spark SQL the
    gateway builds from a name (a database, table, view, column or alias) goes through here."""
    return "`" + name.replace("`", "``") + "`"


def quote_qualified(*parts: str) -> str:
    """`a`.`b` from its parts, each quoted."""
    return ".".join(quote_identifier(part) for part in parts)


def owned_table_folder(warehouse: Path | str | ObjectLocation, location: str | Path | ObjectLocation) -> Location:
    """A table folder a catalog row names, resolved, once it is certain to have the shape the gateway gives its own
    folders, WAREHOUSE/<database>.db/<table> with valid names; else PathOutsideWarehouseError. A row written before
    names were checked (`..`, `../../elsewhere`, the warehouse itself) is never followed to a folder to remove or
    move."""
    folder = inside(warehouse, location)
    base = resolved(warehouse)
    parent = folder.parent
    if (parent.parent != base or not parent.name.endswith(".db")
            or name_problem(parent.name.removesuffix(".db"), "database") or name_problem(folder.name)):
        raise PathOutsideWarehouseError(
            f"the folder {folder} is not a table folder of the warehouse {base}; nothing was renamed or deleted",
            hint="a table's folder is WAREHOUSE/<database>.db/<table>; move or remove this one by hand")
    return folder


def quote_string(text: str) -> str:
    """`text` as a Spark SQL string literal (a SHOW ... LIKE pattern): in single quotes, with backslashes and quotes
    escaped (Spark reads backslash escapes in literals by default)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def remove_folder(folder: Path, what: str) -> None:
    """Remove a folder the gateway made (`what` says which, for the log). One already gone is fine; a failure is
    logged, and the folder is left for a person: the statement that asked has already succeeded or failed."""
    try:
        shutil.rmtree(folder)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("could not remove %s, %s: %s; remove it by hand", folder, what, exc)
