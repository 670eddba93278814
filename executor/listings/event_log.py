"""`event_log(TABLE(t))` and `event_log('db.t')` in a query: a streaming table's event log as rows, in the columns of
Databricks' table-valued function (id, sequence, origin, timestamp, message, level, maturity_level, error, details,
event_type), read with ordinary SQL: `get_json_object(details, '$.flow_progress.metrics.num_output_rows')`.
As in Databricks, the string may also be a pipeline id: the `pipeline_id` in the origin of the table's events (its
stream's id); the same right to read the table is needed.

The argument is a table name, never a path: it is checked against the name rule and resolved by the binder's own
resolver, the one every table reference goes through, so reading the log needs what reading the table needs (SELECT,
which its owner holds; inside a view, the view owner's). Databricks lets only the owner call it; sluicegate lets
anyone who may read the table's rows read how they got there. The binder puts a temporary view over the rows where
the call was; the log is small (bounded by `[events]` retention), so the rows go to Spark as a local relation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from sqlglot import exp

from sluicegate.catalog.errors import InvalidNameError, TableNotFoundError
from sluicegate.catalog.names import ALLOWED, check_name, name_problem
from sluicegate.dialect.catalogs import check_catalog
from sluicegate.dialect.references import TableReference
from sluicegate.storage.spark_errors import RuntimeQueryError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sluicegate.catalog.events import EventRecord
    from sluicegate.executor.binding.resolved import TableResolver
    from sluicegate.executor.context import StatementContext

COLUMNS = ("id", "sequence", "origin", "timestamp", "message", "level", "maturity_level", "error", "details",
           "event_type")
NULLABLE = frozenset({"maturity_level", "error"})  # as Databricks' columns: every other one is NOT NULL
PIPELINE_ID = re.compile(r"[0-9a-f]{32}")
_USAGE = "write event_log(TABLE(my_streaming_table)) or event_log('my_db.my_streaming_table')"

Position = Callable[[int], "tuple[int, int]"]


class EventLogReader(Protocol):
    def __call__(self, call: TableReference, resolver: TableResolver, position: Position) -> DataFrame:
        """The rows of the event log `call` names, the table resolved by `resolver`; `position` turns an offset in
        the query into the statement's line and column."""


class EventLogArgumentError(RuntimeQueryError):
    error_class = "INVALID_EVENT_LOG_ARGUMENT"
    sqlstate = "42K09"


class EventLogTableTypeError(RuntimeQueryError):
    """Databricks' class for event_log over a table that has no event log."""

    error_class = "EVENT_LOG_UNSUPPORTED_TABLE_TYPE"
    sqlstate = "42832"


def target(call: TableReference, position: Position) -> tuple[str | None, str, int]:
    """The (database or None, table) an event_log call names, and the offset of the name in the query. Each part is
    checked against the name rule (42602): a string is a name (or a pipeline id, which is one too), never a path."""
    assert call.node is not None and isinstance(call.node.this, exp.Func)
    arguments = call.node.this.expressions
    line, column = position(call.start)
    if len(arguments) != 1 or isinstance(arguments[0], (exp.Kwarg, exp.PropertyEQ, exp.EQ)):
        raise EventLogArgumentError(f"event_log takes one argument, the streaming table, not {len(arguments)}",
                                    line=line, column=column, hint=_USAGE)
    argument = arguments[0]
    offset = argument.meta.get("start", call.start) if argument.meta else call.start
    if isinstance(argument, exp.Anonymous) and argument.name.upper() == "TABLE" and len(argument.expressions) == 1 \
            and isinstance(argument.expressions[0], exp.Column):
        column_node = argument.expressions[0]
        parts = [p.name for p in (column_node.args.get("catalog"), column_node.args.get("db"),
                                  column_node.args.get("table"), column_node.this) if p is not None]
        offset = min((p.meta["start"] for p in column_node.find_all(exp.Identifier) if p.meta.get("start")
                      is not None), default=offset)
    elif isinstance(argument, exp.Literal) and argument.is_string:
        problem = name_problem(argument.name.replace(".", "_"), "table")  # the dots apart, only name characters
        if problem is not None:
            line, column = position(offset)
            raise InvalidNameError(f"'{argument.name}' is not a table name: {problem}", line=line, column=column,
                                   hint=f"a name may contain {ALLOWED}; it is never a path. {_USAGE}")
        parts = argument.name.split(".")
    else:
        raise EventLogArgumentError("event_log takes TABLE(name) or the name as a string literal",
                                    line=line, column=column, hint=_USAGE)
    line, column = position(offset)
    for index, part in enumerate(parts):
        check_name(part, "database" if index < len(parts) - 1 else "table", line=line, column=column)
    if len(parts) == 3:  # catalog.schema.table: the catalog checked and dropped, as everywhere (dialect/catalogs.py)
        check_catalog(parts[0], parts[1], line=line, column=column)
        parts = parts[1:]
    if len(parts) > 2:
        raise EventLogArgumentError(f"event_log takes a table name, `database`.`table` at most, not "
                                    f"'{'.'.join(parts)}'", line=line, column=column, hint=_USAGE)
    database, name = (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])
    return (database.lower() if database else None), name.lower(), offset


def event_log_dataframe(ctx: StatementContext) -> EventLogReader:
    """The binder's reader of event_log calls for the statement in `ctx`."""

    def read(call: TableReference, resolver: TableResolver, position: Position) -> DataFrame:
        database, name, offset = target(call, position)
        line, column = position(offset)
        resolved = resolver.resolve(database, name)  # the user's (or the view owner's) right to read it: SELECT
        if resolved is None and database is None and PIPELINE_ID.fullmatch(name):
            # Databricks' event_log('<pipeline_id>'): a stream's id, as its events' origin shows it
            owner = ctx.store.table_of_stream(name)
            resolved = resolver.resolve(*owner) if owner is not None else None
        if resolved is None:
            shown = f"`{database or ctx.current_database}`.`{name}`"
            raise TableNotFoundError(f"the table or view {shown} cannot be found", line=line, column=column,
                                     hint="check the spelling and the database; SHOW STREAMING TABLES lists the "
                                          "streaming tables")
        entry = ctx.store.get_table(resolved.database, resolved.name) if resolved.database else None
        if entry is None or entry.kind not in ("STREAMING_TABLE", "MATERIALIZED_VIEW"):
            kind = "view" if resolved.kind == "VIEW" else "table"
            raise EventLogTableTypeError(
                f"{resolved.qualified} is a {kind}, not a streaming table or materialized view: only those have an "
                "event log", line=line, column=column,
                hint="SHOW STREAMING TABLES and SHOW MATERIALIZED VIEWS list them")
        records = ctx.store.event_log(entry.database, entry.name)
        return ctx.spark.createDataFrame(_arrow(records)).select(*COLUMNS)  # Arrow: 5x faster than Python rows

    return read


def _arrow(records: list[EventRecord]) -> Any:
    """The records as one Arrow table in event_log's schema (nullability included)."""
    import pyarrow as pa

    schema = pa.schema([pa.field(name, pa.timestamp("us", tz="UTC") if name == "timestamp" else pa.string(),
                                 nullable=name in NULLABLE) for name in COLUMNS])
    return pa.table({name: [getattr(record, name) for record in records] for name in COLUMNS}, schema=schema)
