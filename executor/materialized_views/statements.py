"""Materialized-view statements: CREATE [OR REPLACE | OR REFRESH] MATERIALIZED VIEW computes the result and makes it
the view's first Delta commit; REFRESH MATERIALIZED VIEW recomputes it (executor/materialized_views/refresh.py); DROP
removes the row, the refresh state and the folder; SHOW MATERIALIZED VIEWS lists them.

A materialized view is a catalog object of kind MATERIALIZED_VIEW with its own Delta folder (the name rule and the
folder from storage/locations.py), read like a table (SELECT on it), refreshed by its owner with the owner's
rights on its inputs, as a view's query runs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sluicegate.catalog.clock import display_time
from sluicegate.catalog.errors import LocationExistsError, SchemaNotFoundError, TableAlreadyExistsError
from sluicegate.catalog.store import TableEntry
from sluicegate.dialect import incremental_views
from sluicegate.dialect import statements as st
from sluicegate.dialect.columns import ColumnSpec
from sluicegate.dialect.constraints import named_keys
from sluicegate.engine.declared_schema import declared_schema
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.binding.binder import bind
from sluicegate.executor.context import StatementContext
from sluicegate.executor.lookups import to_drop_as
from sluicegate.executor.materialized_views import background as mv_background
from sluicegate.executor.materialized_views import refresh as mv_refresh
from sluicegate.executor.materialized_views.errors import NotIncrementalizableError, UnversionedInputError
from sluicegate.executor.materialized_views.scheduler import plan_next_run
from sluicegate.executor.object_kinds import kind_name, refuse_refresh, refuse_schedule
from sluicegate.executor.output import no_result, rows_result
from sluicegate.executor.schedule_rows import change_schedule, schedule_json
from sluicegate.executor.spark_databases import ensure_spark_database
from sluicegate.executor.stream_plans import readable_error
from sluicegate.executor.tables.dml import table_schema
from sluicegate.executor.tables.view_columns import named_columns
from sluicegate.storage import locations

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from sluicegate.catalog.models import TableKind

KIND: TableKind = "MATERIALIZED_VIEW"


def scheduler_changed(ctx: StatementContext, database: str, name: str) -> None:
    """A view's schedule is new or changed: its next scheduled refresh is planned from now (the scheduler reads it).
    """
    plan_next_run(ctx.store, database, name)


def _check_policy(ctx: StatementContext, stmt: st.CreateMaterializedView) -> tuple[str, ...]:
    """The refresh policy against what the query reads; returns the sources without a catalog version."""
    line, column = ctx.position_of(stmt.table)
    foreign = tuple(mv_refresh.foreign_sources(ctx, stmt.query.sql))
    if stmt.refresh_policy.startswith("INCREMENTAL"):
        found = incrementality(ctx, stmt)
        if not found.incremental:
            raise NotIncrementalizableError(
                f"REFRESH POLICY {stmt.refresh_policy}: this materialized view cannot be refreshed incrementally: "
                f"{found.detail}", error_class=f"MATERIALIZED_VIEW_NOT_INCREMENTALIZABLE.{found.reason}",
                line=line, column=column,
                hint="write REFRESH POLICY AUTO (or FULL): each refresh recomputes the query when an input changed; "
                     "projections, inner joins and count/sum/avg/min/max aggregations of Delta tables refresh "
                     "incrementally")
    if foreign and stmt.refresh_policy != "FULL":
        raise UnversionedInputError(
            f"the materialized view reads {', '.join(foreign)}: sources that are not Delta tables or views of the "
            "catalog have no versions, so a refresh cannot know whether they changed", line=line, column=column,
            hint="write REFRESH POLICY FULL (every refresh recomputes the query), or read catalog tables only")
    return foreign


def incrementality(ctx: StatementContext, stmt: st.CreateMaterializedView) -> incremental_views.Incrementality:
    """Whether the view can be refreshed incrementally: by its query's tree, its inputs being catalog Delta tables
    (not views or sources without versions) and no column list (which wraps the query)."""
    found = incremental_views.analyse(stmt.query.sql)
    if not found.incremental:
        return found
    for ref in found.references:
        source = ctx.store.get_table((ref.database or ctx.current_database).lower(), ref.name.lower())
        if source is None or source.kind == "VIEW" or (ref.database is None and ctx.is_temporary_view(ref.name)):
            return incremental_views.Incrementality(False, "INPUT_NOT_IN_DELTA",
                                                    f"{ref.name} is not a Delta table of the catalog")
    if stmt.columns:
        return incremental_views.Incrementality(False, "OPERATOR_NOT_INCREMENTALIZABLE",
                                                "a column list renames the query's columns (rename them in the query)")
    return found


def create_materialized_view(ctx: StatementContext, stmt: st.CreateMaterializedView) -> StatementResult:
    database, name = ctx.checked(stmt.table, "materialized view")
    line, column = ctx.position_of(stmt.table)
    existing = ctx.store.get_table(database, name)
    if existing is not None:
        if stmt.if_not_exists:
            return no_result()
        if existing.kind != KIND or not (stmt.replace or stmt.or_refresh):
            what = "a materialized view" if existing.kind == KIND else f"a {kind_name(existing.kind)}"
            raise TableAlreadyExistsError(
                f"Cannot create materialized view `{database}`.`{name}` because {what} of that name already exists.",
                line=line, column=column,
                hint="use CREATE OR REFRESH (or OR REPLACE) MATERIALIZED VIEW to change its definition"
                if existing.kind == KIND else "choose another name, or drop the existing object first")
    if ctx.store.get_database(database) is None:
        raise SchemaNotFoundError(f"The schema `{database}` cannot be found.", line=line, column=column,
                                  hint="CREATE DATABASE it first (SHOW DATABASES lists them)")
    _check_policy(ctx, stmt)
    ensure_spark_database(ctx, database)
    schedule = schedule_json(ctx, stmt.schedule)
    with mv_refresh.refresh_lock(database, name):
        if existing is not None:
            _create_or_refresh(ctx, stmt, existing, schedule)
        else:
            _create(ctx, stmt, database, name, schedule)
    scheduler_changed(ctx, database, name)
    return no_result()


def _definition(ctx: StatementContext, stmt: st.CreateMaterializedView,
                df_schema: StructType) -> tuple[StructType, str]:
    """The stored query and the catalog schema: a `(name [NOT NULL] [COMMENT], ...)` list renames the query's columns
    in the stored text and puts the comments in the schema, as for views, and its NOT NULL (engine/declared_schema.py,
    as for streaming tables)."""
    definition = stmt.query.sql.rstrip().rstrip(";")
    if not stmt.columns:
        return df_schema, definition
    schema, definition = named_columns(ctx, stmt, df_schema, definition)
    not_null = {name.lower() for name in stmt.not_null}   # the list's NOT NULL, enforced as Delta does
    return declared_schema(tuple(ColumnSpec(f.name, f.dataType.simpleString(), f.name.lower() not in not_null)
                                 for f in schema.fields), schema), definition


def _not_null(schema: StructType) -> set[str]:
    return {f.name.lower() for f in schema.fields if not f.nullable}


def _entry(ctx: StatementContext, stmt: st.CreateMaterializedView, database: str, name: str, location: str,
           schedule: str | None) -> TableEntry:
    return TableEntry(database=database, name=name, kind=KIND, location=location, schema_json=None,
                      definition=None, properties=dict(stmt.properties), partition_by=tuple(stmt.partition_by),
                      comment=stmt.comment, owner=ctx.user, schedule=schedule, keys=named_keys(stmt.keys, name))


def _analysed(ctx: StatementContext, stmt: st.CreateMaterializedView) -> tuple[StructType, str]:
    """The query analysed once (the user's SELECT on every input checked, the plan judged by the policy)."""
    df, binder = bind(ctx, stmt.query)
    try:
        return _definition(ctx, stmt, df.schema)
    finally:
        binder.close()


def _create(ctx: StatementContext, stmt: st.CreateMaterializedView, database: str, name: str,
            schedule: str | None) -> None:
    """The result is the view's first commit, then the catalog row and the refresh row: anything failing before
    the row removes the folder made here."""
    schema, definition = _analysed(ctx, stmt)
    state = mv_refresh.MaterializedViewState(refresh_policy=stmt.refresh_policy, database=ctx.current_database,
                                             not_null=tuple(stmt.not_null))
    try:
        with locations.new_table_folder(ctx.warehouse, database, name, "materialized view") as folder:
            entry = replace(_entry(ctx, stmt, database, name, str(folder), schedule), definition=definition,
                            schema_json=schema.json())   # its NOT NULL columns are enforced from the first write
            # the definition's own context: the statement's tree is not the definition's (tree=None: parsed afresh)
            outcome = mv_refresh.recompute(replace(ctx, sql=definition, tree=None), entry, state, full=False,
                                           create=True)
            ctx.store.create_table(entry)
    except LocationExistsError as exc:
        exc.line, exc.column = ctx.position_of(stmt.table)
        raise
    ctx.store.put_stream(mv_refresh.new_refresh_row(database, name, state))
    ctx.store.record_event(database, name, "CREATED", f"created by {ctx.user}", origin={"user_name": ctx.user})
    mv_refresh.record_success(ctx, entry, state, outcome, False, "USER_ACTION")


def _create_or_refresh(ctx: StatementContext, stmt: st.CreateMaterializedView, existing: TableEntry,
                       schedule: str | None) -> None:
    """CREATE OR REFRESH with the stored definition is a REFRESH (nothing to do when no input changed); a new
    definition (or OR REPLACE) is recomputed into the same folder, in one commit, and stored."""
    schema, definition = _analysed(ctx, stmt)
    database, name = existing.database, existing.name
    row, state = mv_refresh.state_of(ctx, existing)
    same_database = state.database in (None, ctx.current_database)
    state = replace(state, refresh_policy=stmt.refresh_policy, database=ctx.current_database,
                    not_null=tuple(stmt.not_null))
    same = (same_database and definition == existing.definition
            and tuple(stmt.partition_by) == tuple(existing.partition_by)
            and dict(stmt.properties) == dict(existing.properties or {})
            and _not_null(schema) == _not_null(table_schema(existing)))
    ctx.store.update_table(database, name, schedule=schedule, comment=stmt.comment)
    if row is None:
        ctx.store.put_stream(mv_refresh.new_refresh_row(database, name, state))
    else:
        ctx.store.update_stream(database, name, plan_json=state.to_json())
    if same and not stmt.replace:
        mv_refresh.refresh_unlocked(ctx, ctx.store.require_table(database, name))
        return
    location = str(locations.existing_table_folder(ctx.warehouse, existing.location))
    entry = replace(existing, location=location, definition=definition, partition_by=tuple(stmt.partition_by),
                    properties=dict(stmt.properties), comment=stmt.comment, schedule=schedule,
                    schema_json=schema.json())
    create = tuple(stmt.partition_by) != tuple(existing.partition_by)
    try:
        outcome = mv_refresh.recompute(replace(ctx, sql=definition, tree=None), entry,
                                       replace(state, last_version=None), full=True, create=create)
    except Exception as exc:  # recorded, then raised with its type
        error = mv_refresh.record_failure(ctx, existing, exc, "USER_ACTION")
        if error is exc:
            raise
        raise error from exc
    ctx.store.update_table(database, name, definition=definition, schema_json=schema.json(),
                           partition_by=tuple(stmt.partition_by), properties=dict(stmt.properties))
    why = "the definition changed" if not same else "CREATE OR REPLACE"
    mv_refresh.record_success(ctx, entry, state, replace(outcome, reason=f"{outcome.reason}; {why}"), True,
                              "USER_ACTION")


def refresh_materialized_view(ctx: StatementContext, statement: st.Refresh, entry: TableEntry) -> StatementResult:
    """`REFRESH MATERIALIZED VIEW mv [FULL] [SYNC | ASYNC]`, with the owner's rights whoever may ask (the owner or a
    REFRESH grant): SYNC (the default) returns when the refresh committed or failed; ASYNC returns at once and the
    refresh runs in the background (executor/materialized_views/background.py), its outcome in DESCRIBE and the
    event log."""
    if statement.asynchronous:
        mv_background.refresh_async(ctx, entry, statement.full)
    else:
        mv_refresh.refresh(mv_background.as_owner(ctx, entry), entry, full=statement.full)
    return no_result()


def drop_materialized_view(ctx: StatementContext, statement: st.DropMaterializedView) -> StatementResult:
    database, name = ctx.qualify(statement.table)
    if to_drop_as(ctx, statement.table, statement.if_exists, KIND, "EXPECT_MATERIALIZED_VIEW") is None:
        return no_result()
    drop(ctx, database, name)
    return no_result()


def drop(ctx: StatementContext, database: str, name: str) -> None:
    """The catalog rows (the refresh row and events go with the table's), then the folder."""
    with mv_refresh.refresh_lock(database, name):
        dropped = ctx.store.drop_table(database, name)
        locations.drop_table_folder(ctx.warehouse, dropped.location)


def show_materialized_views(ctx: StatementContext, statement: st.ShowMaterializedViews) -> StatementResult:
    database = (statement.database or ctx.current_database).lower()
    rows = []
    for entry in ctx.store.list_tables(database, statement.pattern, kinds=(KIND,)):
        row, state = mv_refresh.state_of(ctx, entry)
        rows.append((entry.database, entry.name, row.last_refresh_status if row is not None else None,
                     display_time(row.last_refresh_at) if row is not None else None, state.last_kind,
                     readable_error(ctx, entry.database, entry.name, row.last_error if row is not None else None)))
    columns = [("namespace", "string"), ("viewName", "string"), ("lastRefreshStatus", "string"),
               ("lastRefreshedAt", "string"), ("lastRefreshType", "string"), ("lastError", "string")]
    return rows_result(columns, rows)


def explain_materialized_view(ctx: StatementContext, statement: st.ExplainMaterializedView) -> StatementResult:
    """How the view would be kept equal to its query: incrementally for appends (and why not), or by full
    recomputes; one row per line, as EXPLAIN answers."""
    create = statement.create
    database, name = ctx.qualify(create.table)
    found = incrementality(ctx, create)
    foreign = mv_refresh.foreign_sources(ctx, create.query.sql)
    lines = [f"Materialized view {database}.{name}", f"Refresh policy: {create.refresh_policy}",
             f"Refresh schedule: {create.schedule.describe() if create.schedule is not None else 'MANUAL'}"]
    if found.incremental and found.aggregation:
        lines.append(f"Incremental: yes, {found.detail}: the rows the inputs' changes add and remove are aggregated "
                     "by the group keys and merged into the groups they touch (hidden state columns keep counts and "
                     "sums); a sum or avg over floating-point values, or a removed row that may have been a group's "
                     "min or max, is a full recompute")
    elif found.incremental:
        lines.append(f"Incremental: yes, {found.detail}: the rows the inputs' changes add are appended to the view "
                     "and the rows they remove are taken out of the files that hold them")
    else:
        lines.append(f"Incremental: no, MATERIALIZED_VIEW_NOT_INCREMENTALIZABLE.{found.reason}: {found.detail}")
        lines.append("Refresh: a full recompute when an input has a new version (none: nothing to do)")
    if foreign:
        lines.append(f"Unversioned sources: {', '.join(foreign)} (needs REFRESH POLICY FULL; recomputed every time)")
    return rows_result([("plan", "string")], [(line,) for line in lines])


class MaterializedViews:
    """MATERIALIZED_VIEW as an object kind (executor/object_kinds.py): every step on a view takes its refresh lock,
    so none overlaps a refresh (a statement's, the scheduler's or a background one)."""

    def drop(self, ctx: StatementContext, entry: TableEntry) -> None:
        drop(ctx, entry.database, entry.name)

    def before_database_drop(self, ctx: StatementContext, entry: TableEntry) -> None:
        return None   # nothing runs for a view between refreshes: the catalog's cascade takes its rows

    def refresh(self, ctx: StatementContext, entry: TableEntry, statement: st.Refresh) -> StatementResult:
        if statement.kind != "MATERIALIZED VIEW":
            return refuse_refresh(ctx, entry, statement)
        return refresh_materialized_view(ctx, statement, entry)

    def schedule(self, ctx: StatementContext, entry: TableEntry, statement: st.AlterSchedule) -> StatementResult:
        """The row changes under the view's refresh lock, then the view scheduler (when the gateway runs one)
        re-reads it."""
        if statement.kind != "MATERIALIZED VIEW":
            return refuse_schedule(ctx, entry, statement)
        line, column = ctx.position_of(statement.table)
        with mv_refresh.refresh_lock(entry.database, entry.name):
            change_schedule(ctx, statement, entry.database, entry.name, line, column,
                            "none, refreshed by REFRESH MATERIALIZED VIEW only")
        scheduler_changed(ctx, entry.database, entry.name)
        return no_result()


MATERIALIZED_VIEWS = MaterializedViews()


HANDLERS = {
    st.ExplainMaterializedView: explain_materialized_view,
    st.CreateMaterializedView: create_materialized_view,
    st.DropMaterializedView: drop_materialized_view,
    st.ShowMaterializedViews: show_materialized_views,
}
