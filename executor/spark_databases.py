"""Spark's shadow of each catalog database: Spark's session catalog keeps one (in memory) so that `USE db`, Spark's
own non-Delta tables and temporary objects keep working; the persistent catalog is the truth and re-creates the
shadow when a statement needs it. Below every statement module: creating any object in a database needs its shadow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluicegate.catalog.names import name_problem, quote_identifier

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.executor.context import StatementContext


def spark_has_database(spark: SparkSession, name: str) -> bool:
    """Whether Spark's session catalog has the database. Spark parses the argument as an identifier, so it is
    quoted (an unquoted name with a space or a backtick raised ParseException); a name outside the rule cannot be
    there (Spark's session catalog has the same rule) and is not handed to Spark at all."""
    return name_problem(name, "database") is None and bool(spark.catalog.databaseExists(quote_identifier(name)))


def ensure_spark_database(ctx: StatementContext, name: str) -> bool:
    """Create the Spark shadow of a catalog database if missing; True when this call created it."""
    if spark_has_database(ctx.spark, name):
        return False
    ctx.spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote_identifier(name)}")
    return True
