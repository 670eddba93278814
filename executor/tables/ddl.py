"""CREATE TABLE [AS SELECT], CREATE VIEW, DROP, ALTER TABLE: the catalog row and the Delta folder change together.

Nothing is left half-done: a Delta table that could not be created leaves no catalog row, and a catalog row that
could not be written removes the Delta folder just made.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from sluicegate.catalog.errors import LocationExistsError, SchemaNotFoundError, TableAlreadyExistsError
from sluicegate.catalog.grants import GrantStore, Securable
from sluicegate.catalog.names import NameKind, check_name, owned_table_folder
from sluicegate.catalog.store import TableEntry
from sluicegate.dialect.columns import ColumnSpec
from sluicegate.dialect.constraints import named_keys
from sluicegate.dialect.statements import (
    AddColumns,
    CreateTable,
    CreateView,
    DropTable,
    RenameTable,
    SetColumnComment,
    SetTableComment,
    SetTableProperties,
    TableName,
    UnsetTableProperties,
)
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.binding.binder import bind
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import (
    NotATableError,
    NotAViewError,
    StreamingTableOperationError,
    UnresolvedColumnError,
    UnsupportedStatementError,
    WarehouseError,
)
from sluicegate.executor.kinds import kind_of
from sluicegate.executor.lookups import require, require_column, require_table, to_drop
from sluicegate.executor.object_kinds import kind_name
from sluicegate.executor.output import no_result
from sluicegate.executor.spark_databases import ensure_spark_database
from sluicegate.executor.tables.constraints import constraint_properties, judge_all
from sluicegate.executor.tables.view_columns import named_columns
from sluicegate.storage import locations
from sluicegate.storage.constraints import CHAR_VARCHAR_KEY, enforce
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.intervals import check_interval_properties
from sluicegate.storage.delta.tables import create_table as create_delta_table
from sluicegate.storage.delta.tables import delta_configuration, open_table
from sluicegate.storage.delta.write import commit_files, write_files

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

_WRITER_VERSION = "delta.minWriterVersion"
_NAME_KINDS: dict[str, NameKind] = {"TABLE": "table", "VIEW": "view", "STREAMING_TABLE": "streaming table",
                                    "MATERIALIZED_VIEW": "materialized view"}


def spark_schema(columns: tuple[ColumnSpec, ...]) -> StructType:
    """The columns as Spark with Delta stores them: a VARCHAR(n) or CHAR(n) column is a string whose metadata keeps
    `varchar(n)` or `char(n)` (the Delta log has neither type; every write checks the length and pads a CHAR:
    storage/constraints.py)."""
    from pyspark.sql.types import CharType, StringType, StructField, StructType, VarcharType, _parse_datatype_string

    fields = []
    for column in columns:
        metadata: dict[str, str] = {"comment": column.comment} if column.comment else {}
        data_type = _parse_datatype_string(column.type)
        if isinstance(data_type, VarcharType | CharType):
            metadata[CHAR_VARCHAR_KEY] = data_type.simpleString()
            data_type = StringType()
        fields.append(StructField(column.name, data_type, column.nullable, metadata))
    return StructType(fields)


def _already_exists(ctx: StatementContext, table: TableName,
                    existing_kind: str | None = None) -> TableAlreadyExistsError:
    """The name is taken; `existing_kind`: by an object OR REPLACE cannot replace (a view, a streaming table, a
    materialized view), which the hint names with the statement that drops it."""
    database, name = ctx.qualify(table)
    line, column = ctx.position_of(table)
    if existing_kind is not None:
        what = _NAME_KINDS.get(existing_kind, existing_kind.lower())
        return TableAlreadyExistsError(
            f"Cannot create table `{database}`.`{name}` because a {what} of that name already exists; OR REPLACE "
            f"replaces a table only.", hint=f"DROP {what.upper()} `{database}`.`{name}` first, or choose another name",
            line=line, column=column)
    return TableAlreadyExistsError(
        f"Cannot create table or view `{database}`.`{name}` because it already exists.",
        hint="choose another name, drop the existing object, or use IF NOT EXISTS / OR REPLACE",
        line=line, column=column,
    )


def _check_partitions(ctx: StatementContext, stmt: CreateTable, schema: StructType) -> None:
    names = {f.name.lower() for f in schema.fields}
    for at, column in enumerate(stmt.partition_by):
        if column.lower() not in names:
            line, col = ctx.position_at(stmt.partition_offsets[at] if at < len(stmt.partition_offsets) else None)
            raise UnresolvedColumnError(f"The partition column `{column}` is not a column of the table.",
                                        hint=f"partition by one of: {', '.join(f.name for f in schema.fields)}",
                                        line=line, column=col)


def _properties(stmt: CreateTable) -> dict[str, str]:
    """The table's properties: its TBLPROPERTIES and its CHECK constraints (`delta.constraints.<name>`)."""
    return {**stmt.properties, **constraint_properties(stmt.checks)}


