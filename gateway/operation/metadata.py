"""The JDBC metadata RPCs (GetSchemas, GetTables, GetColumns ...) as ordinary operations over the catalog, with the
result columns HiveServer2 defines for each, so that DatabaseMetaData and BI schema browsers read them as usual.

They are answered from the catalog store and from Spark's session catalog read in place (executor/listings/
catalog_view.py), never with a Spark job: a schema browser's listing does not wait behind other clients' queries."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sluicegate.dialect import catalogs
from sluicegate.engine.results import ResultColumn, wire_arrow_type
from sluicegate.engine.sql import ListBatchSource, StatementResult
from sluicegate.executor.listings import catalog_view
from sluicegate.gateway import types as hive_types
from sluicegate.gateway.operation.base import Operation, OperationType

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore
    from sluicegate.gateway.session import Session
    from sluicegate.policy import Policy

TABLE_TYPES = ("TABLE", "VIEW")


def table_result(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> StatementResult:
    specs = [ResultColumn(name, type_name) for name, type_name in columns]
    arrays = [
        pa.array([row[i] for row in rows], type=wire_arrow_type(type_name))
        for i, (_, type_name) in enumerate(columns)
    ]
    batch = pa.RecordBatch.from_arrays(arrays, names=[f"_c{i}" for i in range(len(columns))])
    return StatementResult(specs, lambda: ListBatchSource([batch]))


def pattern_matcher(pattern: str | None) -> re.Pattern[str]:
    """A JDBC search pattern (`%` any run, `_` one character, `\\` escapes) as a case-insensitive regex."""
    if pattern is None or pattern in ("", "*", "%"):
        return re.compile(".*", re.DOTALL)
    out = []
    escaped = False
    for ch in pattern:
        if escaped:
            out.append(re.escape(ch))
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        elif ch == "*":  # Hive also accepts * as a wildcard in schema patterns
            out.append(".*")
        else:
            out.append(re.escape(ch))
    return re.compile("".join(out) + r"\Z", re.IGNORECASE | re.DOTALL)


class MetadataOperation(Operation):
    """Metadata listings are small and quick: they run inline, without a Spark job, and are served from memory."""

    def __init__(self, session: Session, catalog: CatalogStore | None = None, policy: Policy | None = None,
                 **request: Any) -> None:
        super().__init__(session)
        self.catalog = catalog
        self.policy = policy
        self.request = request
        self.view = catalog_view.CatalogView(session.spark, catalog)  # what this listing sees

    def _may_read(self, table: catalog_view.TableInfo) -> bool:
        """Columns are shown only of what the user may read, as DESCRIBE would answer."""
        if self.policy is None or not table.database:
            return True  # no policy (tests of the listing itself), or the session's own temporary view
        return self.policy.may_read(self.policy.principal(self.session.user), table.database, table.name)

    def _databases(self, schema_pattern: str | None) -> list[str]:
        matcher = pattern_matcher(schema_pattern)
        return [db for db in self.view.databases() if matcher.match(db)]

    def _tables(self, schema_pattern: str | None, table_pattern: str | None,
                kinds: Sequence[str] | None = None) -> list[catalog_view.TableInfo]:
        matcher = pattern_matcher(table_pattern)
        wanted = {k.upper() for k in kinds} if kinds else None
        found = self.view.tables_in(self._databases(schema_pattern))
        if wanted is None or "VIEW" in wanted:
            # The session's temporary views belong to no schema; Spark's Thrift server lists them whatever the
            # schema pattern, so that a client sees the views it just made.
            found.extend(self.view.temporary_views())
        return [t for t in found if matcher.match(t.name) and (wanted is None or t.kind in wanted)]


def _catalog_of(table: catalog_view.TableInfo) -> str | None:
    """The catalog a listed table is in (dialect/catalogs.py); a session's temporary view is in none."""
    return catalogs.current().name if table.database else None


