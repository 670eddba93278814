"""Plain tables and catalog views as object kinds (executor/object_kinds.py): a catalog row, a table's Delta
folder, and nothing that runs for them, so DROP removes the two, DROP DATABASE CASCADE has nothing to add, and they
are neither refreshed (Spark's `REFRESH TABLE` is nothing to do) nor scheduled."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluicegate.dialect import statements as st
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.object_kinds import refuse_refresh, refuse_schedule
from sluicegate.storage import locations

if TYPE_CHECKING:
    from sluicegate.catalog.store import TableEntry


class PlainObjects:
    """TABLE and VIEW (a view has no folder: dropping its location is nothing)."""

    def drop(self, ctx: StatementContext, entry: TableEntry) -> None:
        dropped = ctx.store.drop_table(entry.database, entry.name)
        locations.drop_table_folder(ctx.warehouse, dropped.location)

    def before_database_drop(self, ctx: StatementContext, entry: TableEntry) -> None:
        return None

    def refresh(self, ctx: StatementContext, entry: TableEntry, statement: st.Refresh) -> StatementResult:
        return refuse_refresh(ctx, entry, statement)

    def schedule(self, ctx: StatementContext, entry: TableEntry, statement: st.AlterSchedule) -> StatementResult:
        return refuse_schedule(ctx, entry, statement)


PLAIN_OBJECTS = PlainObjects()
