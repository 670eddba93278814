"""Delta's write-time constraints, in Spark: the rows a write is about to commit, NOT NULL columns and CHECK
expressions checked in the one projection that writes them.

A violating row fails the write job before anything is committed (its files stay invisible; VACUUM removes them),
with Delta's error: DELTA_NOT_NULL_CONSTRAINT_VIOLATED (23502) naming the column, or
DELTA_VIOLATE_CONSTRAINT_WITH_VALUES (23001) naming the constraint, its expression and the values the row has in the
columns it reads. As in Delta, a CHECK fails when its expression is false or NULL.

A VARCHAR(n) column (a string column whose metadata says `varchar(n)`, as Spark with Delta keeps one) takes no
longer string: EXCEED_LIMIT_LENGTH (54006), as Spark's and Databricks' writes check it.

The checks ride on the values written (a column's value is replaced by an error when its row violates a
constraint), so no optimizer can prune them away as unused. Every CHECK expression is judged again by the dialect
before it reaches Spark: what was stored is re-read here, and must still be one the dialect accepts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.names import quote_identifier
from sluicegate.dialect.constraints import CheckConstraint, checked_expression, referenced_columns
from sluicegate.storage.delta.not_null import not_null_guard
from sluicegate.storage.spark_errors import raised_in_row

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import StructType


def _violated(check: CheckConstraint) -> tuple[Column, Column]:
    """(the row violates `check`, Delta's error for it with the row's values)."""
    from pyspark.sql import functions as F

    checked_expression(check.name, check.expression)
    values = [F.concat(F.lit(f" - {column} : "), F.coalesce(F.col(quote_identifier(column)).cast("string"),
                                                             F.lit("null")))
              for column in referenced_columns(check.expression)]
    header = F.lit(f"CHECK constraint {check.name} {check.shown} violated by row with values:")
    message = F.concat_ws("\n", header, *values) if values else header
    violated = ~F.coalesce(F.expr(check.expression).cast("boolean"), F.lit(False))
    return violated, raised_in_row("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", message)


CHAR_VARCHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"   # Spark's field metadata for a CHAR / VARCHAR column stored as string
_VARCHAR = re.compile(r"varchar\((\d+)\)", re.IGNORECASE)


def varchar_limit(metadata: dict[str, Any]) -> int | None:
    """The length limit of a column whose metadata says `varchar(n)`; None for any other column."""
    found = _VARCHAR.fullmatch(str(metadata.get(CHAR_VARCHAR_KEY, "")).strip())
    return int(found.group(1)) if found else None


def enforce(df: DataFrame, schema: StructType, table: str, checks: Sequence[CheckConstraint] = ()) -> DataFrame:
    """`df`'s columns of `schema` (extra columns of `df` dropped), each value failing the job when its row breaks
    a NOT NULL of the schema (storage/delta/not_null.py's guard, naming `table`) or one of `checks` (evaluated on
    the row as written; CHECKs first, as Delta checks them)."""
    from pyspark.sql import functions as F

    failures = [_violated(check) for check in checks]
    columns = []
    for at, field in enumerate(schema.fields):
        column = F.col(quote_identifier(field.name)) if field.nullable else not_null_guard(field.name, table)
        limit = varchar_limit(field.metadata)
        if limit is not None:
            column = F.when(F.length(column) > limit, raised_in_row(
                "EXCEED_LIMIT_LENGTH", F.lit(f"Exceeds char/varchar type length limitation: {limit}."))
            ).otherwise(column)
        if at == 0 and failures:
            guarded = F.when(failures[0][0], failures[0][1])
            for violated, error in failures[1:]:
                guarded = guarded.when(violated, error)
            column = guarded.otherwise(column)
        columns.append(column.alias(field.name))
    return df.select(*columns)