class GetCatalogs(MetadataOperation):
    op_type = OperationType.GET_CATALOGS

    def execute(self) -> StatementResult:
        # the catalog three-part names, USE CATALOG and information_schema know (dialect/catalogs.py)
        return table_result([("TABLE_CAT", "string")], [(catalogs.current().name,)])


class GetSchemas(MetadataOperation):
    op_type = OperationType.GET_SCHEMAS

    def execute(self) -> StatementResult:
        rows = [(db, catalogs.current().name) for db in self._databases(self.request.get("schema_name"))]
        return table_result([("TABLE_SCHEM", "string"), ("TABLE_CATALOG", "string")], rows)


class GetTables(MetadataOperation):
    op_type = OperationType.GET_TABLES

    def execute(self) -> StatementResult:
        tables = self._tables(self.request.get("schema_name"), self.request.get("table_name"),
                              self.request.get("table_types"))
        rows = [(_catalog_of(t), t.database or None, t.name, t.kind, t.comment or "", None, None, None, None, None)
                for t in tables]
        return table_result(
            [("TABLE_CAT", "string"), ("TABLE_SCHEM", "string"), ("TABLE_NAME", "string"), ("TABLE_TYPE", "string"),
             ("REMARKS", "string"), ("TYPE_CAT", "string"), ("TYPE_SCHEM", "string"), ("TYPE_NAME", "string"),
             ("SELF_REFERENCING_COL_NAME", "string"), ("REF_GENERATION", "string")],
            rows,
        )


class GetTableTypes(MetadataOperation):
    op_type = OperationType.GET_TABLE_TYPES

    def execute(self) -> StatementResult:
        return table_result([("TABLE_TYPE", "string")], [(kind,) for kind in TABLE_TYPES])


_COLUMN_COLUMNS = [
    ("TABLE_CAT", "string"), ("TABLE_SCHEM", "string"), ("TABLE_NAME", "string"), ("COLUMN_NAME", "string"),
    ("DATA_TYPE", "int"), ("TYPE_NAME", "string"), ("COLUMN_SIZE", "int"), ("BUFFER_LENGTH", "tinyint"),
    ("DECIMAL_DIGITS", "int"), ("NUM_PREC_RADIX", "int"), ("NULLABLE", "int"), ("REMARKS", "string"),
    ("COLUMN_DEF", "string"), ("SQL_DATA_TYPE", "int"), ("SQL_DATETIME_SUB", "int"), ("CHAR_OCTET_LENGTH", "int"),
    ("ORDINAL_POSITION", "int"), ("IS_NULLABLE", "string"), ("SCOPE_CATALOG", "string"), ("SCOPE_SCHEMA", "string"),
    ("SCOPE_TABLE", "string"), ("SOURCE_DATA_TYPE", "smallint"), ("IS_AUTO_INCREMENT", "string"),
]


def _column_row(table: catalog_view.TableInfo, column: catalog_view.ColumnInfo) -> tuple[Any, ...]:
    hive = hive_types.hive_type(column.type)
    size = hive.column_size
    digits = None
    decimal = hive_types.decimal_precision_scale(column.type)
    if decimal is not None:
        size, digits = decimal
    elif hive.hive_name in ("FLOAT", "DOUBLE"):
        digits = 7 if hive.hive_name == "FLOAT" else 15
    elif hive.numeric:
        digits = 0
    length = hive_types.char_length(column.type)
    if length is not None:
        size = length
    return (
        _catalog_of(table), table.database or None, table.name, column.name, hive.jdbc_code,
        hive_types.jdbc_type_name(column.type), size, None, digits, 10 if hive.numeric else None,
        1 if column.nullable else 0, column.comment or "", None, None, None, None, column.position,
        "YES" if column.nullable else "NO", None, None, None, None, "NO",
    )


class GetColumns(MetadataOperation):
    op_type = OperationType.GET_COLUMNS

    def execute(self) -> StatementResult:
        matcher = pattern_matcher(self.request.get("column_name"))
        rows = []
        for table in self._tables(self.request.get("schema_name"), self.request.get("table_name")):
            if not self._may_read(table):
                continue
            for column in self.view.columns(table):
                if matcher.match(column.name):
                    rows.append(_column_row(table, column))
        return table_result(_COLUMN_COLUMNS, rows)


