"""INSERT, DELETE and UPDATE on Delta tables: Spark computes the new rows from the pinned snapshot, one Delta commit
publishes them.

DELETE and UPDATE rewrite only the files holding a matching row (found with `input_file_name()` in the same pinned
read) and commit remove+add against the version read, so a concurrent rewrite of those files makes one of the two
fail with DELTA_CONCURRENT_WRITE rather than lose a commit. Nothing is collected on the driver but file names.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sqlglot import exp

from sluicegate.catalog.names import quote_identifier, quote_qualified
from sluicegate.catalog.uris import is_object_uri
from sluicegate.dialect.constraints import checks_of
from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.filters import rewrite_predicates
from sluicegate.dialect.statements import Delete, Insert, Query, Update
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.binding.binder import SOURCE_FILE, Binder, bind
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import IncompatibleDataError, UnresolvedColumnError
from sluicegate.executor.lookups import require_table
from sluicegate.executor.output import modified, no_result
from sluicegate.executor.tables.casts import can_store, store_assign
from sluicegate.storage.constraints import enforce
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.read import table_statistics

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from sluicegate.catalog.store import TableEntry

_FILE, _HIT = "__sg_file", "__sg_hit"


def table_schema(entry: TableEntry) -> StructType:
    from pyspark.sql.types import StructType

    return StructType.fromJson(json.loads(entry.schema_json or '{"type": "struct", "fields": []}'))


def insert(ctx: StatementContext, stmt: Insert) -> StatementResult:
    entry = require_table(ctx, stmt.table, "INSERT")
    qualified = quote_qualified(entry.database, entry.name)
    schema = table_schema(entry)
    df, binder = bind(ctx, stmt.query)
    try:
        columns = tuple(df.columns) if stmt.by_name else stmt.columns  # BY NAME: the query's names are the list
        rows = enforce(store_assign(df, schema, qualified, columns, stmt.string_literals), schema, qualified,
                       checks_of(entry.properties))
        if stmt.overwrite:
            version = commit.overwrite(entry.location or "", rows, "WRITE", {"mode": "Overwrite"})
        else:
            version = commit.append(entry.location or "", rows, "WRITE", {"mode": "Append"})
    finally:
        binder.close()
    return inserted_result(entry.location or "", version, replaced=stmt.overwrite)


def inserted_result(location: str, version: int, replaced: bool) -> StatementResult:
    """The rows one commit added, from the Delta log's statistics (no data is read): the new version's rows, less
    the previous version's unless the commit replaced them all; without statistics, no count."""
    after = table_statistics(location, version).rows
    before = 0 if replaced or version == 0 else table_statistics(location, version - 1).rows
    return no_result() if after is None or before is None else modified(after - before)


def _target_sql(entry: TableEntry, alias: str | None, extra: list[str]) -> str:
    source = quote_qualified(entry.database, entry.name)
    named = quote_identifier(alias or entry.name)
    return f"SELECT {named}.*, {', '.join(extra)} FROM {source} AS {named}"


def _rewrite(entry: TableEntry, read_version: int, df: DataFrame, new_rows: DataFrame, operation: str,
             parameters: dict[str, str]) -> int:
    """Replace the files holding a hit (`_HIT`) by `new_rows` (the table's columns plus `_FILE`) of those files;
    returns the number of rows hit."""
    from pyspark.sql import functions as F

    hits = df.where(F.col(_HIT)).groupBy(_FILE).count().collect()
    touched = [row[0] for row in hits]
    if not touched:
        return 0
    rows = enforce(new_rows.where(F.col(_FILE).isin(touched)), table_schema(entry),
                   quote_qualified(entry.database, entry.name), checks_of(entry.properties))
    commit.rewrite(entry.location or "", read_version, touched, rows, operation, parameters)
    return sum(row[1] for row in hits)


def source_file(entry: TableEntry, alias: str | None = None) -> tuple[str, frozenset[tuple[str, str]]]:
    """The SQL of the file each target row is in, and the tables to bind with the file column for it: Spark's
    `input_file_name()` for a local table, the object reader's SOURCE_FILE column for one on an object store."""
    if not is_object_uri(entry.location or ""):
        return "input_file_name()", frozenset()
    return f"{quote_identifier(alias or entry.name)}.{SOURCE_FILE}", frozenset({(entry.database, entry.name)})


