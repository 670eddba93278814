"""What a user may do to catalog objects: owners, admins and grants (`catalog/grants.py` stores them).

Reading a table or view needs SELECT; INSERT, UPDATE, DELETE and MERGE need MODIFY; creating in a schema needs its
ownership or CREATE on it; DROP, ALTER, REFRESH, VACUUM and GRANT need the ownership of the object (or of its
schema), except that REFRESH of a materialized view may be granted (it runs with the owner's rights). ALL PRIVILEGES
counts as each. Admins may do everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sluicegate.policy.errors import PermissionDeniedError

if TYPE_CHECKING:
    from sluicegate.catalog.functions import FunctionEntry
    from sluicegate.catalog.grants import GrantStore
    from sluicegate.catalog.store import CatalogStore, TableEntry


@dataclass(frozen=True)
class Principal:
    """Who runs a statement. A view runs as its owner (`as_owner_of`), so readers need SELECT on the view only."""

    user: str
    is_admin: bool = False


def _kind(entry: TableEntry) -> str:
    return {"VIEW": "view", "STREAMING_TABLE": "streaming table", "MATERIALIZED_VIEW": "materialized view"}.get(
        entry.kind, "table")


def _securable_kind(entry: TableEntry) -> str:
    """How GRANT names the object (a view's and a streaming table's grants are their table row's)."""
    return "MATERIALIZED VIEW" if entry.kind == "MATERIALIZED_VIEW" else "TABLE"


class Grants:
    def __init__(self, store: CatalogStore, grants: GrantStore) -> None:
        self._store = store
        self._grants = grants

    @property
    def store(self) -> CatalogStore:
        return self._store

    def owns_schema(self, principal: Principal, database: str) -> bool:
        if principal.is_admin:
            return True
        found = self._store.get_database(database)
        return found is not None and found.owner is not None and found.owner == principal.user

    def owns(self, principal: Principal, entry: TableEntry) -> bool:
        return principal.is_admin or entry.owner == principal.user or self.owns_schema(principal, entry.database)

    def require_owner(self, principal: Principal, entry: TableEntry, action: str) -> None:
        if not self.owns(principal, entry):
            raise PermissionDeniedError(
                f"User {principal.user} cannot {action} the {_kind(entry)} `{entry.database}`.`{entry.name}`: "
                f"only its owner ({entry.owner or 'an admin'}) or an admin can",
                hint="ask the owner to do it, or to ALTER ownership to you")

    def require_schema_owner(self, principal: Principal, database: str, action: str) -> None:
        if not self.owns_schema(principal, database):
            found = self._store.get_database(database)
            owner = found.owner if found is not None and found.owner else "an admin"
            raise PermissionDeniedError(
                f"User {principal.user} cannot {action} the schema `{database}`: only its owner ({owner}) or an admin "
                "can", hint="ask the owner to do it")

    def require(self, principal: Principal, privilege: str, entry: TableEntry) -> None:
        """Raise unless `principal` holds `privilege` on the table or view (by ownership, a grant or `users`)."""
        if self.owns(principal, entry):
            return
        held = self._grants.held(principal.user, entry.database, entry.name)
        if privilege in held or "ALL PRIVILEGES" in held:
            return
        raise PermissionDeniedError(
            f"User {principal.user} does not have {privilege} on the {_kind(entry)} `{entry.database}`.`{entry.name}`",
            hint=f"ask its owner ({entry.owner or 'an admin'}) for GRANT {privilege} ON {_securable_kind(entry)} "
                 f"`{entry.database}`.`{entry.name}` TO `{principal.user}`")

    def owns_function(self, principal: Principal, function: FunctionEntry) -> bool:
        return principal.is_admin or function.owner == principal.user or self.owns_schema(principal,
                                                                                            function.database)

    def require_function_owner(self, principal: Principal, function: FunctionEntry, action: str) -> None:
        if not self.owns_function(principal, function):
            raise PermissionDeniedError(
                f"User {principal.user} cannot {action} the function `{function.database}`.`{function.name}`: only "
                f"its owner ({function.owner or 'an admin'}) or an admin can", hint="ask the owner to do it")

    def require_execute(self, principal: Principal, function: FunctionEntry) -> None:
        """EXECUTE on the function (its ownership, a grant on it or on its schema, or ALL PRIVILEGES), to call it
        or read its body."""
        if self.owns_function(principal, function):
            return
        held = self._grants.held(principal.user, function.database, function.name, "FUNCTION")
        if "EXECUTE" in held or "ALL PRIVILEGES" in held:
            return
        raise PermissionDeniedError(
            f"User {principal.user} does not have EXECUTE on the function `{function.database}`.`{function.name}`",
            hint=f"ask its owner ({function.owner or 'an admin'}) for GRANT EXECUTE ON FUNCTION "
                 f"`{function.database}`.`{function.name}` TO `{principal.user}`")

    def require_create(self, principal: Principal, database: str) -> None:
        if self.owns_schema(principal, database):
            return
        held = self._grants.held(principal.user, database, None)
        if "CREATE" in held or "ALL PRIVILEGES" in held:
            return
        raise PermissionDeniedError(
            f"User {principal.user} cannot create objects in the schema `{database}`",
            hint=f"create your own schema (CREATE SCHEMA ...), or ask the owner of `{database}` for "
                 f"GRANT CREATE ON SCHEMA `{database}` TO `{principal.user}`")
