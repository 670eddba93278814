"""SHOW TABLES, DESCRIBE [EXTENDED], DESCRIBE HISTORY and SHOW CREATE TABLE, in Spark's columns and row shapes.

SHOW TABLES merges the catalog's objects with what only Spark's session knows (temporary views, non-Delta tables).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING

import pyarrow as pa

from sluicegate.catalog.names import quote_identifier, quote_string
from sluicegate.catalog.store import TableEntry
from sluicegate.catalog.uris import display_location
from sluicegate.dialect import catalogs
from sluicegate.dialect.statements import (
    CLUSTERING_PROPERTY,
    DescribeDetail,
    DescribeHistory,
    DescribeTable,
    ShowColumns,
    ShowCreateTable,
    ShowTableExtended,
    ShowTables,
    ShowTblProperties,
)
from sluicegate.dialect.streaming.kafka import redact_sql
from sluicegate.dialect.trees import defining_query
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.listings.describe_json import describe_document, json_result, key_clauses
from sluicegate.executor.listings.history import HISTORY_COLUMNS, history_rows, timestamp_of
from sluicegate.executor.lookups import require, require_table
from sluicegate.executor.materialized_views import refresh as mv_refresh
from sluicegate.executor.output import rows_result, typed_rows_result
from sluicegate.executor.schedule_rows import refresh_rows
from sluicegate.executor.spark_databases import spark_has_database
from sluicegate.executor.tables.clustering import displayed
from sluicegate.executor.tables.dml import table_schema
from sluicegate.storage.constraints import declared_string_type
from sluicegate.storage.delta.read import table_statistics
from sluicegate.storage.delta.tables import open_table

if TYPE_CHECKING:
    from pyspark.sql.types import StructField

_DESCRIBE_COLUMNS = [("col_name", "string"), ("data_type", "string"), ("comment", "string")]


def show_tables(ctx: StatementContext, stmt: ShowTables) -> StatementResult:
    database = (stmt.database or ctx.current_database).lower()
    rows = {(e.database, e.name): (e.database, e.name, False)
            for e in ctx.store.list_tables(database, stmt.pattern)}
    if spark_has_database(ctx.spark, database):
        spark_sql = f"SHOW TABLES IN {quote_identifier(database)}" + (
            f" LIKE {quote_string(stmt.pattern)}" if stmt.pattern else "")
        for row in ctx.spark.sql(spark_sql).collect():
            rows.setdefault((row[0], row[1]), (row[0], row[1], bool(row[2])))
    ordered = sorted(rows.values(), key=lambda r: (r[2], r[0], r[1]))
    return rows_result([("namespace", "string"), ("tableName", "string"), ("isTemporary", "boolean")], ordered)


def show_table_extended(ctx: StatementContext, stmt: ShowTableExtended) -> StatementResult:
    """SHOW TABLE EXTENDED: the catalog's tables, views and streaming tables with Spark's `information` text (what
    dbt-spark parses: Type, Provider, Owner, Statistics and the schema tree), merged with Spark's own rows for its
    tables and temporary views. A table the user may not read is listed by name, without its columns."""
    database = (stmt.database or ctx.current_database).lower()
    principal = ctx.principal
    rows: dict[tuple[str, str], tuple[str, str, bool, str]] = {}
    for entry in ctx.store.list_tables(database, stmt.pattern):
        readable = ctx.policy.may_read(principal, entry.database, entry.name)
        rows[(entry.database, entry.name)] = (entry.database, entry.name, False, _information(entry, readable))
    if spark_has_database(ctx.spark, database):
        spark_sql = f"SHOW TABLE EXTENDED IN {quote_identifier(database)} LIKE {quote_string(stmt.pattern or '*')}"
        for row in ctx.spark.sql(spark_sql).collect():
            if ctx.policy.may_read(principal, row[0], row[1]) or row[2]:
                rows.setdefault((row[0], row[1]), (row[0], row[1], bool(row[2]), row[3]))
    ordered = sorted(rows.values(), key=lambda r: (r[2], r[0], r[1]))
    return rows_result([("namespace", "string"), ("tableName", "string"), ("isTemporary", "boolean"),
                        ("information", "string")], ordered)


def _type(entry: TableEntry) -> str:
    """Spark's `Type`: VIEW, MANAGED, or STREAMING_TABLE as Databricks says (dbt-spark takes all but VIEW for a
    table; dbt-databricks reads STREAMING_TABLE)."""
    return {"VIEW": "VIEW", "STREAMING_TABLE": "STREAMING_TABLE",
            "MATERIALIZED_VIEW": "MATERIALIZED_VIEW"}.get(entry.kind, "MANAGED")


def _statistics(entry: TableEntry) -> str | None:
    """Spark's `Statistics` line of a Delta table, from its log: `N bytes[, M rows]`."""
    if not entry.location:
        return None
    stats = table_statistics(entry.location)
    return f"{stats.size_bytes} bytes" + (f", {stats.rows} rows" if stats.rows is not None else "")


