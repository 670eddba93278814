"""Delta's NOT NULL constraint, checked where rows are written: a null in a column the table's schema declares NOT
NULL fails the write with DELTA_NOT_NULL_CONSTRAINT_VIOLATED (SQLSTATE 23502), naming the column, before anything
commits. One check for every writer: INSERT, UPDATE, MERGE (executor/tables/) and each micro-batch of a stream
(engine/streams/sink.py), which reads the NOT NULL columns off the Delta log's own schema, so a streaming table and
a flow's target are held to what their column lists declared.

The check is a projection Spark evaluates in the write's own job (`raise_error` on the first null), so a failing
batch writes no file the log names; storage/spark_errors.py turns Spark's USER_RAISED_EXCEPTION back into Delta's
class and SQLSTATE.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sluicegate.catalog.names import quote_identifier
from sluicegate.storage.delta.tables import open_table
from sluicegate.storage.spark_errors import raised_in_row

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

ERROR_CLASS = "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"


def _violation(column: str, table: str) -> str:
    return f"NOT NULL constraint violated for column: {column} of {table}."


def violation_message(column: str, table: str) -> str:
    """Delta's text for a null in a NOT NULL column, `[CLASS]` first, as the client reads it."""
    return f"[{ERROR_CLASS}] {_violation(column, table)}"


def not_null_guard(name: str, table: str, written: Column | None = None) -> Column:
    """Column `name`'s value, failing the job when it is null in a row that is `written` (None: every row)."""
    from pyspark.sql import functions as F

    column = F.col(quote_identifier(name))
    null = column.isNull() if written is None else column.isNull() & written
    raised = F.when(null, raised_in_row(ERROR_CLASS, F.lit(_violation(name, table)))).otherwise(column)
    # coalesce(.., column): a column Spark knows is never null stays so in the schema (raise_error is nullable),
    # so the rows' Arrow schema (a MERGE's source) keeps it; the raise comes first either way
    return F.coalesce(raised, column)


def check_not_null(df: DataFrame, columns: Sequence[str], table: str, written: Column | None = None) -> DataFrame:
    """`df` with each of `columns` (NOT NULL in the table `table`, as the message names it) checked: a null fails
    the job. `written`: a boolean column saying which rows go into the table (a row kept out, e.g. by a DROP ROW
    expectation, may hold a null); None: every row. Every column of `df` passes on, in its place."""
    if not columns:
        return df
    return df.withColumns({name: not_null_guard(name, table, written) for name in columns})


def not_null_columns(location: str) -> tuple[str, ...]:
    """The top-level columns the Delta table at `location` declares NOT NULL (its log's schema: the truth a writer
    is held to, whoever created the table)."""
    return tuple(field.name for field in open_table(location).schema().fields if not field.nullable)
