"""CatalogStore: what survives a restart — databases, tables, views, streaming tables and their streams.

Every method is one transaction. The default is a SQLite file in the warehouse; any SQLAlchemy URL works
(PostgreSQL for a catalog shared by several gateways).

Two gateways on one SQLite catalog: every transaction starts with BEGIN IMMEDIATE (writers queue on SQLite's lock,
waiting up to `busy_timeout`, instead of failing with "database is locked"), and uniqueness is a constraint, so two
concurrent CREATEs of one name give one success and one TABLE_OR_VIEW_ALREADY_EXISTS. What they do not share is
running streams: each gateway starts the streams it finds at boot, so two gateways must not serve the same streaming
tables (one gateway per warehouse, or a shared catalog with one stream owner).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, or_, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from sluicegate.catalog.clock import utc_now
from sluicegate.catalog.errors import (
    FlowAlreadyExistsError,
    FlowNotFoundError,
    SchemaAlreadyExistsError,
    SchemaNotEmptyError,
    SchemaNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
)
from sluicegate.catalog.events import (
    LEVELS,
    EventRecord,
    EventRetention,
    EventShape,
    error_object,
    kind_of_type,
    sequence_json,
    shape_of_kind,
)
from sluicegate.catalog.history_db import HistoryDatabase, LazyHistoryDatabase
from sluicegate.catalog.migrations import migrate
from sluicegate.catalog.models import (
    DatabaseRow,
    FlowRow,
    FunctionRow,
    GrantRow,
    StreamEventRow,
    StreamRow,
    TableKind,
    TableRow,
)
from sluicegate.catalog.names import NameKind, check_name
from sluicegate.catalog.sqlite_engine import one_transaction, open_engine
from sluicegate.catalog.versions import VersionedReads, track_changes
from sluicegate.dialect.constraints import KeyConstraint

_NAME_KINDS: dict[str, NameKind] = {"TABLE": "table", "VIEW": "view", "STREAMING_TABLE": "streaming table",
                                    "MATERIALIZED_VIEW": "materialized view"}


@dataclass(frozen=True)
class DatabaseEntry:
    name: str
    comment: str | None
    created_at: dt.datetime
    owner: str | None = None


@dataclass(frozen=True)
class TableEntry:
    database: str
    name: str
    kind: TableKind
    location: str | None
    schema_json: str | None
    definition: str | None
    properties: dict[str, str] = field(default_factory=dict, hash=False)
    partition_by: tuple[str, ...] = ()
    comment: str | None = None
    owner: str | None = None
    created_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None
    schedule: str | None = None        # a dialect.schedule.Schedule as JSON (streaming tables, materialized views)
    keys: tuple[KeyConstraint, ...] = field(default=(), hash=False)  # informational PRIMARY / FOREIGN KEYs, named
    clone_of: str | None = None        # a shallow clone's source as `db`.`table` (Databricks' MANAGED_SHALLOW_CLONE)


@dataclass(frozen=True)
class StreamEntry:
    database: str
    name: str
    stream_id: str
    plan_json: str
    checkpoint: str
    status: str
    desired_state: str
    query_id: str | None = None
    last_batch_id: int | None = None
    last_batch_at: dt.datetime | None = None
    rows_per_second: float | None = None
    last_error: str | None = None
    failures: int = 0
    updated_at: dt.datetime | None = None
    next_run_at: dt.datetime | None = None
    last_refresh_at: dt.datetime | None = None
    last_refresh_status: str | None = None
    flow: str | None = None            # an append flow into the table (CREATE FLOW); None: the table's own stream

    @property
    def key(self) -> tuple[str, ...]:
        """The supervisor's key: (database, table) for a table's own stream, (database, table, flow) for a flow."""
        return (self.database, self.name) if self.flow is None else (self.database, self.name, self.flow)


@dataclass(frozen=True)
class FlowEntry:
    """A flow as SHOW FLOWS and DESCRIBE STREAMING TABLE list it: its stream and who made it."""

    stream: StreamEntry
    comment: str | None
    owner: str | None
    created_at: dt.datetime | None


def pattern_matcher(pattern: str | None) -> re.Pattern[str] | None:
    """Spark's SHOW pattern: `*` any run, `|` alternatives, case-insensitive; None matches everything."""
    if pattern is None:
        return None
    alternatives = [re.escape(part.strip()).replace(r"\*", ".*") for part in pattern.split("|")]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z", re.IGNORECASE)


