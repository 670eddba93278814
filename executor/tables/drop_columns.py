"""`ALTER TABLE t DROP {COLUMN | COLUMNS} [IF EXISTS] (c, ...)`: the table without those columns, as Databricks
drops them (dbt's `on_schema_change: sync_all_columns` sends it).

Databricks drops a column in the metadata only, through Delta's column mapping; delta-rs has no column mapping, so
here the table is rewritten without the columns, in one commit that carries the new schema (the files and the
schema land together, or neither does). Its cost is a full rewrite of the table, and its operation in DESCRIBE
HISTORY is DROP COLUMNS. A stream reading the table as its source stops at that commit with
DELTA_SOURCE_TABLE_REWRITTEN (REFRESH ... FULL reads the table again), as on Databricks a dropped column stops a
stream reading the table; an incremental materialized view over it is recomputed in full on its next refresh.

Refused as Delta refuses them: a partition column, a clustering column, a column a CHECK constraint reads (drop the
constraint first), every column of the table; a column that does not exist is UNRESOLVED_COLUMN unless IF EXISTS.
"""

from __future__ import annotations

from sluicegate.catalog.names import quote_identifier, quote_qualified
from sluicegate.dialect.constraints import CheckConstraint, checks_of, referenced_columns
from sluicegate.dialect.statements import ColumnName, DropColumns, Query
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.binding.binder import bind
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import WarehouseError
from sluicegate.executor.lookups import require_column, require_table
from sluicegate.executor.output import no_result
from sluicegate.executor.tables.clustering import clustering_columns
from sluicegate.executor.tables.dml import table_schema
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.tables import open_table


def refused(ctx: StatementContext, named: ColumnName, message: str, error_class: str, sqlstate: str,
            hint: str) -> WarehouseError:
    """Delta's refusal of a change to the column `named`, at where the statement names it."""
    line, column = ctx.position_at(named.offset)
    return WarehouseError(message, error_class=error_class, sqlstate=sqlstate, line=line, column=column, hint=hint)


def refuse_if_checked(ctx: StatementContext, named: ColumnName, column: str,
                      checks: tuple[CheckConstraint, ...]) -> None:
    """Delta's refusal to change a column a CHECK constraint reads (drop the constraint first)."""
    key = named.name.lower()
    readers = [check for check in checks if key in {c.lower() for c in referenced_columns(check.expression)}]
    if readers:
        raise refused(ctx, named, f"Cannot alter column {column} because this column is referenced by the following "
                      "check constraint(s):\n" + "\n".join(f"{check.name} -> {check.expression}" for check in readers),
                      "DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE", "42K09",
                      f"ALTER TABLE ... DROP CONSTRAINT {readers[0].name} first")


def drop_columns(ctx: StatementContext, stmt: DropColumns) -> StatementResult:
    from deltalake import Schema
    from pyspark.sql.types import StructType

    entry = require_table(ctx, stmt.table, "ALTER TABLE DROP COLUMNS")
    schema = table_schema(entry)
    names = {f.name.lower() for f in schema.fields}
    dropping = [named for named in stmt.columns if not (stmt.if_exists and named.name.lower() not in names)]
    fields = {named.name.lower(): require_column(ctx, entry, schema, named.name, named.offset) for named in dropping}
    if not fields:
        return no_result()
    partitions = {name.lower() for name in entry.partition_by}
    clustering = {name.lower() for name in clustering_columns(entry.properties)}
    checks = checks_of(entry.properties)
    for named in dropping:
        key = named.name.lower()
        if key in partitions:
            raise refused(ctx, named, f"Dropping partition columns ({fields[key].name}) is not allowed.",
                           "DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN", "0AKDC",
                           "a partition column stays; CREATE OR REPLACE TABLE ... AS SELECT the columns to keep")
        if key in clustering:
            raise refused(ctx, named, f"Dropping clustering columns ({fields[key].name}) is not allowed.",
                           "DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN", "0AKDC",
                           "ALTER TABLE ... CLUSTER BY the other columns (or NONE) first")
        refuse_if_checked(ctx, named, fields[key].name, checks)
    kept = [f for f in schema.fields if f.name.lower() not in fields]
    if not kept:
        raise refused(ctx, dropping[0], "Cannot drop column from a schema with a single column.",
                       "DELTA_DROP_COLUMN_ON_SINGLE_FIELD_SCHEMA", "0AKDC",
                       "a table keeps at least one column: DROP TABLE it, or add a column first")
    table = open_table(entry.location or "")
    delta_schema = Schema([f for f in table.schema().fields if f.name.lower() not in fields])
    select = ", ".join(quote_identifier(f.name) for f in kept)
    df, binder = bind(ctx, Query(f"SELECT {select} FROM {quote_qualified(entry.database, entry.name)}"))
    try:
        snapshot = binder.snapshots.get((entry.database, entry.name))
        commit.overwrite_with_schema(
            entry.location or "", snapshot.version if snapshot is not None else table.version(), df, delta_schema,
            "DROP COLUMNS", {"columns": ", ".join(f.name for f in fields.values())})
    finally:
        binder.close()
    ctx.store.update_table(entry.database, entry.name, schema_json=StructType(kept).json())
    return no_result()
