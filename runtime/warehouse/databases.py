"""CREATE/DROP DATABASE, USE and SHOW DATABASES over the persistent catalog.

Spark's session catalog keeps a shadow of each database (in memory) so that `USE db`, Spark's own non-Delta tables
and temporary objects keep working; the persistent catalog is the truth and re-creates the shadow when needed.
"""

from __future__ import annotations

import shutil

from catalog.errors import SchemaNotFoundError
from dialect.statements import CreateDatabase, DropDatabase, ShowDatabases, UseDatabase
from runtime.sql import StatementResult
from runtime.warehouse.context import StatementContext
from runtime.warehouse.output import no_result, rows_result


def ensure_spark_database(ctx: StatementContext, name: str) -> None:
    if not ctx.spark.catalog.databaseExists(name):
        ctx.spark.sql(f"CREATE DATABASE IF NOT EXISTS `{name}`")


def create_database(ctx: StatementContext, stmt: CreateDatabase) -> StatementResult:
    ctx.store.create_database(stmt.name, stmt.comment, if_not_exists=stmt.if_not_exists, owner=ctx.user)
    ensure_spark_database(ctx, stmt.name.lower())
    return no_result()


def drop_database(ctx: StatementContext, stmt: DropDatabase) -> StatementResult:
    name = stmt.name.lower()
    in_spark = ctx.spark.catalog.databaseExists(name)
    if ctx.store.get_database(name) is None and in_spark:
        # Only Spark knows it (no Delta table ever lived there): Spark's own rules apply.
        ctx.spark.sql(f"DROP DATABASE `{name}`" + (" CASCADE" if stmt.cascade else ""))
        return no_result()
    if in_spark and not stmt.cascade and ctx.spark.catalog.listTables(name):
        ctx.spark.sql(f"DROP DATABASE `{name}`")  # raises Spark's SCHEMA_NOT_EMPTY for its own tables
    dropped = ctx.store.drop_database(name, if_exists=stmt.if_exists, cascade=stmt.cascade)
    for entry in dropped:
        if entry.location:
            shutil.rmtree(entry.location, ignore_errors=True)
    if in_spark and name != "default":
        if ctx.current_database == name:
            ctx.spark.catalog.setCurrentDatabase("default")
        ctx.spark.sql(f"DROP DATABASE IF EXISTS `{name}` CASCADE")
    return no_result()


def use_database(ctx: StatementContext, stmt: UseDatabase) -> StatementResult:
    name = stmt.name.lower()
    if ctx.store.get_database(name) is not None:
        ensure_spark_database(ctx, name)
    elif not ctx.spark.catalog.databaseExists(name):
        raise SchemaNotFoundError(f"The schema `{name}` cannot be found.",
                                  hint="SHOW DATABASES lists them; CREATE DATABASE makes one")
    ctx.spark.catalog.setCurrentDatabase(name)
    return no_result()


def show_databases(ctx: StatementContext, stmt: ShowDatabases) -> StatementResult:
    names = {entry.name for entry in ctx.store.list_databases(stmt.pattern)}
    spark_sql = "SHOW DATABASES" + (f" LIKE '{stmt.pattern}'" if stmt.pattern else "")
    names.update(row[0] for row in ctx.spark.sql(spark_sql).collect())
    return rows_result([("namespace", "string")], [(name,) for name in sorted(names)])
