"""Binding a query to snapshots: every catalog table it names is pinned to one committed Delta version.

The query is parsed once to find its table references; in the text, each that names a catalog table is replaced by a
temporary view over the pinned snapshot's files (keeping its alias, or given `AS name` so that `name.column` still
resolves; its time-travel clause read and dropped), and nothing else changes. Catalog views are bound the same way,
recursively, with the resolver the view's owner reads with. A map from the new text to the original offsets turns
Spark's error positions into positions in what the user typed. Spark analyses the text at once, after which the
temporary views are dropped (the analysed plan keeps what they pointed to). Their names are random and a name with
their prefix in a user's text is refused: a catalog view's tables are read with its owner's rights, so a user who
could name one in the statement that binds it would read the table whole. One statement therefore reads one version
per table, even if it names the table twice (or a view names it too), and never sees a commit that lands while it
runs.

Each reference's view reads only the files of that version whose statistics may match the predicates its query
applies to the table's rows first (dialect/filters.py, storage/delta/skipping.py): the same table named twice with
different filters gets two views over two file lists of one version. `spark.sluicegate.dataSkipping.enabled=false`
(a session setting) reads every file; `reads` says what each reference read, for EXPLAIN.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from sqlglot import exp

from sluicegate.catalog.errors import TableNotFoundError
from sluicegate.catalog.names import quote_qualified, quote_string
from sluicegate.dialect import catalogs
from sluicegate.dialect.catalogs import INFORMATION_SCHEMA, RUNTIME, SYSTEM
from sluicegate.dialect.errors import SqlError
from sluicegate.dialect.filters import Predicate, table_predicates
from sluicegate.dialect.positions import line_column
from sluicegate.dialect.references import (
    FunctionCall,
    TableReference,
    column_qualifiers,
    current_catalog_calls,
    file_reads,
    function_calls,
    history_reads,
    parameter_qualifiers,
    parse,
    splice,
    table_function_calls,
    table_references,
)
from sluicegate.dialect.statements import Query
from sluicegate.engine.sessions import drop_temporary_view, replace_temporary_view, sql_dataframe
from sluicegate.executor.binding.file_reads import file_dataframe
from sluicegate.executor.binding.resolved import ResolvedTable, TableResolver
from sluicegate.executor.binding.resolver import CatalogResolver
from sluicegate.executor.listings.event_log import EventLogReader, event_log_dataframe
from sluicegate.executor.listings.history import HistoryReader, history_dataframe
from sluicegate.executor.listings.information_schema import information_schema_reader
from sluicegate.executor.listings.query_history import is_query_history, query_history_reader
from sluicegate.executor.listings.runtime_tables import runtime_reader
from sluicegate.storage.delta.holds import hold
from sluicegate.storage.delta.read import pinned_dataframe
from sluicegate.storage.delta.skipping import prune
from sluicegate.storage.delta.snapshots import Snapshot, load_snapshot
from sluicegate.storage.spark_errors import RuntimeQueryError, from_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sluicegate.catalog.functions import FunctionEntry
    from sluicegate.executor.context import StatementContext

__all__ = ["DATA_SKIPPING", "Binder", "BoundQuery", "ResolvedTable", "TableRead", "TableResolver", "TimeTravelError",
           "bind"]

MAX_VIEW_DEPTH = 16
FUNCTION_PREFIX = "__sg_function_"   # the binder's own temporary functions: never a name a user's text may call
_PinKey = tuple[str, str, "int | None", "str | None", bool]
VIEW_PREFIX = "__sg_snapshot_"   # the binder's own temporary views: never a name a user's text may use
SOURCE_FILE = "__sg_source_file"   # the column a rewrite's target is bound with (`source_files`)
DATA_SKIPPING = "spark.sluicegate.dataSkipping.enabled"  # session setting: "false" reads every file of a snapshot
# reads `information_schema.<view>`, given the reference and a map from offsets to the statement's line and column
InformationSchemaReader = Callable[[TableReference, Callable[[int], "tuple[int, int]"]], "DataFrame"]


@dataclass
class BoundQuery:
    df: DataFrame
    snapshots: dict[tuple[str, str], Snapshot] = field(default_factory=dict)


@dataclass(frozen=True)
class TableRead:
    """What one reference to a Delta table reads: `files` of the `total` files of `version`; `skipping` is False
    when the session turned data skipping off."""

    table: str
    version: int
    files: int
    total: int
    skipping: bool = True


@dataclass
class _Pins:
    """Shared by the binders of one statement (a view's included): one snapshot per table and time-travel clause,
    and one temporary view per distinct list of its files that a reference reads."""

    snapshots: dict[_PinKey, Snapshot] = field(default_factory=dict)
    views: dict[tuple[_PinKey, tuple[str, ...]], str] = field(default_factory=dict)
    functions: dict[tuple[str, str], str] = field(default_factory=dict)  # a catalog function's temporary one


class TimeTravelError(RuntimeQueryError):
    error_class = "INVALID_TIME_TRAVEL_SPEC"
    sqlstate = "42K0E"


def parse_timestamp(text: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise TimeTravelError(f"'{text}' is not a timestamp",
                              hint="write TIMESTAMP AS OF 'YYYY-MM-DD HH:MM:SS'") from exc
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


class Binder:
    """Binds the queries of one statement; `close()` drops the temporary views it created.

    `resolved` lists every catalog table and view the bound queries name, in text order (a view's own tables are
    not listed: they are read with the view owner's resolver), for the policy to check rights on."""

    def __init__(self, spark: SparkSession, resolver: TableResolver, statement: str,
                 _pinned: _Pins | None = None,
                 guard: Callable[[str], None] | None = None,
                 files: Callable[[TableReference], DataFrame] | None = None,
                 event_logs: EventLogReader | None = None,
                 information_schema: InformationSchemaReader | None = None,
                 query_history: InformationSchemaReader | None = None,
                 runtime: InformationSchemaReader | None = None,
                 history: HistoryReader | None = None,
                 source_files: frozenset[tuple[str, str]] = frozenset(),
                 predicates: Mapping[tuple[str, str], tuple[Predicate, ...]] | None = None) -> None:
        """`guard` judges each text before `spark.sql` gets it (the policy: no command may hide in a query);
        `files` reads a batch `read_files(...)` call once the policy allows it (without it the call stays in the
        text, where the policy refuses it); `event_logs` reads an `event_log(TABLE(t))` call, the table resolved
        (and the right to read it checked) by this binder's resolver; `information_schema` reads a view of
        `information_schema` (executor/listings/information_schema.py); `query_history` reads `system.query.history`
        (executor/listings/query_history.py), `runtime` a table of `system.runtime`
        (executor/listings/runtime_tables.py), `history` a `(DESCRIBE HISTORY t)` subquery, the table resolved (and
        the right to read it checked) by this binder's resolver (executor/listings/history.py)."""
        self._spark = spark
        self._guard = guard
        self._files = files
        self._event_logs = event_logs
        self._information_schema = information_schema
        self._query_history = query_history
        self._runtime = runtime
        self._history = history
        self._resolver = resolver
        self._statement = statement
        self._views: list[str] = []
        self._functions: list[str] = []  # the temporary functions of the catalog functions its queries call
        self._releases: list[Callable[[], None]] = []  # the holds on pinned versions (storage/delta/holds.py)
        self._pinned = _pinned if _pinned is not None else _Pins()  # shared with the binders of views
        self._skipping: bool | None = None  # the session's DATA_SKIPPING, read once when first needed
        # tables bound with one more column, SOURCE_FILE: the file of each row (the target of a rewrite)
        self._source_files = source_files
        # tables whose rows are pruned by the predicates given here, not by their query's own (a rewrite's target)
        self._given = predicates or {}
        self.snapshots: dict[tuple[str, str], Snapshot] = {}
        self.resolved: list[ResolvedTable] = []
        self.reads: list[TableRead] = []

    def _view_name(self) -> str:
        """Unguessable: the session's user could otherwise name, in the same statement, the view a catalog view's
        table is bound to (read with the view owner's rights) and read that table whole."""
        return f"{VIEW_PREFIX}{uuid.uuid4().hex}"

    def _position(self, offset_in_query: int, query: Query) -> tuple[int, int]:
        return line_column(self._statement, query.offset + offset_in_query)

    def _relocate(self, exc: SqlError, query: Query) -> SqlError:
        """A position in `query.sql` (as dialect errors carry it) made a position in the statement."""
        if exc.line is not None and exc.column is not None and query.offset:
            lines = query.sql.split("\n")
            offset = sum(len(text) + 1 for text in lines[: exc.line - 1]) + exc.column - 1
            exc.line, exc.column = self._position(offset, query)
        return exc

    def _skipping_enabled(self) -> bool:
        if self._skipping is None:
            setting = self._spark.conf.get(DATA_SKIPPING, "true")
            self._skipping = (setting or "true").strip().lower() != "false"
        return self._skipping

    def _predicates(self, resolved: ResolvedTable, ref: TableReference) -> tuple[Predicate, ...]:
        """What the reference's query applies to the table's rows first, or what the caller gave for the table
        (nothing when skipping is off)."""
        if not isinstance(ref.node, exp.Table):
            return ()
        predicates = self._given.get((resolved.database, resolved.name)) or table_predicates(ref.node)
        return predicates if predicates and self._skipping_enabled() else ()

    def _bind_table(self, resolved: ResolvedTable, ref: TableReference, query: Query) -> str:
        with_file = (resolved.database, resolved.name) in self._source_files
        key = (resolved.database, resolved.name, ref.version, ref.timestamp, with_file)
        snapshot = self._pinned.snapshots.get(key)
        if snapshot is None:
            try:
                timestamp = parse_timestamp(ref.timestamp) if ref.timestamp is not None else None
                snapshot = load_snapshot(resolved.location or "", ref.version, timestamp)
            except RuntimeQueryError as exc:
                exc.line, exc.column = self._position(ref.start, query)
                raise
            self._pinned.snapshots[key] = snapshot
            self._releases.append(hold(snapshot.path, snapshot.version))
        pruned = prune(snapshot, self._predicates(resolved, ref))
        read = pruned.snapshot
        name = self._pinned.views.get((key, read.files))
        if name is None:
            name = self._view_name()
            replace_temporary_view(pinned_dataframe(self._spark, read, SOURCE_FILE if with_file else None), name)
            self._views.append(name)
            self._pinned.views[(key, read.files)] = name
        self.reads.append(TableRead(f"{catalogs.current().name}.{resolved.qualified}", snapshot.version,
                                    len(read.files), pruned.total, self._skipping is not False))
        if ref.version is None and ref.timestamp is None:
            # the whole version: DELETE, UPDATE and MERGE commit against it, MV refreshes record it
            self.snapshots[(resolved.database, resolved.name)] = snapshot
        return name

    def _bind_view(self, resolved: ResolvedTable, ref: TableReference, query: Query, depth: int) -> str:
        if ref.version is not None or ref.timestamp is not None:
            line, column = self._position(ref.start, query)
            raise TimeTravelError(f"{resolved.qualified} is a view; views have no versions",
                                  line=line, column=column, hint="time-travel the tables the view reads instead")
        if depth >= MAX_VIEW_DEPTH:
            raise RuntimeQueryError(f"views nest deeper than {MAX_VIEW_DEPTH} levels at {resolved.name}",
                                    error_class="VIEW_EXCEED_MAX_NESTED_DEPTH", sqlstate="54K00")
        inner = Binder(self._spark, self._resolver.for_view(resolved), resolved.view_sql or "", self._pinned,
                       guard=self._guard, files=self._files, event_logs=self._event_logs,
                       information_schema=self._information_schema, query_history=self._query_history,
                       runtime=self._runtime, history=self._history)
        try:
            df = inner.bind(Query(resolved.view_sql or ""), depth + 1)
        finally:
            self._adopt(inner)
        name = self._view_name()
        replace_temporary_view(df, name)
        self._views.append(name)
        return name

    def _bind_function(self, read: Callable[[TableReference], DataFrame], ref: TableReference, query: Query) -> str:
        """A table function's call bound to a temporary view over what `read` makes of it."""
        try:
            df = read(ref)
        except SqlError as exc:
            if exc.line is None:
                exc.line, exc.column = self._position(ref.start, query)
            raise
        name = self._view_name()
        replace_temporary_view(df, name)
        self._views.append(name)
        return name

    def _information_schema_view(self, query: Query) -> Callable[[TableReference], DataFrame]:
        read = self._information_schema
        assert read is not None
        return lambda ref: read(ref, lambda offset: self._position(offset, query))

    def _query_history_view(self, query: Query) -> Callable[[TableReference], DataFrame]:
        read = self._query_history
        assert read is not None
        return lambda ref: read(ref, lambda offset: self._position(offset, query))

    def _runtime_table(self, query: Query) -> Callable[[TableReference], DataFrame]:
        read = self._runtime
        assert read is not None
        return lambda ref: read(ref, lambda offset: self._position(offset, query))

    def _bind_call(self, call: FunctionCall, query: Query, depth: int) -> list[tuple[TableReference, str]]:
        """A call of a catalog SQL function: its name replaced by the statement's temporary function of it (an
        unaliased column keeps the call as written as its name); none for any other function, left to Spark."""
        if call.catalog is not None and call.catalog.lower() != catalogs.current().name.lower():
            return []
        if call.database is None and call.name.lower().startswith(FUNCTION_PREFIX):
            line, column = self._position(call.start, query)
            raise RuntimeQueryError(f"the routine `{call.name}` cannot be found: verify the spelling and the schema "
                                    "(SHOW USER FUNCTIONS lists the catalog's)", error_class="UNRESOLVED_ROUTINE",
                                    sqlstate="42883", line=line, column=column)
        try:
            entry = self._resolver.function(call.database, call.name)
        except SqlError as exc:
            if exc.line is None:
                exc.line, exc.column = self._position(call.start, query)
            raise
        if entry is None:
            return []
        name = self._bind_sql_function(entry, depth)
        found = [(TableReference(None, call.name, call.start, call.name_end, needs_alias=False), f"`{name}`")]
        if call.is_column:
            written = query.sql[call.start:call.end].replace("`", "``")
            found.append((TableReference(None, "", call.end, call.end, needs_alias=False), f" AS `{written}`"))
        return found

    def _bind_sql_function(self, entry: FunctionEntry, depth: int) -> str:
        """`entry` as a temporary function of this statement's session, once per statement: its body bound as a
        query is (its tables pinned and read with this binder's rights: the caller's), then judged by the guard."""
        key = (entry.database, entry.name)
        name = self._pinned.functions.get(key)
        if name is not None:
            return name
        if depth >= MAX_VIEW_DEPTH:
            raise RuntimeQueryError(f"functions and views nest deeper than {MAX_VIEW_DEPTH} levels at "
                                    f"{entry.database}.{entry.name} (a function calling itself?)",
                                    error_class="ROUTINE_EXCEED_MAX_NESTED_DEPTH", sqlstate="54K00")
        # unguessable, and refused in a user's text (`_bind_call`): a view's functions are bound with its owner's
        # rights, so a user who could call one by name in the statement that binds it would call it with any argument
        name = f"{FUNCTION_PREFIX}{uuid.uuid4().hex}"
        # `f.p` (a parameter by the function's name) names the temporary function instead
        body = splice(entry.body, [(ref, f"`{name}`") for ref in parameter_qualifiers(
            entry.body, entry.name, tuple(p for p, _ in entry.parameters))]).sql
        inner = Binder(self._spark, self._resolver, body, self._pinned, guard=self._guard, files=self._files,
                       event_logs=self._event_logs, information_schema=self._information_schema,
                       query_history=self._query_history, runtime=self._runtime, history=self._history)
        try:
            body, _ = inner.rewrite(Query(body), depth + 1)
        finally:
            self._adopt(inner)
        create = f"CREATE TEMPORARY FUNCTION `{name}`{entry.signature} RETURNS {entry.returns} RETURN {body}"
        if self._guard is not None:
            self._guard(f"SELECT ({body})")  # the body as any query's text: no command, no reflection, no script
        try:
            self._spark.sql(create)
        except Exception as exc:
            raise from_spark(exc, create) from exc
        self._functions.append(name)
        self._pinned.functions[key] = name
        return name

    def check_function(self, entry: FunctionEntry) -> DataFrame:
        """`entry` bound as a call binds it, and a call of it with NULL arguments analysed (nothing runs): what
        CREATE FUNCTION checks before it keeps a function (its body compiles, reads what its creator may read)."""
        name = self._bind_sql_function(entry, 0)
        sql = f"SELECT `{name}`({', '.join(f'CAST(NULL AS {kind})' for _, kind in entry.parameters)})"
        if self._guard is not None:
            self._guard(sql)
        try:
            return sql_dataframe(self._spark, sql)
        except Exception as exc:
            raise from_spark(exc, sql) from exc

    def _adopt(self, inner: Binder) -> None:
        """What an inner binder (a view's, a function body's) made, for this one to release and close."""
        self._views.extend(inner._views)
        self._functions.extend(inner._functions)
        self._releases.extend(inner._releases)
        self.snapshots.update(inner.snapshots)
        self.reads.extend(inner.reads)

    def _resolve(self, ref: TableReference, query: Query) -> ResolvedTable | None:
        try:
            return self._resolver.resolve(ref.database, ref.name)
        except SqlError as exc:
            if exc.line is None:
                exc.line, exc.column = self._position(ref.start, query)
            raise

    def rewrite(self, query: Query, depth: int = 0, *, reads_only: bool = False) -> tuple[str, Callable[[int], int]]:
        """`query.sql` with every catalog table it names bound, and the map from offsets in the new text to offsets
        in `query.sql`. `reads_only`: bind only the tables that a query inside the statement reads (not the table a
        CREATE or INSERT writes), for statements Spark runs itself. Raises a SqlError with a position."""
        try:
            tree = parse(query.sql)
            refs = table_references(query.sql, tree)
        except SqlError as exc:
            raise self._relocate(exc, query) from None
        replacements: list[tuple[TableReference, str]] = []
        if reads_only:
            # the table the statement writes stays Spark's to resolve, named without the catalog Spark does not know
            replacements += [(replace(ref, needs_alias=False), _two_parts(ref)) for ref in refs
                             if not _read_by_a_query(ref) and _names_a_catalog(ref)]
            refs = [ref for ref in refs if _read_by_a_query(ref)]
        for ref in refs:
            if self._information_schema is not None and (ref.database or "").lower() == INFORMATION_SCHEMA:
                replacements.append((ref, self._bind_function(self._information_schema_view(query), ref, query)))
                continue
            if self._query_history is not None and is_query_history(ref):
                replacements.append((ref, self._bind_function(self._query_history_view(query), ref, query)))
                continue
            if self._runtime is not None and _names_system_runtime(ref):
                replacements.append((ref, self._bind_function(self._runtime_table(query), ref, query)))
                continue
            if ref.database is None and ref.name.lower().startswith(VIEW_PREFIX):
                line, column = self._position(ref.start, query)
                raise TableNotFoundError(f"the table or view `{ref.name}` cannot be found", line=line, column=column)
            resolved = self._resolve(ref, query)
            if resolved is None and _names_a_catalog(ref):
                # one of Spark's own (or nothing): Spark reads it without the catalog part it does not know
                replacements.append((ref, _two_parts(ref)))
            if resolved is None:
                continue  # a temporary view of Spark's, or an error Spark reports with its position
            self.resolved.append(resolved)
            if resolved.kind == "VIEW":
                view = self._bind_view(resolved, ref, query, depth)
            else:
                view = self._bind_table(resolved, ref, query)
            replacements.append((ref, view))
        if self._files is not None:
            for ref in file_reads(query.sql, tree):
                replacements.append((ref, self._bind_function(self._files, ref, query)))
        if self._event_logs is not None:
            read_log = self._event_logs
            for ref in table_function_calls(query.sql, tree, "event_log"):
                replacements.append((ref, self._bind_function(
                    lambda call: read_log(call, self._resolver, lambda offset: self._position(offset, query)),
                    ref, query)))
        if self._history is not None:
            read_history = self._history
            for ref in history_reads(query.sql, tree):
                replacements.append((ref, self._bind_function(
                    lambda table: read_history(table, self._resolver, lambda offset: self._position(offset, query)),
                    ref, query)))
        for call in function_calls(query.sql, tree):
            replacements += self._bind_call(call, query, depth)
        for ref in current_catalog_calls(query.sql, tree):
            replacements.append((ref, quote_string(catalogs.current().name)))
        # `main.s.t.id` / `s.t.id` of a table read as `<view> AS t`: only `t.id` resolves there, as Spark resolves it
        replacements += [(ref, "") for ref in column_qualifiers(tree)]
        if not replacements:  # nothing to rewrite: Spark reads the text as typed
            return query.sql, _identity
        spliced = splice(query.sql, replacements)
        return spliced.sql, spliced.to_original

    def bind(self, query: Query, depth: int = 0) -> DataFrame:
        """The DataFrame of `query` with every catalog table pinned. Raises a SqlError with a position."""
        sql, to_original = self.rewrite(query, depth)
        if self._guard is not None:
            self._guard(sql)
        try:
            return sql_dataframe(self._spark, sql)
        except Exception as exc:
            raise from_spark(exc, sql, original=self._statement,
                             to_original=lambda position: query.offset + to_original(position)) from exc

    def take_holds(self) -> Callable[[], None]:
        """The holds on the pinned versions, taken out of the binder for what reads the result after `close()` (a
        query's rows are computed as they are fetched); call the returned function to release them."""
        releases, self._releases = self._releases, []

        def release() -> None:
            for each in releases:
                each()
        return release

    def close(self) -> None:
        for release in self._releases:
            release()
        self._releases.clear()
        for name in self._views:
            drop_temporary_view(self._spark, name)
        self._views.clear()
        for name in self._functions:
            self._spark.sql(f"DROP TEMPORARY FUNCTION IF EXISTS `{name}`")
        self._functions.clear()


def _identity(offset: int) -> int:
    return offset


def _names_a_catalog(ref: TableReference) -> bool:
    """Whether the reference was written `catalog.schema.table` (the catalog dropped by dialect/catalogs.py)."""
    return ref.node is not None and bool(ref.node.meta.get("catalog"))


def _names_system_runtime(ref: TableReference) -> bool:
    """Whether the reference was written `system.runtime.<table>` (a schema `runtime` of the catalog stays one)."""
    return ((ref.database or "").lower() == RUNTIME and ref.node is not None
            and str(ref.node.meta.get("catalog") or "").lower() == SYSTEM)


def _two_parts(ref: TableReference) -> str:
    return quote_qualified(*(part for part in (ref.database, ref.name) if part))


def _read_by_a_query(ref: TableReference) -> bool:
    """Whether the reference sits inside a query (a read), not at the root of a CREATE or INSERT (the target)."""
    node = ref.node.parent if ref.node is not None else None
    while node is not None:
        if isinstance(node, exp.Query):
            return True
        node = node.parent
    return False


def catalog_resolver(ctx: StatementContext) -> CatalogResolver:
    """The catalog as the session's user sees it, the session's query-defined temporary views included."""
    return CatalogResolver(ctx.store, lambda: ctx.current_database, ctx.is_temporary_view, ctx.policy,
                           ctx.principal, lambda name: ctx.session_views.query_of(ctx.spark, name))


def bind_statement(ctx: StatementContext) -> tuple[str, Callable[[int], int], Binder]:
    """For a statement Spark runs itself (a CTAS into parquet, an INSERT into one of Spark's tables, EXPLAIN ...):
    its text with every catalog table that a query inside it reads bound to a pinned snapshot, as for any SELECT,
    so Spark sees the whole warehouse. The caller runs the text, then closes the binder."""
    binder = Binder(ctx.spark, catalog_resolver(ctx), ctx.sql,
                    guard=lambda sql: ctx.policy.check_query_text(ctx.spark, sql, ctx.principal),
                    files=lambda ref: file_dataframe(ctx, ref), event_logs=event_log_dataframe(ctx),
                    information_schema=information_schema_reader(ctx), query_history=query_history_reader(ctx),
                    runtime=runtime_reader(ctx), history=history_dataframe(ctx))
    try:
        sql, to_original = binder.rewrite(Query(ctx.sql), reads_only=True)
        return sql, to_original, binder
    except BaseException:
        binder.close()
        raise


def bind(ctx: StatementContext, query: Query, resolver: TableResolver | None = None,
         source_files: frozenset[tuple[str, str]] = frozenset(),
         predicates: Mapping[tuple[str, str], tuple[Predicate, ...]] | None = None) -> tuple[DataFrame, Binder]:
    """`query` analysed with every catalog table pinned, each read allowed for the user (views: for their owner)
    and the analysed plan judged by the policy; the caller closes the binder once the data is read. `resolver`
    defaults to the catalog's, as the session's user sees it; the tables `source_files` names carry one more
    column, SOURCE_FILE, the URI of each row's file; the tables `predicates` names read only the files that may
    hold a row satisfying those (a DELETE's or UPDATE's target, by its WHERE)."""
    resolver = resolver or catalog_resolver(ctx)
    binder = Binder(ctx.spark, resolver, ctx.sql,
                    guard=lambda sql: ctx.policy.check_query_text(ctx.spark, sql, ctx.principal),
                    files=lambda ref: file_dataframe(ctx, ref), event_logs=event_log_dataframe(ctx),
                    information_schema=information_schema_reader(ctx), query_history=query_history_reader(ctx),
                    runtime=runtime_reader(ctx), history=history_dataframe(ctx),
                    source_files=source_files,
                    predicates=predicates)
    try:
        df = binder.bind(query)
        ctx.policy.check_query(df, ctx.principal)
        return df, binder
    except BaseException:
        binder.close()
        raise
