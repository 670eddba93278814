"""What the binder asks and is told about a name: the `TableResolver` protocol and the `ResolvedTable` it answers.

A module of its own so that `binder` (which builds the catalog's resolver in `bind`) and `resolver` (which builds
`ResolvedTable`s) need not import each other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sluicegate.catalog.functions import FunctionEntry


@dataclass(frozen=True)
class ResolvedTable:
    database: str                   # "" for a session's temporary view
    name: str
    kind: str                       # "TABLE" (a Delta table at `location`) or "VIEW" (defined by `view_sql`)
    location: str | None = None
    view_sql: str | None = None
    owner: str | None = None        # who created it: a view reads its tables with its owner's rights

    @property
    def qualified(self) -> str:
        """`database.name`, or the name alone for a session's temporary view (database "")."""
        return f"{self.database}.{self.name}" if self.database else self.name


class TableResolver(Protocol):
    def resolve(self, database: str | None, name: str) -> ResolvedTable | None:
        """The catalog object `database.name` names (current database when None), or None if the catalog has none.
        May raise a SqlError (the binder adds the reference's position when it carries none)."""

    def for_view(self, view: ResolvedTable) -> TableResolver:
        """The resolver for the tables inside `view` (one acting as the view's owner, where rights are checked)."""

    def function(self, database: str | None, name: str) -> FunctionEntry | None:
        """The catalog's SQL function `database.name` (current database when None), or None if it has none; raises
        a SqlError when the user may not call it (no EXECUTE)."""


class RememberingResolver:
    """A resolver that asks `inner` each name once: within one statement the result cache's look-up and then the
    binder resolve the same names, and each resolution is catalog queries, a rights check and a py4j call (is it a
    temporary view?). A refusal is not remembered: it raises again when asked again."""

    def __init__(self, inner: TableResolver) -> None:
        self._inner = inner
        self._answers: dict[tuple[str | None, str], ResolvedTable | None] = {}
        self._views: dict[ResolvedTable, RememberingResolver] = {}

    def resolve(self, database: str | None, name: str) -> ResolvedTable | None:
        key = (database, name)
        if key not in self._answers:
            self._answers[key] = self._inner.resolve(database, name)
        return self._answers[key]

    def function(self, database: str | None, name: str) -> FunctionEntry | None:
        return self._inner.function(database, name)

    def for_view(self, view: ResolvedTable) -> RememberingResolver:
        found = self._views.get(view)
        if found is None:
            found = self._views[view] = RememberingResolver(self._inner.for_view(view))
        return found
