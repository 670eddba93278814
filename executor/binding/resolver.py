"""The binder's TableResolver over the persistent catalog: what a name in a query stands for, and whether the user
may read it. A view's own tables are read with its owner's rights (`for_view`), so a reader needs SELECT on the view
only, as in Databricks and Hive."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sluicegate.catalog.functions import FunctionEntry, FunctionStore
from sluicegate.executor.binding.resolved import ResolvedTable

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore
    from sluicegate.policy import Policy, Principal


class CatalogResolver:
    """Catalog tables and views resolve to their Delta folder or SQL; anything else (temporary views, Spark's own
    tables) resolves to None and is left to Spark."""

    def __init__(self, store: CatalogStore, current_database: Callable[[], str],
                 is_temporary_view: Callable[[str], bool], policy: Policy, principal: Principal,
                 session_view: Callable[[str], str | None] = lambda name: None) -> None:
        """`session_view`: the query of a temporary view the gateway defined (executor/binding/session_views.py),
        bound afresh by each statement like a catalog view; None for Spark's own temporary views."""
        self._store = store
        self._session_view = session_view
        self._current_database = current_database
        self._is_temporary_view = is_temporary_view
        self._policy = policy
        self._principal = principal

    def resolve(self, database: str | None, name: str) -> ResolvedTable | None:
        if database is None and self._is_temporary_view(name):
            # As in Spark, a session's temporary view hides a table of the same name; the session's own rights.
            query = self._session_view(name)
            return ResolvedTable("", name, "VIEW", view_sql=query) if query is not None else None
        entry = self._store.get_table(database or self._current_database(), name)
        if entry is None:
            return None
        self._policy.grants.require(self._principal, "SELECT", entry)
        if entry.kind == "VIEW":
            return ResolvedTable(entry.database, entry.name, "VIEW", view_sql=entry.definition, owner=entry.owner)
        return ResolvedTable(entry.database, entry.name, "TABLE", location=entry.location, owner=entry.owner)

    def function(self, database: str | None, name: str) -> FunctionEntry | None:
        """A catalog SQL function, which the user must hold EXECUTE on to call (a view's calls: its owner)."""
        entry = FunctionStore(self._store).get(database or self._current_database(), name)
        if entry is not None:
            self._policy.grants.require_execute(self._principal, entry)
        return entry

    def for_view(self, view: ResolvedTable) -> CatalogResolver:
        """The resolver for the tables inside `view`: the same names, read with the view owner's rights (a view from
        before owners were recorded keeps its reader's)."""
        owner = self._policy.principal(view.owner) if view.owner else self._principal
        return CatalogResolver(self._store, self._current_database, self._is_temporary_view, self._policy, owner,
                               self._session_view)
