"""`system.query.history`: the statements the gateway ran, in the columns of Databricks' system table, read with
ordinary SQL (`WHERE execution_status = 'FAILED' ORDER BY start_time DESC`, joins with other tables).

A virtual table, bound as `system.information_schema.*` is: the binder puts a temporary view over rows read from the
catalog (catalog/history.py) where the reference was. A user reads their own statements; an admin (`security.admins`)
reads everyone's, the gateway's own work (`executed_by = 'system'`) included. Only the catalog name `system` reaches
it: `query.history` alone names a table of a database `query`, as any other two-part name does. The rows are those
the history writer has stored: a statement shows up once its client closed it (its rows fetched are known then) and
the writer's next batch landed, well under a second later.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sluicegate.catalog import history
from sluicegate.catalog.errors import TableNotFoundError
from sluicegate.dialect import catalogs
from sluicegate.dialect.references import TableReference

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sluicegate.executor.context import StatementContext

Position = Callable[[int], "tuple[int, int]"]
TABLE = "history"

_S, _L, _T, _A, _B = "string", "bigint", "timestamp", "array<string>", "boolean"
# Databricks' columns that sluicegate fills (name, type), in its order; `source` says whose work it was
COLUMNS: tuple[tuple[str, str], ...] = (
    ("statement_id", _S), ("session_id", _S), ("executed_by", _S), ("source", _S), ("client_application", _S),
    ("client_address", _S), ("statement_type", _S), ("execution_status", _S), ("error_class", _S), ("sqlstate", _S),
    ("error_message", _S), ("start_time", _T), ("end_time", _T), ("total_duration_ms", _L),
    ("execution_duration_ms", _L), ("produced_rows", _L), ("modified_rows", _L), ("read_rows", _L),
    ("read_bytes", _L), ("read_tables", _A),
    ("written_tables", _A), ("statement_text", _S), ("from_result_cache", _B),
)


def is_query_history(ref: TableReference) -> bool:
    """Whether a reference names `system.query.<table>` (the catalog written out: it is what tells it apart)."""
    node = ref.node
    written_catalog = str(node.meta.get("catalog") or "") if node is not None else ""
    return written_catalog.lower() == catalogs.SYSTEM and (ref.database or "").lower() == catalogs.QUERY


def visible_records(ctx: StatementContext) -> list[history.HistoryRecord]:
    """The rows the session's user may read: their own, or every row for an admin."""
    principal = ctx.principal
    return history.read(ctx.store, None if principal.is_admin else principal.user)


def _arrow(records: list[history.HistoryRecord]) -> Any:
    import pyarrow as pa

    kinds = {_S: pa.string(), _L: pa.int64(), _T: pa.timestamp("us", tz="UTC"), _A: pa.list_(pa.string()),
             _B: pa.bool_()}
    schema = pa.schema([pa.field(name, kinds[kind]) for name, kind in COLUMNS])
    values: dict[str, list[Any]] = {name: [] for name, _ in COLUMNS}
    for record in records:
        for name, _ in COLUMNS:
            value = getattr(record, name)
            values[name].append(list(value) if isinstance(value, tuple) else value)
    return pa.table(values, schema=schema)


def history_dataframe(ctx: StatementContext) -> DataFrame:
    table = _arrow(visible_records(ctx))
    return ctx.spark.createDataFrame(table).select(*(name for name, _ in COLUMNS))


def query_history_reader(ctx: StatementContext) -> Callable[[TableReference, Position], DataFrame]:
    """The binder's reader of `system.query.<table>` references for the statement in `ctx`."""

    def read(ref: TableReference, position: Position) -> DataFrame:
        if ref.name.lower() != TABLE:
            line, column = position(ref.start)
            raise TableNotFoundError(
                f"The table `{catalogs.SYSTEM}`.`{catalogs.QUERY}`.`{ref.name}` cannot be found", line=line,
                column=column, hint=f"the schema {catalogs.SYSTEM}.{catalogs.QUERY} holds the table `{TABLE}`")
        return history_dataframe(ctx)

    return read
