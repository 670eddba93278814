"""USE CATALOG / SET CATALOG and SHOW CATALOGS: the gateway has one catalog (dialect/catalogs.py), so choosing it
changes nothing and choosing another is Databricks' NO_SUCH_CATALOG_EXCEPTION; `system` is listed too, as it holds
`information_schema`."""

from __future__ import annotations

from sluicegate.catalog.store import pattern_matcher
from sluicegate.dialect import catalogs
from sluicegate.dialect.statements import ShowCatalogs, UseCatalog
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.output import no_result, rows_result


def use_catalog(ctx: StatementContext, stmt: UseCatalog) -> StatementResult:
    if stmt.name.lower() == catalogs.SYSTEM:
        raise catalogs.NoSuchCatalogError(
            f"`{catalogs.SYSTEM}` cannot be the current catalog: it holds {catalogs.INFORMATION_SCHEMA} only",
            line=stmt.line, column=stmt.column,
            hint=f"read {catalogs.SYSTEM}.{catalogs.INFORMATION_SCHEMA}.<view> by its full name")
    catalogs.check_catalog(stmt.name, line=stmt.line, column=stmt.column)
    return no_result()


def show_catalogs(ctx: StatementContext, stmt: ShowCatalogs) -> StatementResult:
    matcher = pattern_matcher(stmt.pattern)
    names = [name for name in catalogs.current().listed if matcher is None or matcher.match(name)]
    return rows_result([("catalog", "string")], [(name,) for name in names])


HANDLERS = {UseCatalog: use_catalog, ShowCatalogs: show_catalogs}
