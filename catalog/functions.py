"""SQL user-defined functions in the catalog: what `CREATE FUNCTION s.f(p T, ...) RETURNS R RETURN body` defined.

The gateway keeps the definition (it survives a restart, and every gateway sharing the catalog sees it); Spark never
holds a persistent function: a statement that calls one gets it as a temporary function of its own session, its
body bound like any query (executor/functions.py). Reads are kept in memory while the catalog's version stays, as
tables' are: a call looks its function up on every statement.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from sluicegate.catalog.clock import utc_now
from sluicegate.catalog.errors import RoutineAlreadyExistsError, RoutineNotFoundError, SchemaNotFoundError
from sluicegate.catalog.grants import FUNCTION
from sluicegate.catalog.models import DatabaseRow, FunctionRow, GrantRow
from sluicegate.catalog.names import check_name
from sluicegate.catalog.store import CatalogStore, pattern_matcher


@dataclass(frozen=True)
class FunctionEntry:
    database: str
    name: str
    parameters: tuple[tuple[str, str], ...]   # (name, SQL type), in order
    returns: str                              # the return type as SQL
    body: str                                 # the expression or query after RETURN
    comment: str | None = None
    owner: str | None = None
    created_at: dt.datetime | None = None

    @property
    def signature(self) -> str:
        """`(p1 T1, p2 T2)`: the parameter list as Spark's CREATE FUNCTION takes it."""
        return "(" + ", ".join(f"`{name}` {kind}" for name, kind in self.parameters) + ")"


def _entry(row: FunctionRow) -> FunctionEntry:
    return FunctionEntry(row.database, row.name, tuple((str(n), str(t)) for n, t in row.parameters or ()),
                         row.returns, row.body, row.comment, row.owner, row.created_at)


class FunctionStore:
    def __init__(self, store: CatalogStore) -> None:
        self._store = store

    def create(self, entry: FunctionEntry, *, replace: bool) -> FunctionEntry:
        """Store `entry`; OR REPLACE keeps the function's grants and creation time, as Databricks keeps them."""
        name = check_name(entry.name, "function")
        database = entry.database.lower()
        with self._store.transaction() as session:
            if session.get(DatabaseRow, database) is None:
                raise SchemaNotFoundError(f"The schema `{database}` cannot be found.",
                                          hint="CREATE SCHEMA it first (SHOW SCHEMAS lists them)")
            row = session.get(FunctionRow, (database, name))
            if row is not None and not replace:
                raise RoutineAlreadyExistsError(f"The function `{database}`.`{name}` already exists.",
                                                hint="choose another name, or CREATE OR REPLACE FUNCTION")
            now = utc_now()
            if row is None:
                row = FunctionRow(database=database, name=name, created_at=now, owner=entry.owner)
                session.add(row)
            row.parameters = [list(p) for p in entry.parameters]
            row.returns, row.body, row.comment, row.updated_at = entry.returns, entry.body, entry.comment, now
            session.flush()
            return _entry(row)

    def get(self, database: str, name: str) -> FunctionEntry | None:
        key = (database.lower(), name.lower())

        def read(session: Session) -> FunctionEntry | None:
            row = session.get(FunctionRow, key)
            return None if row is None else _entry(row)
        return self._store.reads.get(("function", *key), read, self._store.transaction)

    def names(self, database: str) -> frozenset[str]:
        """The names of the schema's functions: what an unqualified call may name (kept while the version stays)."""
        database = database.lower()

        def read(session: Session) -> frozenset[str]:
            return frozenset(session.scalars(select(FunctionRow.name).where(FunctionRow.database == database)))
        return self._store.reads.get(("function names", database), read, self._store.transaction)

    def list(self, database: str, pattern: str | None = None) -> list[FunctionEntry]:
        """The schema's functions by name (kept while the version stays: GetFunctions lists every schema's)."""
        matcher = pattern_matcher(pattern)
        database = database.lower()

        def read(session: Session) -> tuple[FunctionEntry, ...]:
            return tuple(_entry(r) for r in session.scalars(
                select(FunctionRow).where(FunctionRow.database == database).order_by(FunctionRow.name)))
        return [entry for entry in self._store.reads.get(("functions", database), read, self._store.transaction)
                if matcher is None or matcher.match(entry.name)]

    def drop(self, database: str, name: str) -> FunctionEntry:
        """Remove the function and its grants; a missing one is ROUTINE_NOT_FOUND."""
        database, name = database.lower(), name.lower()
        with self._store.transaction() as session:
            row = session.get(FunctionRow, (database, name))
            if row is None:
                raise RoutineNotFoundError(f"The function `{database}`.`{name}` cannot be found.",
                                           hint="SHOW USER FUNCTIONS lists them; add IF EXISTS to ignore")
            dropped = _entry(row)
            session.delete(row)
            session.execute(delete(GrantRow).where(GrantRow.kind == FUNCTION, GrantRow.database == database,
                                                   GrantRow.name == name))
            return dropped
