"""The query history: one row per statement, in the shape of Databricks' `system.query.history`
(https://docs.databricks.com/aws/admin/system-tables/query-history), kept with the catalog so it survives a restart:
in a SQLite file of its own next to a SQLite catalog, so that its writes never hold the catalog's lock
(catalog/history_db.py).

The gateway's writer (gateway/history.py) appends records in batches from a thread of its own (on SQLite one raw
executemany of plain rows per batch, written as SQLAlchemy writes them; elsewhere SQLAlchemy's insert) and trims the
table to its retention (conf `[history]`: an age and a row count) as it writes, as stream events are trimmed; the reader
(`system.query.history`, executor/listings/query_history.py) reads a user's own rows, or every row for an admin. The
statement text arrives already redacted (dialect/redaction.py): nothing here sees a literal the operator did not
choose to keep.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, delete, func, insert, select
from sqlalchemy.engine import Connection

from sluicegate.catalog.models import QueryHistoryRow

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore

CLIENT = "CLIENT"          # `source` of a statement a client sent
SYSTEM_USER = "system"     # `executed_by` of the gateway's own work (stream starts, scheduled refreshes)
STATUSES = ("FINISHED", "FAILED", "CANCELED", "TIMEDOUT")


@dataclass(frozen=True)
class HistorySettings:
    """Conf `[history]`: whether statements are recorded, whether their text keeps its literals, and how long and how
    many rows are kept (0 turns a bound off)."""

    enabled: bool = True
    keep_text_whole: bool = False
    max_age_days: float = 30.0
    max_rows: int = 100_000
    batch_size: int = 500        # at most this many records per write transaction
    flush_interval: float = 0.5  # seconds the writer waits to gather a batch


@dataclass(frozen=True)
class HistoryRecord:
    """One statement, as the history keeps it (the columns of `system.query.history`, in its order)."""

    statement_id: str
    session_id: str | None
    executed_by: str
    source: str
    client_application: str | None
    client_address: str | None
    statement_type: str
    execution_status: str
    error_class: str | None
    sqlstate: str | None
    error_message: str | None
    start_time: dt.datetime          # UTC
    end_time: dt.datetime | None
    total_duration_ms: int | None
    execution_duration_ms: int | None
    produced_rows: int | None
    modified_rows: int | None
    read_tables: tuple[str, ...]
    written_tables: tuple[str, ...]
    statement_text: str | None
    read_rows: int | None = None     # rows Spark's scans read, where it counted them (gateway/history.py says when)
    read_bytes: int | None = None
    from_result_cache: bool | None = None   # answered from the result cache, no Spark job (None: not a statement)


def _naive_utc(value: dt.datetime | None) -> dt.datetime | None:
    """The catalog stores UTC without a zone (as every DateTime column here)."""
    if value is None or value.tzinfo is None:
        return value
    return value.astimezone(dt.timezone.utc).replace(tzinfo=None)


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    return value.replace(tzinfo=dt.timezone.utc) if value is not None and value.tzinfo is None else value


_COLUMNS = tuple(each.name for each in fields(HistoryRecord))   # the table's columns but `id`, in record order
_ROW = attrgetter(*_COLUMNS)
_TIMES = (_COLUMNS.index("start_time"), _COLUMNS.index("end_time"))
_TABLES = (_COLUMNS.index("read_tables"), _COLUMNS.index("written_tables"))
# SQLite: one raw executemany per batch (no SQLAlchemy compile, parameter processing or dict per row: that was 2/3 of
# the writer's CPU per statement, bench/history_cpu.py); other databases take the Core insert of the same rows
_SQLITE_INSERT = (f"INSERT INTO {QueryHistoryRow.__tablename__} ({', '.join(_COLUMNS)}) "
                  f"VALUES ({', '.join('?' * len(_COLUMNS))})")


def _sqlite_time(value: dt.datetime | None) -> str | None:
    """A time as SQLAlchemy's SQLite `DateTime` stores it (naive UTC, `YYYY-MM-DD HH:MM:SS.ffffff`), so the rows
    written raw read back, sort and compare with the trim's cutoff exactly as rows written through SQLAlchemy."""
    naive = _naive_utc(value)
    return None if naive is None else naive.isoformat(" ", "microseconds")


