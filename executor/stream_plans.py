"""What streaming tables (executor/streaming_tables.py) and the flows into them (executor/flows.py) share before a
stream is built: the context's stream engine, how a catalog table that a stream reads changes, and the plan as it is
stored (every name with its database, every file source with its schema)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sluicegate.dialect.streaming.context import TableKindLookup
from sluicegate.dialect.streaming.plan import SourceSpec, StreamingPlan, skips_change_commits
from sluicegate.dialect.streaming.sources import option
from sluicegate.engine.streams.protocols import Streams
from sluicegate.engine.streams.sources import infer_schema
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import UnsupportedStatementError


def streams_of(ctx: StatementContext) -> Streams:
    """The stream engine that runs the statement's streams; a gateway without one refuses streaming statements."""
    if ctx.streams is None:
        raise UnsupportedStatementError("this gateway runs without a stream manager",
                                        hint="start it with `sluicegate serve`, which runs streams")
    return ctx.streams


def table_kind(ctx: StatementContext) -> TableKindLookup:
    """How a catalog table changes, for the rule that refuses to stream a table rewritten in place
    (dialect/streaming/rules.py `check_sources_append_only`)."""
    def kind(database: str | None, name: str) -> str | None:
        entry = ctx.store.get_table((database or ctx.current_database).lower(), name.lower())
        if entry is None:
            return None
        if entry.kind != "STREAMING_TABLE":
            return "append" if entry.kind == "TABLE" else None
        stream = ctx.store.get_stream(entry.database, entry.name)
        # an AUTO CDC table updates and deletes rows by key (its own FLOW AUTO CDC or its AUTO CDC flows: a table
        # declared with columns is filled either by them or by append flows, never both); its plan's output mode
        # says "append" only because the events are read that way
        writers = [stream] if stream is not None else [f.stream for f in ctx.store.list_flows(entry.database,
                                                                                                entry.name)]
        plans = [StreamingPlan.from_json(writer.plan_json) for writer in writers]
        if any(plan.cdc is not None for plan in plans):
            return "auto_cdc"
        return plans[0].output_mode if stream is not None else "append"
    return kind


@dataclass(frozen=True)
class StreamReaders:
    """The streams that read a table with STREAM(...), as a refusal may tell the user who asked: the names of those
    they may see, and only how many others there are."""
    shown: list[str]
    hidden: int

    def __bool__(self) -> bool:
        return bool(self.shown) or self.hidden > 0

    def __len__(self) -> int:
        return len(self.shown) + self.hidden


def stream_readers(ctx: StatementContext, database: str, name: str) -> StreamReaders:
    """The streams reading `database`.`name` with STREAM(...) that would fail on commits updating or deleting rows
    (those with skipChangeCommits skip them): the streaming tables by name, flows as "flow f into t". A reader may
    be another user's, in a schema the caller cannot see: it is named only when the caller may read its table (a
    flow's: its target), the rule DESCRIBE and the listings use (policy `may_read`: ownership, a grant, an admin);
    the others are only counted, so a refusal discloses no name the caller could not look up."""
    shown: list[str] = []
    hidden = 0
    principal = ctx.principal
    for entry in ctx.store.list_streams():
        if entry.desired_state == "MATERIALIZED_VIEW":
            continue  # a materialized view's refresh row (executor/materialized_views/refresh.py), not a stream
        plan = StreamingPlan.from_json(entry.plan_json)
        if skips_change_commits(plan.properties) or not any(
                s.kind == "table" and (s.database, s.table) == (database, name) for s in plan.sources):
            continue
        if not ctx.policy.may_read(principal, entry.database, entry.name):
            hidden += 1
            continue
        table = f"`{entry.database}`.`{entry.name}`"
        shown.append(table if entry.flow is None else f"flow `{entry.flow}` into {table}")
    return StreamReaders(sorted(shown), hidden)


def readable_error(ctx: StatementContext, database: str, name: str, error: str | None) -> str | None:
    """A stream's (or refresh's) last error as a listing shows it: only to a caller who may read its table (a
    flow's: its target; policy `may_read`), since an error may quote the data (a CAST of a row's value, an
    expectation's offending record). Its name and status stay listed for everyone, as SHOW TABLES lists names."""
    if error is None or ctx.policy.may_read(ctx.principal, database, name):
        return error
    return None


def qualified(ctx: StatementContext, plan: StreamingPlan, stored: StreamingPlan | None) -> StreamingPlan:
    """Every name of the plan with its database, and each file source's schema (inferred once when not given):
    what is stored must mean the same after a restart, whatever the session's current database or the files.
    A refresh keeps the schema inferred for the same source at its first CREATE: its files may be gone by now."""
    current = ctx.current_database
    inferred = {replace(s, schema=None): s.schema for s in (stored.sources if stored is not None else ())
                if s.kind == "files"}
    sources = []
    for given in plan.sources:
        source = given
        if source.kind == "table":
            source = replace(source, database=(source.database or current).lower(), table=(source.table or "").lower())
        elif source.kind == "files":
            source = _kept_without_rescue(source, stored)
            if source.schema is None:
                schema = inferred.get(source) or infer_schema(ctx.spark, source)
                source = replace(source, schema=schema)
        sources.append(source)
    statics = tuple(replace(s, database=(s.database or current).lower(), table=s.table.lower())
                    for s in plan.static_tables)
    return replace(plan, database=(plan.database or current).lower(), name=plan.name.lower(),
                   sources=tuple(sources), static_tables=statics)


def _kept_without_rescue(source: SourceSpec, stored: StreamingPlan | None) -> SourceSpec:
    """A table stored before read_files had a rescued data column keeps its schema when the same definition comes
    again (dbt sends CREATE OR REFRESH on every run): naming `rescuedDataColumn` is how it asks for the column."""
    if stored is None or source.rescued_data is None or option(source.options, "rescuedDataColumn") is not None:
        return source
    for old in stored.sources:
        if old.view_name == source.view_name and old.kind == "files" and old.rescued_data is None \
                and replace(source, rescued_data=None, schema=source.schema or old.schema) == old:
            return replace(source, rescued_data=None)
    return source
