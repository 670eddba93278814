"""Catalog errors: each carries an error class and a SQLSTATE (Spark's where Spark has one), so the Thrift layer
maps them to the wire like every other error of the gateway."""

from __future__ import annotations

from dialect.errors import SqlError  # the leaf module of the one error root: standard library only


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
