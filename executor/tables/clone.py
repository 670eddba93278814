"""CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t {SHALLOW | DEEP} CLONE s [VERSION AS OF n | TIMESTAMP AS OF 'ts']:
a new table with the source's schema, partitioning, comment, properties and data as of that version, owned by its
creator (storage/delta/clone.py places the files and commits). A shallow clone is remembered in the catalog
(`clone_of`): information_schema says MANAGED_SHALLOW_CLONE, which dbt-databricks reads to drop one before it
rebuilds the table."""

from __future__ import annotations

import json

from sluicegate.catalog.names import quote_qualified
from sluicegate.catalog.store import TableEntry
from sluicegate.catalog.uris import as_location
from sluicegate.dialect.statements import CloneTable
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.binding.binder import parse_timestamp
from sluicegate.executor.context import StatementContext
from sluicegate.executor.lookups import require_table
from sluicegate.executor.tables.ddl import place_table, refuse_location
from sluicegate.storage import locations
from sluicegate.storage.delta.clone import Cloned
from sluicegate.storage.delta.clone import clone_table as clone_files
from sluicegate.storage.delta.intervals import check_interval_properties
from sluicegate.storage.delta.tables import delta_configuration


def clone_table(ctx: StatementContext, stmt: CloneTable) -> StatementResult:
    refuse_location(ctx, stmt.table, stmt.location)
    check_interval_properties(stmt.properties)
    source = require_table(ctx, stmt.source, "CLONE")  # a Delta table in a table folder of this warehouse
    source_folder = locations.existing_table_folder(ctx.warehouse, source.location)
    timestamp = parse_timestamp(stmt.timestamp) if stmt.timestamp is not None else None
    properties = {**source.properties, **stmt.properties}

    def cloned(database: str, name: str, location: str, replace: bool) -> TableEntry:
        result = clone_files(source_folder, as_location(location), shallow=stmt.shallow, replace=replace,
                             source_name=f"{source.database}.{source.name}", version=stmt.version,
                             timestamp=timestamp, configuration=delta_configuration(properties), name=name,
                             description=source.comment)
        return TableEntry(
            database=database, name=name, kind="TABLE", location=location,
            schema_json=_schema_json(source, result), definition=None, properties=properties,
            partition_by=tuple(source.partition_by), comment=source.comment, owner=ctx.user,
            clone_of=quote_qualified(source.database, source.name) if stmt.shallow else None)

    return place_table(ctx, stmt.table, stmt.replace, stmt.if_not_exists, cloned)


def _schema_json(source: TableEntry, result: Cloned) -> str:
    """The clone's columns as the catalog keeps them: the source's (comments, CHAR/VARCHAR lengths) for each column
    the cloned version has, in that version's order; a column only an older version had, from its Delta type."""
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import StructField, StructType

    current = {f.name.lower(): f for f in StructType.fromJson(json.loads(source.schema_json or '{"fields": []}'))}
    fields: list[StructField] = []
    for field in from_arrow_schema(result.schema).fields:
        known = current.get(field.name.lower())
        fields.append(known if known is not None and known.dataType == field.dataType else field)
    return StructType(fields).json()
