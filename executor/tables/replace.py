"""INSERT that replaces rows (Databricks' forms, which dbt-databricks sends for its replace_where, delete+insert and
insert_overwrite strategies on a SQL warehouse):

- `INSERT INTO t [BY NAME] REPLACE WHERE <predicate> {<query> | TABLE s}`: the table's rows the predicate holds for
  are deleted and the query's rows added. As Delta's replaceWhere (its constraint check is on by default), every row
  written must satisfy the predicate, else the statement fails with DELTA_REPLACE_WHERE_MISMATCH and writes nothing;
  the predicate is read over the query's rows, each column named as the table column it lands in.
- `INSERT INTO t [AS a] REPLACE ON (<condition>) (<query>) [AS s]`: the table's rows that match some row of the
  query by the condition are deleted and every row of the query added.

One Delta commit either way: the files holding a replaced row are removed and rewritten without it, beside the new
rows (remove+add against the version read, as DELETE does, so a concurrent rewrite of those files fails one of the
two). The predicate and condition reach Spark only inside queries the binder pins and the policy judges; the
classifier has refused a subquery in either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluicegate.catalog.names import quote_identifier, quote_qualified
from sluicegate.dialect.constraints import checks_of
from sluicegate.dialect.statements import Insert, Query, ReplaceOn, ReplaceWhere
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.binding.binder import bind
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import WarehouseError
from sluicegate.executor.lookups import require_table
from sluicegate.executor.output import no_result
from sluicegate.executor.tables import dml
from sluicegate.executor.tables.casts import store_assign
from sluicegate.storage.constraints import enforce
from sluicegate.storage.delta import commit

if TYPE_CHECKING:
    from sluicegate.catalog.store import TableEntry
    from sluicegate.executor.binding.binder import Binder

_FILE = "__sg_file"


class ReplaceWhereMismatchError(WarehouseError):
    error_class = "DELTA_REPLACE_WHERE_MISMATCH"
    sqlstate = "44000"


def insert(ctx: StatementContext, stmt: Insert) -> StatementResult:
    """Any INSERT: one that replaces rows here, the others as dml.insert writes them."""
    if stmt.replace is None:
        return dml.insert(ctx, stmt)
    from pyspark.sql import functions as F

    entry = require_table(ctx, stmt.table, "INSERT")
    qualified = quote_qualified(entry.database, entry.name)
    schema = dml.table_schema(entry)
    file_sql, files = dml.source_file(entry, _target_alias(stmt.replace))
    df, binder = bind(ctx, stmt.query, source_files=files)
    try:
        columns = tuple(df.columns) if stmt.by_name else stmt.columns
        rows = enforce(store_assign(df, schema, qualified, columns, stmt.string_literals), schema, qualified,
                       checks_of(entry.properties))
        if isinstance(stmt.replace, ReplaceWhere):
            named = () if stmt.by_name else (columns or tuple(field.name for field in schema.fields))
            _check_rows(binder, stmt.query, named, stmt.replace.predicate)
        kept_sql, hit_sql = _target_queries(entry, stmt, file_sql)
        touched = [row[0] for row in binder.bind(Query(hit_sql)).collect()]
        kept = binder.bind(Query(kept_sql)).where(F.col(_FILE).isin(touched))
        kept = kept.select(*(F.col(quote_identifier(field.name)) for field in schema.fields))
        snapshot = binder.snapshots.get((entry.database, entry.name))
        commit.rewrite(entry.location or "", snapshot.version if snapshot is not None else 0, touched,
                       kept.unionByName(rows), "WRITE", {"mode": "Overwrite", "predicate": _described(stmt.replace)})
    finally:
        binder.close()
    return no_result()


def _target_alias(replace: ReplaceWhere | ReplaceOn) -> str | None:
    return replace.target_alias if isinstance(replace, ReplaceOn) else None


def _described(replace: ReplaceWhere | ReplaceOn) -> str:
    return replace.predicate if isinstance(replace, ReplaceWhere) else replace.condition


def _target_queries(entry: TableEntry, stmt: Insert, file_sql: str) -> tuple[str, str]:
    """The SQL of the table's rows (with their file) that stay, and of the files holding a row that goes. The file
    is read in a subquery of the table alone: Spark's input_file_name() takes one source, not a join's two."""
    replace = stmt.replace
    assert replace is not None
    alias = quote_identifier(_target_alias(replace) or entry.name)
    qualified = quote_qualified(entry.database, entry.name)
    target = f"(SELECT {alias}.*, {file_sql} AS {_FILE} FROM {qualified} AS {alias}) AS {alias}"
    if isinstance(replace, ReplaceWhere):
        goes = f"coalesce(({replace.predicate}), false)"
        return (f"SELECT * FROM {target} WHERE NOT {goes}", f"SELECT DISTINCT {_FILE} FROM {target} WHERE {goes}")
    source = f"({stmt.query.sql}\n) AS {quote_identifier(replace.source_alias or '__sg_source')}"
    return (f"SELECT {alias}.* FROM {target} LEFT ANTI JOIN {source} ON {replace.condition}",
            f"SELECT DISTINCT {alias}.{_FILE} FROM {target} LEFT SEMI JOIN {source} ON {replace.condition}")


def _check_rows(binder: Binder, query: Query, names: tuple[str, ...], predicate: str) -> None:
    """Delta's replaceWhere constraint check: a written row the predicate does not hold for fails the statement.
    The query's columns are read by the table's `names`, by position (none given: by the query's own names)."""
    columns = f"({', '.join(quote_identifier(name) for name in names)})" if names else ""
    outside = (f"SELECT 1 FROM ({query.sql}\n) AS __sg_written{columns} "
               f"WHERE NOT coalesce(({predicate}), false) LIMIT 1")
    if binder.bind(Query(outside)).collect():
        raise ReplaceWhereMismatchError(
            f"Written data does not conform to partial table overwrite condition or constraint '{predicate}'.",
            hint="write only rows the REPLACE WHERE predicate holds for, or widen the predicate")