def _bind_target(ctx: StatementContext, entry: TableEntry, alias: str | None, extra: list[str],
                 tree: exp.Delete | exp.Update) -> tuple[DataFrame, Binder, int]:
    """The target's rows with `extra` columns, from one pinned version (returned with them): every row of each file
    that may hold a row the statement's WHERE changes (data skipping; a file it cannot hit is neither read nor
    rewritten)."""
    _, files = source_file(entry, alias)
    predicates = {(entry.database, entry.name): rewrite_predicates(tree.this, tree.args.get("where"))}
    df, binder = bind(ctx, Query(_target_sql(entry, alias, extra)), source_files=files, predicates=predicates)
    snapshot = binder.snapshots.get((entry.database, entry.name))
    return df, binder, snapshot.version if snapshot is not None else 0


def _condition(tree: object) -> str:
    where = getattr(tree, "args", {}).get("where")
    return f"coalesce(({where.this.sql(dialect=StreamingSpark)}), false)" if where is not None else "true"


def delete(ctx: StatementContext, stmt: Delete) -> StatementResult:
    from pyspark.sql import functions as F

    entry = require_table(ctx, stmt.table, "DELETE")
    alias = stmt.tree.this.alias or None
    condition = _condition(stmt.tree)
    file_sql, _ = source_file(entry, alias)
    df, binder, version = _bind_target(ctx, entry, alias, [f"{file_sql} AS {_FILE}", f"{condition} AS {_HIT}"],
                                       stmt.tree)
    try:
        deleted = _rewrite(entry, version, df, df.where(~F.col(_HIT)).drop(_HIT), "DELETE", {"predicate": condition})
    finally:
        binder.close()
    return modified(deleted)


def update(ctx: StatementContext, stmt: Update) -> StatementResult:
    from pyspark.sql import functions as F

    entry = require_table(ctx, stmt.table, "UPDATE")
    qualified = quote_qualified(entry.database, entry.name)
    schema = table_schema(entry)
    by_lower = {f.name.lower(): f for f in schema.fields}
    alias = stmt.tree.this.alias or None
    assignments: dict[str, str] = {}
    for i, eq in enumerate(stmt.tree.expressions):
        column = eq.this.name
        if column.lower() not in by_lower:
            raise UnresolvedColumnError(f"A column with name `{column}` cannot be resolved in table {qualified}.",
                                        hint=f"columns: {', '.join(by_lower[k].name for k in by_lower)}")
        assignments[by_lower[column.lower()].name] = f"({eq.expression.sql(dialect=StreamingSpark)}) AS __sg_set_{i}"
    condition = _condition(stmt.tree)
    extra = [f"{source_file(entry, alias)[0]} AS {_FILE}", f"{condition} AS {_HIT}", *assignments.values()]
    df, binder, version = _bind_target(ctx, entry, alias, extra, stmt.tree)
    try:
        projected = []
        for field in schema.fields:
            column = F.col(quote_identifier(field.name))
            if field.name in assignments:
                set_name = assignments[field.name].rsplit(" AS ", 1)[1]
                source = df.schema[set_name].dataType
                if not can_store(source, field.dataType):
                    raise IncompatibleDataError(
                        f"Cannot write incompatible data for the table {qualified}: Cannot safely cast "
                        f'`{field.name}` "{source.simpleString().upper()}" to '
                        f'"{field.dataType.simpleString().upper()}".',
                        hint=f"CAST the value to {field.dataType.simpleString()} explicitly")
                column = F.when(F.col(_HIT), F.col(set_name).cast(field.dataType)).otherwise(column)
            projected.append(column.alias(field.name))
        new_rows = df.select(*projected, F.col(_FILE))
        updated = _rewrite(entry, version, df, new_rows, "UPDATE", {"predicate": condition})
    finally:
        binder.close()
    return modified(updated)
