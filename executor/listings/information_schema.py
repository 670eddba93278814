"""`system.information_schema.<view>` (and `<catalog>.information_schema.<view>`, or `information_schema.<view>`): the
catalog as Databricks' information schema shows it, for the clients that read it (dbt-databricks lists a schema's
relations from `tables`, and reads `columns`, `row_filters`, `column_masks`, the constraint and tag views before it
builds a model).

Each view is a virtual table, bound as `event_log(...)` is (executor/listings/event_log.py): the binder puts a
temporary view over rows made from the catalog where the reference was, so ordinary SQL (WHERE, joins, `lower(...)`)
runs over it. The rows are those of the objects the session's user may read (SELECT, by ownership or a grant: the
same check as a query's), so a user never learns of a table they cannot query; schemas are listed as SHOW SCHEMAS and
GetSchemas list them. Inside a view the reader's rights apply, never more. Row filters, column masks, constraints and
tags do not exist here: those views are empty, with Databricks' columns, so that the clients' queries run.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.errors import TableNotFoundError
from sluicegate.dialect import catalogs
from sluicegate.dialect.constraints import FOREIGN_KEY, PRIMARY_KEY, KeyConstraint
from sluicegate.dialect.references import TableReference
from sluicegate.executor.listings.catalog_view import CatalogView

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sluicegate.executor.context import StatementContext

Position = Callable[[int], "tuple[int, int]"]

_S, _I, _T, _B = "string", "int", "timestamp", "boolean"
_AUDIT = (("created", _T), ("created_by", _S), ("last_altered", _T), ("last_altered_by", _S))

# Databricks' columns of each view (name, type), in its order.
VIEWS: dict[str, tuple[tuple[str, str], ...]] = {
    "catalogs": (("catalog_name", _S), ("catalog_owner", _S), ("comment", _S), *_AUDIT),
    "schemata": (("catalog_name", _S), ("schema_name", _S), ("schema_owner", _S), ("comment", _S), *_AUDIT),
    "tables": (("table_catalog", _S), ("table_schema", _S), ("table_name", _S), ("table_type", _S),
               ("is_insertable_into", _S), ("commit_action", _S), ("table_owner", _S), ("comment", _S), *_AUDIT,
               ("data_source_format", _S), ("storage_sub_directory", _S), ("storage_path", _S)),
    "views": (("table_catalog", _S), ("table_schema", _S), ("table_name", _S), ("view_definition", _S),
              ("check_option", _S), ("is_updatable", _S), ("is_insertable_into", _S), ("sql_path", _S),
              ("is_materialized", _S)),   # Databricks answers 'TRUE' / 'FALSE', which dbt compares with
    "columns": (("table_catalog", _S), ("table_schema", _S), ("table_name", _S), ("column_name", _S),
                ("ordinal_position", _I), ("column_default", _S), ("is_nullable", _S), ("full_data_type", _S),
                ("data_type", _S), ("character_maximum_length", _I), ("character_octet_length", _I),
                ("numeric_precision", _I), ("numeric_precision_radix", _I), ("numeric_scale", _I),
                ("datetime_precision", _I), ("interval_type", _S), ("interval_precision", _I),
                ("maximum_cardinality", _I), ("is_identity", _S), ("identity_generation", _S),
                ("identity_start", _S), ("identity_increment", _S), ("identity_maximum", _S),
                ("identity_minimum", _S), ("identity_cycle", _S), ("is_generated", _S),
                ("generation_expression", _S), ("is_system_time_period_start", _S),
                ("is_system_time_period_end", _S), ("system_time_period_timestamp_generation", _S),
                ("is_updatable", _S), ("partition_index", _I), ("comment", _S)),
    "row_filters": (("table_catalog", _S), ("table_schema", _S), ("table_name", _S), ("filter_name", _S),
                    ("target_columns", _S)),
    "column_masks": (("table_catalog", _S), ("table_schema", _S), ("table_name", _S), ("column_name", _S),
                     ("mask_name", _S), ("using_columns", _S)),
    "table_constraints": (("constraint_catalog", _S), ("constraint_schema", _S), ("constraint_name", _S),
                          ("table_catalog", _S), ("table_schema", _S), ("table_name", _S), ("constraint_type", _S),
                          ("is_deferrable", _S), ("initially_deferred", _S), ("enforced", _S), ("comment", _S)),
    "key_column_usage": (("constraint_catalog", _S), ("constraint_schema", _S), ("constraint_name", _S),
                         ("table_catalog", _S), ("table_schema", _S), ("table_name", _S), ("column_name", _S),
                         ("ordinal_position", _I), ("position_in_unique_constraint", _I)),
    "referential_constraints": (("constraint_catalog", _S), ("constraint_schema", _S), ("constraint_name", _S),
                                ("unique_constraint_catalog", _S), ("unique_constraint_schema", _S),
                                ("unique_constraint_name", _S), ("match_option", _S), ("update_rule", _S),
                                ("delete_rule", _S), ("comment", _S)),
    "constraint_column_usage": (("table_catalog", _S), ("table_schema", _S), ("table_name", _S),
                                ("column_name", _S), ("constraint_catalog", _S), ("constraint_schema", _S),
                                ("constraint_name", _S)),
    "catalog_tags": (("catalog_name", _S), ("tag_name", _S), ("tag_value", _S)),
    "schema_tags": (("catalog_name", _S), ("schema_name", _S), ("tag_name", _S), ("tag_value", _S)),
    "table_tags": (("catalog_name", _S), ("schema_name", _S), ("table_name", _S), ("tag_name", _S),
                   ("tag_value", _S)),
    "column_tags": (("catalog_name", _S), ("schema_name", _S), ("table_name", _S), ("column_name", _S),
                    ("tag_name", _S), ("tag_value", _S)),
}

# the catalog's kinds as Databricks' table_type says them (a table only Spark's session knows: MANAGED too)
TABLE_TYPES = {"TABLE": "MANAGED", "VIEW": "VIEW", "STREAMING_TABLE": "STREAMING_TABLE",
               "MATERIALIZED_VIEW": "MATERIALIZED_VIEW", "STREAMING TABLE": "STREAMING_TABLE",
               "MATERIALIZED VIEW": "MATERIALIZED_VIEW"}


@dataclass(frozen=True)
class ColumnFacts:
    name: str
    type: str                  # Spark SQL type string
    nullable: bool
    comment: str | None


@dataclass(frozen=True)
class TableFacts:
    """What the views show of one table or view the user may read."""

    database: str
    name: str
    kind: str                  # the catalog's kind: TABLE, VIEW, STREAMING_TABLE, MATERIALIZED_VIEW
    comment: str | None = None
    owner: str | None = None
    created: dt.datetime | None = None
    altered: dt.datetime | None = None
    delta: bool = False        # a catalog table (Delta); False: a view, or a table only Spark's session knows
    definition: str | None = None
    partition_by: tuple[str, ...] = ()
    columns: tuple[ColumnFacts, ...] = ()
    keys: tuple[KeyConstraint, ...] = ()   # informational PRIMARY / FOREIGN KEYs, named
    shallow_clone: bool = False            # table_type MANAGED_SHALLOW_CLONE, as Unity Catalog says it

    @property
    def table_type(self) -> str:
        return "MANAGED_SHALLOW_CLONE" if self.shallow_clone else TABLE_TYPES.get(self.kind, self.kind)


@dataclass(frozen=True)
class SchemaFacts:
    name: str
    owner: str | None = None
    comment: str | None = None
    created: dt.datetime | None = None


def _data_type(spark_type: str) -> str:
    """Databricks' `data_type`: the type's name without its parameters, upper case (DECIMAL, ARRAY, STRUCT ...)."""
    return re.split(r"[(<]", spark_type, maxsplit=1)[0].strip().upper()


def _precision(spark_type: str) -> tuple[int | None, int | None, int | None]:
    """(numeric_precision, radix, numeric_scale) of a numeric type, as Databricks reports them."""
    base = _data_type(spark_type)
    decimal = re.fullmatch(r"\s*decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)\s*", spark_type, re.IGNORECASE)
    if decimal:
        return int(decimal.group(1)), 10, int(decimal.group(2))
    bits = {"TINYINT": 7, "BYTE": 7, "SMALLINT": 15, "SHORT": 15, "INT": 31, "INTEGER": 31, "BIGINT": 63,
            "LONG": 63, "FLOAT": 24, "DOUBLE": 53}
    if base in bits:
        return bits[base], 2, 0 if base not in ("FLOAT", "DOUBLE") else None
    return None, None, None


def rows(view: str, catalog: str, schemas: Sequence[SchemaFacts], tables: Sequence[TableFacts]) -> list[tuple]:
    """The rows of `view` for `catalog`'s `schemas` and the `tables` the user may read (no JVM needed)."""
    if view == "catalogs":
        return [(catalog, None, "the gateway's catalog", None, None, None, None),
                (catalogs.SYSTEM, None, "holds information_schema", None, None, None, None)]
    if view == "schemata":
        return [(catalog, s.name, s.owner, s.comment, s.created, s.owner, s.created, s.owner) for s in schemas]
    if view == "tables":
        return [(catalog, t.database, t.name, t.table_type, "YES" if t.kind == "TABLE" else "NO",
                 "PRESERVE", t.owner, t.comment, t.created, t.owner, t.altered or t.created, t.owner,
                 "DELTA" if t.delta else None, None, None) for t in tables]
    if view == "views":
        return [(catalog, t.database, t.name, t.definition, "NONE", "NO", "NO", None,
                 "TRUE" if t.kind == "MATERIALIZED_VIEW" else "FALSE")
                for t in tables if t.kind in ("VIEW", "MATERIALIZED_VIEW")]
    if view == "columns":
        return [_column_row(catalog, t, position, c) for t in tables for position, c in enumerate(t.columns)]
    if view in _KEY_VIEWS:
        return _key_rows(view, catalog, tables)
    return []  # row filters, column masks, CHECK constraints, tags: none listed here


