"""What a name in a query stands for: the binder's `TableResolver` protocol, and its implementation over the
persistent catalog."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from catalog.store import CatalogStore


@dataclass(frozen=True)
class ResolvedTable:
    database: str
    name: str
    kind: str                       # "TABLE" (a Delta table at `location`) or "VIEW" (defined by `view_sql`)
    location: str | None = None
    view_sql: str | None = None
    owner: str | None = None        # who created it: a view reads its tables with its owner's rights


class TableResolver(Protocol):
    def resolve(self, database: str | None, name: str) -> ResolvedTable | None:
        """The catalog object `database.name` names (current database when None), or None if the catalog has none.
        May raise a SqlError (the binder adds the reference's position when it carries none)."""

    def for_view(self, view: ResolvedTable) -> TableResolver:
        """The resolver for the tables inside `view` (one acting as the view's owner, where rights are checked)."""


class CatalogResolver:
    """Catalog tables and views resolve to their Delta folder or SQL; anything else (temporary views, Spark's own
    tables) resolves to None and is left to Spark."""

    def __init__(self, store: CatalogStore, current_database: Callable[[], str],
                 is_temporary_view: Callable[[str], bool] = lambda _name: False) -> None:
        self._store = store
        self._current_database = current_database
        self._is_temporary_view = is_temporary_view

    def resolve(self, database: str | None, name: str) -> ResolvedTable | None:
        if database is None and self._is_temporary_view(name):
            return None  # as in Spark, a session's temporary view hides a table of the same name
        entry = self._store.get_table(database or self._current_database(), name)
        if entry is None:
            return None
        if entry.kind == "VIEW":
            return ResolvedTable(entry.database, entry.name, "VIEW", view_sql=entry.definition, owner=entry.owner)
        return ResolvedTable(entry.database, entry.name, "TABLE", location=entry.location, owner=entry.owner)

    def for_view(self, view: ResolvedTable) -> CatalogResolver:
        return self  # no rights are checked here: the view's tables resolve as any others
