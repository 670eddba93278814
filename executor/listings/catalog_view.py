"""What a client session can see of the catalog, as plain data for the metadata RPCs (GetSchemas, GetTables ...):
the persistent catalog's databases, Delta tables, views and streaming tables, and what only Spark's session knows
(its temporary views and non-Delta tables)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sluicegate.catalog.names import quote_identifier, quote_qualified
from sluicegate.executor.spark_databases import spark_has_database

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.catalog.store import CatalogStore

_KIND_NAMES = {"TABLE": "TABLE", "VIEW": "VIEW", "STREAMING_TABLE": "STREAMING TABLE",
               "MATERIALIZED_VIEW": "MATERIALIZED VIEW"}


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


def list_databases(spark: SparkSession, store: CatalogStore | None = None) -> list[str]:
    names = {db.name for db in spark.catalog.listDatabases()}
    if store is not None:
        names.update(db.name for db in store.list_databases())
    return sorted(names)


def list_tables(spark: SparkSession, database: str, store: CatalogStore | None = None) -> list[TableInfo]:
    tables: dict[str, TableInfo] = {}
    if store is not None and store.get_database(database) is not None:
        for entry in store.list_tables(database):
            tables[entry.name] = TableInfo(database, entry.name, _KIND_NAMES.get(entry.kind, entry.kind), entry.comment)
    if spark_has_database(spark, database):
        for table in spark.catalog.listTables(database):
            if table.isTemporary or table.name in tables:
                continue
            kind = "VIEW" if (table.tableType or "").upper() == "VIEW" else "TABLE"
            tables[table.name] = TableInfo(database, table.name, kind, table.description)
    return sorted(tables.values(), key=lambda t: t.name)


def list_temporary_views(spark: SparkSession) -> list[TableInfo]:
    views = [t for t in spark.catalog.listTables() if t.isTemporary and not t.namespace]
    return sorted((TableInfo("", t.name, "VIEW", t.description) for t in views), key=lambda t: t.name)


def list_columns(spark: SparkSession, database: str, table: str,
                 store: CatalogStore | None = None) -> list[ColumnInfo]:
    entry = store.get_table(database, table) if store is not None and database else None
    if entry is not None and entry.schema_json:
        from pyspark.sql.types import StructType

        schema = StructType.fromJson(json.loads(entry.schema_json))
        return [
            ColumnInfo(f.name, f.dataType.simpleString(), f.nullable, (f.metadata or {}).get("comment"), position)
            for position, f in enumerate(schema.fields, start=1)
        ]
    qualified = quote_qualified(database, table) if database else quote_identifier(table)
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
