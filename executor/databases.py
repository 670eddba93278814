"""CREATE/DROP DATABASE, USE and SHOW DATABASES over the persistent catalog.

Spark's session catalog keeps a shadow of each database (executor/spark_databases.py); the persistent catalog is the
truth and re-creates the shadow when needed. DROP DATABASE ... CASCADE asks each object's kind (executor/kinds.py)
for its part before the catalog drops the rows.
"""

from __future__ import annotations

from sluicegate.catalog.errors import SchemaNotFoundError
from sluicegate.catalog.names import check_name, name_problem, quote_identifier, quote_string
from sluicegate.dialect import catalogs
from sluicegate.dialect.statements import (
    CreateDatabase,
    DescribeDatabase,
    DropDatabase,
    ShowDatabases,
    UseDatabase,
)
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.kinds import kind_of
from sluicegate.executor.output import no_result, rows_result
from sluicegate.executor.spark_databases import ensure_spark_database, spark_has_database
from sluicegate.storage.locations import drop_table_folder


def create_database(ctx: StatementContext, stmt: CreateDatabase) -> StatementResult:
    """Check the name, create Spark's shadow, then commit the catalog row: a row is never left behind by a
    statement that failed (a row Spark cannot take used to stop every later boot). If the commit fails, the shadow
    this statement created is dropped again."""
    line, column = ctx.position_at(stmt.offset)
    name = check_name(stmt.name, "database", line=line, column=column)
    existing = ctx.store.get_database(name)
    if existing is not None and stmt.if_not_exists:
        ensure_spark_database(ctx, name)
        return no_result()
    if existing is not None:
        ctx.store.create_database(name, stmt.comment)  # raises SCHEMA_ALREADY_EXISTS with its hint
    created = ensure_spark_database(ctx, name)
    try:
        ctx.store.create_database(name, stmt.comment, if_not_exists=stmt.if_not_exists, owner=ctx.user)
    except BaseException:
        if created:
            ctx.spark.sql(f"DROP DATABASE IF EXISTS {quote_identifier(name)} CASCADE")
        raise
    return no_result()


def drop_database(ctx: StatementContext, stmt: DropDatabase) -> StatementResult:
    name = stmt.name.lower()
    quoted = quote_identifier(name)
    in_spark = name_problem(name, "database") is None and spark_has_database(ctx.spark, name)
    if ctx.store.get_database(name) is None and in_spark:
        # Only Spark knows it (no Delta table ever lived there): Spark's own rules apply.
        try:
            ctx.spark.sql(f"DROP DATABASE {quoted}" + (" CASCADE" if stmt.cascade else ""))
        finally:
            ctx.forget_database()  # Spark's own drop may move the session off a database it dropped
        return no_result()
    if in_spark and not stmt.cascade and ctx.spark.catalog.listTables(name):
        ctx.spark.sql(f"DROP DATABASE {quoted}")  # raises Spark's SCHEMA_NOT_EMPTY for its own tables
    if stmt.cascade and ctx.store.get_database(name) is not None:
        for entry in ctx.store.list_tables(name):   # what runs for an object stops before its rows and folder go
            kind_of(entry).before_database_drop(ctx, entry)
    dropped = ctx.store.drop_database(name, if_exists=stmt.if_exists, cascade=stmt.cascade)
    for entry in dropped:
        drop_table_folder(ctx.warehouse, entry.location)
    if in_spark and name != "default":
        if ctx.current_database == name:
            ctx.use_database("default")
        ctx.spark.sql(f"DROP DATABASE IF EXISTS {quoted} CASCADE")
    return no_result()


def use_database(ctx: StatementContext, stmt: UseDatabase) -> StatementResult:
    name = stmt.name.lower()
    valid = name_problem(name, "database") is None  # a bad row left by an older release is never followed
    if valid and ctx.store.get_database(name) is not None:
        ensure_spark_database(ctx, name)
    elif not valid or not spark_has_database(ctx.spark, name):
        raise SchemaNotFoundError(f"The schema `{name}` cannot be found.",
                                  hint="SHOW DATABASES lists them; CREATE DATABASE makes one")
    ctx.use_database(name)
    return no_result()


def describe_database(ctx: StatementContext, stmt: DescribeDatabase) -> StatementResult:
    """Spark's DESCRIBE NAMESPACE rows (info_name, info_value) from the catalog: the catalog's configured name, not
    Spark's, so `DESCRIBE SCHEMA main.s` reads as it was asked."""
    name = stmt.name.lower()
    entry = ctx.store.get_database(name)
    if entry is None and not spark_has_database(ctx.spark, name):
        line, column = ctx.position_at(stmt.offset)
        raise SchemaNotFoundError(f"The schema `{stmt.name}` cannot be found.", line=line, column=column,
                                  hint="check the spelling (SHOW SCHEMAS lists them)")
    rows = [("Catalog Name", catalogs.current().name), ("Namespace Name", name),
            ("Comment", entry.comment if entry else None), ("Owner", entry.owner if entry else None)]
    if stmt.extended:
        rows.append(("Properties", ""))
    return rows_result([("info_name", "string"), ("info_value", "string")], rows)


def show_databases(ctx: StatementContext, stmt: ShowDatabases) -> StatementResult:
    names = {entry.name for entry in ctx.store.list_databases(stmt.pattern)}
    spark_sql = "SHOW DATABASES" + (f" LIKE {quote_string(stmt.pattern)}" if stmt.pattern else "")
    names.update(row[0] for row in ctx.spark.sql(spark_sql).collect())
    return rows_result([("namespace", "string")], [(name,) for name in sorted(names)])
