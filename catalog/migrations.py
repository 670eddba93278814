"""Versioned catalog migrations: an ordered list, applied in one transaction when a store opens.

A catalog written by a newer gateway is refused rather than used: its rows may mean what this code does not know.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable

from sqlalchemy import Table, inspect, select, text
from sqlalchemy.engine import Connection

from sluicegate.catalog.errors import CatalogVersionError
from sluicegate.catalog.events import shape_of_kind
from sluicegate.catalog.history_db import ensure_table
from sluicegate.catalog.models import (
    EVERYONE,
    Base,
    CatalogVersion,
    DatabaseRow,
    FlowRow,
    FunctionRow,
    GrantRow,
    QueryHistoryRow,
    SchemaVersion,
    StreamEventRow,
)


def _table(row: type[Base]) -> Table:
    """A model's table as a `Table` (the mapped class's `__table__` is typed as any FROM clause)."""
    return Base.metadata.tables[row.__tablename__]


def _v1_create_everything(conn: Connection) -> None:
    Base.metadata.create_all(conn)
    conn.execute(_table(DatabaseRow).insert().values(name="default", comment="default database",
                                                     created_at=dt.datetime.now(dt.timezone.utc)))


def _v2_owners_and_grants(conn: Connection) -> None:
    """Databases get an owner column and privileges a table. Every user may create tables in `default`, as in
    Hive and Databricks' legacy table ACLs; databases from before have no owner (admins manage them)."""
    if "owner" not in {c["name"] for c in inspect(conn).get_columns(DatabaseRow.__tablename__)}:
        conn.execute(text("ALTER TABLE databases ADD COLUMN owner VARCHAR(128)"))
    _table(GrantRow).create(conn, checkfirst=True)
    conn.execute(_table(GrantRow).insert().values(
        kind="SCHEMA", database="default", name="", principal=EVERYONE, privilege="CREATE", granted_by=None,
        granted_at=dt.datetime.now(dt.timezone.utc)))


def _v3_schedules(conn: Connection) -> None:
    """Tables get a refresh schedule; streams the times of their next scheduled pass and of their last refresh."""
    for table, column, kind in (("tables", "schedule", "TEXT"), ("streams", "next_run_at", "DATETIME"),
                                ("streams", "last_refresh_at", "DATETIME"),
                                ("streams", "last_refresh_status", "VARCHAR(32)")):
        if inspect(conn).has_table(table) and column not in {c["name"] for c in inspect(conn).get_columns(table)}:
            conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {kind}"))


_V4_COLUMNS = (("event_id", "VARCHAR(36)"), ("sequence", "INTEGER"), ("event_type", "VARCHAR(64)"),
               ("level", "VARCHAR(16)"), ("maturity_level", "VARCHAR(16)"), ("origin", "TEXT"), ("error", "TEXT"),
               ("details", "TEXT"))


def _v4_event_log(conn: Connection) -> None:
    """Stream events get Databricks' event-log columns (id, sequence, event type, level, maturity, origin, error,
    details). Events already stored are given them from their kind, in the order they were written."""
    table = StreamEventRow.__tablename__
    if not inspect(conn).has_table(table):
        _table(StreamEventRow).create(conn)
    present = {c["name"] for c in inspect(conn).get_columns(table)}
    for column, kind in _V4_COLUMNS:
        if column not in present:
            conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {kind}"))
    if "ix_stream_events_table_sequence" not in {i["name"] for i in inspect(conn).get_indexes(table)}:
        conn.execute(text(f"CREATE INDEX ix_stream_events_table_sequence ON {table} (table_id, sequence)"))
    rows = conn.execute(text(f"SELECT id, kind, message FROM {table} WHERE event_id IS NULL ORDER BY id")).all()
    for row_id, kind, message in rows:
        shape = shape_of_kind(kind, message)
        conn.execute(text(f"UPDATE {table} SET event_id = :event_id, sequence = :sequence, event_type = :event_type, "
                          "level = :level, maturity_level = :maturity, error = :error, details = :details "
                          "WHERE id = :id"),
                     {"event_id": str(uuid.uuid4()), "sequence": row_id, "event_type": shape.event_type,
                      "level": shape.level, "maturity": shape.maturity_level, "id": row_id,
                      "error": json.dumps(shape.error) if shape.error else None, "details": json.dumps(shape.details)})


def _v5_flows(conn: Connection) -> None:
    """Flows (CREATE FLOW f AS INSERT INTO t BY NAME ...) get a table of their own: several per streaming table."""
    _table(FlowRow).create(conn, checkfirst=True)


