"""Columns a statement names by their table's full name: `main.s.t.id` or `s.t.id` where the statement reads or
writes `main.s.t` without an alias (dbt-databricks' delete+insert correlates its DELETE that way: `DELETE FROM main.s.t
WHERE EXISTS (SELECT 1 FROM main.s.tmp WHERE main.s.t.id <=> main.s.tmp.id)`; `SELECT main.s.t.id FROM main.s.t` is
the same in a query). Databricks resolves such a name to that table's row, as Spark does for a table referenced by
its name; the executor reads each table as `<view> AS <name>`, where only `t.id` resolves, so the name's schema and
catalog parts go: on the tree of a DELETE, UPDATE or MERGE, before anything is generated from it
(`resolve_qualified_columns`); in a query's text, where the binder replaces the table references
(`qualified_columns`, whose spans dialect/references.py cuts out).

Only a table written without an alias is named so (an alias replaces the table's name, in Spark and Databricks), and
only when no other table of the statement has the same name in another schema (`t.id` would then be ambiguous); a
reference whose catalog is not the gateway's, or that matches no such table, is left for Spark to resolve (a struct
field) or to refuse.
"""

from __future__ import annotations

from sqlglot import exp

from sluicegate.dialect import catalogs


def qualified_columns(tree: exp.Expr) -> list[exp.Column]:
    """Each `[catalog.]schema.table.column` in `tree` that names a table the statement references by its name (and
    the only table of that name it references with a schema), in tree order."""
    schemas: dict[str, set[str]] = {}   # table name -> the schemas it is written with, unaliased ("" for none)
    for table in tree.find_all(exp.Table):
        if table.name and not table.alias:
            schemas.setdefault(table.name.lower(), set()).add(table.db.lower())
    found = []
    for column in tree.find_all(exp.Column):
        written = schemas.get(column.table.lower())
        if not column.db or written is None or written - {""} != {column.db.lower()}:
            continue
        catalog = column.args.get("catalog")
        if catalog is not None and not catalogs.current().accepts(catalog.name):
            continue
        found.append(column)
    return found


def resolve_qualified_columns(tree: exp.Delete | exp.Update | exp.Merge) -> None:
    """Rewrite, in place, each of `qualified_columns(tree)` into `table.column`."""
    for column in qualified_columns(tree):
        column.set("db", None)
        column.set("catalog", None)
