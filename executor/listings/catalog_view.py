"""What a client session can see of the catalog, as plain data for the metadata RPCs (GetSchemas, GetTables,
GetColumns, GetFunctions) and `information_schema`: the persistent catalog's databases, Delta tables, views,
streaming tables and materialized views, and what only Spark's session knows (its non-Delta tables and views, its
temporary views, its built-in functions).

The catalog's objects come from the catalog store (columns from the schema it keeps, as DESCRIBE shows them); Spark's
from its session catalog read in place (engine/session_catalog.py), never through `spark.catalog.list*()`, whose
Datasets run Spark jobs that wait behind other clients' queries. A listing is answered without a Spark job, whatever
the load.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sluicegate.catalog.errors import SchemaNotFoundError
from sluicegate.catalog.functions import FunctionStore
from sluicegate.engine import session_catalog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from sluicegate.catalog.store import CatalogStore, TableEntry

_KIND_NAMES = {"TABLE": "TABLE", "VIEW": "VIEW", "STREAMING_TABLE": "STREAMING TABLE",
               "MATERIALIZED_VIEW": "MATERIALIZED VIEW"}


@dataclass(frozen=True)
class TableInfo:
    database: str      # "" for a session's temporary view
    name: str
    kind: str          # TABLE, VIEW, STREAMING TABLE, MATERIALIZED VIEW
    comment: str | None
    entry: TableEntry | None = field(default=None, compare=False, repr=False)  # the catalog's row; None: Spark's


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


def _columns(schema: StructType) -> list[ColumnInfo]:
    return [ColumnInfo(f.name, f.dataType.simpleString(), f.nullable, (f.metadata or {}).get("comment"), position)
            for position, f in enumerate(schema.fields, start=1)]


def _schema(schema_json: str | None) -> StructType:
    from pyspark.sql.types import StructType

    return StructType.fromJson(json.loads(schema_json or '{"type": "struct", "fields": []}'))


class CatalogView:
    """One listing's view of the catalog for one client session. Spark's database names are read once per view, so
    a listing over many databases asks for them once."""

    def __init__(self, spark: SparkSession, store: CatalogStore | None = None) -> None:
        self.spark = spark
        self.store = store
        self._listing: session_catalog.SparkListing | None = None

    def _spark_listing(self) -> session_catalog.SparkListing:
        if self._listing is None:
            self._listing = session_catalog.listing(self.spark)
        return self._listing

    def spark_databases(self) -> frozenset[str]:
        return frozenset(self._spark_listing().databases)

    def catalog_databases(self) -> list[str]:
        """The catalog's own schemas (those that may hold its objects, functions included), without asking Spark."""
        return sorted(db.name for db in self.store.list_databases()) if self.store is not None else []

    def databases(self) -> list[str]:
        names = set(self.spark_databases())
        if self.store is not None:
            names.update(db.name for db in self.store.list_databases())
        return sorted(names)

    def tables(self, database: str) -> list[TableInfo]:
        """The tables and views of `database`: the catalog's, then those only Spark's catalog has."""
        return self.tables_in([database])

    def tables_in(self, databases: Sequence[str]) -> list[TableInfo]:
        """The tables and views of each of `databases`, in that order, each database's sorted by name: the
        catalog's, then those only Spark's catalog has (read with Spark's databases, in the listing's one call)."""
        spark_tables = self._spark_listing().tables
        listed: list[TableInfo] = []
        for database in databases:
            tables: dict[str, TableInfo] = {}
            if self.store is not None:
                try:
                    entries = self.store.list_tables(database)
                except SchemaNotFoundError:
                    entries = []
                for entry in entries:
                    tables[entry.name] = TableInfo(database, entry.name, _KIND_NAMES.get(entry.kind, entry.kind),
                                                   entry.comment, entry)
            for name, found in spark_tables.get(database, {}).items():
                if name not in tables:
                    kind = "VIEW" if found.kind == "VIEW" else "TABLE"
                    tables[name] = TableInfo(database, name, kind, found.comment)
            listed.extend(sorted(tables.values(), key=lambda t: t.name))
        return listed

    def temporary_views(self) -> list[TableInfo]:
        return [TableInfo("", name, "VIEW", None) for name in sorted(self._spark_listing().temporary_views)]

    def columns(self, table: TableInfo) -> list[ColumnInfo]:
        """A listed table's columns: the catalog's schema of its objects, Spark's of its own (none if it went
        meanwhile)."""
        if table.entry is not None:
            return _columns(_schema(table.entry.schema_json))
        if table.database:
            schema_json = session_catalog.table_schema(self.spark, table.database, table.name)
        else:
            schema_json = session_catalog.temporary_view_schema(self.spark, table.name)
        return [] if schema_json is None else _columns(_schema(schema_json))

    def functions(self, databases: Sequence[str] = ()) -> list[FunctionInfo]:
        """The session's functions: Spark's built-ins (read once per process; they belong to no schema), then the
        SQL functions of each of `databases` in the catalog (CREATE FUNCTION), listed whatever the grants, as
        tables are: EXECUTE is checked when one is called."""
        found = [FunctionInfo(f.name, None, f.usage) for f in session_catalog.functions(self.spark)]
        if self.store is not None:
            defined = FunctionStore(self.store)
            for database in databases:
                found.extend(FunctionInfo(f.name, f.database, f.comment) for f in defined.list(database))
        return found