def _database_entry(row: DatabaseRow) -> DatabaseEntry:
    return DatabaseEntry(row.name, row.comment, row.created_at, row.owner)


def _table_entry(row: TableRow) -> TableEntry:
    return TableEntry(row.database, row.name, row.kind, row.location, row.schema_json,
                      row.definition, dict(row.properties or {}), tuple(row.partition_by or ()), row.comment,
                      row.owner, row.created_at, row.updated_at, row.schedule,
                      tuple(KeyConstraint.from_json(k) for k in row.keys or ()), row.clone_of)


def _stream_entry(table: TableRow, row: StreamRow | FlowRow) -> StreamEntry:
    return StreamEntry(table.database, table.name, row.stream_id, row.plan_json, row.checkpoint, row.status,
                       row.desired_state, row.query_id, row.last_batch_id, row.last_batch_at, row.rows_per_second,
                       row.last_error, row.failures, row.updated_at, row.next_run_at, row.last_refresh_at,
                       row.last_refresh_status, row.name if isinstance(row, FlowRow) else None)


_STREAM_FIELDS = {f.name for f in fields(StreamEntry)} - {"database", "name", "updated_at", "flow"}
_TABLE_CHANGES = {"schema_json", "properties", "location", "comment", "definition", "partition_by", "schedule",
                  "keys"}


def _copy_stream_fields(entry: StreamEntry, row: StreamRow | FlowRow) -> None:
    for key in _STREAM_FIELDS:
        setattr(row, key, getattr(entry, key))
    row.updated_at = utc_now()


