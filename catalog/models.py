"""The catalog's tables (SQLAlchemy 2.0). Names are stored lower-cased: Spark identifiers are case-insensitive."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

EVERYONE = "users"  # the principal every user belongs to, as Databricks' `users` group
TableKind = Literal["TABLE", "VIEW", "STREAMING_TABLE", "MATERIALIZED_VIEW"]


class Base(DeclarativeBase):
    pass


class CatalogVersion(Base):
    """One row: a counter every transaction that writes a database, table or grant row raises before it commits
    (catalog/versions.py), so that a gateway may serve those rows from memory while the counter has not moved, and
    sees at once what another gateway sharing the catalog changed."""

    __tablename__ = "catalog_version"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version: Mapped[int] = mapped_column(Integer)


class SchemaVersion(Base):
    __tablename__ = "schema_version"

    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    description: Mapped[str] = mapped_column(String(200))
    applied_at: Mapped[dt.datetime] = mapped_column(DateTime)


class DatabaseRow(Base):
    __tablename__ = "databases"

    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    comment: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime)
    owner: Mapped[str | None] = mapped_column(String(128))


class TableRow(Base):
    """Tables, views and streaming tables share one namespace per database."""

    __tablename__ = "tables"
    __table_args__ = (UniqueConstraint("database", "name", name="uq_tables_database_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    database: Mapped[str] = mapped_column(String(128), ForeignKey("databases.name", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(128))
    kind: Mapped[TableKind] = mapped_column(String(32))
    location: Mapped[str | None] = mapped_column(Text)
    schema_json: Mapped[str | None] = mapped_column(Text)
    definition: Mapped[str | None] = mapped_column(Text)
    properties: Mapped[dict] = mapped_column(JSON, default=dict)
    partition_by: Mapped[list] = mapped_column(JSON, default=list)
    comment: Mapped[str | None] = mapped_column(Text)
    owner: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime)
    schedule: Mapped[str | None] = mapped_column(Text)  # a dialect.schedule.Schedule as JSON; None: no schedule
    keys: Mapped[list | None] = mapped_column(JSON, default=list)  # informational PRIMARY / FOREIGN KEYs (v9)
    clone_of: Mapped[str | None] = mapped_column(Text)  # a shallow clone's source, `db`.`table` (v11); None: none


class FunctionRow(Base):
    """SQL user-defined functions (v12): a schema-scoped name, its parameters, return type and body as SQL text."""

    __tablename__ = "functions"

    database: Mapped[str] = mapped_column(String(128), ForeignKey("databases.name", ondelete="CASCADE"),
                                          primary_key=True)
    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    parameters: Mapped[list] = mapped_column(JSON, default=list)  # [[name, SQL type], ...] in order
    returns: Mapped[str] = mapped_column(Text)      # the return type as SQL
    body: Mapped[str] = mapped_column(Text)         # the expression or query after RETURN, as written
    comment: Mapped[str | None] = mapped_column(Text)
    owner: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime)


class _StreamColumns:
    """What the supervisor keeps of one stream: a streaming table's own (StreamRow) or a flow's (FlowRow)."""

    stream_id: Mapped[str] = mapped_column(String(64))
    plan_json: Mapped[str] = mapped_column(Text)
    checkpoint: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    desired_state: Mapped[str] = mapped_column(String(16))
    query_id: Mapped[str | None] = mapped_column(String(64))
    last_batch_id: Mapped[int | None] = mapped_column(Integer)
    last_batch_at: Mapped[dt.datetime | None] = mapped_column(DateTime)
    rows_per_second: Mapped[float | None] = mapped_column(Float)
    last_error: Mapped[str | None] = mapped_column(Text)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime)
    next_run_at: Mapped[dt.datetime | None] = mapped_column(DateTime)       # a scheduled table's next pass
    last_refresh_at: Mapped[dt.datetime | None] = mapped_column(DateTime)   # when the last refresh or pass ended
    last_refresh_status: Mapped[str | None] = mapped_column(String(32))     # COMPLETED | FAILED | CANCELED | RUNNING


class StreamRow(_StreamColumns, Base):
    """One stream per streaming table (its defining query, when it has one); goes with its table."""

    __tablename__ = "streams"

    table_id: Mapped[int] = mapped_column(Integer, ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True)


class FlowRow(_StreamColumns, Base):
    """An append flow into a streaming table (`CREATE FLOW f AS INSERT INTO t BY NAME ...`): a stream of its own,
    named in its database's namespace of flows (as in Spark's pipelines); goes with its table."""

    __tablename__ = "flows"
    __table_args__ = (UniqueConstraint("database", "name", name="uq_flows_database_name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    database: Mapped[str] = mapped_column(String(128))
    name: Mapped[str] = mapped_column(String(128))
    table_id: Mapped[int] = mapped_column(Integer, ForeignKey("tables.id", ondelete="CASCADE"), index=True)
    comment: Mapped[str | None] = mapped_column(Text)
    owner: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime)


class StreamEventRow(Base):
    """One event of a streaming table, in Databricks' event-log shape (catalog/events.py); goes with its table.
    `kind` is the runtime's short name (STARTED, FAILED, ...); rows from before version 4 read back through it."""

    __tablename__ = "stream_events"
    __table_args__ = (Index("ix_stream_events_table_sequence", "table_id", "sequence"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[int] = mapped_column(Integer, ForeignKey("tables.id", ondelete="CASCADE"), index=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime)
    kind: Mapped[str] = mapped_column(String(32))
    message: Mapped[str] = mapped_column(Text)
    event_id: Mapped[str | None] = mapped_column(String(36))          # Databricks' `id`: a UUID
    sequence: Mapped[int | None] = mapped_column(Integer)             # grows by one per event of the table
    event_type: Mapped[str | None] = mapped_column(String(64))        # create_update, update_progress, flow_progress
    level: Mapped[str | None] = mapped_column(String(16))             # INFO | WARN | ERROR | METRICS
    maturity_level: Mapped[str | None] = mapped_column(String(16))    # STABLE | EVOLVING
    origin: Mapped[str | None] = mapped_column(Text)                  # JSON
    error: Mapped[str | None] = mapped_column(Text)                   # JSON, or None
    details: Mapped[str | None] = mapped_column(Text)                 # JSON keyed by the event type


class GrantRow(Base):
    """One privilege on one securable (a schema, or a table or view of one) held by one principal (a user name, or
    `users` for everybody). Rows of a table go with it; a schema's with the schema."""

    __tablename__ = "grants"
    __table_args__ = (UniqueConstraint("kind", "database", "name", "principal", "privilege", name="uq_grants"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))            # SCHEMA, TABLE (tables, views, streaming tables)
    database: Mapped[str] = mapped_column(String(128), index=True)
    name: Mapped[str] = mapped_column(String(128))           # "" for a schema
    principal: Mapped[str] = mapped_column(String(128))
    privilege: Mapped[str] = mapped_column(String(32))       # SELECT, MODIFY, CREATE, ALL PRIVILEGES
    granted_by: Mapped[str | None] = mapped_column(String(128))
    granted_at: Mapped[dt.datetime] = mapped_column(DateTime)


class QueryHistoryRow(Base):
    """One statement the gateway ran, in the shape of Databricks' `system.query.history` (catalog/history.py):
    written in batches by the gateway's history writer, trimmed by age and count (conf `[history]`)."""

    __tablename__ = "query_history"
    __table_args__ = (Index("ix_query_history_start_time", "start_time"),
                      Index("ix_query_history_executed_by", "executed_by", "start_time"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    statement_id: Mapped[str] = mapped_column(String(64), index=True)   # the operation handle's hex
    session_id: Mapped[str | None] = mapped_column(String(64))
    executed_by: Mapped[str] = mapped_column(String(128))
    source: Mapped[str] = mapped_column(String(32))                     # CLIENT, or the gateway's own work
    client_application: Mapped[str | None] = mapped_column(String(256))
    client_address: Mapped[str | None] = mapped_column(String(128))
    statement_type: Mapped[str] = mapped_column(String(64))
    execution_status: Mapped[str] = mapped_column(String(16))          # FINISHED | FAILED | CANCELED | TIMEDOUT
    error_class: Mapped[str | None] = mapped_column(String(128))
    sqlstate: Mapped[str | None] = mapped_column(String(8))
    error_message: Mapped[str | None] = mapped_column(Text)
    start_time: Mapped[dt.datetime] = mapped_column(DateTime)
    end_time: Mapped[dt.datetime | None] = mapped_column(DateTime)
    total_duration_ms: Mapped[int | None] = mapped_column(Integer)
    execution_duration_ms: Mapped[int | None] = mapped_column(Integer)
    produced_rows: Mapped[int | None] = mapped_column(Integer)
    modified_rows: Mapped[int | None] = mapped_column(Integer)
    read_tables: Mapped[str | None] = mapped_column(Text)              # JSON list of `database.table`
    written_tables: Mapped[str | None] = mapped_column(Text)           # JSON list of `database.table`
    statement_text: Mapped[str | None] = mapped_column(Text)           # redacted (dialect/redaction.py)
    read_rows: Mapped[int | None] = mapped_column(BigInteger)          # version 7: what Spark's scans counted
    read_bytes: Mapped[int | None] = mapped_column(BigInteger)
    from_result_cache: Mapped[bool | None] = mapped_column(Boolean)    # version 8: answered from the result cache
