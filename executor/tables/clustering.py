"""`ALTER {TABLE | MATERIALIZED VIEW | STREAMING TABLE} t CLUSTER BY (c, ...) | NONE | AUTO`: a Delta table's liquid
clustering columns, as Databricks sets them. Each form alters only its own kind (Databricks: a materialized view's or
streaming table's clustering cannot be changed with ALTER TABLE), with the same checks.

They are kept where CREATE TABLE ... CLUSTER BY keeps them, the table property `clusteringColumns` (a JSON list of
names) in the catalog: OPTIMIZE z-orders by them (executor/tables/optimize.py) and DESCRIBE DETAIL lists them. No row
and no file changes, so no Delta commit is made: the files are laid out by the next OPTIMIZE, as on Databricks.
SHOW TBLPROPERTIES shows them as Databricks does, one list per column path (`[["id"],["ts"]]`: `displayed`), which is
what dbt-databricks parses to decide whether a model's `liquid_clustered_by` changed.

`CLUSTER BY NONE` leaves the table clustered by no column (`[]`); `CLUSTER BY AUTO` sets `clusterByAuto` (Databricks
then picks columns itself; here the columns stay what they were, and OPTIMIZE uses them). As Delta: a partitioned
table cannot be clustered, at most 4 columns, each of a type data skipping keeps statistics for.

Only the catalog row's properties change, in one update: a refresh or a stream's batch never writes them, so no lock
is taken; a CREATE OR REPLACE (or CREATE OR REFRESH) racing the ALTER writes its own statement's clustering, as if it
came after.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sluicegate.dialect.statements import CLUSTER_BY_AUTO_PROPERTY, CLUSTERING_PROPERTY, SetClustering
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import NotATableError, WarehouseError
from sluicegate.executor.lookups import require, require_column, require_table
from sluicegate.executor.object_kinds import kind_name
from sluicegate.executor.output import no_result
from sluicegate.executor.tables.dml import table_schema

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

    from sluicegate.catalog.store import TableEntry

MAX_COLUMNS = 4   # Delta's limit on clustering columns
# the types Delta keeps min/max statistics for (its SkippingEligibleDataType), by Spark's type name
_WITH_STATISTICS = ("byte", "short", "integer", "long", "float", "double", "date", "timestamp", "timestamp_ntz",
                    "string", "decimal")


def clustering_columns(properties: dict[str, str] | None) -> list[str]:
    """The table's clustering columns from its properties (none when it has none)."""
    return list(json.loads((properties or {}).get(CLUSTERING_PROPERTY) or "[]"))


def displayed(properties: dict[str, str]) -> dict[str, str]:
    """`properties` as SHOW TBLPROPERTIES and DESCRIBE show them: `clusteringColumns` in Databricks' form, one JSON
    list per column path."""
    if CLUSTERING_PROPERTY not in properties:
        return properties
    paths = [[name] for name in clustering_columns(properties)]
    return {**properties, CLUSTERING_PROPERTY: json.dumps(paths, separators=(",", ":"))}


def _has_statistics(data_type: DataType) -> bool:
    return data_type.typeName() in _WITH_STATISTICS


def _altered(ctx: StatementContext, stmt: SetClustering) -> TableEntry:
    """The object the statement alters: a table of this warehouse for ALTER TABLE, an object of the kind written for
    ALTER MATERIALIZED VIEW or ALTER STREAMING TABLE; another kind is an error at the name that names the form
    that alters it (Databricks' EXPECT_MATERIALIZED_VIEW, EXPECT_STREAMING_TABLE)."""
    entry = require(ctx, stmt.table)
    wanted = stmt.kind.replace(" ", "_")
    if wanted == "TABLE" and entry.kind in ("TABLE", "VIEW"):
        return require_table(ctx, stmt.table, "ALTER TABLE CLUSTER BY")  # a view: its error, as every ALTER TABLE's
    if entry.kind == wanted:
        return entry
    line, column = ctx.position_of(stmt.table)
    error_class = {"MATERIALIZED_VIEW": "EXPECT_MATERIALIZED_VIEW", "STREAMING_TABLE": "EXPECT_STREAMING_TABLE"}
    raise NotATableError(
        f"`{entry.database}`.`{entry.name}` is a {kind_name(entry.kind)}, not a {stmt.kind.lower()}.",
        error_class=error_class.get(wanted, NotATableError.error_class), line=line, column=column,
        hint=f"write ALTER {kind_name(entry.kind).upper()} ... CLUSTER BY for it" if entry.kind != "VIEW"
        else "a view has no data to cluster")


def set_clustering(ctx: StatementContext, stmt: SetClustering) -> StatementResult:
    entry = _altered(ctx, stmt)
    line, column = ctx.position_of(stmt.table)
    if entry.partition_by:
        raise WarehouseError(
            f"ALTER {stmt.kind} CLUSTER BY cannot be applied to a partitioned table.",
            error_class="DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED", sqlstate="42000",
            line=line, column=column,
            hint=f"it is partitioned by {', '.join(entry.partition_by)}; create it again with CLUSTER BY (...) "
                 "instead of PARTITIONED BY to cluster it")
    if len(stmt.columns) > MAX_COLUMNS:
        raise WarehouseError(
            f"CLUSTER BY supports up to {MAX_COLUMNS} clustering columns, but the table has {len(stmt.columns)} "
            "clustering columns. Please remove the extra clustering columns.",
            error_class="DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS", sqlstate="54000", line=line, column=column,
            hint=f"cluster by at most {MAX_COLUMNS} columns, those queries filter on most")
    schema = table_schema(entry)
    fields = [require_column(ctx, entry, schema, named.name, named.offset) for named in stmt.columns]
    unsupported = [f for f in fields if not _has_statistics(f.dataType)]
    if unsupported:
        line, column = ctx.position_at(stmt.columns[fields.index(unsupported[0])].offset)
        raise WarehouseError(
            "CLUSTER BY is not supported because the following column(s): "
            f"{', '.join(f'{f.name} : {f.dataType.simpleString()}' for f in unsupported)} don't support data "
            "skipping.", error_class="DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED", sqlstate="0A000",
            line=line, column=column,
            hint="cluster by numbers, strings, dates, timestamps or decimals: Delta keeps min/max statistics for them")
    properties = dict(entry.properties or {})
    if stmt.auto:
        properties[CLUSTER_BY_AUTO_PROPERTY] = "true"
        properties.setdefault(CLUSTERING_PROPERTY, "[]")
    else:
        properties.pop(CLUSTER_BY_AUTO_PROPERTY, None)
        properties[CLUSTERING_PROPERTY] = json.dumps(list(dict.fromkeys(f.name for f in fields)))
    ctx.store.update_table(entry.database, entry.name, properties=properties)
    return no_result()
