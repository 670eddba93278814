"""OPTIMIZE: compact a Delta table's small files (or rewrite them in z-order), answering as Databricks does: the
table's path and a `metrics` struct.

Tables, streaming tables and materialized views are all Delta tables here, so all three may be optimized; the rewrite
changes no row (a `dataChange=false` commit, which streams and incremental refreshes reading the table skip). What
only the table knows is checked here, at the position of the name the user typed: the WHERE's columns must be
partition columns (the Delta log answers it without reading a file), the ZORDER BY columns data columns. A table
created with CLUSTER BY is z-ordered by its clustering columns when OPTIMIZE names none.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sluicegate.catalog.errors import PathOutsideWarehouseError
from sluicegate.catalog.names import owned_table_folder
from sluicegate.catalog.uris import is_object_uri
from sluicegate.dialect.statements import CLUSTERING_PROPERTY, ColumnName, Optimize, PartitionTerm
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import NotATableError, WarehouseError
from sluicegate.executor.lookups import not_found, spark_has
from sluicegate.executor.object_kinds import kind_name
from sluicegate.executor.output import typed_rows_result
from sluicegate.storage.delta.optimize import PartitionFilter
from sluicegate.storage.delta.optimize import optimize as optimize_table
from sluicegate.storage.delta.snapshots import hidden_columns
from sluicegate.storage.delta.tables import open_table

if TYPE_CHECKING:
    from sluicegate.catalog.store import TableEntry

_SIZES = pa.struct([("min", pa.int64()), ("max", pa.int64()), ("avg", pa.float64()), ("totalFiles", pa.int64()),
                    ("totalSize", pa.int64())])
_FILES = pa.struct([("num", pa.int64()), ("size", pa.int64())])
# Databricks' OPTIMIZE metrics, the fields delta-rs can fill, in Databricks' order
METRICS = pa.struct([
    ("numFilesAdded", pa.int64()), ("numFilesRemoved", pa.int64()), ("filesAdded", _SIZES), ("filesRemoved", _SIZES),
    ("partitionsOptimized", pa.int64()),
    ("zOrderStats", pa.struct([("strategyName", pa.string()), ("inputCubeFiles", _FILES),
                               ("inputOtherFiles", _FILES), ("inputNumCubes", pa.int64()), ("mergedFiles", _FILES),
                               ("numOutputCubes", pa.int64()), ("mergedNumCubes", pa.int64())])),
    ("numBatches", pa.int64()), ("totalConsideredFiles", pa.int64()), ("totalFilesSkipped", pa.int64()),
    ("preserveInsertionOrder", pa.bool_()),
])
_SPARK_TYPES = {pa.int64(): "bigint", pa.float64(): "double", pa.string(): "string", pa.bool_(): "boolean"}


def spark_type(arrow: pa.DataType) -> str:
    """Spark's name of a type of METRICS (`struct<a:bigint,...>`), as the result's column type."""
    if pa.types.is_struct(arrow):
        return "struct<" + ",".join(f"{f.name}:{spark_type(f.type)}" for f in arrow) + ">"
    return _SPARK_TYPES[arrow]


METRICS_TYPE = spark_type(METRICS)
_OPTIMIZED_KINDS = ("TABLE", "STREAMING_TABLE", "MATERIALIZED_VIEW")
_WITH_EVENT_LOG = ("STREAMING_TABLE", "MATERIALIZED_VIEW")


def optimize(ctx: StatementContext, stmt: Optimize) -> StatementResult:
    entry, location = _optimized(ctx, stmt)
    table = open_table(location)
    partitions = tuple(table.metadata().partition_columns)
    schema = pa.schema(table.schema().to_arrow())
    columns = [name for name in schema.names if name not in hidden_columns(schema)]
    filters = [_filter(ctx, term, partitions, columns) for term in stmt.where]
    zorder = _zorder(ctx, stmt, entry, partitions, columns)
    clustering = json.loads(entry.properties.get(CLUSTERING_PROPERTY, "[]"))
    parameters = {"predicate": json.dumps([stmt.where_sql] if stmt.where_sql else []),
                  "zOrderBy": json.dumps(zorder), "clusterBy": json.dumps(clustering)}
    outcome = optimize_table(location, filters, zorder, parameters)
    metrics = databricks_metrics(outcome.metrics, zorder)
    if entry.kind in _WITH_EVENT_LOG:
        ctx.store.record_event(
            entry.database, entry.name, "OPTIMIZE",
            f"OPTIMIZE by {ctx.user}: {metrics['numFilesRemoved']} files rewritten into {metrics['numFilesAdded']}",
            event_type="maintenance_progress",
            details={"maintenance_progress": {"operation": "OPTIMIZE", "state": "COMPLETED", "version": outcome.version,
                                              "predicate": stmt.where_sql, "zorder_by": zorder, "metrics": metrics}},
            origin={"user_name": ctx.user})
    path = location if is_object_uri(location) else f"file:{os.path.abspath(location)}"
    return _answer(path, metrics)


def _optimized(ctx: StatementContext, stmt: Optimize) -> tuple[TableEntry, str]:
    """The catalog object OPTIMIZE names and its folder: a table, streaming table or materialized view of this
    warehouse; a view, one of Spark's own tables or a missing name is an error at the name."""
    entry = ctx.store.get_table(*ctx.qualify(stmt.table))
    line, column = ctx.position_of(stmt.table)
    if entry is None:
        if spark_has(ctx, stmt.table):
            raise WarehouseError(
                f"`{stmt.table.name}` is not a Delta table. OPTIMIZE is only supported for Delta tables.",
                error_class="DELTA_TABLE_ONLY_OPERATION", sqlstate="0AKDD", line=line, column=column,
                hint="OPTIMIZE the warehouse's tables (CREATE TABLE ... USING delta); Spark's own tables have no "
                     "Delta log to rewrite")
        raise not_found(ctx, stmt.table)
    if entry.kind not in _OPTIMIZED_KINDS:
        raise NotATableError(
            f"`{entry.database}`.`{entry.name}` is a {kind_name(entry.kind)}; OPTIMIZE needs a table.",
            hint="OPTIMIZE the tables the view reads instead", line=line, column=column)
    try:
        return entry, str(owned_table_folder(ctx.warehouse, entry.location or ""))
    except PathOutsideWarehouseError as exc:
        exc.line, exc.column = line, column
        raise


