"""Catalog errors: each carries an error class and a SQLSTATE (Spark's where Spark has one), so the Thrift layer
maps them to the wire like every other error of the gateway."""

from __future__ import annotations

from sluicegate.dialect.errors import SqlError  # the leaf module of the one error root: standard library only


class CatalogError(SqlError):
    error_class = "CATALOG_ERROR"
    sqlstate = "XX000"


class SchemaNotFoundError(CatalogError):
    error_class = "SCHEMA_NOT_FOUND"
    sqlstate = "42704"


class SchemaAlreadyExistsError(CatalogError):
    error_class = "SCHEMA_ALREADY_EXISTS"
    sqlstate = "42P06"


class SchemaNotEmptyError(CatalogError):
    error_class = "SCHEMA_NOT_EMPTY"
    sqlstate = "2BP01"


class TableNotFoundError(CatalogError):
    error_class = "TABLE_OR_VIEW_NOT_FOUND"
    sqlstate = "42P01"


class TableAlreadyExistsError(CatalogError):
    error_class = "TABLE_OR_VIEW_ALREADY_EXISTS"
    sqlstate = "42P07"


class CatalogConflictError(CatalogError):
    error_class = "CONCURRENT_CATALOG_UPDATE"
    sqlstate = "40001"


class CatalogVersionError(CatalogError):
    error_class = "CATALOG_TOO_NEW"
    sqlstate = "55000"


class InvalidNameError(CatalogError):
    """A database, table or view name the gateway refuses (see `catalog/names.py` for the rule): Spark's class for
    a name its catalog cannot store."""

    error_class = "INVALID_SCHEMA_OR_RELATION_NAME"
    sqlstate = "42602"


class PathOutsideWarehouseError(CatalogError):
    """A folder derived from a name or read from the catalog that does not lie inside the warehouse (or the
    checkpoints root): nothing is created, renamed or deleted there."""

    error_class = "LOCATION_OUTSIDE_WAREHOUSE"
    sqlstate = "42501"


class LocationExistsError(CatalogError):
    """A new table's folder already exists: it was not made by this statement, so it is never removed or reused."""

    error_class = "LOCATION_ALREADY_EXISTS"
    sqlstate = "42K04"


class FlowNotFoundError(CatalogError):
    error_class = "FLOW_NOT_FOUND"
    sqlstate = "42704"


class FlowAlreadyExistsError(CatalogError):
    error_class = "FLOW_ALREADY_EXISTS"
    sqlstate = "42710"


class RoutineNotFoundError(CatalogError):
    error_class = "ROUTINE_NOT_FOUND"
    sqlstate = "42883"


class RoutineAlreadyExistsError(CatalogError):
    error_class = "ROUTINE_ALREADY_EXISTS"
    sqlstate = "42723"
