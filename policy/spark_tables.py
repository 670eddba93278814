"""Owners of Spark's own tables (`CREATE TABLE ... USING parquet`): in Spark's in-memory catalog, shared by every
session and forgotten at restart, so their owners are kept the same way, in this process. Only the owner (or an
admin) may read, change or drop one; the warehouse's Delta tables have owners and grants in the catalog instead."""

from __future__ import annotations

import threading

from sluicegate.policy.errors import PermissionDeniedError
from sluicegate.policy.grants import Principal


class SparkTableOwners:
    def __init__(self) -> None:
        self._owners: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def created(self, database: str, name: str, owner: str) -> None:
        with self._lock:
            self._owners.setdefault((database.lower(), name.lower()), owner)

    def dropped(self, database: str, name: str) -> None:
        with self._lock:
            self._owners.pop((database.lower(), name.lower()), None)

    def renamed(self, database: str, name: str, new_database: str, new_name: str) -> None:
        with self._lock:
            owner = self._owners.pop((database.lower(), name.lower()), None)
            if owner is not None:
                self._owners[(new_database.lower(), new_name.lower())] = owner

    def require(self, principal: Principal, database: str, name: str, action: str) -> None:
        with self._lock:
            owner = self._owners.get((database.lower(), name.lower()))
        if principal.is_admin or owner == principal.user:
            return
        if owner is None:  # not made through the gateway's CREATE TABLE: nobody's to share
            raise PermissionDeniedError(
                f"User {principal.user} cannot {action} the Spark table `{database}`.`{name}`: it has no known owner",
                hint="only an admin can; use a table of the warehouse (CREATE TABLE ... USING DELTA) instead")
        raise PermissionDeniedError(
            f"User {principal.user} cannot {action} the Spark table `{database}`.`{name}`: only its owner ({owner}) "
            "or an admin can", hint="Spark's own tables are private to their owner; share data through a Delta table "
            "of the warehouse and GRANT SELECT on it")