def _zorder(ctx: StatementContext, stmt: Optimize, entry: TableEntry, partitions: tuple[str, ...],
            columns: list[str]) -> list[str]:
    """The columns to z-order by: ZORDER BY's, else the table's CLUSTER BY columns (held to the same rules; no
    position, the statement does not name them), else none (bin-packing)."""
    zorder = [_zorder_column(ctx, name, partitions, columns) for name in stmt.zorder]
    clustering = json.loads(entry.properties.get(CLUSTERING_PROPERTY, "[]"))
    if zorder and clustering:
        line, column = ctx.position_at(stmt.zorder[0].offset)
        raise WarehouseError(
            "OPTIMIZE command for Delta table with Liquid clustering cannot specify ZORDER BY.",
            error_class="DELTA_CLUSTERING_WITH_ZORDER_BY", sqlstate="42613", line=line, column=column,
            hint=f"leave ZORDER BY out: the table is clustered by {', '.join(clustering)} and OPTIMIZE uses them")
    return zorder or [_zorder_column(ctx, ColumnName(name), partitions, columns) for name in clustering]


def _answer(path: str, metrics: dict[str, Any]) -> StatementResult:
    """One row: the metrics as JSON text (what HiveServer2 clients read for a struct, as from Spark's to_json), or as
    an Arrow struct for a client that reads nested types natively (the Databricks connector: a dict, as from
    Databricks)."""
    return typed_rows_result([("path", "string"), ("metrics", METRICS_TYPE)], [(path, metrics)], {1: METRICS})


