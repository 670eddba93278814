"""Looking up catalog objects for a statement, with the errors Spark gives (name, position, hint)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluicegate.catalog.errors import PathOutsideWarehouseError, TableNotFoundError
from sluicegate.catalog.names import owned_table_folder, quote_identifier, quote_qualified
from sluicegate.dialect.statements import TableName
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import NotATableError, WarehouseError
from sluicegate.executor.object_kinds import kind_name

if TYPE_CHECKING:
    from pyspark.sql.types import StructField, StructType

    from sluicegate.catalog.store import TableEntry


def not_found(ctx: StatementContext, table: TableName) -> TableNotFoundError:
    database, name = ctx.qualify(table)
    line, column = ctx.position_of(table)
    return TableNotFoundError(
        f"The table or view `{database}`.`{name}` cannot be found.",
        hint="check the spelling and the database (SHOW TABLES lists them)", line=line, column=column,
    )


def require(ctx: StatementContext, table: TableName) -> TableEntry:
    entry = ctx.store.get_table(*ctx.qualify(table))
    if entry is None:
        raise not_found(ctx, table)
    return entry


def to_drop(ctx: StatementContext, table: TableName, if_exists: bool) -> TableEntry | None:
    """The object a DROP names; None when it is absent and IF EXISTS says that is fine."""
    entry = ctx.store.get_table(*ctx.qualify(table))
    if entry is None and not if_exists:
        raise not_found(ctx, table)
    return entry


def to_drop_as(ctx: StatementContext, table: TableName, if_exists: bool, kind: str,
               error_class: str) -> TableEntry | None:
    """The object `DROP <kind>` names, which must be of that catalog kind (`MATERIALIZED_VIEW`, ...): another kind
    is refused with `error_class`, naming what it is and the DROP that fits; None as `to_drop`."""
    entry = to_drop(ctx, table, if_exists)
    if entry is not None and entry.kind != kind:
        line, column = ctx.position_of(table)
        raise NotATableError(f"`{entry.database}`.`{entry.name}` is a {kind_name(entry.kind)}, not a "
                             f"{kind_name(kind)}.", error_class=error_class, line=line, column=column,
                             hint=f"use DROP {kind_name(entry.kind).upper()}")
    return entry


def require_table(ctx: StatementContext, table: TableName, action: str) -> TableEntry:
    """A Delta table (not a view) that `action` may write, in a table folder of this warehouse: a catalog row
    pointing anywhere else (written before names were checked, or by hand) is never written to or vacuumed."""
    entry = require(ctx, table)
    line, column = ctx.position_of(table)
    if entry.kind != "TABLE":
        raise NotATableError(
            f"`{entry.database}`.`{entry.name}` is a {kind_name(entry.kind)}; {action} needs a table.",
            hint="write into the tables the view reads instead" if entry.kind == "VIEW" else
            "a streaming table is written by its stream only", line=line, column=column,
        )
    try:
        owned_table_folder(ctx.warehouse, entry.location or "")
    except PathOutsideWarehouseError as exc:
        exc.line, exc.column = line, column
        raise
    return entry


def spark_has(ctx: StatementContext, table: TableName) -> bool:
    """Whether Spark's own session catalog knows the name (a temporary view or a non-Delta table)."""
    name = quote_qualified(table.database, table.name) if table.database else quote_identifier(table.name)
    try:
        return bool(ctx.spark.catalog.tableExists(name))
    except Exception:  # noqa: BLE001 - an unknown database is simply "no"
        return False


def require_column(ctx: StatementContext, entry: TableEntry, schema: StructType, name: str,
                   offset: int | None) -> StructField:
    """The column `name` (in any case) of a catalog table whose schema is `schema`, or Spark's UNRESOLVED_COLUMN at
    `offset` (where the statement names it)."""
    found = next((f for f in schema.fields if f.name.lower() == name.lower()), None)
    if found is None:
        line, column = ctx.position_at(offset)
        raise WarehouseError(
            f"A column `{name}` cannot be found in `{entry.database}`.`{entry.name}`.",
            error_class="UNRESOLVED_COLUMN.WITH_SUGGESTION", sqlstate="42703", line=line, column=column,
            hint=f"its columns are {', '.join(f.name for f in schema.fields)}")
    return found
