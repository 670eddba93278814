"""Refreshing a materialized view: its query recomputed over ONE pinned version of every table it reads, written as
ONE Delta commit that replaces every row, so a reader sees the view as of one consistent set of input versions and
never a half-refresh.

What the view reflects lives in the catalog beside its row, in the `streams` row every refreshed table has (no
migration): `plan_json` holds the view's refresh state (`MaterializedViewState`: the refresh policy, the input
versions of the last successful refresh, how and why it ran), and the refresh columns (`last_refresh_at`,
`last_refresh_status`, `last_error`, `next_run_at`) are the ones DESCRIBE already reads for streaming tables. The row's
`desired_state` is `MATERIALIZED_VIEW`, so the stream supervisor, which takes on rows that should be RUNNING, never
mistakes it for a stream.

A refresh whose input versions equal the recorded ones does nothing (no commit): the result could not differ. A query
that reads anything but catalog Delta tables and views (read_files, range, Spark's own tables) has no versions to
compare, so it is recomputed every time (and needs REFRESH POLICY FULL). A refresh that fails leaves the previous
result in place (nothing was committed) and its error in the catalog (DESCRIBE) and the event log.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sluicegate.catalog.clock import utc_now
from sluicegate.catalog.names import quote_qualified
from sluicegate.catalog.store import StreamEntry, TableEntry
from sluicegate.dialect import incremental_views
from sluicegate.dialect.errors import SqlError
from sluicegate.dialect.parse import parse
from sluicegate.dialect.references import table_references
from sluicegate.dialect.statements import Query
from sluicegate.engine.sessions import new_user_session, set_current_user
from sluicegate.executor.binding.binder import Binder, bind, catalog_resolver
from sluicegate.executor.binding.session_views import SessionViews
from sluicegate.executor.materialized_views import incremental as mv_incremental
from sluicegate.executor.materialized_views.errors import NotIncrementalizableError
from sluicegate.executor.tables.dml import table_schema
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.locks import table_lock
from sluicegate.storage.delta.not_null import check_not_null
from sluicegate.storage.delta.read import spark_schema
from sluicegate.storage.delta.snapshots import hidden_columns, hide, load_snapshot
from sluicegate.storage.delta.tables import delta_configuration, open_table
from sluicegate.storage.delta.write import commit_files, write_files
from sluicegate.storage.spark_errors import from_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from sluicegate.executor.context import StatementContext

MATERIALIZED_VIEW_STATE = "MATERIALIZED_VIEW"   # the desired_state of a view's refresh row: never a stream to run
COMPLETED, FAILED, RUNNING = "COMPLETED", "FAILED", "RUNNING"
UNCHANGED = "UNCHANGED"                          # a refresh that found every input at the version it reflects
FULL = "FULL"
INCREMENTAL = "INCREMENTAL"                      # the inputs' changes applied to the view (mv_incremental)
MAX_VIEW_DEPTH = 16

_locks: dict[tuple[str, str], threading.Lock] = {}
_locks_lock = threading.Lock()


def refresh_lock(database: str, name: str) -> threading.Lock:
    """One refresh of a view at a time (a statement's and the scheduler's): the second waits for the first."""
    with _locks_lock:
        return _locks.setdefault((database, name), threading.Lock())


@dataclass(frozen=True)
class MaterializedViewState:
    refresh_policy: str = "AUTO"
    database: str | None = None                # where the query's unqualified names resolve (the CREATE's database)
    input_versions: dict[str, int] = field(default_factory=dict)   # "db.table" -> the Delta version reflected
    foreign_inputs: tuple[str, ...] = ()       # sources with no catalog version (read_files, range, Spark tables)
    last_kind: str | None = None               # FULL (a recompute) or UNCHANGED (nothing to do)
    last_reason: str | None = None             # why the last refresh ran as it did
    last_version: int | None = None            # the view's own Delta version after its last commit
    last_duration_seconds: float | None = None  # how long the last successful REFRESH took (the gateway's /metrics)
    # the column list's NOT NULL columns: every refresh recomputes the whole result, whose write checks them (an
    # incremental refresh writes only changed rows, through writers that do not)
    not_null: tuple[str, ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> MaterializedViewState:
        if not text:
            return cls()
        data = json.loads(text)
        data["foreign_inputs"] = tuple(data.get("foreign_inputs") or ())
        data["not_null"] = tuple(data.get("not_null") or ())
        return cls(**data)

    def describe_inputs(self) -> str | None:
        parts = [f"{name}@v{version}" for name, version in sorted(self.input_versions.items())]
        parts += [f"{name} (not versioned)" for name in self.foreign_inputs]
        return ", ".join(parts) or None


@dataclass(frozen=True)
class RefreshOutcome:
    kind: str                                  # FULL or UNCHANGED
    reason: str
    input_versions: dict[str, int]
    version: int | None                        # the view's Delta version after the refresh
    foreign_inputs: tuple[str, ...] = ()
    schema: StructType | None = None           # the result's columns


def new_refresh_row(database: str, name: str, state: MaterializedViewState) -> StreamEntry:
    return StreamEntry(database, name, uuid.uuid4().hex, state.to_json(), "", RUNNING, MATERIALIZED_VIEW_STATE)


def state_of(ctx: StatementContext, entry: TableEntry) -> tuple[StreamEntry | None, MaterializedViewState]:
    row = ctx.store.get_stream(entry.database, entry.name)
    return row, MaterializedViewState.from_json(row.plan_json if row is not None else None)


def foreign_sources(ctx: StatementContext, query_sql: str, depth: int = 0) -> list[str]:
    """What the query reads that has no catalog Delta version: table functions (read_files, range, ...), Spark's own
    tables and temporary views; catalog views are looked into."""
    tree = parse(query_sql)
    found = []
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, exp.Func):
            function = table.this
            found.append((function.name if isinstance(function, exp.Anonymous) else function.sql_name()).lower()
                         + "(...)")
    for ref in table_references(query_sql, tree):
        if ref.database is None and ctx.is_temporary_view(ref.name):
            found.append(f"temporary view {ref.name}")
            continue
        entry = ctx.store.get_table((ref.database or ctx.current_database).lower(), ref.name.lower())
        if entry is None:
            found.append(".".join(p for p in (ref.database, ref.name) if p))
        elif entry.kind == "VIEW" and entry.definition and depth < MAX_VIEW_DEPTH:
            found += foreign_sources(ctx, entry.definition, depth + 1)
    return found


def in_database(ctx: StatementContext, database: str) -> StatementContext:
    """`ctx` with `database` current: the caller's session when it is already, else a fresh session of the same
    user (own temporary views and current database), so the view's names mean what they meant at CREATE."""
    if ctx.current_database == database:
        return ctx
    session = new_user_session(ctx.spark)
    session.catalog.setCurrentDatabase(database)
    set_current_user(session, ctx.user)
    return replace(ctx, spark=session, session_views=SessionViews())


