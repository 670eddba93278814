"""The gateway's one catalog and the catalog part of a name: `catalog.schema.table` is read everywhere a name is
read, its catalog checked here and dropped, so that every later step sees `schema.table` as before.

The catalog is named by the configuration (`catalog.name`, `main` by default, Unity Catalog's default);
`hive_metastore` and Spark's `spark_catalog` are accepted as aliases of it, so clients that pass either (dbt-databricks
defaults to `hive_metastore`) reach the same schemas. The `system` catalog holds `information_schema` (the
catalog's views, executor/listings/information_schema.py) and `query` (`system.query.history`, the statements run,
executor/listings/query_history.py); `<catalog>.information_schema` is the same schema.

The root (`drop_catalogs`) runs on every tree `dialect.parse.parse` makes, so no statement kind checks or drops
catalogs on its own: a table reference keeps its first offset (the catalog's) in `meta["start"]`, so that the binder
still replaces the whole name in the text, and `meta["catalog"]` says a catalog was written.

The configured name is process-wide (one gateway, one catalog): `configure` is called once when the gateway starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.expressions import ShowGrantsCommand
from sluicegate.dialect.positions import line_column

DEFAULT = "main"
ALIASES = ("hive_metastore", "spark_catalog")
SYSTEM = "system"
INFORMATION_SCHEMA = "information_schema"
QUERY = "query"                      # `system.query.history`: the statements the gateway ran
RUNTIME = "runtime"                  # system.runtime: the live sessions and queries (executor/listings/)
SYSTEM_SCHEMAS = (INFORMATION_SCHEMA, QUERY, RUNTIME)
_VALID = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class NoSuchCatalogError(DialectError):
    """Databricks' class and SQLSTATE for a catalog that does not exist."""

    error_class = "NO_SUCH_CATALOG_EXCEPTION"
    sqlstate = "42704"


@dataclass(frozen=True)
class Catalogs:
    """The catalog's name and the names that reach it."""

    name: str = DEFAULT

    @property
    def names(self) -> tuple[str, ...]:
        """The name first, then the aliases."""
        return (self.name, *(alias for alias in ALIASES if alias != self.name))

    @property
    def listed(self) -> tuple[str, ...]:
        """What SHOW CATALOGS and GetCatalogs list: the catalog and `system`."""
        return (self.name, SYSTEM)

    def accepts(self, name: str) -> bool:
        return name.lower() in self.names


_current = Catalogs()


def checked_name(name: str) -> str:
    """`name` lower-cased, once it is a valid catalog name; else ValueError saying why."""
    if not _VALID.fullmatch(name or "") or name.lower() in (SYSTEM, INFORMATION_SCHEMA):
        raise ValueError(f"catalog.name {name!r} is not a valid catalog name: a letter or `_`, then letters, "
                         f"digits and `_`, at most 128 (not `{SYSTEM}` or `{INFORMATION_SCHEMA}`)")
    return name.lower()


def configure(name: str) -> Catalogs:
    """Set the catalog's name (the configuration's `catalog.name`, checked when it was loaded)."""
    global _current
    _current = Catalogs(checked_name(name))
    return _current


def current() -> Catalogs:
    return _current


def check_catalog(name: str, schema: str | None = None, *, line: int | None = None,
                  column: int | None = None) -> None:
    """Raise NoSuchCatalogError unless `name` names the catalog (or `system`, for the schemas it holds)."""
    catalogs = current()
    if catalogs.accepts(name) or (name.lower() == SYSTEM and (schema or "").lower() in SYSTEM_SCHEMAS):
        return
    if name.lower() == SYSTEM:
        message = (f"The schema `{schema}` cannot be found in the catalog `{SYSTEM}`: it holds "
                   f"{', '.join(SYSTEM_SCHEMAS)}")
        hint = (f"read {SYSTEM}.{INFORMATION_SCHEMA}.<view>, {SYSTEM}.{QUERY}.history or {SYSTEM}.{RUNTIME}.<table>, "
                f"or name the catalog `{catalogs.name}`")
    else:
        message = f"The catalog `{name}` cannot be found: this gateway has one catalog, `{catalogs.name}`"
        hint = (f"write `{catalogs.name}`.schema.table, or leave the catalog out; "
                f"{', '.join(catalogs.names[1:])} name the same catalog")
    raise NoSuchCatalogError(message, line=line, column=column, hint=hint)


def _checked(sql: str, catalog: exp.Expr, schema: str | None) -> None:
    start = catalog.meta.get("start")
    line, column = line_column(sql, start) if start is not None else (None, None)
    check_catalog(catalog.name, schema, line=line, column=column)


def _drop_table_catalog(sql: str, table: exp.Table) -> None:
    """`catalog.schema.table`: the catalog checked, then dropped (its offset kept as the reference's start)."""
    catalog = table.args.get("catalog")
    if not isinstance(catalog, exp.Identifier):
        return
    _checked(sql, catalog, table.db)
    if catalog.meta.get("start") is not None:
        table.meta["start"] = catalog.meta["start"]
    table.meta["catalog"] = catalog.name
    table.set("catalog", None)


def _drop_schema_catalog(sql: str, schema: exp.Expr | None) -> None:
    """A schema named `catalog.schema` (parsed as a table `db.name`): the catalog checked and dropped."""
    if isinstance(schema, exp.Table) and isinstance(schema.args.get("db"), exp.Identifier):
        _checked(sql, schema.args["db"], schema.name)
        schema.set("db", None)


def _names_schema(node: exp.Expr) -> bool:
    """Whether `node` names a schema by a table-shaped node: USE [SCHEMA] s, GRANT/REVOKE/SHOW GRANTS ON SCHEMA s,
    DESCRIBE SCHEMA s, SHOW <kind> IN s."""
    if isinstance(node, exp.Use):
        return node.text("kind").upper() != "CATALOG"
    if isinstance(node, (exp.Grant, exp.Revoke, ShowGrantsCommand, exp.Describe)):
        return str(node.args.get("kind") or "").upper() in ("SCHEMA", "DATABASE")
    return False


def drop_catalogs(sql: str, tree: exp.Expr) -> exp.Expr:
    """Every catalog part in `tree` checked against the catalog (NoSuchCatalogError at its position) and dropped, in
    place; returns `tree`."""
    if _names_schema(tree):
        _drop_schema_catalog(sql, tree.args.get("this") or tree.args.get("securable"))
    if isinstance(tree, exp.Show) and isinstance(tree.args.get("db"), exp.Table):
        db = tree.args["db"]
        if tree.name == "DATABASES":  # SHOW SCHEMAS IN catalog: the name is a catalog
            _checked(sql, db.this, None)
            tree.set("db", None)
        else:
            _drop_schema_catalog(sql, db)
    if isinstance(tree, exp.Comment) and isinstance(tree.this, exp.Column):
        _drop_column_catalog(sql, tree.this)
    for table in list(tree.find_all(exp.Table)):
        _drop_table_catalog(sql, table)
    return tree


def _drop_column_catalog(sql: str, column: exp.Column) -> None:
    """`catalog.schema.table.column` (COMMENT ON COLUMN): the catalog checked, then dropped."""
    catalog = column.args.get("catalog")
    if isinstance(catalog, exp.Identifier):
        _checked(sql, catalog, column.args["db"].name if column.args.get("db") else None)
        column.set("catalog", None)
