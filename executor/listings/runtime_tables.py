"""`system.runtime.sessions` and `system.runtime.queries` (Trino's names): the gateway's live client sessions and the
statements they run, readable with ordinary SQL; and `CALL system.runtime.kill_query(query_id => ..., message => ...)`,
which cancels one of them.

Only the gateway knows its sessions and operations, so it hands them down as a `RuntimeView` (runtime_view.py;
gateway/runtime.py implements it) in the StatementContext. Each table is a virtual table, bound as
`information_schema` is (executor/binding/binder.py): a temporary view over rows made when the statement is bound
(a LocalRelation: filtering and projecting it needs no Spark job), so WHERE, ORDER BY and joins run over it. A
user sees their own sessions and statements; admins (`security.admins`) everyone's. kill_query is allowed to anyone
by the policy (policy/decide.py) and checked here, where the statement's owner is known: its owner or an admin,
else 42501.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.errors import TableNotFoundError
from sluicegate.dialect import catalogs
from sluicegate.dialect import statements as st
from sluicegate.dialect.references import TableReference
from sluicegate.engine.sql import ListBatchSource, StatementResult
from sluicegate.executor.listings.runtime_view import RuntimeView
from sluicegate.policy.errors import PermissionDeniedError
from sluicegate.storage.spark_errors import RuntimeQueryError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sluicegate.executor.context import StatementContext

Position = Callable[[int], "tuple[int, int]"]


_S, _I, _L, _T, _D, _A = "string", "int", "bigint", "timestamp", "double", "array<int>"

TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "sessions": (("session_id", _S), ("user", _S), ("client_address", _S), ("client_application", _S),
                 ("protocol", _S), ("created", _T), ("last_access", _T), ("state", _S), ("operations", _I)),
    "queries": (("query_id", _S), ("session_id", _S), ("user", _S), ("client_address", _S), ("state", _S),
                ("statement_type", _S), ("statement_text", _S), ("started", _T), ("elapsed_ms", _L),
                ("spark_job_ids", _A), ("stages_done", _I), ("stages_total", _I), ("tasks_done", _I),
                ("tasks_total", _I), ("progress", _D), ("rows_fetched", _L)),
}


def table_rows(view: RuntimeView, table: str, user: str | None) -> list[tuple[Any, ...]]:
    """The rows of `table` that `user` may see (None: an admin, all), in the table's column order (no JVM)."""
    if table == "sessions":
        return [(s.session_id, s.user, s.client_address, s.client_application, s.protocol, s.created, s.last_access,
                 s.state, s.operations) for s in view.sessions(user)]
    return [(q.query_id, q.session_id, q.user, q.client_address, q.state, q.statement_type, q.statement_text,
             q.started, q.elapsed_ms, list(q.spark_job_ids), q.stages_done, q.stages_total, q.tasks_done,
             q.tasks_total, q.progress, q.rows_fetched) for q in view.queries(user)]


def _arrow(table: str, data: list[tuple[Any, ...]]) -> Any:
    import pyarrow as pa

    kinds = {_S: pa.string(), _I: pa.int32(), _L: pa.int64(), _T: pa.timestamp("us", tz="UTC"),
             _D: pa.float64(), _A: pa.list_(pa.int32())}
    columns = TABLES[table]
    schema = pa.schema([pa.field(name, kinds[kind]) for name, kind in columns])
    return pa.table({name: [row[i] for row in data] for i, (name, _) in enumerate(columns)}, schema=schema)


class RuntimeUnavailableError(RuntimeQueryError):
    error_class = "RUNTIME_TABLES_UNAVAILABLE"
    sqlstate = "0A000"


class QueryNotFoundError(RuntimeQueryError):
    error_class = "QUERY_NOT_FOUND"
    sqlstate = "42704"


def _view(ctx: StatementContext) -> RuntimeView:
    if ctx.runtime is None:  # a statement the gateway runs on its own (a scheduled refresh): no client sessions
        raise RuntimeUnavailableError(
            f"{catalogs.SYSTEM}.{catalogs.RUNTIME} is read only by statements of client sessions",
            hint="read it from a client session")
    return ctx.runtime


def _seen_by(ctx: StatementContext) -> str | None:
    return None if ctx.principal.is_admin else ctx.user


def runtime_reader(ctx: StatementContext) -> Callable[[TableReference, Position], DataFrame]:
    """The binder's reader of `system.runtime.<table>` references for the statement in `ctx`."""

    def read(ref: TableReference, position: Position) -> DataFrame:
        table = ref.name.lower()
        if table not in TABLES:
            line, column = position(ref.start)
            raise TableNotFoundError(
                f"The table `{catalogs.SYSTEM}`.`{catalogs.RUNTIME}`.`{ref.name}` cannot be found", line=line,
                column=column, hint=f"{catalogs.SYSTEM}.{catalogs.RUNTIME} has the tables {', '.join(TABLES)}")
        data = table_rows(_view(ctx), table, _seen_by(ctx))
        return ctx.spark.createDataFrame(_arrow(table, data)).select(*(name for name, _ in TABLES[table]))

    return read


KILL_HINT = "the id is the query_id column of system.runtime.queries; a statement that ended cannot be killed"


def kill_statement(view: RuntimeView, query_id: str, by_user: str, is_admin: bool, message: str | None, *,
                   caller: str | None = None) -> None:
    """THE rule of who may end a running statement, for SQL's `kill_query` and the web console alike: its owner or
    an admin, never the statement asking (`caller`, its own id); the statement's client then gets an error carrying
    who killed it and `message`. Another user's id is refused with 42501, as Trino's `kill_query` does: the ids are
    random operation handles, and a non-admin's `system.runtime.queries` lists only their own."""
    owner = view.owner_of(query_id)
    if owner is None:
        raise QueryNotFoundError(f"no running statement has the id '{query_id}'", hint=KILL_HINT)
    if owner != by_user and not is_admin:
        raise PermissionDeniedError(
            f"user '{by_user}' may not kill the statement '{query_id}': only its owner or an admin may",
            hint="ask its owner or an admin (security.admins) to kill it")
    if caller is not None and query_id == caller:
        raise RuntimeQueryError("a statement cannot kill itself", error_class="INVALID_PARAMETER_VALUE",
                                sqlstate="22023", hint=KILL_HINT)
    if not view.kill(query_id, by_user, message):
        raise QueryNotFoundError(f"the statement '{query_id}' ended before it could be killed", hint=KILL_HINT)


def kill_query(ctx: StatementContext, stmt: st.KillQuery) -> StatementResult:
    """`CALL system.runtime.kill_query(query_id => ..., message => ...)`: `kill_statement`'s rule, for this user."""
    kill_statement(_view(ctx), stmt.query_id, ctx.user, ctx.principal.is_admin, stmt.message, caller=ctx.job_group)
    return StatementResult([], lambda: ListBatchSource(()))


HANDLERS: dict[type, Callable[[StatementContext, Any], StatementResult]] = {st.KillQuery: kill_query}
