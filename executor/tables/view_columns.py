"""A view's column list, `(name [COMMENT 'text'], ...)`, applied to its query's schema and stored text: shared by
catalog views (tables/ddl.py) and materialized views, which take the same list."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluicegate.catalog.names import quote_identifier
from sluicegate.dialect.statements import CreateMaterializedView, CreateView
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import WarehouseError

if TYPE_CHECKING:
    from pyspark.sql.types import StructType


def named_columns(ctx: StatementContext, stmt: CreateView | CreateMaterializedView, schema: StructType,
                  definition: str) -> tuple[StructType, str]:
    """A view's `(name [COMMENT 'text'], ...)` list: the comments go into its schema (DESCRIBE shows them; dbt's
    persist_docs writes them so); names that differ from the query's rename its columns, in the stored text."""
    from pyspark.sql.types import StructField, StructType

    if len(stmt.columns) != len(schema.fields):
        line, column = ctx.position_of(stmt.table)
        raise WarehouseError(
            f"cannot create the view `{stmt.table.name}`: it names {len(stmt.columns)} columns and its query has "
            f"{len(schema.fields)}", error_class="CREATE_VIEW_COLUMN_ARITY_MISMATCH", sqlstate="21S01",
            line=line, column=column, hint="name as many columns as the query returns, or leave the list out")
    fields = [StructField(name, f.dataType, f.nullable, {**(f.metadata or {}), **({"comment": c} if c else {})})
              for (name, c), f in zip(stmt.columns, schema.fields, strict=True)]
    if [name.lower() for name, _ in stmt.columns] != [f.name.lower() for f in schema.fields]:
        names = ", ".join(quote_identifier(name) for name, _ in stmt.columns)
        definition = f"SELECT * FROM (\n{definition}\n) AS __sg_columns({names})"
    return StructType(fields), definition