def _configuration(stmt: CreateTable, checks: bool = True) -> dict[str, str] | None:
    """The Delta log's configuration of the new table; with its CHECK constraints (`checks`), writer protocol 3, as
    Delta has it."""
    if not checks or not stmt.checks:
        return delta_configuration(dict(stmt.properties))
    return delta_configuration({**_properties(stmt), _WRITER_VERSION: "3"})


def _create_delta(location: str, schema: StructType, stmt: CreateTable, replace: bool) -> None:
    """An empty Delta table at `location`: a folder this statement just created, or the table it replaces."""
    from pyspark.sql.pandas.types import to_arrow_schema

    create_delta_table(
        location, to_arrow_schema(schema), mode="overwrite" if replace else "error",
        partition_by=list(stmt.partition_by) or None, name=stmt.table.name.lower(), description=stmt.comment,
        configuration=_configuration(stmt), raise_if_key_not_exists=False,  # delta-rs knows no delta.constraints.*
        commit_properties=commit.commit_properties("CREATE OR REPLACE TABLE" if replace else "CREATE TABLE",
                                                   {"partitionBy": str(list(stmt.partition_by))}),
    )


def _created_nullable(schema: StructType, columns: tuple[ColumnSpec, ...]) -> StructType:
    """A CTAS table's columns are nullable, as Delta creates them: Spark's analysis calls a literal's column non-null
    (`SELECT 'a' AS msg`), which is no constraint, and a later `INSERT ... NULL AS msg` must land. A NOT NULL written
    in the column list stays."""
    from pyspark.sql.types import StructField, StructType

    declared = {column.name.lower(): column.nullable for column in columns}
    return StructType([StructField(f.name, f.dataType, declared.get(f.name.lower(), True), f.metadata)
                       for f in schema.fields])


def _write_table(ctx: StatementContext, stmt: CreateTable, location: str, name: str, replace: bool) -> StructType:
    """The Delta table of CREATE TABLE [AS SELECT] written at `location`; returns its schema."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if stmt.query is None:
        schema = spark_schema(stmt.columns)
        _check_partitions(ctx, stmt, schema)
        if stmt.checks:
            judge_all(ctx.spark.createDataFrame([], schema), stmt.checks)
        _create_delta(location, schema, stmt, replace)
        return schema
    df, binder = bind(ctx, stmt.query)
    try:
        if stmt.columns:
            df = df.toDF(*[c.name for c in stmt.columns])
        schema = _created_nullable(df.schema, stmt.columns)
        _check_partitions(ctx, stmt, schema)
        judge_all(df, stmt.checks)
        files = write_files(enforce(df, schema, name, stmt.checks) if stmt.checks else df, location, stmt.partition_by)
        commit_files(location, files, to_arrow_schema(schema), "overwrite" if replace else "append",
                     partition_by=stmt.partition_by, create=True, name=name, description=stmt.comment,
                     configuration=_configuration(stmt, checks=False))
        if stmt.checks:  # delta-rs creates a table with data only from known properties: the constraints follow
            open_table(location).alter.set_table_properties(
                _configuration(stmt), raise_if_not_exists=False,
                commit_properties=commit.commit_properties("ADD CONSTRAINT", constraint_properties(stmt.checks)))
        return schema
    finally:
        binder.close()


def refuse_location(ctx: StatementContext, table: TableName, location: str | None) -> None:
    """A warehouse table's folder comes from its name: LOCATION (or OPTIONS (path ...)) is refused, at the name."""
    if location is not None:
        line, column = ctx.position_of(table)
        raise UnsupportedStatementError(
            "a warehouse (Delta) table cannot name its folder: the warehouse places it by the table's name",
            hint="leave out LOCATION / OPTIONS (path ...); to read files, use read_files(...) or a temporary view "
                 "USING csv|json|parquet OPTIONS (path '...') under the allowed folders", line=line, column=column)