class GetTypeInfo(MetadataOperation):
    op_type = OperationType.GET_TYPE_INFO

    def execute(self) -> StatementResult:
        rows = []
        for _spark_name, hive in hive_types.all_types():
            precision = hive.column_size
            rows.append((
                hive.hive_name, hive.jdbc_code, precision, None, None, None, 1, hive.hive_name in ("STRING", "CHAR",
                "VARCHAR"), 3, not hive.numeric, False, False, None, 0,
                38 if hive.hive_name == "DECIMAL" else 0, None, None, 10 if hive.numeric else None,
            ))
        return table_result(
            [("TYPE_NAME", "string"), ("DATA_TYPE", "int"), ("PRECISION", "int"), ("LITERAL_PREFIX", "string"),
             ("LITERAL_SUFFIX", "string"), ("CREATE_PARAMS", "string"), ("NULLABLE", "smallint"),
             ("CASE_SENSITIVE", "boolean"), ("SEARCHABLE", "smallint"), ("UNSIGNED_ATTRIBUTE", "boolean"),
             ("FIXED_PREC_SCALE", "boolean"), ("AUTO_INCREMENT", "boolean"), ("LOCAL_TYPE_NAME", "string"),
             ("MINIMUM_SCALE", "smallint"), ("MAXIMUM_SCALE", "smallint"), ("SQL_DATA_TYPE", "int"),
             ("SQL_DATETIME_SUB", "int"), ("NUM_PREC_RADIX", "int")],
            rows,
        )


class GetFunctions(MetadataOperation):
    op_type = OperationType.GET_FUNCTIONS

    def execute(self) -> StatementResult:
        matcher = pattern_matcher(self.request.get("function_name"))
        schemas = pattern_matcher(self.request.get("schema_name"))
        rows = []
        for fn in self.view.functions([db for db in self.view.catalog_databases() if schemas.match(db)]):
            if matcher.match(fn.name) and (fn.database is None or schemas.match(fn.database)):
                # FUNCTION_TYPE 1 = functionNoTable (DatabaseMetaData)
                rows.append((None, fn.database, fn.name, fn.description or "", 1, fn.name))
        return table_result(
            [("FUNCTION_CAT", "string"), ("FUNCTION_SCHEM", "string"), ("FUNCTION_NAME", "string"),
             ("REMARKS", "string"), ("FUNCTION_TYPE", "int"), ("SPECIFIC_NAME", "string")],
            rows,
        )


class GetPrimaryKeys(MetadataOperation):
    """Spark tables declare no primary keys: an empty listing with the JDBC columns."""

    op_type = OperationType.UNKNOWN

    def execute(self) -> StatementResult:
        return table_result(
            [("TABLE_CAT", "string"), ("TABLE_SCHEM", "string"), ("TABLE_NAME", "string"), ("COLUMN_NAME", "string"),
             ("KEY_SEQ", "int"), ("PK_NAME", "string")],
            [],
        )


class GetCrossReference(MetadataOperation):
    """Spark tables declare no foreign keys: an empty listing with the JDBC columns."""

    op_type = OperationType.UNKNOWN

    def execute(self) -> StatementResult:
        return table_result(
            [("PKTABLE_CAT", "string"), ("PKTABLE_SCHEM", "string"), ("PKTABLE_NAME", "string"),
             ("PKCOLUMN_NAME", "string"), ("FKTABLE_CAT", "string"), ("FKTABLE_SCHEM", "string"),
             ("FKTABLE_NAME", "string"), ("FKCOLUMN_NAME", "string"), ("KEY_SEQ", "smallint"),
             ("UPDATE_RULE", "smallint"), ("DELETE_RULE", "smallint"), ("FK_NAME", "string"), ("PK_NAME", "string"),
             ("DEFERRABILITY", "smallint")],
            [],
        )