def same_columns(a: StructType, b: StructType) -> bool:
    return [(f.name.lower(), f.dataType.simpleString()) for f in a.fields] == \
        [(f.name.lower(), f.dataType.simpleString()) for f in b.fields]


def write_result(location: str, df: DataFrame, entry: TableEntry, operation: str, parameters: dict[str, str],
                 *, create: bool = False, hidden: tuple[str, ...] = ()) -> int:
    """The whole result as one commit: an overwrite of every file (or, when the columns or their NOT NULL changed
    or the table is new, the table created again with the new schema, still one commit). The columns the view's
    schema (the catalog's: its column list's NOT NULL) declares NOT NULL are enforced as Delta does. `hidden`: the
    columns of `df` that are the view's refresh state, which readers do not see. Returns the view's new version."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructField, StructType

    produced = {name.lower() for name in df.columns}
    required = [f.name for f in table_schema(entry).fields if not f.nullable and f.name.lower() in produced]
    df = check_not_null(df, required, quote_qualified(entry.database, entry.name))
    if not create:
        current = load_snapshot(location)
        kept = {f.name for f in current.schema if not f.nullable and f.name not in current.hidden}
        if same_columns(df.schema, spark_schema(current.schema)) and current.hidden == hidden \
                and kept == set(required):
            return commit.overwrite(location, df, operation, parameters)
    files = write_files(df, location, entry.partition_by)
    not_null = {name.lower() for name in required}
    declared = StructType([StructField(f.name, f.dataType, f.nullable and f.name.lower() not in not_null, f.metadata)
                           for f in df.schema.fields])
    schema = hide(to_arrow_schema(declared), set(hidden))
    assert hidden_columns(schema) == hidden
    return commit_files(location, files, schema, "overwrite", partition_by=entry.partition_by,
                        create=True, name=entry.name, description=entry.comment,
                        configuration=delta_configuration(entry.properties))


def refresh(ctx: StatementContext, entry: TableEntry, *, full: bool = False,
            cause: str = "USER_ACTION") -> RefreshOutcome:
    """Recompute the view `entry` (its owner's rights are the caller's: `ctx.user`) unless every input is at the
    version it already reflects and `full` is not asked; the previous result stays when anything fails."""
    with refresh_lock(entry.database, entry.name):
        return refresh_unlocked(ctx, ctx.store.require_table(entry.database, entry.name), full=full, cause=cause)


def refresh_unlocked(ctx: StatementContext, entry: TableEntry, *, full: bool = False,
                     cause: str = "USER_ACTION") -> RefreshOutcome:
    """`refresh` for a caller that holds the view's refresh lock."""
    row, state = state_of(ctx, entry)
    if row is None:
        row = ctx.store.put_stream(new_refresh_row(entry.database, entry.name, state))
    ctx.store.update_stream(entry.database, entry.name, last_refresh_status=RUNNING)
    started = time.monotonic()
    try:
        outcome = recompute(ctx, entry, state, full)
    except Exception as exc:  # recorded, then raised with its type
        error = record_failure(ctx, entry, exc, cause)
        if error is exc:
            raise
        raise error from exc
    if outcome.schema is not None and not same_columns(outcome.schema, table_schema(entry)):
        ctx.store.update_table(entry.database, entry.name, schema_json=outcome.schema.json())
    record_success(ctx, entry, state, outcome, full, cause, seconds=time.monotonic() - started)
    return outcome


