"""SQL user-defined functions: CREATE [OR REPLACE] FUNCTION, DROP FUNCTION, DESCRIBE FUNCTION and SHOW FUNCTIONS.

The definition lives in the catalog (catalog/functions.py), never in Spark: a statement that calls a function gets it
as a temporary function of its own session, its body bound like a query with the caller's rights
(executor/binding/binder.py), so a call reads nothing the caller may not read. CREATE checks the body the same way
with the creator's rights, before the function is kept: it must compile, read only what the creator may read, pass
the policy's plan check, and name no temporary view (a session's view would mean something else in the next one,
as Databricks refuses with INVALID_TEMP_OBJ_REFERENCE).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.errors import RoutineAlreadyExistsError, RoutineNotFoundError, SchemaNotFoundError
from sluicegate.catalog.functions import FunctionEntry, FunctionStore
from sluicegate.catalog.names import quote_string
from sluicegate.catalog.store import pattern_matcher
from sluicegate.dialect import catalogs
from sluicegate.dialect import statements as st
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.binding.binder import Binder, catalog_resolver
from sluicegate.executor.binding.file_reads import file_dataframe
from sluicegate.executor.binding.resolved import ResolvedTable, TableResolver
from sluicegate.executor.errors import UnsupportedStatementError
from sluicegate.executor.output import no_result, rows_result
from sluicegate.executor.spark_databases import spark_has_database

if TYPE_CHECKING:
    from sluicegate.executor.context import StatementContext


class TemporaryObjectError(UnsupportedStatementError):
    error_class = "INVALID_TEMP_OBJ_REFERENCE"
    sqlstate = "42K0F"


class _Defining:
    """The creator's resolver while a new function's body is checked: its own name is the new definition (a body
    calling it recurses until the depth limit refuses it), and a temporary view is refused."""

    def __init__(self, inner: TableResolver, entry: FunctionEntry, current_database: str,
                 is_temporary_view: Callable[[str], bool]) -> None:
        self._inner, self._entry = inner, entry
        self._current_database, self._is_temporary_view = current_database, is_temporary_view

    def resolve(self, database: str | None, name: str) -> ResolvedTable | None:
        if database is None and self._is_temporary_view(name):
            raise TemporaryObjectError(
                f"The function `{self._entry.database}`.`{self._entry.name}` cannot reference the temporary view "
                f"`{name}`: a function outlives the session", hint="read a table or a (permanent) view instead")
        return self._inner.resolve(database, name)

    def for_view(self, view: ResolvedTable) -> TableResolver:
        return self._inner.for_view(view)

    def function(self, database: str | None, name: str) -> FunctionEntry | None:
        if ((database or self._current_database).lower(), name.lower()) == (self._entry.database, self._entry.name):
            return self._entry
        return self._inner.function(database, name)


def create_function(ctx: StatementContext, stmt: st.CreateFunction) -> StatementResult:
    database, name = ctx.checked(stmt.table, "function")
    functions = FunctionStore(ctx.store)
    if functions.get(database, name) is not None and not stmt.replace:
        if stmt.if_not_exists:
            return no_result()
        line, column = ctx.position_of(stmt.table)
        raise RoutineAlreadyExistsError(f"The function `{database}`.`{name}` already exists.", line=line,
                                        column=column, hint="choose another name, or CREATE OR REPLACE FUNCTION")
    entry = FunctionEntry(database, name, stmt.parameters, stmt.returns, stmt.body, stmt.comment, ctx.user)
    _check_body(ctx, entry)
    functions.create(entry, replace=stmt.replace)
    return no_result()


def _check_body(ctx: StatementContext, entry: FunctionEntry) -> None:
    """The body bound and analysed as a call with NULL arguments, with the creator's rights, and judged by the
    policy's plan check: nothing runs, nothing is kept in Spark."""
    resolver = _Defining(catalog_resolver(ctx), entry, ctx.current_database, ctx.is_temporary_view)
    binder = Binder(ctx.spark, resolver, ctx.sql,
                    guard=lambda sql: ctx.policy.check_query_text(ctx.spark, sql, ctx.principal),
                    files=lambda ref: file_dataframe(ctx, ref))
    try:
        ctx.policy.check_query(binder.check_function(entry), ctx.principal)
    finally:
        binder.close()


def drop_function(ctx: StatementContext, stmt: st.DropFunction) -> StatementResult:
    database, name = ctx.qualify(stmt.table)
    functions = FunctionStore(ctx.store)
    if functions.get(database, name) is None:
        if stmt.if_exists:
            return no_result()
        line, column = ctx.position_of(stmt.table)
        raise RoutineNotFoundError(f"The function `{database}`.`{name}` cannot be found.", line=line, column=column,
                                   hint="SHOW USER FUNCTIONS lists the schema's functions; add IF EXISTS to ignore")
    functions.drop(database, name)
    return no_result()


def describe_function(ctx: StatementContext, stmt: st.DescribeFunction) -> StatementResult:
    """A catalog function in Databricks' shape, one line a row (`function_desc`); Spark describes the others
    (executor/dispatch.py routes them there)."""
    entry = FunctionStore(ctx.store).get(*ctx.qualify(stmt.table))
    if entry is None:
        line, column = ctx.position_of(stmt.table)
        raise RoutineNotFoundError(f"The function `{stmt.table.name}` cannot be found.", line=line, column=column,
                                   hint="SHOW FUNCTIONS lists them")
    lines = [f"Function: {_full_name(entry)}", "Type:     SCALAR",
             "Input:    " + ", ".join(f"{p} {kind}" for p, kind in entry.parameters), f"Returns:  {entry.returns}"]
    if stmt.extended:
        lines += [f"Comment:  {entry.comment or ''}", f"Owner:    {entry.owner or ''}",
                  f"Create Time: {entry.created_at.isoformat() if entry.created_at else ''}",
                  "Language: SQL", f"Body:     {entry.body}"]
    return rows_result([("function_desc", "string")], [(line,) for line in lines])


def show_functions(ctx: StatementContext, stmt: st.ShowFunctions) -> StatementResult:
    """`function` rows: the schema's SQL functions by their full names (USER), and Spark's built-ins too (ALL)."""
    database = (stmt.database or ctx.current_database).lower()
    if (stmt.database is not None and ctx.store.get_database(database) is None
            and not spark_has_database(ctx.spark, database)):
        raise SchemaNotFoundError(f"The schema `{database}` cannot be found.",
                                  hint="SHOW DATABASES lists the schemas")   # as Spark answers SHOW FUNCTIONS IN
    names = [_full_name(entry) for entry in FunctionStore(ctx.store).list(database)]
    matcher = pattern_matcher(stmt.pattern)
    names = [n for n in names if matcher is None or matcher.match(n.rsplit(".", 1)[1]) or matcher.match(n)]
    if stmt.scope == "ALL":
        like = f" LIKE {quote_string(stmt.pattern)}" if stmt.pattern is not None else ""
        names += [str(row[0]) for row in ctx.spark.sql(f"SHOW SYSTEM FUNCTIONS{like}").collect()]
    return rows_result([("function", "string")], [(n,) for n in names])


def _full_name(entry: FunctionEntry) -> str:
    return f"{catalogs.current().name}.{entry.database}.{entry.name}"


HANDLERS: dict[type, Callable[[StatementContext, Any], StatementResult]] = {
    st.CreateFunction: create_function,
    st.DropFunction: drop_function,
    st.DescribeFunction: describe_function,
    st.ShowFunctions: show_functions,
}