def _information(entry: TableEntry, readable: bool) -> str:
    """Spark's `information` text for a catalog object, in Spark's order (CatalogTable.toLinkedHashMap)."""
    lines = [("Catalog", catalogs.current().name), ("Database", entry.database), ("Table", entry.name),
             ("Owner", entry.owner), ("Created Time", _when(entry.created_at)), ("Last Access", "UNKNOWN"),
             ("Created By", "sluicegate"), ("Type", _type(entry))]
    if entry.kind != "VIEW":
        lines.append(("Provider", "delta"))
    lines.append(("Comment", entry.comment))
    if entry.kind in ("VIEW", "MATERIALIZED_VIEW"):
        lines.append(("View Text", entry.definition if readable else None))
    if entry.properties:
        lines.append(("Table Properties", "[" + ", ".join(f"{k}={v}" for k, v in sorted(entry.properties.items()))
                      + "]"))
    if entry.kind != "VIEW":
        if readable:
            lines.append(("Statistics", _statistics(entry)))
        lines.append(("Location", display_location(entry.location) if entry.location else None))
        if entry.partition_by:
            lines.append(("Partition Provider", "Catalog"))
            lines.append(("Partition Columns", "[" + ", ".join(f"`{c}`" for c in entry.partition_by) + "]"))
    text = "".join(f"{key}: {value}\n" for key, value in lines if value is not None)
    if readable:
        text += "Schema: " + table_schema(entry).treeString() + "\n"
    return text


def show_columns(ctx: StatementContext, stmt: ShowColumns) -> StatementResult:
    """SHOW COLUMNS as Spark answers it: one `col_name` row per column, in the table's order."""
    entry = require(ctx, stmt.table)
    return rows_result([("col_name", "string")], [(field.name,) for field in table_schema(entry).fields])


def show_tblproperties(ctx: StatementContext, stmt: ShowTblProperties) -> StatementResult:
    """The table's properties as Spark with Delta lists them: the catalog's, and the Delta log's configuration and
    protocol versions (`delta.minReaderVersion`, `delta.minWriterVersion`)."""
    entry = require(ctx, stmt.table)
    properties = dict(entry.properties or {})
    if entry.location and entry.kind != "VIEW":
        table = open_table(entry.location)
        protocol = table.protocol()
        properties.update({key: value for key, value in table.metadata().configuration.items() if value is not None})
        properties["delta.minReaderVersion"] = str(protocol.min_reader_version)
        properties["delta.minWriterVersion"] = str(protocol.min_writer_version)
    properties = displayed(properties)
    rows = sorted(properties.items())
    if stmt.key is not None:
        value = properties.get(stmt.key)
        rows = [(stmt.key, value if value is not None else
                 f"Table {entry.database}.{entry.name} does not have property: {stmt.key}")]
    return rows_result([("key", "string"), ("value", "string")], rows)


