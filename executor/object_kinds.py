"""What every catalog object kind answers, so that the statements that name any object (DROP TABLE, DROP DATABASE
CASCADE, REFRESH, ALTER ... SCHEDULE) never ask which kind it is: each kind's module implements `Kind`, and the
registry (executor/kinds.py) finds it by the catalog row's kind.

Also here: the answers of a kind that a statement does not fit (REFRESH of a plain table, a schedule on a view), the
same errors whichever kind is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from sluicegate.dialect import statements as st
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import NotATableError
from sluicegate.executor.output import no_result

if TYPE_CHECKING:
    from sluicegate.catalog.store import TableEntry


class Kind(Protocol):
    """One catalog object kind's part of the generic statements; `entry` is always of this kind."""

    def drop(self, ctx: StatementContext, entry: TableEntry) -> None:
        """Remove the object: whatever runs for it, its catalog rows and its folder (DROP TABLE, DROP VIEW)."""

    def before_database_drop(self, ctx: StatementContext, entry: TableEntry) -> None:
        """The object's part of DROP DATABASE ... CASCADE that the catalog's cascade and the folder removal after it
        do not do (a streaming table's streams stop first)."""

    def refresh(self, ctx: StatementContext, entry: TableEntry, statement: st.Refresh) -> StatementResult:
        """`REFRESH {TABLE | STREAMING TABLE | MATERIALIZED VIEW} ... [FULL] [SYNC | ASYNC]` naming the object
        (`refuse_refresh` when the object is not refreshed by that form)."""

    def schedule(self, ctx: StatementContext, entry: TableEntry, statement: st.AlterSchedule) -> StatementResult:
        """`ALTER {STREAMING TABLE | MATERIALIZED VIEW} ... {ADD | ALTER | DROP} SCHEDULE` (`refuse_schedule` when
        the object has no schedule of that form)."""


def kind_name(kind: str) -> str:
    """A catalog kind as a message names it: `STREAMING_TABLE` -> `streaming table`."""
    return kind.lower().replace("_", " ")


def refuse_refresh(ctx: StatementContext, entry: TableEntry, statement: st.Refresh) -> StatementResult:
    """REFRESH in a form that does not refresh this object: Spark's `REFRESH TABLE` (its cached metadata dropped:
    each statement reads the latest here) is nothing to do; any other form is the wrong kind."""
    if statement.kind == "TABLE" and not statement.full:
        return no_result()
    line, column = ctx.position_of(statement.table)
    view = statement.kind == "MATERIALIZED VIEW"
    raise NotATableError(f"`{entry.database}`.`{entry.name}` is a {kind_name(entry.kind)}, not a "
                         f"{statement.kind.lower()}.", line=line, column=column,
                         error_class="EXPECT_MATERIALIZED_VIEW" if view else "EXPECT_STREAMING_TABLE",
                         hint="REFRESH MATERIALIZED VIEW refreshes materialized views" if view else
                         "REFRESH [STREAMING] TABLE refreshes streaming tables")


def refuse_schedule(ctx: StatementContext, entry: TableEntry, statement: st.AlterSchedule) -> StatementResult:
    """ALTER ... SCHEDULE of an object without a schedule of the form written: a streaming table altered as a
    materialized view or the other way round, or an object that has no schedule at all."""
    line, column = ctx.position_of(statement.table)
    if statement.kind == "MATERIALIZED VIEW" or entry.kind == "MATERIALIZED_VIEW":
        raise NotATableError(f"`{entry.database}`.`{entry.name}` is a {kind_name(entry.kind)}, not a "
                             f"{statement.kind.lower()}.", line=line, column=column,
                             error_class="EXPECT_MATERIALIZED_VIEW" if statement.kind == "MATERIALIZED VIEW"
                             else "EXPECT_STREAMING_TABLE",
                             hint="ALTER STREAMING TABLE schedules streaming tables, ALTER MATERIALIZED VIEW views")
    raise NotATableError(f"`{entry.database}`.`{entry.name}` is a {kind_name(entry.kind)}, not a "
                         "streaming table.", error_class="EXPECT_STREAMING_TABLE", line=line, column=column,
                         hint="only streaming tables have refresh schedules")
