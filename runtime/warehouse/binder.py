"""Binding a query to snapshots: every catalog table it names is pinned to one committed Delta version.

Each reference (and its time-travel clause) is replaced in the text by a temporary view over the pinned snapshot's
files; catalog views are bound the same way, recursively. Spark analyses the rewritten text at once, after which
the temporary views are dropped (the analysed plan keeps what they pointed to). One statement therefore reads one
version per table, even if it names the table twice, and never sees a commit that lands while it runs.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from dialect.errors import SqlError
from dialect.references import PositionMap, TableReference, table_references
from dialect.statements import Query
from runtime.delta.read import Snapshot, load_snapshot, pinned_dataframe
from runtime.errors import RuntimeQueryError, from_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MAX_VIEW_DEPTH = 16
_counter = itertools.count()


@dataclass(frozen=True)
class ResolvedTable:
    database: str
    name: str
    kind: str                       # "TABLE" (a Delta table at `location`) or "VIEW" (defined by `view_sql`)
    location: str | None = None
    view_sql: str | None = None
    owner: str | None = None


class TableResolver(Protocol):
    def resolve(self, database: str | None, name: str) -> ResolvedTable | None:
        """The catalog object `database.name` names (current database when None), or None if the catalog has none.
        Raises a PolicyError when the reader may not read it."""

    def for_view(self, view: ResolvedTable) -> TableResolver:
        """The resolver for the tables inside `view` (views run with their owner's rights)."""


@dataclass
class BoundQuery:
    df: DataFrame
    snapshots: dict[tuple[str, str], Snapshot] = field(default_factory=dict)


class TimeTravelError(RuntimeQueryError):
    error_class = "INVALID_TIME_TRAVEL_SPEC"
    sqlstate = "42K0E"


def _parse_timestamp(text: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise TimeTravelError(f"'{text}' is not a timestamp", hint="write TIMESTAMP AS OF 'YYYY-MM-DD HH:MM:SS'") from exc
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


class Binder:
    """Binds the queries of one statement; `close()` drops the temporary views it created."""

    def __init__(self, spark: SparkSession, resolver: TableResolver, statement: str) -> None:
        self._spark = spark
        self._resolver = resolver
        self._statement = statement
        self._views: list[str] = []
        self._pinned: dict[tuple[str, str, int | None, str | None], tuple[str, Snapshot]] = {}
        self.snapshots: dict[tuple[str, str], Snapshot] = {}

    def _view_name(self) -> str:
        return f"__sg_snapshot_{next(_counter)}"

    def _position(self, ref: TableReference, query: Query) -> tuple[int, int]:
        offset = query.offset + ref.start
        before = self._statement[:offset]
        return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1

    def _bind_table(self, resolved: ResolvedTable, ref: TableReference, query: Query) -> str:
        key = (resolved.database, resolved.name, ref.version, ref.timestamp)
        if key in self._pinned:
            return self._pinned[key][0]
        timestamp = _parse_timestamp(ref.timestamp) if ref.timestamp is not None else None
        try:
            snapshot = load_snapshot(resolved.location or "", ref.version, timestamp)
        except RuntimeQueryError as exc:
            exc.line, exc.column = self._position(ref, query)
            raise
        name = self._view_name()
        pinned_dataframe(self._spark, snapshot).createOrReplaceTempView(name)
        self._views.append(name)
        self._pinned[key] = (name, snapshot)
        if ref.version is None and ref.timestamp is None:
            self.snapshots[(resolved.database, resolved.name)] = snapshot
        return name

    def _bind_view(self, resolved: ResolvedTable, ref: TableReference, query: Query, depth: int) -> str:
        if ref.version is not None or ref.timestamp is not None:
            line, column = self._position(ref, query)
            raise TimeTravelError(f"{resolved.database}.{resolved.name} is a view; views have no versions",
                                  line=line, column=column, hint="time-travel the tables the view reads instead")
        if depth >= MAX_VIEW_DEPTH:
            raise RuntimeQueryError(f"views nest deeper than {MAX_VIEW_DEPTH} levels at {resolved.name}",
                                    error_class="VIEW_EXCEED_MAX_NESTED_DEPTH", sqlstate="54K00")
        inner = Binder(self._spark, self._resolver.for_view(resolved), resolved.view_sql or "")
        try:
            df = inner.bind(Query(resolved.view_sql or ""), depth + 1)
        finally:
            self._views.extend(inner._views)
            self.snapshots.update(inner.snapshots)
        name = self._view_name()
        df.createOrReplaceTempView(name)
        self._views.append(name)
        return name

    def bind(self, query: Query, depth: int = 0) -> DataFrame:
        """The DataFrame of `query` with every catalog table pinned. Raises RuntimeQueryError with a position."""
        replacements: list[tuple[int, int, str]] = []
        for ref in table_references(query.sql):
            try:
                resolved = self._resolver.resolve(ref.database, ref.name)
            except SqlError as exc:
                if exc.line is None:
                    exc.line, exc.column = self._position(ref, query)
                raise
            if resolved is None:
                continue  # a temporary view of the session, or an error Spark reports with its position
            if resolved.kind == "VIEW":
                view = self._bind_view(resolved, ref, query, depth)
            else:
                view = self._bind_table(resolved, ref, query)
            replacements.append((ref.start, ref.end, view + _keep_name(query.sql, ref)))
        mapping = PositionMap(query.sql, replacements)
        try:
            return self._spark.sql(mapping.rewritten)
        except Exception as exc:  # noqa: BLE001 - every Spark failure becomes one typed error
            raise from_spark(exc, mapping.rewritten, original=self._statement,
                             to_original=_shifted(mapping, query.offset)) from exc

    def close(self) -> None:
        for name in self._views:
            self._spark.catalog.dropTempView(name)
        self._views.clear()


_ALIAS_AFTER = re.compile(r"\s+(AS\b|[A-Za-z_]\w*|`[^`]+`)", re.IGNORECASE)
_NOT_ALIASES = frozenset(
    "WHERE JOIN LEFT RIGHT INNER FULL CROSS OUTER ON GROUP ORDER LIMIT UNION HAVING WINDOW LATERAL NATURAL SEMI ANTI "
    "EXCEPT INTERSECT MINUS USING TABLESAMPLE PIVOT UNPIVOT CLUSTER DISTRIBUTE SORT QUALIFY OFFSET FOR VERSION "
    "TIMESTAMP SET WHEN SELECT WITH VALUES INSERT".split()
)


def _keep_name(sql: str, ref: TableReference) -> str:
    """` AS name` when the reference has no alias of its own, so `name.column` still resolves after the rewrite."""
    found = _ALIAS_AFTER.match(sql, ref.end)
    if found and found.group(1).upper() not in _NOT_ALIASES:
        return ""
    return f" AS `{ref.name}`"


def _shifted(mapping: PositionMap, offset: int) -> Callable[[int], int]:
    return lambda position: offset + mapping.to_original(position)