def create_table(ctx: StatementContext, stmt: CreateTable) -> StatementResult:
    refuse_location(ctx, stmt.table, stmt.location)
    check_interval_properties(stmt.properties)  # before a CTAS writes its files

    def written(database: str, name: str, location: str, replace: bool) -> TableEntry:
        schema = _write_table(ctx, stmt, location, name, replace=replace)
        return TableEntry(
            database=database, name=name, kind="TABLE", location=location, schema_json=schema.json(),
            definition=None, properties=_properties(stmt), partition_by=tuple(stmt.partition_by),
            comment=stmt.comment, owner=ctx.user, keys=named_keys(stmt.constraints, name))

    return place_table(ctx, stmt.table, stmt.replace, stmt.if_not_exists, written)


def place_table(ctx: StatementContext, table: TableName, replace: bool, if_not_exists: bool,
                write: Callable[[str, str, str, bool], TableEntry]) -> StatementResult:
    """A new Delta table under the name `table` (CREATE TABLE, CLONE): `write(database, name, folder, replace)`
    writes it into its folder and returns its catalog row, which is written last. OR REPLACE (`replace`) of an
    existing table writes a new version of it in the folder the catalog gave it; a new table gets a new folder,
    removed again if anything fails before its row is written."""
    database, name = ctx.checked(table)
    existing = ctx.store.get_table(database, name)
    if existing is not None and not replace:
        if if_not_exists:
            return no_result()
        raise _already_exists(ctx, table)
    if existing is not None and existing.kind != "TABLE":
        raise _already_exists(ctx, table, existing.kind)
    if ctx.store.get_database(database) is None:
        line, column = ctx.position_of(table)
        raise SchemaNotFoundError(f"The schema `{database}` cannot be found.", line=line, column=column,
                                  hint="CREATE DATABASE it first (SHOW DATABASES lists them)")
    ensure_spark_database(ctx, database)
    if existing is not None:  # OR REPLACE: a new version of the same table, in the folder the catalog gave it
        location = str(locations.existing_table_folder(ctx.warehouse, existing.location))
        ctx.store.create_table(write(database, name, location, True), replace=True)
        return no_result()
    try:
        with locations.new_table_folder(ctx.warehouse, database, name) as folder:
            # the catalog row is written last: anything failing before it removes the folder made here, and only it
            ctx.store.create_table(write(database, name, str(folder), False))
    except LocationExistsError as exc:
        if ctx.store.get_table(database, name) is None:
            exc.line, exc.column = ctx.position_of(table)
            raise
        if if_not_exists:  # a concurrent CREATE of the same name won
            return no_result()
        raise _already_exists(ctx, table) from None
    return no_result()


def create_view(ctx: StatementContext, stmt: CreateView) -> StatementResult:
    database, name = ctx.checked(stmt.table, "view")
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
    definition = stmt.query.sql.rstrip().rstrip(";")
    schema = df.schema
    if stmt.columns:
        schema, definition = named_columns(ctx, stmt, schema, definition)
    entry = TableEntry(database=database, name=name, kind="VIEW", location=None, schema_json=schema.json(),
                       definition=definition, properties=dict(stmt.properties), comment=stmt.comment, owner=ctx.user)
    ctx.store.create_table(entry, replace=existing is not None)
    if existing is not None:
        # As in Databricks and Spark, the replaced view is a new object: its grants go (a table's stay, with its
        # history); dbt-spark relies on both when it decides what to grant again.
        GrantStore(ctx.store).clear(Securable.table(database, name))
    return no_result()