def databricks_metrics(raw: dict[str, Any], zorder: list[str]) -> dict[str, Any]:
    """delta-rs's metrics in Databricks' struct (the order of METRICS_TYPE, as Spark's to_json renders a struct).
    Z-order stats: every input file counts as an "other" file (no cube existed), every output file as a new cube."""
    added, removed = _sizes(raw.get("filesAdded")), _sizes(raw.get("filesRemoved"))
    z_stats = None
    if zorder:
        z_stats = {"strategyName": "all", "inputCubeFiles": {"num": 0, "size": 0},
                   "inputOtherFiles": {"num": removed["totalFiles"], "size": removed["totalSize"]},
                   "inputNumCubes": 0,
                   "mergedFiles": {"num": removed["totalFiles"], "size": removed["totalSize"]},
                   "numOutputCubes": added["totalFiles"], "mergedNumCubes": None}
    return {
        "numFilesAdded": int(raw.get("numFilesAdded", 0)), "numFilesRemoved": int(raw.get("numFilesRemoved", 0)),
        "filesAdded": added, "filesRemoved": removed,
        "partitionsOptimized": int(raw.get("partitionsOptimized", 0)), "zOrderStats": z_stats,
        "numBatches": int(raw.get("numBatches", 0)), "totalConsideredFiles": int(raw.get("totalConsideredFiles", 0)),
        "totalFilesSkipped": int(raw.get("totalFilesSkipped", 0)),
        "preserveInsertionOrder": bool(raw.get("preserveInsertionOrder", False)),
    }


def _sizes(found: Any) -> dict[str, Any]:
    found = found or {}
    files = int(found.get("totalFiles", 0))
    return {"min": int(found.get("min", 0)) if files else None, "max": int(found.get("max", 0)) if files else None,
            "avg": float(found.get("avg", 0.0)) if files else None, "totalFiles": files,
            "totalSize": int(found.get("totalSize", 0))}


def _resolved(name: str, columns: list[str]) -> str | None:
    """The table's spelling of `name` (Spark's names are case-insensitive)."""
    return next((c for c in columns if c.lower() == name.lower()), None)


def _filter(ctx: StatementContext, term: PartitionTerm, partitions: tuple[str, ...],
            columns: list[str]) -> PartitionFilter:
    line, column = ctx.position_at(term.column.offset)
    name = _resolved(term.column.name, list(partitions))
    if name is None:
        listed = ", ".join(partitions) or "none: the table is not partitioned"
        if _resolved(term.column.name, columns) is None:
            raise WarehouseError(
                f"A column with name `{term.column.name}` cannot be resolved in OPTIMIZE's WHERE.",
                error_class="UNRESOLVED_COLUMN.WITH_SUGGESTION", sqlstate="42703", line=line, column=column,
                hint=f"the WHERE of OPTIMIZE names partition columns only ({listed})")
        raise WarehouseError(
            f"Predicate references non-partition column '{term.column.name}'. Only the partition columns may be "
            f"referenced: [{', '.join(partitions)}]",
            error_class="DELTA_NON_PARTITION_COLUMN_REFERENCE", sqlstate="42P10", line=line, column=column,
            hint="leave the WHERE out to optimize the whole table, or restrict it by partition columns only")
    if term.op == "in":
        return (name, "in", list(term.values))
    return (name, term.op, term.values[0])


def _zorder_column(ctx: StatementContext, wanted: ColumnName, partitions: tuple[str, ...], columns: list[str]) -> str:
    line, column = ctx.position_at(wanted.offset)
    name = _resolved(wanted.name, columns)
    if name is None:
        raise WarehouseError(
            f"Z-Ordering column `{wanted.name}` does not exist in data schema.",
            error_class="DELTA_ZORDERING_COLUMN_DOES_NOT_EXIST", sqlstate="42703", line=line, column=column,
            hint=f"name columns of the table: {', '.join(c for c in columns if c not in partitions)}")
    if name in partitions:
        raise WarehouseError(
            f"`{name}` is a partition column. Z-Ordering can only be performed on data columns.",
            error_class="DELTA_ZORDERING_ON_PARTITION_COLUMN", sqlstate="42P10", line=line, column=column,
            hint="a partition's rows already share its value: z-order by the data columns queries filter on")
    return name
