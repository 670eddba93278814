"""Privileges in the catalog: who may read, change or create what, besides the owners.

A grant is (securable, principal, privilege): a securable is a schema, a table of one (views and streaming tables
are tables here) or a function, a principal a user name or `users` (everybody), a privilege SELECT, MODIFY, CREATE
(schemas only), REFRESH (materialized views, or a schema's), EXECUTE (functions, or a schema's) or ALL
PRIVILEGES. A privilege on a schema holds for every table (and function) in it, as in Databricks. Deciding what a
statement needs is the policy's job (`policy/grants.py`); this module only stores and answers.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import CursorResult, Delete, and_, delete, or_, select
from sqlalchemy.orm import Session

from sluicegate.catalog.models import EVERYONE, GrantRow
from sluicegate.catalog.store import CatalogStore

PRIVILEGES = ("SELECT", "MODIFY", "CREATE", "REFRESH", "EXECUTE", "ALL PRIVILEGES")
SCHEMA, TABLE, FUNCTION = "SCHEMA", "TABLE", "FUNCTION"


@dataclass(frozen=True)
class GrantEntry:
    kind: str
    database: str
    name: str              # "" for a schema
    principal: str
    privilege: str
    granted_by: str | None


@dataclass(frozen=True)
class Securable:
    kind: str              # SCHEMA, TABLE or FUNCTION
    database: str
    name: str = ""

    @classmethod
    def schema(cls, database: str) -> Securable:
        return cls(SCHEMA, database.lower())

    @classmethod
    def table(cls, database: str, name: str) -> Securable:
        return cls(TABLE, database.lower(), name.lower())

    @classmethod
    def function(cls, database: str, name: str) -> Securable:
        return cls(FUNCTION, database.lower(), name.lower())


def _entry(row: GrantRow) -> GrantEntry:
    return GrantEntry(row.kind, row.database, row.name, row.principal, row.privilege, row.granted_by)


class GrantStore:
    def __init__(self, store: CatalogStore) -> None:
        self._store = store

    def grant(self, securable: Securable, principals: tuple[str, ...], privileges: tuple[str, ...],
              granted_by: str) -> None:
        with self._store.transaction() as session:
            for principal in principals:
                for privilege in privileges:
                    found = session.scalars(select(GrantRow).where(
                        GrantRow.kind == securable.kind, GrantRow.database == securable.database,
                        GrantRow.name == securable.name, GrantRow.principal == principal,
                        GrantRow.privilege == privilege)).one_or_none()
                    if found is None:
                        session.add(GrantRow(kind=securable.kind, database=securable.database, name=securable.name,
                                             principal=principal, privilege=privilege, granted_by=granted_by,
                                             granted_at=dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)))

    def revoke(self, securable: Securable, principals: tuple[str, ...], privileges: tuple[str, ...]) -> int:
        """Remove the grants; ALL PRIVILEGES removes every privilege the principals hold on the securable."""
        with self._store.transaction() as session:
            condition = and_(GrantRow.kind == securable.kind, GrantRow.database == securable.database,
                             GrantRow.name == securable.name, GrantRow.principal.in_(principals))
            if "ALL PRIVILEGES" not in privileges:
                condition = and_(condition, GrantRow.privilege.in_(privileges))
            return _deleted(session, delete(GrantRow).where(condition))

    def clear(self, securable: Securable) -> int:
        """Remove every grant on the securable (a view replaced by CREATE OR REPLACE VIEW is a new object)."""
        with self._store.transaction() as session:
            return _deleted(session, delete(GrantRow).where(
                GrantRow.kind == securable.kind, GrantRow.database == securable.database,
                GrantRow.name == securable.name))

    def on(self, securable: Securable | None = None, principal: str | None = None) -> list[GrantEntry]:
        with self._store.transaction() as session:
            query = select(GrantRow)
            if securable is not None:
                query = query.where(GrantRow.kind == securable.kind, GrantRow.database == securable.database,
                                    GrantRow.name == securable.name)
            if principal is not None:
                query = query.where(GrantRow.principal == principal)
            rows = session.scalars(query.order_by(GrantRow.database, GrantRow.name, GrantRow.principal,
                                                  GrantRow.privilege)).all()
            return [_entry(r) for r in rows]

    def held(self, user: str, database: str, name: str | None, kind: str = TABLE) -> set[str]:
        """The privileges `user` holds (directly or through `users`) on the table (or, by `kind`, the function)
        `database.name` or, with name None, on the schema; a schema's privileges count for its objects."""
        database = database.lower()
        places = [and_(GrantRow.kind == SCHEMA, GrantRow.database == database)]
        if name is not None:
            places.append(and_(GrantRow.kind == kind, GrantRow.database == database,
                               GrantRow.name == name.lower()))

        def read(session: Session) -> frozenset[str]:
            return frozenset(session.scalars(select(GrantRow.privilege).where(
                or_(*places), GrantRow.principal.in_((user, EVERYONE)))).all())
        key = ("grants", user, database, None if name is None else name.lower(), kind)
        return set(self._store.reads.get(key, read, self._store.transaction))


def _deleted(session: Session, statement: Delete) -> int:
    """How many rows the DELETE removed. A DML statement's result is a CursorResult, which has the count; the ORM
    session's `execute` is typed as returning any Result, hence the cast."""
    return cast("CursorResult[Any]", session.execute(statement)).rowcount or 0