def show_views(ctx: StatementContext, database: str | None, pattern: str | None) -> StatementResult:
    """SHOW VIEWS: the catalog's views and Spark's (temporary ones included), as Spark lists them."""
    database = (database or ctx.current_database).lower()
    rows = {(e.database, e.name): (e.database, e.name, False)
            for e in ctx.store.list_tables(database, pattern, kinds=("VIEW",))}
    if spark_has_database(ctx.spark, database):
        spark_sql = f"SHOW VIEWS IN {quote_identifier(database)}" + (
            f" LIKE {quote_string(pattern)}" if pattern else "")
        for row in ctx.spark.sql(spark_sql).collect():
            rows.setdefault((row[0], row[1]), (row[0], row[1], bool(row[2])))
    ordered = sorted(rows.values(), key=lambda r: (r[2], r[0], r[1]))
    return rows_result([("namespace", "string"), ("viewName", "string"), ("isTemporary", "boolean")], ordered)


def _when(value: dt.datetime | None) -> str | None:
    return value.strftime("%a %b %d %H:%M:%S UTC %Y") if value else None


def _column_type(field: StructField) -> str:
    """A column's type as DESCRIBE shows it: CHAR(n) and VARCHAR(n) as declared (stored as strings)."""
    declared = declared_string_type(field.metadata)
    return f"{declared[0]}({declared[1]})" if declared else str(field.dataType.simpleString())


def describe_table(ctx: StatementContext, stmt: DescribeTable) -> StatementResult:
    entry = require(ctx, stmt.table)
    schema = table_schema(entry)
    if stmt.as_json:
        return json_result(describe_document(entry, schema, _type(entry), stmt.extended))
    rows: list[tuple[str, str, str | None]] = [
        (f.name, _column_type(f), (f.metadata or {}).get("comment")) for f in schema.fields
    ]
    if entry.partition_by:
        rows.append(("# Partition Information", "", ""))
        rows.append(("# col_name", "data_type", "comment"))
        by_name = {f.name.lower(): f for f in schema.fields}
        for column in entry.partition_by:
            field = by_name.get(column.lower())
            rows.append((column, _column_type(field) if field else "", None))
    if stmt.extended:
        rows.append(("", "", ""))
        rows.append(("# Detailed Table Information", "", ""))
        details = [("Catalog", catalogs.current().name), ("Database", entry.database), ("Table", entry.name),
                   ("Owner", entry.owner), ("Created Time", _when(entry.created_at)), ("Last Access", "UNKNOWN"),
                   ("Created By", "sluicegate"), ("Type", _type(entry)), ("Comment", entry.comment)]
        if entry.kind == "VIEW":
            details.append(("View Text", entry.definition))
        else:
            if entry.kind == "STREAMING_TABLE":  # what dbt-databricks reads: the query, and how it is refreshed
                query = redact_sql(defining_query(entry.definition)) if entry.definition else None   # no credentials
                details.append(("View Text", query))
                details.extend(refresh_rows(entry, ctx.store.get_stream(entry.database, entry.name)))
            elif entry.kind == "MATERIALIZED_VIEW":  # the query, how and when it is refreshed, what it reflects
                row = ctx.store.get_stream(entry.database, entry.name)
                details.append(("View Text", entry.definition))
                details.extend(refresh_rows(entry, row))
                details.extend(mv_refresh.refresh_rows(entry, row))
            details.append(("Provider", "delta"))
            if entry.properties:
                details.append(("Table Properties",
                                "[" + ", ".join(f"{k}={v}" for k, v in sorted(displayed(entry.properties).items()))
                                + "]"))
            details.append(("Statistics", _statistics(entry)))
            details.append(("Location", entry.location))
        rows.extend((key, value, "") for key, value in details if value is not None)
    return rows_result(_DESCRIBE_COLUMNS, rows)


def describe_history(ctx: StatementContext, stmt: DescribeHistory) -> StatementResult:
    entry = require(ctx, stmt.table)
    if entry.kind == "VIEW":  # tables and streaming tables have a Delta log; a view has none
        entry = require_table(ctx, stmt.table, "DESCRIBE HISTORY")
    rows = [(row[0], row[1].strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if row[1] else None, *row[2:])
            for row in history_rows(entry)]
    return rows_result(HISTORY_COLUMNS, rows)


