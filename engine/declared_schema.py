"""The schema of a table a query defines (a streaming table, a materialized view) with a column list: the one answer
to "what are this table's columns", for the empty Delta table CREATE makes, the schema a REFRESH (FULL or not)
compares and writes, the catalog's row, and so DESCRIBE and information_schema, which read that row. Computed from the
statement's column list and the query's result, never anywhere else, so they cannot disagree.

The result (already matched to the list: engine/streams/runner.py, executor/tables/view_columns.py) gives the names,
order and types; the list gives what Spark's analysis cannot know: NOT NULL (Delta's constraint, which every write
enforces, storage/delta/not_null.py) and each column's COMMENT. A column the list declares without NOT NULL is
nullable whatever the query's analysis says, as in a table Databricks creates from a column list; without a list,
the result's schema is the table's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sluicegate.dialect.columns import ColumnSpec

if TYPE_CHECKING:
    from pyspark.sql.types import StructType


def declared_schema(columns: Sequence[ColumnSpec], result: StructType) -> StructType:
    """The table's schema: `result`'s fields with the nullability and comment `columns` declares for each."""
    if not columns:
        return result
    from pyspark.sql.types import StructField, StructType

    declared = {column.name.lower(): column for column in columns}
    fields = []
    for field in result.fields:
        column = declared.get(field.name.lower())
        if column is None:
            fields.append(field)
            continue
        metadata = dict(field.metadata or {})
        if column.comment is not None:
            metadata["comment"] = column.comment
        fields.append(StructField(field.name, field.dataType, column.nullable, metadata))
    return StructType(fields)
