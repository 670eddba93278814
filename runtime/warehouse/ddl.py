"""CREATE TABLE [AS SELECT], CREATE VIEW, DROP, ALTER TABLE: the catalog row and the Delta folder change together.

Nothing is left half-done: a Delta table that could not be created leaves no catalog row, and a catalog row that
could not be written removes the Delta folder just made.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import TYPE_CHECKING

from catalog.errors import SchemaNotFoundError, TableAlreadyExistsError
from catalog.store import TableEntry
from dialect.statements import AddColumns, ColumnSpec, CreateTable, CreateView, DropTable, RenameTable, TableName
from runtime.delta.write import commit_files, write_files
from runtime.sql import StatementResult
from runtime.warehouse import commit
from runtime.warehouse.binder import bind
from runtime.warehouse.context import StatementContext
from runtime.warehouse.databases import ensure_spark_database
from runtime.warehouse.errors import NotAViewError, UnresolvedColumnError
from runtime.warehouse.output import no_result
from runtime.warehouse.tables import require, require_table, to_drop

if TYPE_CHECKING:
    from pyspark.sql.types import StructType


def spark_schema(columns: tuple[ColumnSpec, ...]) -> StructType:
    from pyspark.sql.types import StructField, StructType, _parse_datatype_string

    fields = []
    for column in columns:
        metadata = {"comment": column.comment} if column.comment else {}
        fields.append(StructField(column.name, _parse_datatype_string(column.type), column.nullable, metadata))
    return StructType(fields)


def _already_exists(ctx: StatementContext, table: TableName) -> TableAlreadyExistsError:
    database, name = ctx.qualify(table)
    line, column = ctx.position_of(table)
    return TableAlreadyExistsError(
        f"Cannot create table or view `{database}`.`{name}` because it already exists.",
        hint="choose another name, drop the existing object, or use IF NOT EXISTS / OR REPLACE",
        line=line, column=column,
    )


def _check_partitions(ctx: StatementContext, stmt: CreateTable, schema: StructType) -> None:
    names = {f.name.lower() for f in schema.fields}
    for column in stmt.partition_by:
        if column.lower() not in names:
            line, col = ctx.position_of(TableName(None, column))
            raise UnresolvedColumnError(f"The partition column `{column}` is not a column of the table.",
                                        hint=f"partition by one of: {', '.join(f.name for f in schema.fields)}",
                                        line=line, column=col)


def delta_configuration(properties: dict[str, str]) -> dict[str, str] | None:
    """The `delta.*` properties go into the Delta log (delta-rs refuses other keys); all are kept in the catalog."""
    return {k: v for k, v in properties.items() if k.startswith("delta.")} or None


def _create_delta(location: str, schema: StructType, stmt: CreateTable, replace: bool) -> None:
    from deltalake import DeltaTable
    from pyspark.sql.pandas.types import to_arrow_schema

    if not replace and os.path.exists(location):
        shutil.rmtree(location)  # an orphan of a crash: the catalog has no table here
    DeltaTable.create(
        location, to_arrow_schema(schema), mode="overwrite" if replace else "error",
        partition_by=list(stmt.partition_by) or None, name=stmt.table.name.lower(), description=stmt.comment,
        configuration=delta_configuration(stmt.properties),
        commit_properties=commit.commit_properties("CREATE OR REPLACE TABLE" if replace else "CREATE TABLE",
                                                   {"partitionBy": str(list(stmt.partition_by))}),
    )


def _register(ctx: StatementContext, entry: TableEntry, replace: bool, created_folder: bool) -> None:
    try:
        ctx.store.create_table(entry, replace=replace)
    except BaseException:
        if created_folder and entry.location:
            shutil.rmtree(entry.location, ignore_errors=True)
        raise


def create_table(ctx: StatementContext, stmt: CreateTable) -> StatementResult:
    from pyspark.sql.pandas.types import to_arrow_schema

    database, name = ctx.qualify(stmt.table)
    existing = ctx.store.get_table(database, name)
    if existing is not None and not stmt.replace:
        if stmt.if_not_exists:
            return no_result()
        raise _already_exists(ctx, stmt.table)
    if existing is not None and existing.kind != "TABLE":
        raise _already_exists(ctx, stmt.table)
    if ctx.store.get_database(database) is None:
        line, column = ctx.position_of(stmt.table)
        raise SchemaNotFoundError(f"The schema `{database}` cannot be found.", line=line, column=column,
                                  hint="CREATE DATABASE it first (SHOW DATABASES lists them)")
    ensure_spark_database(ctx, database)
    location = existing.location if existing is not None and existing.location else ctx.location(database, name)
    replace = existing is not None
    if stmt.query is None:
        schema = spark_schema(stmt.columns)
        _check_partitions(ctx, stmt, schema)
        _create_delta(location, schema, stmt, replace)
    else:
        df, binder = bind(ctx, stmt.query)
        try:
            if stmt.columns:
                df = df.toDF(*[c.name for c in stmt.columns])
            schema = df.schema
            _check_partitions(ctx, stmt, schema)
            if not replace and os.path.exists(location):
                shutil.rmtree(location)  # an orphan of a crash: the catalog has no table here
            os.makedirs(location, exist_ok=True)
            files = write_files(df, location, stmt.partition_by)
            commit_files(location, files, to_arrow_schema(schema), "overwrite" if replace else "append",
                         partition_by=stmt.partition_by, create=True, name=name, description=stmt.comment,
                         configuration=delta_configuration(stmt.properties))
        except BaseException:
            if not replace:
                shutil.rmtree(location, ignore_errors=True)
            raise
        finally:
            binder.close()
    entry = TableEntry(
        database=database, name=name, kind="TABLE", location=location, schema_json=schema.json(), definition=None,
        properties=dict(stmt.properties), partition_by=tuple(stmt.partition_by), comment=stmt.comment,
        owner=ctx.user,
    )
    _register(ctx, entry, replace, created_folder=not replace)
    return no_result()


_VIEW_COMMENT = re.compile(r"\bCOMMENT\s+'((?:[^'\\]|\\.)*)'", re.IGNORECASE)


def create_view(ctx: StatementContext, stmt: CreateView) -> StatementResult:
    database, name = ctx.qualify(stmt.table)
    existing = ctx.store.get_table(database, name)
    if existing is not None:
        if stmt.if_not_exists:
            return no_result()
        if not stmt.replace:
            raise _already_exists(ctx, stmt.table)
        if existing.kind != "VIEW":
            line, column = ctx.position_of(stmt.table)
            raise NotAViewError(f"`{database}`.`{name}` is a table; CREATE OR REPLACE VIEW cannot replace it.",
                                hint="drop the table first, or choose another name", line=line, column=column)
    df, binder = bind(ctx, stmt.query)  # analysed now: a view that cannot run is refused at creation
    binder.close()
    comment = stmt.comment
    if comment is None:
        found = _VIEW_COMMENT.search(ctx.sql[: stmt.query.offset])
        comment = found.group(1) if found else None
    entry = TableEntry(database=database, name=name, kind="VIEW", location=None, schema_json=df.schema.json(),
                       definition=stmt.query.sql.rstrip().rstrip(";"), properties={}, comment=comment,
                       owner=ctx.user)
    ctx.store.create_table(entry, replace=existing is not None)
    return no_result()


def drop_table(ctx: StatementContext, stmt: DropTable) -> StatementResult:
    database, name = ctx.qualify(stmt.table)
    entry = to_drop(ctx, stmt.table, stmt.if_exists)
    if entry is None:
        return no_result()
    if stmt.view and entry.kind != "VIEW":
        line, column = ctx.position_of(stmt.table)
        raise NotAViewError(f"`{database}`.`{name}` is a table; DROP VIEW cannot drop it.",
                            hint="use DROP TABLE", line=line, column=column)
    if not stmt.view and entry.kind == "VIEW":
        from runtime.warehouse.errors import NotATableError

        line, column = ctx.position_of(stmt.table)
        raise NotATableError(f"`{database}`.`{name}` is a view; DROP TABLE cannot drop it.",
                             hint="use DROP VIEW", line=line, column=column)
    if entry.kind == "STREAMING_TABLE":
        from runtime.warehouse.streaming import drop_stream_and_table

        drop_stream_and_table(ctx, database, name)
        return no_result()
    dropped = ctx.store.drop_table(database, name)
    if dropped.location:
        shutil.rmtree(dropped.location, ignore_errors=True)
    return no_result()


def add_columns(ctx: StatementContext, stmt: AddColumns) -> StatementResult:
    from deltalake import DeltaTable
    from deltalake.schema import Field, Schema
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    entry = require_table(ctx, stmt.table, "ALTER TABLE ADD COLUMNS")
    current = StructType.fromJson(__import__("json").loads(entry.schema_json or '{"fields": []}'))
    added = spark_schema(tuple(ColumnSpec(c.name, c.type, True, c.comment) for c in stmt.columns))
    taken = {f.name.lower() for f in current.fields}
    for field in added.fields:
        if field.name.lower() in taken:
            line, column = ctx.position_of(TableName(None, field.name))
            from runtime.warehouse.errors import WarehouseError

            raise WarehouseError(f"Cannot add column `{field.name}`: the table already has it.",
                                 error_class="FIELDS_ALREADY_EXISTS", sqlstate="42710",
                                 hint="choose another column name", line=line, column=column)
    delta_fields = list(Schema.from_arrow(to_arrow_schema(added)).fields)
    DeltaTable(entry.location).alter.add_columns(
        [Field(f.name, f.type, nullable=True) for f in delta_fields],
        commit_properties=commit.commit_properties("ADD COLUMNS", {"columns": ", ".join(added.fieldNames())}),
    )
    ctx.store.update_table(entry.database, entry.name, schema_json=StructType(current.fields + added.fields).json())
    return no_result()


def rename_table(ctx: StatementContext, stmt: RenameTable) -> StatementResult:
    entry = require(ctx, stmt.table)
    new_database, new_name = stmt.new_name.qualified(entry.database)
    if ctx.store.get_table(new_database, new_name) is not None:
        raise _already_exists(ctx, stmt.new_name)
    ctx.store.rename_table(entry.database, entry.name, new_database, new_name)
    if entry.location:
        target = ctx.location(new_database, new_name)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.rename(entry.location, target)
        except OSError:
            ctx.store.rename_table(new_database, new_name, entry.database, entry.name)
            raise
        ctx.store.update_table(new_database, new_name, location=target)
    return no_result()