def drop_table(ctx: StatementContext, stmt: DropTable) -> StatementResult:
    """DROP TABLE and DROP VIEW: which kinds each may name is the statement's rule; what dropping one means (a
    stream to stop, a refresh to wait for) is its kind's (executor/kinds.py)."""
    database, name = ctx.qualify(stmt.table)
    entry = to_drop(ctx, stmt.table, stmt.if_exists)
    if entry is None:
        return no_result()
    if entry.kind == "MATERIALIZED_VIEW":
        line, column = ctx.position_of(stmt.table)
        raise NotATableError(f"`{database}`.`{name}` is a materialized view; DROP {'VIEW' if stmt.view else 'TABLE'} "
                             "cannot drop it.", error_class="WRONG_COMMAND_FOR_OBJECT_TYPE", line=line, column=column,
                             hint="use DROP MATERIALIZED VIEW")
    if stmt.view and entry.kind != "VIEW":
        line, column = ctx.position_of(stmt.table)
        raise NotAViewError(f"`{database}`.`{name}` is a table; DROP VIEW cannot drop it.",
                            hint="use DROP TABLE", line=line, column=column)
    if not stmt.view and entry.kind == "VIEW":
        line, column = ctx.position_of(stmt.table)
        raise NotATableError(f"`{database}`.`{name}` is a view; DROP TABLE cannot drop it.",
                             hint="use DROP VIEW", line=line, column=column)
    kind_of(entry).drop(ctx, entry)
    return no_result()


def add_columns(ctx: StatementContext, stmt: AddColumns) -> StatementResult:
    from deltalake.schema import Field, Schema
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    entry = require_table(ctx, stmt.table, "ALTER TABLE ADD COLUMNS")
    current = StructType.fromJson(json.loads(entry.schema_json or '{"fields": []}'))
    added = spark_schema(tuple(ColumnSpec(c.name, c.type, True, c.comment) for c in stmt.columns))
    taken = {f.name.lower() for f in current.fields}
    for at, field in enumerate(added.fields):   # in the order of stmt.columns
        if field.name.lower() in taken:
            line, column = ctx.position_at(stmt.column_offsets[at] if at < len(stmt.column_offsets) else None)
            raise WarehouseError(f"Cannot add column `{field.name}`: the table already has it.",
                                 error_class="FIELDS_ALREADY_EXISTS", sqlstate="42710",
                                 hint="choose another column name", line=line, column=column)
    delta_fields = list(Schema.from_arrow(to_arrow_schema(added)).fields)
    open_table(entry.location).alter.add_columns(
        [Field(f.name, f.type, nullable=True) for f in delta_fields],
        commit_properties=commit.commit_properties("ADD COLUMNS", {"columns": ", ".join(added.fieldNames())}),
    )
    ctx.store.update_table(entry.database, entry.name, schema_json=StructType(current.fields + added.fields).json())
    return no_result()


def _commented(ctx: StatementContext, table: TableName) -> TableEntry:
    """A Delta table or streaming table whose metadata the statement changes (a view's text is its definition)."""
    entry = require(ctx, table)
    if entry.kind == "VIEW" or not entry.location:
        line, column = ctx.position_of(table)
        raise NotATableError(f"`{entry.database}`.`{entry.name}` is a view; ALTER TABLE needs a table.",
                             hint="recreate the view with CREATE OR REPLACE VIEW", line=line, column=column)
    owned_table_folder(ctx.warehouse, entry.location)
    return entry