_KEY_VIEWS = ("table_constraints", "key_column_usage", "referential_constraints", "constraint_column_usage")


def _key_rows(view: str, catalog: str, tables: Sequence[TableFacts]) -> list[tuple]:
    """The rows of a constraint view: each informational PRIMARY KEY / FOREIGN KEY of the tables the user may read,
    as Unity Catalog lists them (never enforced, so `enforced` is NO; a foreign key's unique constraint is the
    primary key of the table it references, when that table has one the user may read)."""
    primary = {(t.database.lower(), t.name.lower()): k for t in tables for k in t.keys if k.kind == PRIMARY_KEY}
    found: list[tuple] = []
    for table in tables:
        for key in table.keys:
            named = (catalog, table.database, key.name)
            at = (catalog, table.database, table.name)
            if view == "table_constraints":
                found.append((*named, *at, key.kind, "YES", "NO", "NO", None))   # Databricks' fixed values
            elif view == "constraint_column_usage":
                found.extend((*at, column, *named) for column in key.columns)
            elif view == "key_column_usage":
                unique = _referenced_key(table, key, primary)
                for position, column in enumerate(key.columns, start=1):
                    in_unique = None
                    if unique is not None and position <= len(key.referenced_columns):
                        wanted = key.referenced_columns[position - 1].lower()
                        matches = [i for i, c in enumerate(unique.columns, start=1) if c.lower() == wanted]
                        in_unique = matches[0] if matches else None
                    found.append((*named, *at, column, position, in_unique))
            elif view == "referential_constraints" and key.kind == FOREIGN_KEY:
                unique = _referenced_key(table, key, primary)
                database = key.referenced_table(table.database)[0]
                found.append((*named, catalog if unique else None, database if unique else None,
                              unique.name if unique else None, "FULL", "NO ACTION", "NO ACTION", None))
    return found