def _row(record: HistoryRecord, time: Callable[[dt.datetime | None], Any]) -> list[Any]:
    """A record as the values of one row in `_COLUMNS`' order: its times through `time`, its tables as JSON lists."""
    row = list(_ROW(record))
    for index in _TIMES:
        row[index] = time(row[index])
    for index in _TABLES:
        row[index] = json.dumps(list(row[index])) if row[index] else "[]"
    return row


def _record(row: QueryHistoryRow) -> HistoryRecord:
    start = _aware(row.start_time)
    assert start is not None
    return HistoryRecord(
        row.statement_id, row.session_id, row.executed_by, row.source, row.client_application, row.client_address,
        row.statement_type, row.execution_status, row.error_class, row.sqlstate, row.error_message, start,
        _aware(row.end_time), row.total_duration_ms, row.execution_duration_ms, row.produced_rows, row.modified_rows,
        tuple(json.loads(row.read_tables or "[]")), tuple(json.loads(row.written_tables or "[]")),
        row.statement_text, row.read_rows, row.read_bytes, row.from_result_cache)


_INSERT = insert(QueryHistoryRow)
_NEWEST = select(func.max(QueryHistoryRow.id))
_TRIM_ROWS = delete(QueryHistoryRow).where(QueryHistoryRow.id <= bindparam("last"))
_TRIM_AGE = delete(QueryHistoryRow).where(QueryHistoryRow.start_time < bindparam("cutoff"))


def append(store: CatalogStore, records: Sequence[HistoryRecord], settings: HistorySettings,
           now: dt.datetime | None = None, *, trim: bool = True) -> int:
    """Write `records` in one transaction and, when `trim`, trim the table to the retention; returns the rows
    trimmed. One connection, statements built once, one executemany: the writer runs this for every batch."""
    if not records:
        return 0
    with store.history_db.connection() as conn:
        (insert_raw if conn.dialect.name == "sqlite" else insert_core)(conn, records)
        return _trim(conn, settings, now or dt.datetime.now(dt.timezone.utc)) if trim else 0


def insert_raw(conn: Connection, records: Sequence[HistoryRecord]) -> None:
    """`records` as rows of a SQLite history, in one executemany of the driver (`append` on SQLite)."""
    conn.exec_driver_sql(_SQLITE_INSERT, [tuple(_row(record, _sqlite_time)) for record in records])


def insert_core(conn: Connection, records: Sequence[HistoryRecord]) -> None:
    """`records` as rows through SQLAlchemy's insert, which converts each value for the database (`append` on any
    database but SQLite)."""
    conn.execute(_INSERT, [dict(zip(_COLUMNS, _row(record, _naive_utc), strict=True)) for record in records])


def _trim(conn: Connection, settings: HistorySettings, now: dt.datetime) -> int:
    removed = 0
    if settings.max_rows > 0:
        newest = conn.scalar(_NEWEST)
        if newest is not None and newest > settings.max_rows:
            removed += int(conn.execute(_TRIM_ROWS, {"last": newest - settings.max_rows}).rowcount or 0)
    if settings.max_age_days > 0:
        cutoff = _naive_utc(now - dt.timedelta(days=settings.max_age_days))
        removed += int(conn.execute(_TRIM_AGE, {"cutoff": cutoff}).rowcount or 0)
    return removed


def read(store: CatalogStore, user: str | None, limit: int | None = None, *, status: str | None = None,
         text: str | None = None) -> list[HistoryRecord]:
    """The history, newest first: `user`'s statements only, or every statement when `user` is None (an admin);
    only those of `status`, and whose stored text holds `text` (case-insensitive), when given."""
    query = select(QueryHistoryRow).order_by(QueryHistoryRow.id.desc())
    if user is not None:
        query = query.where(QueryHistoryRow.executed_by == user)
    if status:
        query = query.where(QueryHistoryRow.execution_status == status)
    if text:
        query = query.where(func.lower(QueryHistoryRow.statement_text).contains(text.lower(), autoescape=True))
    if limit is not None:
        query = query.limit(limit)
    with store.history_db.transaction() as session:
        return [_record(row) for row in session.scalars(query)]


def count(store: CatalogStore) -> int:
    with store.history_db.transaction() as session:
        return int(session.scalar(select(func.count()).select_from(QueryHistoryRow)) or 0)
