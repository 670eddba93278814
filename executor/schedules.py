"""The statements that refresh an object or change when it refreshes: `REFRESH {TABLE | STREAMING TABLE |
MATERIALIZED VIEW} t [FULL] [SYNC | ASYNC]` and `ALTER {STREAMING TABLE | MATERIALIZED VIEW} t {ADD | ALTER}
<schedule> | DROP SCHEDULE`.

Both name any catalog object; what they do is its kind's (executor/kinds.py): a streaming table's stream manager
runs a pass or re-reads the row, a materialized view recomputes or its scheduler re-reads the row, and a plain table
or view refuses (Spark's `REFRESH TABLE` is nothing to do). The schedule itself lives on the catalog row
(executor/schedule_rows.py).
"""

from __future__ import annotations

from sluicegate.dialect import statements as st
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.kinds import kind_of
from sluicegate.executor.lookups import not_found, require


def refresh(ctx: StatementContext, statement: st.Refresh) -> StatementResult:
    """REFRESH of the object the statement names, as its kind refreshes it."""
    entry = ctx.store.get_table(*ctx.qualify(statement.table))
    if entry is None:
        raise not_found(ctx, statement.table)
    return kind_of(entry).refresh(ctx, entry, statement)


def alter_schedule(ctx: StatementContext, statement: st.AlterSchedule) -> StatementResult:
    """ADD needs an object without a schedule, ALTER and DROP one with a schedule (as Databricks); the row changes
    under the object's lock, then whatever runs its refreshes re-reads it."""
    entry = require(ctx, statement.table)
    return kind_of(entry).schedule(ctx, entry, statement)


HANDLERS = {st.AlterSchedule: alter_schedule, st.Refresh: refresh}