def _referenced_key(table: TableFacts, key: KeyConstraint,
                    primary: dict[tuple[str, str], KeyConstraint]) -> KeyConstraint | None:
    return primary.get(key.referenced_table(table.database)) if key.kind == FOREIGN_KEY else None


def _column_row(catalog: str, table: TableFacts, position: int, column: ColumnFacts) -> tuple:
    precision, radix, scale = _precision(column.type)
    partition = table.partition_by.index(column.name) if column.name in table.partition_by else None
    return (catalog, table.database, table.name, column.name, position, None, "YES" if column.nullable else "NO",
            column.type, _data_type(column.type), 0, 0, precision, radix, scale, None, None, None, None, "NO", None,
            None, None, None, None, None, "NO", None, "NO", "NO", None, "YES", partition, column.comment)


def _schemas(ctx: StatementContext, view: CatalogView) -> list[SchemaFacts]:
    found = []
    for name in view.databases():
        entry = ctx.store.get_database(name)
        found.append(SchemaFacts(name, entry.owner if entry else None, entry.comment if entry else None,
                                 entry.created_at if entry else None))
    found.append(SchemaFacts(catalogs.INFORMATION_SCHEMA, comment="the catalog's views"))
    return sorted(found, key=lambda s: s.name)


def _tables(ctx: StatementContext, view: CatalogView, schemas: Iterable[SchemaFacts],
            with_columns: bool) -> list[TableFacts]:
    """Every table and view the session's user may read, with its columns when asked."""
    found = []
    principal = ctx.principal
    for schema in schemas:
        if schema.name == catalogs.INFORMATION_SCHEMA:
            continue
        for info in view.tables(schema.name):
            if not ctx.policy.may_read(principal, info.database, info.name):
                continue
            entry = info.entry
            columns: tuple[ColumnFacts, ...] = ()
            if with_columns:
                try:
                    columns = tuple(ColumnFacts(c.name, c.type, c.nullable, c.comment) for c in view.columns(info))
                except Exception:  # noqa: BLE001 - a view whose schema only its query knows: listed without columns
                    columns = ()
            if entry is not None:
                found.append(TableFacts(info.database, info.name, entry.kind, entry.comment, entry.owner,
                                        entry.created_at, entry.updated_at, entry.kind != "VIEW", entry.definition,
                                        tuple(entry.partition_by), columns, entry.keys, entry.clone_of is not None))
            else:
                found.append(TableFacts(info.database, info.name, info.kind.replace(" ", "_"), info.comment,
                                        columns=columns))
    return found


