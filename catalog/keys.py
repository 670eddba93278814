"""Which foreign keys depend on a table's primary key: what `ALTER TABLE ... DROP CONSTRAINT pk` refuses to orphan
without CASCADE (Databricks' default, RESTRICT) and drops with it; the policy reads the same list to require the
ownership of every table whose keys CASCADE would change."""

from __future__ import annotations

from collections.abc import Iterable

from sluicegate.catalog.store import TableEntry
from sluicegate.dialect.constraints import FOREIGN_KEY, PRIMARY_KEY, KeyConstraint


def dropped_primary_key(entry: TableEntry, name: str) -> KeyConstraint | None:
    """The primary key of `entry` named `name` (case-insensitive), if that is what DROP CONSTRAINT `name` drops."""
    return next((k for k in entry.keys if k.kind == PRIMARY_KEY and (k.name or "").lower() == name.lower()), None)


def referencing_foreign_keys(tables: Iterable[TableEntry],
                             referenced: TableEntry) -> list[tuple[TableEntry, KeyConstraint]]:
    """The foreign keys among `tables` (the table itself included) that reference `referenced`, with their table."""
    target = (referenced.database.lower(), referenced.name.lower())
    return [(table, key) for table in tables for key in table.keys
            if key.kind == FOREIGN_KEY and key.referenced_table(table.database) == target]