def _view(ctx: StatementContext, table: TableName) -> TableEntry:
    """The view an ALTER VIEW changes: a table is refused, as Databricks refuses it (EXPECT_VIEW_NOT_TABLE)."""
    entry = require(ctx, table)
    if entry.kind != "VIEW":
        line, column = ctx.position_of(table)
        what = _NAME_KINDS.get(entry.kind, "table")
        raise NotAViewError(f"`{entry.database}`.`{entry.name}` is a {what}; ALTER VIEW needs a view.",
                            error_class="EXPECT_VIEW_NOT_TABLE.USE_ALTER_TABLE", hint="use ALTER TABLE",
                            line=line, column=column)
    return entry


def set_column_comment(ctx: StatementContext, stmt: SetColumnComment) -> StatementResult:
    """The comment goes into the Delta schema's field metadata (where Spark with Delta keeps it) and the catalog."""
    from pyspark.sql.types import StructField, StructType

    entry = _commented(ctx, stmt.table)
    current = StructType.fromJson(json.loads(entry.schema_json or '{"fields": []}'))
    found = require_column(ctx, entry, current, stmt.column, stmt.column_offset)
    open_table(entry.location).alter.set_column_metadata(
        found.name, {"comment": stmt.comment},
        commit_properties=commit.commit_properties("CHANGE COLUMN", {"column": found.name}))
    fields = [StructField(f.name, f.dataType, f.nullable, {**(f.metadata or {}), "comment": stmt.comment})
              if f is found else f for f in current.fields]
    ctx.store.update_table(entry.database, entry.name, schema_json=StructType(fields).json())
    return no_result()


# the catalog kind each `COMMENT ON <kind>` names (TABLE: any object with a Delta table, as before the kinds were
# read), and the error class of an object of another kind
_COMMENTED_AS = {"VIEW": ("VIEW", NotAViewError.error_class),
                 "MATERIALIZED VIEW": ("MATERIALIZED_VIEW", "EXPECT_MATERIALIZED_VIEW"),
                 "STREAMING TABLE": ("STREAMING_TABLE", "EXPECT_STREAMING_TABLE")}


def set_table_comment(ctx: StatementContext, stmt: SetTableComment) -> StatementResult:
    """The comment in the catalog and, for an object with a Delta table, the table's description. `COMMENT ON VIEW |
    MATERIALIZED VIEW | STREAMING TABLE` (dbt-databricks' persist_docs) must name an object of that kind."""
    if stmt.kind not in _COMMENTED_AS:
        entry = _commented(ctx, stmt.table)
    else:
        entry = require(ctx, stmt.table)
        wanted, error_class = _COMMENTED_AS[stmt.kind]
        if entry.kind != wanted:
            line, column = ctx.position_of(stmt.table)
            raise NotATableError(f"`{entry.database}`.`{entry.name}` is a {kind_name(entry.kind)}, not a "
                                 f"{stmt.kind.lower()}.", error_class=error_class, line=line, column=column,
                                 hint=f"use COMMENT ON {kind_name(entry.kind).upper()}")
        if entry.kind == "VIEW":   # a view has no Delta table: its comment lives in the catalog
            ctx.store.update_table(entry.database, entry.name, comment=stmt.comment)
            return no_result()
        owned_table_folder(ctx.warehouse, entry.location or "")
    open_table(entry.location).alter.set_table_description(
        stmt.comment or "", commit_properties=commit.commit_properties("SET TBLPROPERTIES", {"comment": "set"}))
    ctx.store.update_table(entry.database, entry.name, comment=stmt.comment)
    return no_result()


def set_table_properties(ctx: StatementContext, stmt: SetTableProperties) -> StatementResult:
    """Properties go into the catalog and the Delta table's configuration; `comment` is the table's comment. A
    view's (ALTER VIEW) are the catalog's only."""
    entry = _view(ctx, stmt.table) if stmt.view else _commented(ctx, stmt.table)
    changes = {key: value for key, value in stmt.properties if key.lower() != "comment"}
    comment = next((value for key, value in stmt.properties if key.lower() == "comment"), None)
    if not stmt.view:
        table = open_table(entry.location)
        delta_changes = delta_configuration(changes)
        if delta_changes:
            table.alter.set_table_properties(
                delta_changes, raise_if_not_exists=False,
                commit_properties=commit.commit_properties("SET TBLPROPERTIES", {"properties": json.dumps(changes)}))
        if comment is not None:
            table.alter.set_table_description(comment)
    ctx.store.update_table(entry.database, entry.name, properties={**(entry.properties or {}), **changes},
                           **({"comment": comment} if comment is not None else {}))
    return no_result()