def _arrow(view: str, data: list[tuple]) -> Any:
    import pyarrow as pa

    kinds = {_S: pa.string(), _I: pa.int32(), _T: pa.timestamp("us", tz="UTC"), _B: pa.bool_()}
    columns = VIEWS[view]
    schema = pa.schema([pa.field(name, kinds[kind]) for name, kind in columns])
    values = {name: [_utc(row[i]) if kind == _T else row[i] for row in data]
              for i, (name, kind) in enumerate(columns)}
    return pa.table(values, schema=schema)


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    return value.replace(tzinfo=dt.timezone.utc) if value is not None and value.tzinfo is None else value


def view_dataframe(ctx: StatementContext, view: str) -> DataFrame:
    """The rows of `information_schema.<view>` for the session's user, as a DataFrame."""
    catalog = CatalogView(ctx.spark, ctx.store)
    schemas = _schemas(ctx, catalog)
    tables = (_tables(ctx, catalog, schemas, with_columns=view == "columns")
              if view in ("tables", "views", "columns", *_KEY_VIEWS) else [])
    data = rows(view, catalogs.current().name, schemas, tables)
    columns = [name for name, _ in VIEWS[view]]
    return ctx.spark.createDataFrame(_arrow(view, data)).select(*columns)


def information_schema_reader(ctx: StatementContext) -> Callable[[TableReference, Position], DataFrame]:
    """The binder's reader of `information_schema.<view>` references for the statement in `ctx`."""

    def read(ref: TableReference, position: Position) -> DataFrame:
        view = ref.name.lower()
        if view not in VIEWS:
            line, column = position(ref.start)
            raise TableNotFoundError(
                f"The view `{catalogs.INFORMATION_SCHEMA}`.`{ref.name}` cannot be found", line=line, column=column,
                hint=f"{catalogs.INFORMATION_SCHEMA} has the views {', '.join(sorted(VIEWS))}")
        return view_dataframe(ctx, view)

    return read