def _v6_query_history(conn: Connection) -> None:
    """The query history (`system.query.history`): one row per statement, with its indexes."""
    _table(QueryHistoryRow).create(conn, checkfirst=True)


def _v7_history_read_rows(conn: Connection) -> None:
    """The query history's rows and bytes read (where the history lives in the catalog's database: a server URL;
    a SQLite catalog keeps it in a file of its own, catalog/history_db.py, which adds them there)."""
    ensure_table(conn)


def _v8_history_from_result_cache(conn: Connection) -> None:
    """The query history's `from_result_cache` (where the history lives in the catalog's database, as version 7)."""
    ensure_table(conn)


def _v9_table_keys(conn: Connection) -> None:
    """Tables keep their informational PRIMARY KEY / FOREIGN KEY constraints (JSON), which information_schema lists,
    as Unity Catalog does."""
    if inspect(conn).has_table("tables") and "keys" not in {c["name"] for c in inspect(conn).get_columns("tables")}:
        conn.execute(text("ALTER TABLE tables ADD COLUMN keys JSON"))


def _v10_catalog_version(conn: Connection) -> None:
    """The catalog's version counter (catalog/versions.py), one row, raised by every write of a database, table or
    grant row: what lets a gateway keep those rows in memory."""
    _table(CatalogVersion).create(conn, checkfirst=True)
    if conn.execute(select(CatalogVersion.id)).first() is None:
        conn.execute(_table(CatalogVersion).insert().values(id=1, version=0))


def _v11_shallow_clones(conn: Connection) -> None:
    """Tables remember the source of a shallow clone, which information_schema shows as MANAGED_SHALLOW_CLONE (dbt
    drops such a table before it rebuilds it), as Unity Catalog does."""
    if inspect(conn).has_table("tables") and "clone_of" not in {
            c["name"] for c in inspect(conn).get_columns("tables")}:
        conn.execute(text("ALTER TABLE tables ADD COLUMN clone_of TEXT"))


def _v12_functions(conn: Connection) -> None:
    """SQL user-defined functions (CREATE FUNCTION ... RETURN ...), kept by the gateway so they survive a restart;
    Spark only ever sees them as a statement's temporary functions."""
    _table(FunctionRow).create(conn, checkfirst=True)


MIGRATIONS: tuple[tuple[int, str, Callable[[Connection], None]], ...] = (
    (1, "databases, tables, streams, stream events; the default database", _v1_create_everything),
    (2, "database owners; grants; CREATE on default for everybody", _v2_owners_and_grants),
    (3, "refresh schedules; next scheduled pass and last refresh of streams", _v3_schedules),
    (4, "stream events in Databricks' event-log shape (event_log(TABLE(t)))", _v4_event_log),
    (5, "flows: append flows into streaming tables, each a stream of its own", _v5_flows),
    (6, "query history: one row per statement (system.query.history)", _v6_query_history),
    (7, "query history: rows and bytes read", _v7_history_read_rows),
    (8, "query history: whether the result cache answered", _v8_history_from_result_cache),
    (9, "tables: informational primary and foreign keys", _v9_table_keys),
    (10, "the catalog's version, raised by every write of a database, table or grant", _v10_catalog_version),
    (11, "tables: the source of a shallow clone", _v11_shallow_clones),
    (12, "SQL user-defined functions", _v12_functions),
)
LATEST = MIGRATIONS[-1][0]


def current_version(conn: Connection) -> int:
    if not inspect(conn).has_table(SchemaVersion.__tablename__):
        return 0
    versions = conn.execute(select(SchemaVersion.version)).scalars().all()
    return max(versions, default=0)


def migrate(conn: Connection) -> list[int]:
    """Apply the pending migrations on `conn` (inside the caller's transaction); returns the versions applied."""
    found = current_version(conn)
    if found > LATEST:
        raise CatalogVersionError(
            f"the catalog is at version {found}, newer than this gateway knows ({LATEST})",
            hint="upgrade sluicegate, or point catalog.url at another catalog",
        )
    applied = []
    for version, description, step in MIGRATIONS:
        if version <= found:
            continue
        if version == 1:
            _table(SchemaVersion).create(conn, checkfirst=True)
        step(conn)
        conn.execute(_table(SchemaVersion).insert().values(
            version=version, description=description, applied_at=dt.datetime.now(dt.timezone.utc)))
        applied.append(version)
    return applied