_STRINGS = pa.list_(pa.string())
_STAMP = pa.timestamp("us", tz="UTC")
# DESCRIBE DETAIL's columns of an array, map or timestamp type, as Arrow types for a client reading them natively
_DETAIL_TYPES = {5: _STAMP, 6: _STAMP, 7: _STRINGS, 8: _STRINGS, 11: pa.map_(pa.string(), pa.string()),
                 14: _STRINGS, 15: pa.map_(pa.string(), pa.int64())}


def describe_detail(ctx: StatementContext, stmt: DescribeDetail) -> StatementResult:
    """Delta's one row about a table's current version, in Databricks' columns and types (arrays, maps and
    timestamps native for the Databricks connector, text for HiveServer2 clients): what an operator reads to see
    how many files a stream has left (and compaction merged), and how big the table is."""
    entry = require(ctx, stmt.table)
    if entry.kind == "VIEW":  # tables, streaming tables and materialized views have a Delta log; a view has none
        entry = require_table(ctx, stmt.table, "DESCRIBE DETAIL")
    table = open_table(entry.location or "")
    metadata, protocol = table.metadata(), table.protocol()
    files = table.get_add_actions(flatten=True)
    sizes = files.column("size_bytes").to_pylist() if files.num_rows else []
    last = table.history(1)
    features = sorted(set(protocol.reader_features or ()) | set(protocol.writer_features or ()))
    row = (
        "delta", metadata.id, f"{catalogs.current().name}.{entry.database}.{entry.name}", entry.comment,
        display_location(entry.location or ""), timestamp_of(metadata.created_time),
        timestamp_of(last[0].get("timestamp") if last else None), list(metadata.partition_columns),
        json.loads(entry.properties.get(CLUSTERING_PROPERTY, "[]")), files.num_rows, sum(size or 0 for size in sizes),
        dict(sorted(entry.properties.items())), protocol.min_reader_version, protocol.min_writer_version, features,
        {"numRowsDeletedByDeletionVectors": 0, "numDeletionVectors": 0},
    )
    return typed_rows_result(
        [("format", "string"), ("id", "string"), ("name", "string"), ("description", "string"),
         ("location", "string"), ("createdAt", "timestamp"), ("lastModified", "timestamp"),
         ("partitionColumns", "array<string>"), ("clusteringColumns", "array<string>"), ("numFiles", "bigint"),
         ("sizeInBytes", "bigint"), ("properties", "map<string,string>"), ("minReaderVersion", "int"),
         ("minWriterVersion", "int"), ("tableFeatures", "array<string>"), ("statistics", "map<string,bigint>")],
        [row], _DETAIL_TYPES,
    )


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def show_create_table(ctx: StatementContext, stmt: ShowCreateTable) -> StatementResult:
    entry = require(ctx, stmt.table)
    name = f"{catalogs.current().name}.{entry.database}.{entry.name}"
    if entry.kind == "VIEW":
        text = f"CREATE VIEW {name} (\n" + ",\n".join(f"  {f.name}" for f in table_schema(entry).fields) + ")\n"
        if entry.comment:
            text += f"COMMENT {_quote(entry.comment)}\n"
        text += f"AS {entry.definition}\n"
        return rows_result([("createtab_stmt", "string")], [(text,)])
    columns = []
    for field in table_schema(entry).fields:
        column = f"  {field.name} {_column_type(field).upper()}"
        if not field.nullable:
            column += " NOT NULL"
        if (field.metadata or {}).get("comment"):
            column += f" COMMENT {_quote(field.metadata['comment'])}"
        columns.append(column)
    columns += [f"  CONSTRAINT {name} {body}" for name, body in key_clauses(entry)]  # as Databricks shows keys
    text = f"CREATE TABLE {name} (\n" + ",\n".join(columns) + ")\nUSING delta\n"
    if entry.partition_by:
        text += f"PARTITIONED BY ({', '.join(entry.partition_by)})\n"
    if entry.comment:
        text += f"COMMENT {_quote(entry.comment)}\n"
    text += f"LOCATION '{display_location(entry.location or '')}'\n"
    if entry.properties:
        text += "TBLPROPERTIES (\n" + ",\n".join(f"  {_quote(k)} = {_quote(v)}"
                                                 for k, v in sorted(entry.properties.items())) + ")\n"
    return rows_result([("createtab_stmt", "string")], [(text,)])
