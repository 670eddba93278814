"""Running a classified statement against the warehouse: one function per statement kind, chosen by type.

Statements about objects only Spark's session knows (`USING parquet` tables, file views) go to Spark, with every
catalog table their queries read bound to a pinned snapshot, so Spark's own tables keep working beside the Delta
warehouse; temporary views defined by a query are the gateway's (executor/binding/session_views.py). A `CREATE
TABLE ... USING` anything but delta is such a Spark table (in memory, forgotten on restart), not a catalog one. The
policy decides every statement once, before either route (policy/decide.py). A SELECT the gateway binds itself may
be answered from the exact result cache (executor/result_cache.py) after that decision, its names resolved with the
user's rights, and otherwise has its result recorded for the next run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sluicegate.catalog.functions import FunctionStore
from sluicegate.catalog.names import quote_identifier
from sluicegate.dialect import statements as st
from sluicegate.dialect.errors import SqlError
from sluicegate.dialect.positions import line_column
from sluicegate.dialect.references import table_references
from sluicegate.engine.literal_results import literal_result
from sluicegate.engine.sql import ListBatchSource, StatementResult, run_sql, stream_dataframe
from sluicegate.executor import catalogs, databases, flows, functions, grants, result_cache, schedules
from sluicegate.executor import streaming_tables as streaming
from sluicegate.executor.binding.binder import bind, bind_statement, catalog_resolver
from sluicegate.executor.binding.explain import explains, with_reads
from sluicegate.executor.binding.resolved import RememberingResolver
from sluicegate.executor.context import StatementContext
from sluicegate.executor.listings import describe, runtime_tables
from sluicegate.executor.lookups import spark_has
from sluicegate.executor.materialized_views import statements as materialized_views
from sluicegate.executor.tables import (
    clone,
    clustering,
    column_types,
    constraints,
    ddl,
    dml,
    drop_columns,
    merge,
    optimize,
    replace,
    vacuum,
)
from sluicegate.policy.decide import check_spark_run, decide
from sluicegate.policy.rules import creates_spark_table
from sluicegate.storage.spark_errors import RuntimeQueryError, from_spark


def _show_views(ctx: StatementContext, stmt: st.ShowViews) -> StatementResult:
    return describe.show_views(ctx, stmt.database, stmt.pattern)


def _create_temporary_view(ctx: StatementContext, stmt: st.CreateTemporaryView) -> StatementResult:
    """The query is bound like any SELECT (Spark cannot resolve the warehouse's tables) and kept, so that every
    later statement naming the view reads the tables afresh (executor/binding/session_views.py)."""
    assert stmt.query is not None
    _refuse_recursion(ctx, stmt)
    df, binder = bind(ctx, stmt.query)
    try:
        query = stmt.query.sql
        if stmt.columns:
            if len(stmt.columns) != len(df.columns):
                raise RuntimeQueryError(
                    f"cannot create the view `{stmt.name}`: it names {len(stmt.columns)} columns and its query "
                    f"has {len(df.columns)}", error_class="CREATE_VIEW_COLUMN_ARITY_MISMATCH", sqlstate="21S01",
                    hint="name as many columns as the query returns, or leave the column list out")
            df = df.toDF(*stmt.columns)
            names = ", ".join(quote_identifier(c) for c in stmt.columns)
            query = f"SELECT * FROM (\n{query}\n) AS __sg_columns({names})"
        if stmt.is_global:  # an admin's: in global_temp, pinned at creation (no session keeps its query)
            (df.createOrReplaceGlobalTempView if stmt.replace else df.createGlobalTempView)(stmt.name)
        else:
            ctx.session_views.define(ctx.spark, stmt.name, df, query, stmt.replace)
    except SqlError:
        raise
    except Exception as exc:  # Spark's own errors (the view exists, ...) keep their class
        raise from_spark(exc, ctx.sql, include_stack_trace=ctx.include_stack_trace) from exc
    finally:
        binder.close()
    return StatementResult([], lambda: ListBatchSource(()))


def _refuse_recursion(ctx: StatementContext, stmt: st.CreateTemporaryView) -> None:
    """A view that reads itself (`CREATE OR REPLACE TEMP VIEW v AS SELECT * FROM v`) would be bound again at every
    use until the nesting limit: refused at creation, as Spark does."""
    assert stmt.query is not None
    for ref in table_references(stmt.query.sql):
        if ref.database is None and ref.name.lower() == stmt.name.lower():
            line, column = line_column(ctx.sql, stmt.query.offset + ref.start)
            raise RuntimeQueryError(
                f"Recursive view `{stmt.name}` detected (cycle: `{stmt.name}` -> `{stmt.name}`).",
                error_class="RECURSIVE_VIEW", sqlstate="42K0H", line=line, column=column,
                hint="read the tables the view reads instead, or give the new view another name")


_HANDLERS: dict[type, Callable[[StatementContext, Any], StatementResult]] = {
    st.CreateDatabase: databases.create_database,
    st.DropDatabase: databases.drop_database,
    st.UseDatabase: databases.use_database,
    st.ShowDatabases: databases.show_databases,
    st.DescribeDatabase: databases.describe_database,
    st.CreateTable: ddl.create_table,
    st.CloneTable: clone.clone_table,
    st.CreateView: ddl.create_view,
    st.DropTable: ddl.drop_table,
    st.AddColumns: ddl.add_columns,
    st.SetColumnComment: ddl.set_column_comment,
    st.SetTableComment: ddl.set_table_comment,
    st.SetTableProperties: ddl.set_table_properties,
    st.UnsetTableProperties: ddl.unset_table_properties,
    st.AddConstraint: constraints.add_constraint,
    st.DropConstraint: constraints.drop_constraint,
    st.DropColumns: drop_columns.drop_columns,
    st.SetColumnType: column_types.set_column_type,
    st.SetClustering: clustering.set_clustering,
    st.SetColumnNullability: constraints.set_column_nullability,
    st.ShowTblProperties: describe.show_tblproperties,
    st.ShowColumns: describe.show_columns,
    st.RenameTable: ddl.rename_table,
    st.ShowTables: describe.show_tables,
    st.ShowTableExtended: describe.show_table_extended,
    st.DescribeTable: describe.describe_table,
    st.DescribeHistory: describe.describe_history,
    st.DescribeDetail: describe.describe_detail,
    st.ShowCreateTable: describe.show_create_table,
    st.Insert: replace.insert,
    st.Delete: dml.delete,
    st.Update: dml.update,
    st.Merge: merge.merge,
    st.Vacuum: vacuum.vacuum,
    st.Optimize: optimize.optimize,
    st.ShowViews: _show_views,
    st.CreateTemporaryView: _create_temporary_view,
    st.Grant: grants.grant,
    st.Revoke: grants.revoke,
    st.ShowGrants: grants.show_grants,
    **streaming.HANDLERS,
    **schedules.HANDLERS,
    **flows.HANDLERS,
    **materialized_views.HANDLERS,
    **catalogs.HANDLERS,
    **runtime_tables.HANDLERS,
    **functions.HANDLERS,
}

# Statements naming one existing object: if only Spark's session knows it, Spark runs the statement, and the policy
# asks that table's owner for what the kind's rule says it does (reads or changes it; policy/decide.py).
ON_ONE_TABLE = (st.DropTable, st.AddColumns, st.RenameTable, st.DescribeTable, st.DescribeHistory,
                st.ShowCreateTable, st.Insert, st.Delete, st.Update, st.Merge, st.Vacuum, st.Refresh,
                st.SetColumnComment, st.SetTableComment, st.SetTableProperties, st.UnsetTableProperties,
                st.ShowTblProperties, st.ShowColumns)


def _spark_runs(ctx: StatementContext, statement: st.Statement) -> bool:
    if isinstance(statement, st.Passthrough):
        return True
    if isinstance(statement, st.CreateTemporaryView):
        return statement.query is None  # the USING form reads files: Spark runs it, its paths pass the policy
    if isinstance(statement, st.CreateTable):
        return creates_spark_table(statement)
    if isinstance(statement, st.DescribeFunction):  # a built-in (or nothing): Spark describes it
        return FunctionStore(ctx.store).get(*ctx.qualify(statement.table)) is None
    if isinstance(statement, ON_ONE_TABLE):
        table = statement.table
        return ctx.store.get_table(*ctx.qualify(table)) is None and spark_has(ctx, table)
    return False


def _run_in_spark(ctx: StatementContext, statement: st.Statement) -> StatementResult:
    """A statement Spark runs itself: every catalog table its queries read bound to a pinned snapshot (what sqlglot
    cannot parse runs as typed), then judged where its plan exists (Spark's own parse of the text Spark runs, and the
    owner of the Spark table it names), then its queries' analysed plans before they run."""
    if isinstance(statement, st.Passthrough) and not statement.parsed:
        sql, to_original, binder = ctx.sql, None, None
    else:
        sql, to_original, binder = bind_statement(ctx)
    database = ctx.current_database
    try:
        check_spark_run(ctx.policy, ctx.principal, ctx.spark, statement, sql, database,
                        original=ctx.sql, to_original=to_original, is_temporary_view=ctx.is_temporary_view)
        result = run_sql(ctx.spark, sql, ctx.job_group, include_stack_trace=ctx.include_stack_trace,
                         check=lambda df: ctx.policy.check_query(df, ctx.principal), original=ctx.sql,
                         to_original=to_original)
        if binder is not None and explains(ctx.sql):
            result = with_reads(result, binder.reads)  # which Delta files each table reference reads
        if binder is not None:
            result.on_close = binder.take_holds()  # a query's files are read as rows are fetched
    finally:
        ctx.forget_database()  # what Spark ran as typed may have changed it (`SET CATALOG`, a `USE` it parsed)
        if binder is not None:
            binder.close()
    owners = ctx.policy.spark_tables
    if isinstance(statement, st.CreateTable):
        owners.created(*ctx.qualify(statement.table), ctx.user)
    elif isinstance(statement, st.DropTable):
        owners.dropped(*ctx.qualify(statement.table))
    elif isinstance(statement, st.RenameTable):
        owners.renamed(*ctx.qualify(statement.table), *ctx.qualify(statement.new_name))
    return result


def execute(ctx: StatementContext, statement: st.Statement) -> StatementResult:
    """Run `statement` once the policy allows it; raises the typed errors of the policy, the catalog, the runtime or
    Spark (with positions)."""
    decide(ctx.policy, ctx.principal, ctx.store, statement, ctx.current_database)  # kept: no round trip
    if isinstance(statement, st.SelectQuery):
        literal = literal_result(statement.query.sql)  # `SELECT 1`: computed here, no round trip to the JVM
        if literal is not None:
            return literal
    if _spark_runs(ctx, statement):
        return _run_in_spark(ctx, statement)
    cached = result_cache.NOT_CACHED
    resolver = None
    if isinstance(statement, st.SelectQuery):
        # each name resolved once for both: the look-up (with the user's rights) and, on a miss, the binder
        resolver = RememberingResolver(catalog_resolver(ctx))
        cached = result_cache.lookup(ctx, statement.query, resolver)
        if cached.result is not None:
            return cached.result
    ctx.spark.sparkContext.setJobGroup(ctx.job_group, ctx.sql[:200], interruptOnCancel=True)
    if isinstance(statement, st.SelectQuery):
        df, binder = bind(ctx, statement.query, resolver)
        try:
            result = stream_dataframe(ctx.spark, df, ctx.sql, ctx.job_group,
                                      include_stack_trace=ctx.include_stack_trace)
            result.on_close = binder.take_holds()  # its files are read as rows are fetched, after this returns
            return result_cache.recorded(ctx, cached, binder, df, result)
        finally:
            binder.close()
    try:
        return _HANDLERS[type(statement)](ctx, statement)
    except Exception as exc:
        if isinstance(exc, SqlError):
            raise  # already typed: catalog, runtime or Delta errors
        raise from_spark(exc, ctx.sql, include_stack_trace=ctx.include_stack_trace) from exc
