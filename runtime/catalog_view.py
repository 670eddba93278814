"""What a client session can see of the catalog, as plain data for the metadata RPCs (GetSchemas, GetTables ...)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class TableInfo:
    database: str
    name: str
    kind: str          # TABLE, VIEW (later: STREAMING TABLE)
    comment: str | None


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: str          # Spark SQL type string
    nullable: bool
    comment: str | None
    position: int      # 1-based


@dataclass(frozen=True)
class FunctionInfo:
    name: str
    database: str | None
    description: str | None


def list_databases(spark: SparkSession) -> list[str]:
    return sorted(db.name for db in spark.catalog.listDatabases())


def list_tables(spark: SparkSession, database: str) -> list[TableInfo]:
    tables = []
    for table in spark.catalog.listTables(database):
        if table.isTemporary:
            continue
        kind = "VIEW" if (table.tableType or "").upper() == "VIEW" else "TABLE"
        tables.append(TableInfo(database, table.name, kind, table.description))
    return sorted(tables, key=lambda t: t.name)


def list_temporary_views(spark: SparkSession) -> list[TableInfo]:
    views = [t for t in spark.catalog.listTables() if t.isTemporary and not t.namespace]
    return sorted((TableInfo("", t.name, "VIEW", t.description) for t in views), key=lambda t: t.name)


def list_columns(spark: SparkSession, database: str, table: str) -> list[ColumnInfo]:
    qualified = f"`{database}`.`{table}`" if database else f"`{table}`"
    columns = spark.catalog.listColumns(qualified)
    return [
        ColumnInfo(col.name, col.dataType, col.nullable, col.description, position)
        for position, col in enumerate(columns, start=1)
    ]


def list_functions(spark: SparkSession, pattern: str | None = None) -> list[FunctionInfo]:
    """`pattern` is Spark's (`*` any run, case-insensitive): it narrows the listing before each function's
    description is looked up, which is what makes a full listing slow (seconds for Spark's 500 built-ins)."""
    functions = spark.catalog.listFunctions(pattern=pattern) if pattern else spark.catalog.listFunctions()
    return [FunctionInfo(fn.name, fn.namespace[0] if fn.namespace else None, fn.description) for fn in functions]
