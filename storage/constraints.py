"""Delta's write-time constraints, in Spark: the rows a write is about to commit, NOT NULL columns and CHECK
expressions checked in the one projection that writes them.

A violating row fails the write job before anything is committed (its files stay invisible; VACUUM removes them),
with Delta's error: DELTA_NOT_NULL_CONSTRAINT_VIOLATED (23502) naming the column, or
DELTA_VIOLATE_CONSTRAINT_WITH_VALUES (23001) naming the constraint, its expression and the values the row has in the
columns it reads. As in Delta, a CHECK fails when its expression is false or NULL.

A VARCHAR(n) column (a string column whose metadata says `varchar(n)`, as Spark with Delta keeps one) takes no
longer string: EXCEED_LIMIT_LENGTH (54006), as Spark's and Databricks' writes check it. A CHAR(n) column (metadata
`char(n)`) is written right-padded with spaces to n, as Spark writes one; a longer value fails the same way unless
what passes n is trailing spaces, which are cut (Spark's write-side rule for CHAR).

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
_CHAR_VARCHAR = re.compile(r"(var)?char\((\d+)\)", re.IGNORECASE)


def declared_string_type(metadata: dict[str, Any] | None) -> tuple[str, int] | None:
    """(`char` or `varchar`, n) of a string column declared CHAR(n) or VARCHAR(n), which DESCRIBE and SHOW CREATE
    TABLE name as declared, as Spark and Databricks do; None for any other column."""
    found = _CHAR_VARCHAR.fullmatch(str((metadata or {}).get(CHAR_VARCHAR_KEY, "")).strip())
    return ("varchar" if found.group(1) else "char", int(found.group(2))) if found else None


def varchar_limit(metadata: dict[str, Any]) -> int | None:
    """The length limit of a column whose metadata says `varchar(n)`; None for any other column."""
    declared = declared_string_type(metadata)
    return declared[1] if declared is not None and declared[0] == "varchar" else None


def char_length(metadata: dict[str, Any]) -> int | None:
    """The fixed length of a column whose metadata says `char(n)`; None for any other column."""
    declared = declared_string_type(metadata)
    return declared[1] if declared is not None and declared[0] == "char" else None


def _too_long(limit: int) -> Column:
    """Spark's error for a string longer than its CHAR / VARCHAR column allows."""
    from pyspark.sql import functions as F

    return raised_in_row("EXCEED_LIMIT_LENGTH", F.lit(f"Exceeds char/varchar type length limitation: {limit}."))


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
            column = F.when(F.length(column) > limit, _too_long(limit)).otherwise(column)
        fixed = char_length(field.metadata)
        if fixed is not None:   # rpad also cuts a longer value to `fixed`: here only its trailing spaces
            column = F.when(F.length(F.rtrim(column)) > fixed, _too_long(fixed)).otherwise(
                F.rpad(column, fixed, " "))
        if at == 0 and failures:
            guarded = F.when(failures[0][0], failures[0][1])
            for violated, error in failures[1:]:
                guarded = guarded.when(violated, error)
            column = guarded.otherwise(column)
        columns.append(column.alias(field.name))
    return df.select(*columns)