def record_success(ctx: StatementContext, entry: TableEntry, state: MaterializedViewState, outcome: RefreshOutcome,
                   full: bool, cause: str, seconds: float | None = None) -> None:
    """The refresh row and the event log after a refresh that ended well (or found nothing to do); `seconds`: how
    long it took, when the caller timed it."""
    new_state = replace(state, input_versions=outcome.input_versions, foreign_inputs=outcome.foreign_inputs,
                        last_kind=outcome.kind, last_reason=outcome.reason,
                        last_version=outcome.version if outcome.version is not None else state.last_version,
                        last_duration_seconds=round(seconds, 3) if seconds is not None else state.last_duration_seconds)
    ctx.store.update_stream(entry.database, entry.name, plan_json=new_state.to_json(), status=COMPLETED,
                            last_refresh_status=COMPLETED, last_error=None, last_refresh_at=utc_now())
    ctx.store.record_event(
        entry.database, entry.name, "REFRESH_" + outcome.kind, outcome.reason, event_type="create_update",
        details={"create_update": {"cause": cause, "full_refresh": full, "technique": outcome.kind,
                                   "reason": outcome.reason, "input_versions": outcome.input_versions,
                                   "version": outcome.version}})


def recompute(ctx: StatementContext, entry: TableEntry, state: MaterializedViewState, full: bool,
               query: Query | None = None, create: bool = False) -> RefreshOutcome:
    """Bind the view's query (or `query`, a new definition whose positions are in `ctx.sql`), compare the pinned
    input versions with the recorded ones, and write the result in one commit unless nothing changed."""
    from pyspark.sql.types import StructType

    if query is None:
        ctx = replace(in_database(ctx, state.database or entry.database), sql=entry.definition or "")
        query = Query(entry.definition or "")
    foreign = tuple(foreign_sources(ctx, query.sql))
    found = incremental_views.analyse(query.sql) if state.refresh_policy != "FULL" and not state.not_null else None
    why = None
    if not full and not create and not foreign and state.last_version is not None and found is not None \
            and found.incremental:
        # Nothing is bound unless a recompute follows: the inputs' versions come from their logs, and the change
        # runs through queries of its own (each judged by the policy).
        versions = _input_versions(ctx, found)
        if versions is not None:
            if versions == state.input_versions:
                return RefreshOutcome(UNCHANGED, "every input is at the version the view reflects: nothing to do",
                                      versions, None, foreign, table_schema(entry))
            outcome = _incremental(ctx, entry, state, query, versions, table_schema(entry), found)
            if isinstance(outcome, RefreshOutcome):
                return outcome
            why = outcome
    df, binder, hidden = _bind_with_state(ctx, query, found)
    visible = StructType(df.schema.fields[:len(df.schema.fields) - len(hidden)])
    try:
        versions = {f"{db}.{name}": snapshot.version for (db, name), snapshot in binder.snapshots.items()}
        if not full and not create and not foreign and state.last_version is not None \
                and versions == state.input_versions:
            return RefreshOutcome(UNCHANGED, "every input is at the version the view reflects: nothing to do",
                                  versions, None, foreign, visible)
        if why is None and not full and not create and not foreign and state.last_version is not None:
            outcome = _incremental(ctx, entry, state, query, versions, visible, found)
            if isinstance(outcome, RefreshOutcome):
                return outcome
            why = outcome
        reason = ("the view is new" if state.last_version is None else "REFRESH ... FULL" if full else
                  f"it reads {', '.join(foreign)}, which have no versions to compare" if foreign else
                  "input changed: " + ", ".join(_changes(state.input_versions, versions))
                  + (f"; not incremental: {why}" if why else ""))
        version = write_result(entry.location or "", df, entry, "REFRESH MATERIALIZED VIEW",
                               {"inputVersions": json.dumps(versions)}, create=create, hidden=hidden)
        return RefreshOutcome(FULL, f"full recompute ({reason})", versions, version, foreign, visible)
    finally:
        binder.close()


