"""`ALTER TABLE t ALTER COLUMN c TYPE <type>` (and Spark's `CHANGE COLUMN c c <type>`): Delta's type widening, which
dbt's `on_schema_change: sync_all_columns` sends when a model's column grows (int to bigint).

As on Databricks, the table must have `delta.enableTypeWidening` = 'true' (set at CREATE or by ALTER TABLE SET
TBLPROPERTIES), and only the changes Delta calls widening are taken: tinyint < smallint < int < bigint, those integers
to double (not bigint) or to a decimal with room for their digits, float to double, a decimal to one with no fewer
digits on either side of the point, date to timestamp_ntz. Any other change, or any change on a table without the
property, is DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP (0AKDC); a column a CHECK constraint reads is refused as
Delta refuses it. The same type is no change and no commit.

delta-rs has no typeWidening table feature (Databricks changes only the metadata, older files keep their type): here
the table is rewritten with the column cast, in one commit that carries the new schema, as DROP COLUMNS does
(executor/tables/drop_columns.py); its operation in DESCRIBE HISTORY is CHANGE COLUMN. A stream reading the table
stops at that commit as it does at any rewrite. Widening to timestamp_ntz first adds Delta's timestampNtz table
feature when the table has not got it (one commit of its own before the rewrite: delta-rs adds a feature only so).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sluicegate.catalog.names import quote_identifier, quote_qualified
from sluicegate.dialect.constraints import checks_of
from sluicegate.dialect.statements import Query, SetColumnType
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.binding.binder import bind
from sluicegate.executor.context import StatementContext
from sluicegate.executor.lookups import require_column, require_table
from sluicegate.executor.output import no_result
from sluicegate.executor.tables.dml import table_schema
from sluicegate.executor.tables.drop_columns import refuse_if_checked, refused
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.tables import open_table

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

TYPE_WIDENING = "delta.enableTypeWidening"   # the table property Delta's type widening needs
_INTEGERS = ("tinyint", "smallint", "int", "bigint")
_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}   # an integer's decimal digits at most


def widens(old: DataType, new: DataType) -> bool:
    """Whether Delta's type widening takes `old` to `new`."""
    from pyspark.sql.types import DecimalType

    before, after = old.simpleString(), new.simpleString()
    if before in _INTEGERS:
        if after in _INTEGERS:
            return _INTEGERS.index(after) > _INTEGERS.index(before)
        if after == "double":
            return before != "bigint"
        return isinstance(new, DecimalType) and new.precision - new.scale >= _DIGITS[before]
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale and new != old
    return (before, after) in {("float", "double"), ("date", "timestamp_ntz")}


def set_column_type(ctx: StatementContext, stmt: SetColumnType) -> StatementResult:
    from deltalake import Field, Schema
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructField, StructType, _parse_datatype_string

    entry = require_table(ctx, stmt.table, "ALTER TABLE ALTER COLUMN")
    schema = table_schema(entry)
    old = require_column(ctx, entry, schema, stmt.column.name, stmt.column.offset)
    new_type = _parse_datatype_string(stmt.type)
    if new_type == old.dataType:
        return no_result()
    enabled = str((entry.properties or {}).get(TYPE_WIDENING, "")).lower() == "true"
    if not (enabled and widens(old.dataType, new_type)):
        why = "" if enabled else f" (type widening needs TBLPROPERTIES ('{TYPE_WIDENING}' = 'true'))"
        raise refused(ctx, stmt.column, f"ALTER TABLE ALTER COLUMN is not supported for changing column {old.name} "
                      f"from {old.dataType.simpleString().upper()} to {new_type.simpleString().upper()}{why}.",
                      "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP", "0AKDC",
                      "widen only: tinyint < smallint < int < bigint, int to double or a large enough decimal, float "
                      f"to double, decimal to a wider decimal, date to timestamp_ntz; set '{TYPE_WIDENING}' first"
                      if enabled else f"ALTER TABLE ... SET TBLPROPERTIES ('{TYPE_WIDENING}' = 'true') first")
    refuse_if_checked(ctx, stmt.column, old.name, checks_of(entry.properties))
    changed = StructField(old.name, new_type, old.nullable, old.metadata)
    fields = [changed if f.name == old.name else f for f in schema.fields]
    table = open_table(entry.location or "")
    if stmt.type == "timestamp_ntz":
        _allow_timestamp_ntz(table)
    delta_type = Schema.from_arrow(to_arrow_schema(StructType([changed]))).fields[0].type
    delta_schema = Schema([Field(f.name, delta_type, f.nullable, f.metadata) if f.name == old.name else f
                           for f in table.schema().fields])
    select = ", ".join(f"CAST({quote_identifier(f.name)} AS {stmt.type}) AS {quote_identifier(f.name)}"
                       if f.name == old.name else quote_identifier(f.name) for f in schema.fields)
    df, binder = bind(ctx, Query(f"SELECT {select} FROM {quote_qualified(entry.database, entry.name)}"))
    try:
        snapshot = binder.snapshots.get((entry.database, entry.name))
        commit.overwrite_with_schema(
            entry.location or "", snapshot.version if snapshot is not None else table.version(), df, delta_schema,
            "CHANGE COLUMN", {"column": old.name, "fromType": old.dataType.simpleString(),
                              "toType": new_type.simpleString()})
    finally:
        binder.close()
    ctx.store.update_table(entry.database, entry.name, schema_json=StructType(fields).json())
    return no_result()


def _allow_timestamp_ntz(table: Any) -> None:
    """The table's protocol with Delta's timestampNtz feature (a timestamp_ntz column needs it)."""
    from deltalake import TableFeatures

    protocol = table.protocol()
    if "timestampNtz" not in (protocol.writer_features or []):
        table.alter.add_feature(TableFeatures.TimestampWithoutTimezone, allow_protocol_versions_increase=True,
                                commit_properties=commit.commit_properties("UPGRADE PROTOCOL", {}))