class CatalogStore:
    def __init__(self, url: str, event_retention: EventRetention | None = None) -> None:
        """`event_retention`: how long streaming tables' events are kept (conf `[events]`)."""
        self.url = url
        self.event_retention = event_retention or EventRetention()
        self._engine = self._make_engine(url)
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)
        with self._engine.begin() as conn:
            migrate(conn)
        track_changes(self._sessions)   # every write of a database, table or grant raises the catalog's version
        self.reads = VersionedReads(self._engine)   # those rows' reads, kept while the version stays
        self._history = LazyHistoryDatabase(url, self._engine)

    @classmethod
    def for_warehouse(cls, warehouse: Path | str, event_retention: EventRetention | None = None) -> CatalogStore:
        path = Path(warehouse).absolute()
        path.mkdir(parents=True, exist_ok=True)
        return cls(f"sqlite:///{path / 'catalog.db'}", event_retention)

    @staticmethod
    def _make_engine(url: str) -> Engine:
        return open_engine(url)

    @property
    def history_db(self) -> HistoryDatabase:
        """The query history's database (catalog/history_db.py): a SQLite file of its own next to a SQLite catalog,
        so that recording statements never holds the catalog's lock."""
        return self._history.get()

    def close(self) -> None:
        self._history.close()
        self._engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One SQLAlchemy session in one transaction: committed on leaving, rolled back on an error (the grant
        store shares it, so that a grant and the object it names change together)."""
        with one_transaction(self._sessions, "the catalog") as session:
            yield session

    # -- databases -------------------------------------------------------------------------------------------

    def create_database(self, name: str, comment: str | None = None, if_not_exists: bool = False,
                        owner: str | None = None) -> DatabaseEntry:
        name = check_name(name, "database")  # nothing bad enters the catalog, whichever path a statement takes
        try:
            with self.transaction() as session:
                existing = session.get(DatabaseRow, name)
                if existing is not None:
                    if if_not_exists:
                        return _database_entry(existing)
                    raise SchemaAlreadyExistsError(f"the schema `{name}` already exists",
                                                   hint="choose another name or add IF NOT EXISTS")
                row = DatabaseRow(name=name, comment=comment, created_at=utc_now(), owner=owner)
                session.add(row)
                return _database_entry(row)
        except IntegrityError as exc:
            if if_not_exists:
                found = self.get_database(name)
                if found is not None:
                    return found
            raise SchemaAlreadyExistsError(f"the schema `{name}` already exists") from exc

    def drop_database(self, name: str, if_exists: bool = False, cascade: bool = False) -> list[TableEntry]:
        name = name.lower()
        with self.transaction() as session:
            row = session.get(DatabaseRow, name)
            if row is None:
                if if_exists:
                    return []
                raise SchemaNotFoundError(f"the schema `{name}` cannot be found",
                                          hint="SHOW DATABASES lists the schemas; add IF EXISTS to ignore")
            tables = session.scalars(select(TableRow).where(TableRow.database == name)).all()
            functions = session.scalars(select(FunctionRow.name).where(FunctionRow.database == name)).all()
            if (tables or functions) and not cascade:   # a function is an object of the schema, as on Databricks
                held = " and ".join(f"{count} {kind}(s)" for count, kind in
                                    ((len(tables), "table"), (len(functions), "function")) if count)
                raise SchemaNotEmptyError(f"the schema `{name}` is not empty: it holds {held}",
                                          hint="drop its tables and functions first, or DROP DATABASE ... CASCADE")
            dropped = [_table_entry(t) for t in tables]
            session.execute(delete(TableRow).where(TableRow.database == name))  # streams follow by foreign key
            session.execute(delete(GrantRow).where(GrantRow.database == name))
            session.execute(delete(FunctionRow).where(FunctionRow.database == name))
            session.delete(row)
            return dropped

    def get_database(self, name: str) -> DatabaseEntry | None:
        def read(session: Session) -> DatabaseEntry | None:
            row = session.get(DatabaseRow, name.lower())
            return None if row is None else _database_entry(row)
        return self.reads.get(("database", name.lower()), read, self.transaction)

    def list_databases(self, pattern: str | None = None) -> list[DatabaseEntry]:
        """Kept while the catalog's version stays, as a single row's reads are: a schema browser lists on every
        click, and a transaction of its own queued on SQLite's write lock behind every writer (issue 28 part 2)."""
        matcher = pattern_matcher(pattern)

        def read(session: Session) -> tuple[DatabaseEntry, ...]:
            return tuple(_database_entry(r) for r in session.scalars(select(DatabaseRow).order_by(DatabaseRow.name)))
        return [entry for entry in self.reads.get(("databases",), read, self.transaction)
                if matcher is None or matcher.match(entry.name)]

    # -- tables ----------------------------------------------------------------------------------------------

    @staticmethod
    def _find(session: Session, database: str, name: str) -> TableRow | None:
        return session.scalars(select(TableRow).where(TableRow.database == database.lower(),
                                                      TableRow.name == name.lower())).one_or_none()

    @classmethod
    def _require(cls, session: Session, database: str, name: str) -> TableRow:
        row = cls._find(session, database, name)
        if row is None:
            raise TableNotFoundError(f"the table or view `{database.lower()}`.`{name.lower()}` cannot be found",
                                     hint="check the spelling and the database; SHOW TABLES lists them")
        return row

    @staticmethod
    def _require_database(session: Session, database: str) -> None:
        if session.get(DatabaseRow, database.lower()) is None:
            raise SchemaNotFoundError(f"the schema `{database.lower()}` cannot be found",
                                      hint="CREATE DATABASE it first; SHOW DATABASES lists the schemas")

    def create_table(self, entry: TableEntry, *, replace: bool = False, if_not_exists: bool = False) -> TableEntry:
        database = check_name(entry.database, "database")
        name = check_name(entry.name, _NAME_KINDS.get(entry.kind, "table"))
        try:
            with self.transaction() as session:
                self._require_database(session, database)
                existing = self._find(session, database, name)
                if existing is not None:
                    if if_not_exists:
                        return _table_entry(existing)
                    if not replace:
                        raise TableAlreadyExistsError(
                            f"the table or view `{database}`.`{name}` already exists",
                            hint="choose another name, drop it first, or use IF NOT EXISTS / OR REPLACE")
                    session.delete(existing)
                    session.flush()
                now = utc_now()
                row = TableRow(database=database, name=name, kind=entry.kind, location=entry.location,
                               schema_json=entry.schema_json, definition=entry.definition,
                               properties=dict(entry.properties), partition_by=list(entry.partition_by),
                               comment=entry.comment, owner=entry.owner, schedule=entry.schedule,
                               keys=[k.as_json() for k in entry.keys], clone_of=entry.clone_of,
                               created_at=now if existing is None or not replace else existing.created_at,
                               updated_at=now)
                session.add(row)
                session.flush()
                return _table_entry(row)
        except IntegrityError as exc:
            if if_not_exists:
                found = self.get_table(database, name)
                if found is not None:
                    return found
            raise TableAlreadyExistsError(f"the table or view `{database}`.`{name}` already exists") from exc

    def get_table(self, database: str, name: str) -> TableEntry | None:
        def read(session: Session) -> TableEntry | None:
            row = self._find(session, database, name)
            return None if row is None else _table_entry(row)
        return self.reads.get(("table", database.lower(), name.lower()), read, self.transaction)

    def require_table(self, database: str, name: str) -> TableEntry:
        with self.transaction() as session:
            return _table_entry(self._require(session, database, name))

    def list_tables(self, database: str | None = None, pattern: str | None = None,
                    kinds: Sequence[TableKind] | None = None) -> list[TableEntry]:
        """Kept while the catalog's version stays (see `list_databases`); a missing schema raises, and is not kept."""
        matcher = pattern_matcher(pattern)

        def read(session: Session) -> tuple[TableEntry, ...]:
            query = select(TableRow).order_by(TableRow.database, TableRow.name)
            if database is not None:
                self._require_database(session, database)
                query = query.where(TableRow.database == database.lower())
            return tuple(_table_entry(r) for r in session.scalars(query))
        key = ("tables", None if database is None else database.lower())
        return [entry for entry in self.reads.get(key, read, self.transaction)
                if (matcher is None or matcher.match(entry.name)) and (kinds is None or entry.kind in kinds)]

    def drop_table(self, database: str, name: str) -> TableEntry:
        with self.transaction() as session:
            row = self._require(session, database, name)
            entry = _table_entry(row)
            session.execute(delete(StreamEventRow).where(StreamEventRow.table_id == row.id))
            session.execute(delete(StreamRow).where(StreamRow.table_id == row.id))
            session.execute(delete(FlowRow).where(FlowRow.table_id == row.id))
            session.execute(delete(GrantRow).where(GrantRow.kind == "TABLE", GrantRow.database == row.database,
                                                   GrantRow.name == row.name))  # a new table of this name has none
            session.delete(row)
            return entry

    def rename_table(self, database: str, name: str, new_database: str, new_name: str, *,
                     location: str | None = None) -> TableEntry:
        """Rename, and move the row to `location` in the same transaction when the table's folder moved."""
        check_name(new_database, "database")
        try:
            with self.transaction() as session:
                row = self._require(session, database, name)
                check_name(new_name, _NAME_KINDS.get(row.kind, "table"))
                self._require_database(session, new_database)
                if self._find(session, new_database, new_name) is not None:
                    raise TableAlreadyExistsError(
                        f"cannot rename to `{new_database.lower()}`.`{new_name.lower()}`: it already exists")
                for grant in session.scalars(select(GrantRow).where(
                        GrantRow.kind == "TABLE", GrantRow.database == row.database, GrantRow.name == row.name)):
                    grant.database, grant.name = new_database.lower(), new_name.lower()  # a renamed table keeps them
                row.database, row.name, row.updated_at = new_database.lower(), new_name.lower(), utc_now()
                if location is not None:
                    row.location = location
                session.flush()
                return _table_entry(row)
        except IntegrityError as exc:
            raise TableAlreadyExistsError(
                f"cannot rename to `{new_database.lower()}`.`{new_name.lower()}`: it already exists") from exc

    def update_table(self, database: str, name: str, **changes: Any) -> TableEntry:
        unknown = set(changes) - _TABLE_CHANGES
        if unknown:
            raise TypeError(f"update_table cannot change {sorted(unknown)}")
        with self.transaction() as session:
            row = self._require(session, database, name)
            for key, value in changes.items():
                if key == "partition_by":
                    setattr(row, key, list(value))
                elif key == "properties":
                    setattr(row, key, dict(value))
                elif key == "keys":
                    setattr(row, key, [k.as_json() for k in value])
                else:
                    setattr(row, key, value)
            row.updated_at = utc_now()
            session.flush()
            return _table_entry(row)

    # -- streams ---------------------------------------------------------------------------------------------

    @staticmethod
    def _stream_row(session: Session, table: TableRow, flow: str | None) -> StreamRow | FlowRow | None:
        if flow is None:
            return session.get(StreamRow, table.id)
        return session.scalars(select(FlowRow).where(FlowRow.table_id == table.id, FlowRow.name == flow)).first()

    def put_stream(self, entry: StreamEntry, **table_changes: Any) -> StreamEntry:
        """Write a table's own stream (created when absent), or an existing flow's (create_flow makes one);
        `table_changes` (update_table's) change the table row in the same transaction (a full refresh switches the
        definition and the stream id together, or neither)."""
        unknown = set(table_changes) - _TABLE_CHANGES
        if unknown:
            raise TypeError(f"put_stream cannot change the table's {sorted(unknown)}")
        with self.transaction() as session:
            table = self._require(session, entry.database, entry.name)
            for key, value in table_changes.items():
                setattr(table, key, dict(value) if key == "properties" else list(value) if key == "partition_by"
                        else [k.as_json() for k in value] if key == "keys" else value)
            if table_changes:
                table.updated_at = utc_now()
            row = self._stream_row(session, table, entry.flow)
            if row is None and entry.flow is not None:
                raise FlowNotFoundError(f"The flow `{entry.database}`.`{entry.flow}` cannot be found.")
            row = row or StreamRow(table_id=table.id)
            _copy_stream_fields(entry, row)
            session.add(row)
            session.flush()
            return _stream_entry(table, row)

    def create_flow(self, entry: StreamEntry, comment: str | None, owner: str | None) -> StreamEntry:
        """A new flow into `entry`'s table; its name is unique among the flows of the database."""
        assert entry.flow is not None
        try:
            with self.transaction() as session:
                table = self._require(session, entry.database, entry.name)
                row = FlowRow(table_id=table.id, database=table.database, name=entry.flow, comment=comment,
                              owner=owner, created_at=utc_now())
                _copy_stream_fields(entry, row)
                session.add(row)
                session.flush()
                return _stream_entry(table, row)
        except IntegrityError as exc:
            raise FlowAlreadyExistsError(
                f"Cannot create flow `{entry.database}`.`{entry.flow}` because it already exists.",
                hint="choose another name, or DROP FLOW it first") from exc

    def find_flow(self, database: str, flow: str) -> StreamEntry | None:
        """The flow of that name in the database (flows have a namespace of their own), whatever its table."""
        with self.transaction() as session:
            found = session.execute(select(TableRow, FlowRow).join(FlowRow, FlowRow.table_id == TableRow.id)
                                    .where(FlowRow.database == database, FlowRow.name == flow)).first()
            return None if found is None else _stream_entry(found[0], found[1])

    def list_flows(self, database: str, table: str | None = None) -> list[FlowEntry]:
        with self.transaction() as session:
            query = select(TableRow, FlowRow).join(FlowRow, FlowRow.table_id == TableRow.id).where(
                FlowRow.database == database)
            if table is not None:
                query = query.where(TableRow.name == table)
            rows = session.execute(query.order_by(FlowRow.name)).all()
            return [FlowEntry(_stream_entry(t, f), f.comment, f.owner, f.created_at) for t, f in rows]

    def drop_flow(self, database: str, flow: str) -> None:
        with self.transaction() as session:
            session.execute(delete(FlowRow).where(FlowRow.database == database, FlowRow.name == flow))

    def get_stream(self, database: str, name: str, flow: str | None = None) -> StreamEntry | None:
        with self.transaction() as session:
            table = self._find(session, database, name)
            row = self._stream_row(session, table, flow) if table is not None else None
            return None if row is None or table is None else _stream_entry(table, row)

    def list_streams(self, desired_state: str | None = None) -> list[StreamEntry]:
        """Every table's own stream, then every flow."""
        with self.transaction() as session:
            found: list[StreamEntry] = []
            for model, order in ((StreamRow, TableRow.name), (FlowRow, FlowRow.name)):
                query = select(TableRow, model).join(model, model.table_id == TableRow.id)
                if desired_state is not None:
                    query = query.where(model.desired_state == desired_state)
                rows = session.execute(query.order_by(TableRow.database, order)).all()
                found += [_stream_entry(table, stream) for table, stream in rows]
            return found

    def update_stream(self, database: str, name: str, flow: str | None = None, **changes: Any) -> StreamEntry:
        unknown = set(changes) - _STREAM_FIELDS
        if unknown:
            raise TypeError(f"update_stream cannot change {sorted(unknown)}")
        with self.transaction() as session:
            table = self._require(session, database, name)
            row = self._stream_row(session, table, flow)
            if row is None:
                raise TableNotFoundError(f"`{table.database}`.`{table.name}` has no stream"
                                         + (f" named {flow}" if flow else ""),
                                         hint="only streaming tables have streams")
            for key, value in changes.items():
                setattr(row, key, value)
            row.updated_at = utc_now()
            session.flush()
            return _stream_entry(table, row)

    def record_event(self, database: str, name: str, kind: str, message: str, *, event_type: str | None = None,
                     level: str | None = None, details: dict[str, Any] | None = None,
                     error: dict[str, Any] | str | None = None, origin: dict[str, Any] | None = None,
                     flow: str | None = None) -> str:
        """Append one event to the table's event log (Databricks' shape, catalog/events.py) and trim the log to its
        retention; returns the event's id. `kind` alone maps to Databricks' type and level (STARTED is an
        `update_progress` RUNNING, FAILED one at level ERROR, ...); the keywords say them outright. `error` is
        Databricks' object or a message to make one of; `origin` adds to the names and ids filled in here; `flow`
        names the flow the event is about (its name and id in the origin)."""
        if event_type is None:
            shape = shape_of_kind(kind, message)
        else:
            shape = EventShape(event_type, level or "INFO", details or {event_type: {}})
            kind = kind or kind_of_type(event_type)
        level = level or shape.level
        if level not in LEVELS:
            raise ValueError(f"an event's level is one of {LEVELS}, not {level!r}")
        found_error = error_object(error) if isinstance(error, str) else error if error is not None else shape.error
        event_id = str(uuid.uuid4())
        with self.transaction() as session:
            table = self._require(session, database, name)
            last = session.scalar(select(func.max(StreamEventRow.sequence)).where(StreamEventRow.table_id == table.id))
            sequence = (last or 0) + 1
            now = utc_now()
            session.add(StreamEventRow(
                table_id=table.id, at=now, kind=kind[:32], message=message, event_id=event_id, sequence=sequence,
                event_type=shape.event_type, level=level, maturity_level=shape.maturity_level,
                origin=json.dumps({**_origin(table, self._stream_row(session, table, flow), flow),
                                   **(origin or {})}),
                error=json.dumps(found_error) if found_error else None,
                details=json.dumps(details if details is not None else shape.details, default=str)))
            self._trim_events(session, table.id, sequence, now)
        return event_id

    def _trim_events(self, session: Session, table_id: int, sequence: int, now: dt.datetime) -> None:
        """Keep the table's log within its retention: the newest `max_rows_per_table` events (one indexed delete
        per write), and every TRIM_DAYS_EVERY events those younger than `days`."""
        keep = self.event_retention.max_rows_per_table
        if keep > 0 and sequence > keep:
            session.execute(delete(StreamEventRow).where(StreamEventRow.table_id == table_id,
                                                         StreamEventRow.sequence <= sequence - keep))
        days = self.event_retention.days
        if days > 0 and sequence % TRIM_DAYS_EVERY == 1:
            session.execute(delete(StreamEventRow).where(StreamEventRow.table_id == table_id,
                                                         StreamEventRow.at < now - dt.timedelta(days=days)))

    def events(self, database: str, name: str, limit: int = 50) -> list[tuple[dt.datetime, str, str]]:
        """The newest events as (time, kind, message), newest first, for DESCRIBE; per-batch METRICS events left
        out (event_log(TABLE(t)) has them)."""
        with self.transaction() as session:
            table = self._require(session, database, name)
            rows = session.scalars(select(StreamEventRow)
                                   .where(StreamEventRow.table_id == table.id,
                                          or_(StreamEventRow.level.is_(None), StreamEventRow.level != "METRICS"))
                                   .order_by(StreamEventRow.id.desc()).limit(limit)).all()
            return [(r.at, r.kind, r.message) for r in rows]

    def table_of_stream(self, stream_id: str) -> tuple[str, str] | None:
        """The (database, table) whose stream has `stream_id` (the `pipeline_id` of its events' origin), or None."""
        with self.transaction() as session:
            found = session.execute(select(TableRow.database, TableRow.name).join(
                StreamRow, StreamRow.table_id == TableRow.id).where(StreamRow.stream_id == stream_id)).first()
            return None if found is None else (found[0], found[1])

    def event_log(self, database: str, name: str, after_sequence: int | None = None) -> list[EventRecord]:
        """Every event the table's log keeps, oldest first, in the columns of Databricks' `event_log`; with
        `after_sequence`, only those after that sequence number (a reader that keeps what it read: the console)."""
        with self.transaction() as session:
            table = self._require(session, database, name)
            query = select(StreamEventRow).where(StreamEventRow.table_id == table.id)
            if after_sequence is not None:
                query = query.where(StreamEventRow.sequence > after_sequence)
            rows = session.scalars(query.order_by(StreamEventRow.sequence, StreamEventRow.id)).all()
            fallback = json.dumps(_origin(table, session.get(StreamRow, table.id)))
            return [_event_record(row, fallback) for row in rows]


