"""The registry of catalog object kinds: for each kind a catalog row may have, the module that answers the generic
statements for it (executor/object_kinds.py says what they answer).

It sits above the kinds' modules and imports them; the statements that name any object (DROP TABLE in
tables/ddl.py, DROP DATABASE CASCADE in databases.py, REFRESH and ALTER SCHEDULE in schedules.py) sit above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sluicegate.executor.materialized_views.statements import MATERIALIZED_VIEWS
from sluicegate.executor.object_kinds import Kind
from sluicegate.executor.streaming_tables import STREAMING_TABLES
from sluicegate.executor.tables.objects import PLAIN_OBJECTS

if TYPE_CHECKING:
    from sluicegate.catalog.store import TableEntry

KINDS: Mapping[str, Kind] = {
    "TABLE": PLAIN_OBJECTS,
    "VIEW": PLAIN_OBJECTS,
    "STREAMING_TABLE": STREAMING_TABLES,
    "MATERIALIZED_VIEW": MATERIALIZED_VIEWS,
}


def kind_of(entry: TableEntry) -> Kind:
    """The kind that answers for the object of `entry` (every kind a catalog row may have is here)."""
    return KINDS[entry.kind]
