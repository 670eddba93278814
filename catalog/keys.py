"""Which key an `ALTER TABLE ... DROP CONSTRAINT name | DROP PRIMARY KEY | DROP FOREIGN KEY (cols)` drops, and which
foreign keys depend on a table's primary key: what DROP refuses to orphan without CASCADE (Databricks' default,
RESTRICT) and drops with it; the policy reads the same lists to require the ownership of every table whose keys
CASCADE would change."""

from __future__ import annotations

from collections.abc import Iterable

from sluicegate.catalog.store import TableEntry
from sluicegate.dialect.constraints import FOREIGN_KEY, PRIMARY_KEY, KeyConstraint
from sluicegate.dialect.statements import DropConstraint


def dropped_name(entry: TableEntry, statement: DropConstraint) -> str | None:
    """The name of the constraint `statement` drops from `entry`: the name written (DROP CONSTRAINT); the table's
    primary key (DROP PRIMARY KEY); its foreign key on exactly those columns in that order, case-insensitive, as
    Databricks identifies one (DROP FOREIGN KEY (cols)); None when the table has no such key."""
    if statement.key_kind is None:
        return statement.name
    wanted = [c.lower() for c in statement.key_columns]
    return next((k.name for k in entry.keys if k.kind == statement.key_kind and (
        k.kind == PRIMARY_KEY or [c.lower() for c in k.columns] == wanted)), None)


def dropped_primary_key(entry: TableEntry, name: str) -> KeyConstraint | None:
    """The primary key of `entry` named `name` (case-insensitive), if that is what DROP CONSTRAINT `name` drops."""
    return next((k for k in entry.keys if k.kind == PRIMARY_KEY and (k.name or "").lower() == name.lower()), None)


def referencing_foreign_keys(tables: Iterable[TableEntry],
                             referenced: TableEntry) -> list[tuple[TableEntry, KeyConstraint]]:
    """The foreign keys among `tables` (the table itself included) that reference `referenced`, with their table."""
    target = (referenced.database.lower(), referenced.name.lower())
    return [(table, key) for table in tables for key in table.keys
            if key.kind == FOREIGN_KEY and key.referenced_table(table.database) == target]