def unset_table_properties(ctx: StatementContext, stmt: UnsetTableProperties) -> StatementResult:
    """Removed from the catalog (what SHOW TBLPROPERTIES, DESCRIBE and the gateway read); delta-rs cannot remove a
    key from the Delta log's configuration, which keeps its last value for other engines."""
    entry = _view(ctx, stmt.table) if stmt.view else _commented(ctx, stmt.table)
    properties = dict(entry.properties or {})
    missing = [key for key in stmt.keys if key not in properties and key.lower() != "comment"]
    if missing and not stmt.if_exists:
        line, column = ctx.position_of(stmt.table)
        raise WarehouseError(
            f"Attempted to unset non-existent properties [{', '.join(missing)}] in table "
            f"`{entry.database}`.`{entry.name}`.", error_class="UNSET_NONEXISTENT_PROPERTIES", sqlstate="42K0J",
            line=line, column=column, hint="write UNSET TBLPROPERTIES IF EXISTS (...)")
    for key in stmt.keys:
        properties.pop(key, None)
    comment = {"comment": None} if any(key.lower() == "comment" for key in stmt.keys) else {}
    ctx.store.update_table(entry.database, entry.name, properties=properties, **comment)
    return no_result()


def rename_table(ctx: StatementContext, stmt: RenameTable) -> StatementResult:
    """The folder moves first, to a new table folder that must not exist; the catalog row (name and location in
    one transaction) is written last, and the folder moves back if it cannot be."""
    entry = require(ctx, stmt.table)
    if stmt.view and entry.kind != "VIEW":
        line, column = ctx.position_of(stmt.table)
        what = _NAME_KINDS.get(entry.kind, "table")
        raise NotAViewError(f"`{entry.database}`.`{entry.name}` is a {what}; ALTER VIEW cannot rename it.",
                            error_class="EXPECT_VIEW_NOT_TABLE.USE_ALTER_TABLE", line=line, column=column,
                            hint="use ALTER TABLE ... RENAME TO")
    if entry.kind == "STREAMING_TABLE":
        line, column = ctx.position_of(stmt.table)
        raise StreamingTableOperationError(
            f"`{entry.database}`.`{entry.name}` is a streaming table: its stream, checkpoint and Delta log belong "
            "to its name, so it cannot be renamed.", line=line, column=column,
            hint="create a streaming table of the new name with the same query (it reads its sources again), then "
                 "DROP TABLE the old one; or CREATE VIEW new_name AS SELECT * FROM the old one")
    line, column = ctx.position_of(stmt.new_name)
    new_database, new_name = stmt.new_name.qualified(entry.database)
    check_name(new_database, "database", line=line, column=column)
    check_name(new_name, _NAME_KINDS.get(entry.kind, "table"), line=line, column=column)
    if ctx.store.get_table(new_database, new_name) is not None:
        raise _already_exists(ctx, stmt.new_name)
    if ctx.store.get_database(new_database) is None:
        raise SchemaNotFoundError(f"The schema `{new_database}` cannot be found.", line=line, column=column,
                                  hint="CREATE DATABASE it first (SHOW DATABASES lists them)")
    if not entry.location:
        ctx.store.rename_table(entry.database, entry.name, new_database, new_name)
        return no_result()
    target = locations.move_table_folder(ctx.warehouse, entry.location, new_database, new_name)
    try:
        ctx.store.rename_table(entry.database, entry.name, new_database, new_name, location=str(target))
    except BaseException:
        locations.restore_table_folder(target, entry.location)
        raise
    return no_result()
