"""`ALTER TABLE t CLUSTER BY (c, ...) | NONE | AUTO`: a table's liquid clustering columns, as Databricks sets them.

They are kept where CREATE TABLE ... CLUSTER BY keeps them, the table property `clusteringColumns` (a JSON list of
names) in the catalog: OPTIMIZE z-orders by them (executor/tables/optimize.py) and DESCRIBE DETAIL lists them. No row
and no file changes, so no Delta commit is made: the files are laid out by the next OPTIMIZE, as on Databricks.
SHOW TBLPROPERTIES shows them as Databricks does, one list per column path (`[["id"],["ts"]]`: `displayed`), which is
what dbt-databricks parses to decide whether a model's `liquid_clustered_by` changed.

`CLUSTER BY NONE` leaves the table clustered by no column (`[]`); `CLUSTER BY AUTO` sets `clusterByAuto` (Databricks
then picks columns itself; here the columns stay what they were, and OPTIMIZE uses them). As Delta: a partitioned
table cannot be clustered, at most 4 columns, each of a type data skipping keeps statistics for.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sluicegate.dialect.statements import CLUSTER_BY_AUTO_PROPERTY, CLUSTERING_PROPERTY, SetClustering
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import WarehouseError
from sluicegate.executor.lookups import require_column, require_table
from sluicegate.executor.output import no_result
from sluicegate.executor.tables.dml import table_schema

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

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


def set_clustering(ctx: StatementContext, stmt: SetClustering) -> StatementResult:
    entry = require_table(ctx, stmt.table, "ALTER TABLE CLUSTER BY")
    line, column = ctx.position_of(stmt.table)
    if entry.partition_by:
        raise WarehouseError(
            "ALTER TABLE CLUSTER BY cannot be applied to a partitioned table.",
            error_class="DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED", sqlstate="42000",
            line=line, column=column,
            hint=f"the table is partitioned by {', '.join(entry.partition_by)}; CREATE OR REPLACE TABLE ... CLUSTER "
                 "BY (...) AS SELECT * FROM it to cluster it instead")
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
