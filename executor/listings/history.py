"""A table's Delta history, in DESCRIBE HISTORY's columns: the rows of the statement, and of `(DESCRIBE HISTORY t)`
written as a relation in a query (`select operation from (describe history t) where ...`, as dbt-databricks' tests
read it), which Databricks allows and Spark's parser does not.

In a query the binder puts a temporary view over the rows where the subquery was (executor/binding/binder.py). The
table is resolved by the binder's own resolver, the one every table reference goes through: the user (inside a view,
the view's owner) needs SELECT on it, as the statement DESCRIBE HISTORY does (policy/decide.py), and a view, which has
no log, is refused with the statement's error. The history is small, so the rows go to Spark as a local relation.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from sluicegate.catalog.errors import TableNotFoundError
from sluicegate.dialect.references import TableReference
from sluicegate.executor.errors import NotATableError
from sluicegate.storage.delta.commit import OPERATION_KEY, PARAMETERS_KEY
from sluicegate.storage.delta.tables import open_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sluicegate.catalog.store import TableEntry
    from sluicegate.executor.binding.resolved import TableResolver
    from sluicegate.executor.context import StatementContext

# DESCRIBE HISTORY's columns, as Delta names and types them
HISTORY_COLUMNS = [("version", "bigint"), ("timestamp", "timestamp"), ("userId", "string"), ("userName", "string"),
                   ("operation", "string"), ("operationParameters", "string"), ("readVersion", "bigint"),
                   ("isolationLevel", "string"), ("isBlindAppend", "boolean"), ("operationMetrics", "string"),
                   ("engineInfo", "string")]

Position = Callable[[int], "tuple[int, int]"]


class HistoryReader(Protocol):
    def __call__(self, ref: TableReference, resolver: TableResolver, position: Position) -> DataFrame:
        """The history rows of the table `ref` names, resolved by `resolver`; `position` turns an offset in the
        query into the statement's line and column."""


def timestamp_of(millis: int | None) -> dt.datetime | None:
    """A Delta commit's or table's time (milliseconds since the epoch) as an aware datetime."""
    return dt.datetime.fromtimestamp(millis / 1000, dt.timezone.utc) if millis else None


def history_rows(entry: TableEntry) -> list[tuple[Any, ...]]:
    """The table's commits, newest first, in HISTORY_COLUMNS (the timestamp an aware datetime)."""
    rows = []
    for commit in open_table(entry.location or "").history():
        operation = commit.get(OPERATION_KEY) or commit.get("operation")
        parameters = commit.get(PARAMETERS_KEY)
        parameters = json.loads(parameters) if isinstance(parameters, str) else commit.get("operationParameters")
        rows.append((
            commit.get("version"), timestamp_of(commit.get("timestamp")), None,
            entry.owner, operation, json.dumps(parameters or {}), commit.get("readVersion"),
            commit.get("isolationLevel"), commit.get("isBlindAppend"),
            json.dumps(commit.get("operationMetrics") or {}), commit.get("clientVersion") or commit.get("engineInfo"),
        ))
    return rows


def history_dataframe(ctx: StatementContext) -> HistoryReader:
    """The binder's reader of `(DESCRIBE HISTORY t)` subqueries for the statement in `ctx`."""

    def read(ref: TableReference, resolver: TableResolver, position: Position) -> DataFrame:
        line, column = position(ref.start)
        resolved = resolver.resolve(ref.database, ref.name)  # the user's (or the view owner's) SELECT on it
        entry = ctx.store.get_table(resolved.database, resolved.name) if resolved and resolved.database else None
        if entry is None:
            shown = f"`{ref.database or ctx.current_database}`.`{ref.name}`"
            raise TableNotFoundError(f"The table or view {shown} cannot be found.", line=line, column=column,
                                     hint="check the spelling and the database (SHOW TABLES lists them)")
        if entry.kind == "VIEW":  # as the statement: tables, streaming tables and materialized views have a log
            raise NotATableError(f"`{entry.database}`.`{entry.name}` is a view; DESCRIBE HISTORY needs a table.",
                                 line=line, column=column, hint="describe the history of the tables the view reads")
        return ctx.spark.createDataFrame(_arrow(history_rows(entry)))

    return read


def _arrow(rows: list[tuple[Any, ...]]) -> Any:
    """The rows as one Arrow table in HISTORY_COLUMNS' names and types."""
    import pyarrow as pa

    types = {"bigint": pa.int64(), "timestamp": pa.timestamp("us", tz="UTC"), "string": pa.string(),
             "boolean": pa.bool_()}
    schema = pa.schema([pa.field(name, types[kind]) for name, kind in HISTORY_COLUMNS])
    return pa.table({name: [row[index] for row in rows] for index, (name, _) in enumerate(HISTORY_COLUMNS)},
                    schema=schema)
