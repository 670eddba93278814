"""The exact result cache at the executor: which queries may be answered from an earlier run, and under what key.

A SELECT is cacheable when every table it reads, directly or through catalog views, is a catalog (Delta) table read
at its latest version, and nothing in it or in those views is non-deterministic (dialect/determinism.py: an allow-list
of functions; table functions, time travel, TABLESAMPLE, temporary views, Spark's own tables, `information_schema`
and the `system` tables are never cached). Its key is everything the answer depends on:

- the user (entries are never shared between users, whatever their rights), so the grants are theirs;
- the statement's text as sent (surrounding whitespace aside), the catalog's name and the session's current database;
- every setting the session was given (engine/sessions.py: the time zone, ANSI mode ... anything set);
- each object the query names, in the order resolved: a table by its folder, a view by its definition and owner;
- each table's Delta identity and version: any commit to an input makes the next run compute afresh.

The policy still decides every statement: `decide` runs first as for any statement, and the look-up resolves every
name through the binder's resolver, which checks SELECT on each table and view (a view's own tables with its owner's
rights) as binding does; a refusal there is left to the ordinary path, which raises it with its position. What the
look-up skips is Spark's analysis and the policy's check of the analysed plan: both are functions of the text, the
objects' definitions and the user, all in the key, and an entry exists only after both passed for it. An answer is
recorded under the versions the binder actually pinned (a commit between look-up and binding files it under the
newer version), only if Spark too holds the analysed plan deterministic, and only once a reader has read it whole
(engine/result_cache.py).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sluicegate.dialect import catalogs
from sluicegate.dialect.catalogs import INFORMATION_SCHEMA, SYSTEM
from sluicegate.dialect.determinism import nondeterminism
from sluicegate.dialect.errors import SqlError
from sluicegate.dialect.references import parse, table_references
from sluicegate.engine.result_cache import deterministic_plan, recording, served
from sluicegate.engine.results import WireTypes
from sluicegate.engine.sessions import session_settings
from sluicegate.executor.binding.binder import Binder, catalog_resolver
from sluicegate.executor.binding.resolved import TableResolver
from sluicegate.storage.delta.snapshots import load_snapshot

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from sqlglot import exp

    from sluicegate.dialect.statements import Query
    from sluicegate.engine.sql import StatementResult
    from sluicegate.executor.context import StatementContext

MAX_VIEW_DEPTH = 16
_TableKey = tuple[str, str]                 # (database, name)
_Version = tuple[str, str, int]             # (folder, Delta table id, version)


@dataclass(frozen=True)
class Lookup:
    """What the look-up found: the answer kept for the query (`result`), or the key's parts to record the answer
    under once it is computed (`shape` None: the query is not cacheable)."""

    result: StatementResult | None = None
    shape: tuple[Hashable, ...] | None = None
    tables: frozenset[_TableKey] = frozenset()


NOT_CACHED = Lookup()


class _NotCacheable(Exception):
    """The query reads something the cache cannot key (raised inside the walk only)."""


def lookup(ctx: StatementContext, query: Query, resolver: TableResolver | None = None) -> Lookup:
    """The kept answer to `query` for this user, session and the tables' latest versions, if there is one.
    `resolver`: the statement's own (a RememberingResolver the binder then uses too), else the catalog's."""
    cache = ctx.result_cache
    if cache is None:
        return NOT_CACHED
    try:
        objects: list[Hashable] = []
        versions: dict[_TableKey, _Version] = {}
        tree = ctx.tree if ctx.tree is not None and query.sql == ctx.sql else None   # parsed once already
        _walk(query.sql, resolver or catalog_resolver(ctx), objects, versions, 0, tree)
    except (_NotCacheable, SqlError):
        return NOT_CACHED   # a refusal or an error is the ordinary path's to raise, with its position
    if not versions:
        return NOT_CACHED   # no Delta table read: nothing to key by (and `SELECT 1` needs no cache)
    shape = (ctx.user, query.sql.strip().rstrip(";").strip(), catalogs.current().name, ctx.current_database,
             tuple(sorted(session_settings(ctx.spark).items())), tuple(objects))
    found = cache.get(_key(shape, versions, ctx.result_types))
    if found is not None:
        return Lookup(result=served(found))
    return Lookup(shape=shape, tables=frozenset(versions))


def recorded(ctx: StatementContext, found: Lookup, binder: Binder, df: DataFrame,
             result: StatementResult) -> StatementResult:
    """`result`, kept once read whole under the versions `binder` pinned, when the look-up found it cacheable, the
    binder pinned the very tables the look-up resolved, and Spark holds the analysed plan `df` deterministic too."""
    cache, shape = ctx.result_cache, found.shape
    if cache is None or shape is None or frozenset(binder.snapshots) != found.tables or not deterministic_plan(df):
        return result
    versions = {table: (snapshot.path, snapshot.table_id, snapshot.version)
                for table, snapshot in binder.snapshots.items()}
    return recording(result, cache, lambda types: _key(shape, versions, types))


def _key(shape: tuple[Hashable, ...], versions: dict[_TableKey, _Version], types: WireTypes) -> Hashable:
    return (*shape, tuple(sorted(versions.items())), types)


def _walk(sql: str, resolver: TableResolver, objects: list[Hashable], versions: dict[_TableKey, _Version],
          depth: int, tree: exp.Expr | None = None) -> None:
    """Resolve every name `sql` (parsed as `tree`, when given) reads (views' own names with their owner's resolver)
    into `objects` and, for tables, their latest versions into `versions`; raises _NotCacheable for anything the key
    cannot cover."""
    if depth >= MAX_VIEW_DEPTH:
        raise _NotCacheable("views nest too deep")
    tree = tree if tree is not None else parse(sql)
    if nondeterminism(tree) is not None:
        raise _NotCacheable("not deterministic")
    for ref in table_references(sql, tree):
        written_catalog = str(ref.node.meta.get("catalog") or "").lower() if ref.node is not None else ""
        if ref.version is not None or ref.timestamp is not None:
            raise _NotCacheable("time travel")
        if (ref.database or "").lower() == INFORMATION_SCHEMA or written_catalog == SYSTEM:
            raise _NotCacheable("a listing, not a table")
        resolved = resolver.resolve(ref.database, ref.name)
        if resolved is None or not resolved.database:
            raise _NotCacheable("a temporary view or one of Spark's own tables")
        if resolved.kind == "VIEW":
            objects.append(("VIEW", resolved.database, resolved.name, resolved.view_sql, resolved.owner))
            _walk(resolved.view_sql or "", resolver.for_view(resolved), objects, versions, depth + 1)
            continue
        if not resolved.location:
            raise _NotCacheable("a table without a folder")
        objects.append(("TABLE", resolved.database, resolved.name, resolved.location))
        snapshot = load_snapshot(resolved.location)
        versions[(resolved.database, resolved.name)] = (snapshot.path, snapshot.table_id, snapshot.version)