def _input_versions(ctx: StatementContext, found: incremental_views.Incrementality) -> dict[str, int] | None:
    """The current version of each table the query names, with SELECT on it checked; None when one is not a Delta
    table of the catalog (a view, a temporary view: only binding the query finds what it reads)."""
    resolver = catalog_resolver(ctx)
    versions = {}
    for ref in found.references:
        resolved = resolver.resolve(ref.database, ref.name)
        if resolved is None or resolved.kind != "TABLE" or not resolved.location:
            return None
        versions[f"{resolved.database}.{resolved.name}"] = open_table(resolved.location).version()
    return versions


def _bind_with_state(ctx: StatementContext, query: Query,
                     found: incremental_views.Incrementality | None) -> tuple[DataFrame, Binder, tuple[str, ...]]:
    """The query bound as a full recompute writes it: an incremental aggregation with its hidden state columns
    after the visible ones (returned by name), anything else as written. A state query that does not bind is
    bound as written, so that an error points into the user's text."""
    if found is None or not found.incremental or not found.aggregation:
        df, binder = bind(ctx, query)
        return df, binder, ()
    try:
        df, binder = bind(ctx, Query(incremental_views.state_query(query.sql, found), query.offset))
    except SqlError:
        df, binder = bind(ctx, query)
        return df, binder, ()
    return df, binder, tuple(df.schema.fieldNames()[len(found.items):])


def record_failure(ctx: StatementContext, entry: TableEntry, exc: Exception, cause: str) -> SqlError:
    """The error of a refresh that failed, in the refresh row (DESCRIBE) and the event log; returned typed."""
    error = exc if isinstance(exc, SqlError) else from_spark(exc, include_stack_trace=False)
    # (a message that already starts with its `[CLASS]`, as Delta's NOT NULL violation, is not prefixed again)
    message = error.message if error.message.startswith("[") else f"[{error.error_class}] {error.message}"
    ctx.store.update_stream(entry.database, entry.name, status=FAILED, last_refresh_status=FAILED,
                            last_error=message, last_refresh_at=utc_now())
    ctx.store.record_event(entry.database, entry.name, "FAILED",
                           f"the refresh failed; the previous result stays: {message}", error=message,
                           origin={"update_cause": cause})
    return error


def _incremental(ctx: StatementContext, entry: TableEntry, state: MaterializedViewState, query: Query,
                 versions: dict[str, int], schema: StructType,
                 found: incremental_views.Incrementality | None) -> RefreshOutcome | str | None:
    """The refresh applied from the inputs' changes (mv_incremental) when the query allows it; else why not (a full
    recompute follows), an error under REFRESH POLICY INCREMENTAL STRICT."""
    if found is None:
        return None  # REFRESH POLICY FULL
    why: str = found.detail
    if found.incremental:
        if not same_columns(schema, table_schema(entry)):
            why = "the query's columns changed"
        else:
            # under the view's table lock: it reads the view as of its last version and rewrites part of it, so a
            # compaction must not land in between
            with table_lock(entry.location or ""):
                applied = mv_incremental.refresh(ctx, entry.location or "", found, query.sql, schema,
                                                 state.input_versions, versions, state.refresh_policy,
                                                 state.last_version)
            if isinstance(applied, mv_incremental.Applied):
                return RefreshOutcome(INCREMENTAL, applied.reason, versions, applied.version, (), schema)
            why = applied
    if state.refresh_policy == "INCREMENTAL STRICT":
        raise NotIncrementalizableError(
            f"REFRESH POLICY INCREMENTAL STRICT: this refresh cannot be incremental: {why}",
            error_class=f"MATERIALIZED_VIEW_NOT_INCREMENTALIZABLE.{found.reason or 'OPERATOR_NOT_INCREMENTALIZABLE'}",
            hint="REFRESH MATERIALIZED VIEW ... FULL recomputes it; REFRESH POLICY INCREMENTAL falls back by itself")
    return why


def _changes(before: dict[str, int], after: dict[str, int]) -> list[str]:
    changed = [f"{name} v{before.get(name)} -> v{version}" if name in before else f"{name} is new (v{version})"
               for name, version in sorted(after.items()) if before.get(name) != version]
    changed += [f"{name} no longer read" for name in sorted(set(before) - set(after))]
    return changed or ["the definition changed"]


def refresh_rows(entry: TableEntry, row: StreamEntry | None) -> list[tuple[str, Any]]:
    """DESCRIBE EXTENDED's rows about how the view is kept equal to its query (after the schedule rows)."""
    state = MaterializedViewState.from_json(row.plan_json if row is not None else None)
    return [("Refresh Policy", state.refresh_policy),
            ("Last Refresh Type", state.last_kind),
            ("Last Refresh Reason", state.last_reason),
            ("Input Versions", state.describe_inputs()),
            ("Last Refresh Error", row.last_error if row is not None else None)]