TRIM_DAYS_EVERY = 50


def _origin(table: TableRow, stream: StreamRow | FlowRow | None, flow: str | None = None) -> dict[str, Any]:
    """Databricks' `origin` for a streaming table's event: the table as dataset and flow, its stream as pipeline
    (the id stays across restarts), the running query as update."""
    qualified = f"{table.database}.{table.name}"
    origin: dict[str, Any] = {"pipeline_type": table.kind, "pipeline_name": qualified,
                              "dataset_name": qualified, "table_name": qualified,
                              "flow_name": f"{table.database}.{flow}" if flow else qualified}
    if stream is not None:
        origin.update(pipeline_id=stream.stream_id, flow_id=stream.stream_id)
        if stream.query_id:
            origin["update_id"] = stream.query_id
    return origin


def _event_record(row: StreamEventRow, fallback_origin: str) -> EventRecord:
    """A stored event as event_log's row; an event from before catalog version 4 by its kind."""
    shape = shape_of_kind(row.kind, row.message)
    return EventRecord(
        id=row.event_id or str(uuid.uuid5(uuid.NAMESPACE_OID, f"sluicegate-event-{row.id}")),
        sequence=sequence_json(row.sequence if row.sequence is not None else row.id),
        origin=row.origin or fallback_origin,
        timestamp=row.at.replace(tzinfo=dt.timezone.utc),
        message=row.message, level=row.level or shape.level, maturity_level=row.maturity_level,
        error=row.error, details=row.details or json.dumps(shape.details),
        event_type=row.event_type or shape.event_type)
