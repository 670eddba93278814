"""Incremental refresh of a materialized view: its inputs' changes since the versions it reflects (mv_changes), run
through the query (dialect/incremental_views.py builds the SQL) and applied to the view in ONE commit that rewrites
only the view's files the change touches.

- A projection (select-project-join): the change's rows, counted (+1 added, -1 removed), are appended, and the rows
  it removes are taken out of the files that hold them.
- An aggregation: the change is aggregated by the group keys and merged into the groups it touches through the
  view's hidden state columns (counts, sums, extremes); a group left with no row goes. A sum or avg over a
  floating-point column, or a min/max whose extreme a removed row might have been, is recomputed in full instead
  (exactly equal to a recompute is the contract, and floating-point sums are not associative).

`refresh` answers the outcome, or the reason it must fall back to a full recompute. Every text it hands to Spark
passes the policy, as the binder's texts do; each input is read with SELECT checked for the refreshing user.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from sluicegate.catalog.names import quote_identifier
from sluicegate.dialect.incremental_views import (
    EXTREME_LOST,
    PREFIX,
    ROWS,
    SIGN,
    Incrementality,
    change_query,
    key_column,
    merge_query,
    term_query,
)
from sluicegate.executor.binding.binder import catalog_resolver
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.changes import TableChange, change_frames, comparable, table_bytes, table_change
from sluicegate.storage.delta.read import pinned_dataframe, snapshot_dataframe, spark_schema
from sluicegate.storage.delta.snapshots import load_snapshot
from sluicegate.storage.delta.tables import open_table

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType, StructType

    from sluicegate.executor.context import StatementContext
    from sluicegate.storage.delta.snapshots import Snapshot

_FILE = f"{PREFIX}file"
_EXTREME_LOST_REASON = "a row the change removed may have been the min or max of its group"


@dataclass(frozen=True)
class Applied:
    """An incremental refresh that ran: the view's new version (None: the change changed no row of it)."""
    version: int | None
    reason: str


class _Fallback(Exception):
    """Why this refresh is a full recompute (never leaves this module)."""


def refresh(ctx: StatementContext, location: str, found: Incrementality, query_sql: str, schema: StructType,
            before: dict[str, int], after: dict[str, int], policy: str, last_version: int | None) -> Applied | str:
    """Apply the inputs' changes from the versions `before` to `after` to the view at `location` (visible columns
    `schema`, at `last_version` when the catalog recorded `before`); or the reason a full recompute is needed."""
    session = _Session(ctx)
    try:
        return _refresh(session, location, found, query_sql, schema, before, after, policy, last_version)
    except _Fallback as why:
        return str(why)
    finally:
        session.close()


class _Session:
    """The temporary views one refresh registers, dropped at its end."""

    def __init__(self, ctx: StatementContext) -> None:
        self.ctx = ctx
        self.views: list[str] = []

    def register(self, df: DataFrame) -> str:
        name = f"{PREFIX}{uuid.uuid4().hex}"
        df.createOrReplaceTempView(name)
        self.views.append(name)
        return name

    def sql(self, text: str) -> DataFrame:
        """A text run as the binder runs one: judged by the policy before Spark sees it, and its plan after."""
        ctx = self.ctx
        ctx.policy.check_query_text(ctx.spark, text, ctx.principal)
        df = ctx.spark.sql(text)
        ctx.policy.check_query(df, ctx.principal)
        return df

    def close(self) -> None:
        for name in self.views:
            self.ctx.spark.catalog.dropTempView(name)


def _rows_unchanged(location: str, before: int | None, after: int) -> bool:
    """Whether the view's own commits after `before` changed no row (the background compactor's merges)."""
    if before is None or before > after:
        return False
    change = table_change(location, before, after)
    return change is not None and change.empty


def _refresh(session: _Session, location: str, found: Incrementality, query_sql: str, schema: StructType,
             before: dict[str, int], after: dict[str, int], policy: str, last_version: int | None) -> Applied:
    view = load_snapshot(location)
    # applying the change again would count it twice; commits that changed no row (compactions) are no such thing
    if view.version != last_version and not _rows_unchanged(location, last_version, view.version):
        raise _Fallback(f"the view is at v{view.version}, not at the v{last_version} its catalog row recorded "
                        "(a refresh interrupted after its commit)")
    ctx = session.ctx
    resolver = catalog_resolver(ctx)
    inputs: list[tuple[str, str]] = []            # per reference: the qualified name and the Delta folder
    for ref in found.references:
        resolved = resolver.resolve(ref.database, ref.name)   # SELECT on the input, for the refreshing user
        if resolved is None or resolved.kind != "TABLE":
            raise _Fallback(f"{ref.name} is not a Delta table of the catalog")
        inputs.append((f"{resolved.database}.{resolved.name}", resolved.location or ""))
    if set(after) != {name for name, _ in inputs}:
        raise _Fallback("the query reads tables through a view")
    changes: dict[str, TableChange] = {}
    for name, folder in inputs:
        if name in changes:
            continue
        if before.get(name) is None:
            raise _Fallback(f"{name} is new to the view")
        change = table_change(folder, before[name], after[name])
        if change is None:
            raise _Fallback(f"the change of {name} (v{before[name]} -> v{after[name]}) cannot be read from its log "
                            "(a schema change, a deletion vector, or files already vacuumed)")
        changes[name] = change
    moved = {name: change for name, change in changes.items() if not change.empty}
    summary = ", ".join(f"{name} v{c.before} -> v{c.after} (+{len(c.added)}/-{len(c.removed)} files)"
                        for name, c in sorted(changes.items()))
    if not moved:
        return Applied(None, f"incremental (no row changed: {summary})")
    incremental, full = _bytes_to_read(inputs, changes)
    if policy == "AUTO" and incremental >= full:
        raise _Fallback(f"the change is about as large as the inputs ({incremental} bytes to read incrementally, "
                        f"{full} to recompute): a recompute is cheaper")
    plus, minus = {}, {}
    for name, change in moved.items():
        added, removed = change_frames(ctx.spark, change, net=not found.aggregation)
        if added is not None:
            plus[name] = session.register(added)
        if removed is not None:
            minus[name] = session.register(removed)
    folders = dict(inputs)
    pinned: dict[tuple[str, int], str] = {}

    def at(name: str, version: int) -> str:
        """The view of `name` at `version`, registered once (a table that did not change is one snapshot)."""
        if (name, version) not in pinned:
            snapshot = load_snapshot(folders[name], version)
            pinned[(name, version)] = session.register(pinned_dataframe(ctx.spark, snapshot))
        return pinned[(name, version)]

    terms: list[tuple[int, str]] = []
    for i, (name, _) in enumerate(inputs):
        if name not in moved:
            continue
        for sign, views in ((1, plus), (-1, minus)):
            if name not in views:
                continue
            replacements = [(ref, at(n, after[n]) if j < i else views[n] if j == i else at(n, before[n]))
                            for j, (ref, (n, _)) in enumerate(zip(found.references, inputs, strict=False))]
            terms.append((sign, term_query(query_sql, found, replacements)))
    change_sql = change_query(terms)
    if found.aggregation:
        one_task = incremental <= ONE_TASK_BYTES
        return Applied(_apply_to_groups(session, location, view, found, schema, change_sql, summary, one_task),
                       f"incremental ({summary})")
    change_rows = session.sql(change_sql)
    if not any(change.removed for change in moved.values()):  # appends only: the new rows are the whole change
        version = commit.append(location, change_rows.drop(SIGN), "REFRESH MATERIALIZED VIEW",
                                {"incremental": "true", "change": summary})
    else:
        version = _apply_to_rows(ctx.spark, location, view, schema, change_rows, summary)
    return Applied(version, f"incremental ({summary})")


def _bytes_to_read(inputs: list[tuple[str, str]], changes: dict[str, TableChange]) -> tuple[int, int]:
    """What an incremental refresh reads (each change and, per changed reference, every other reference in full)
    and what a recompute reads (every input once), in bytes from the logs: AUTO's estimate of which is cheaper (the
    view's own files aside)."""
    sizes = {name: table_bytes(folder, changes[name].after) for name, folder in dict(inputs).items()}
    full = sum(sizes[name] for name, _ in inputs)
    return sum(changes[name].bytes + full - sizes[name] for name, _ in inputs if not changes[name].empty), full


# ------------------------------------------------------------------------------------------------ projections

def _null_safe(left: DataFrame, right: DataFrame, pairs: list[tuple[str, str]]) -> Column | None:
    from functools import reduce

    conditions = [left[quote_identifier(a)].eqNullSafe(right[quote_identifier(b)]) for a, b in pairs]
    return reduce(lambda x, y: x & y, conditions) if conditions else None


def _copies(df: DataFrame, count: str, columns: list[str]) -> DataFrame:
    """Each row `count` times (a multiset's rows from their counts)."""
    from pyspark.sql import functions as F

    return (df.withColumn(f"{PREFIX}copy", F.explode(F.sequence(F.lit(1), F.col(count).cast("int"))))
            .select(*[quote_identifier(c) for c in columns]))


def _view_frame(spark: SparkSession, view: Snapshot) -> DataFrame:
    """Every column of the view's current files, the hidden state too."""
    return snapshot_dataframe(spark, replace(view, hidden=()))


def _view_rows(spark: SparkSession, view: Snapshot) -> DataFrame:
    """`_view_frame` with the file each row is in (given by the reader: `input_file_name()` is empty for a table on
    an object store)."""
    return snapshot_dataframe(spark, replace(view, hidden=()), source_file=_FILE)


def _apply_to_rows(spark: SparkSession, location: str, view: Snapshot, schema: StructType, change_rows: DataFrame,
                   summary: str) -> int | None:
    """A projection's view as a multiset: each distinct row's net count (added minus removed) is appended, or taken
    out of the view's files that hold it; a count below zero means the view and its inputs disagree."""
    from pyspark.sql import functions as F

    columns = schema.fieldNames()
    if not comparable(change_rows):
        raise _Fallback("the view has a MAP column, whose rows cannot be compared")
    net = (change_rows.groupBy(*[quote_identifier(c) for c in columns]).agg(F.sum(SIGN).alias(f"{PREFIX}n"))
           .where(F.col(f"{PREFIX}n") != 0)).localCheckpoint()
    added = _copies(net.where(F.col(f"{PREFIX}n") > 0), f"{PREFIX}n", columns)
    removed = net.where(F.col(f"{PREFIX}n") < 0)
    parameters = {"incremental": "true", "change": summary}
    if removed.isEmpty():
        if added.isEmpty():
            return None
        return commit.append(location, added, "REFRESH MATERIALIZED VIEW", parameters)
    rows = _view_rows(spark, view)
    pairs = [(c, c) for c in columns]
    touched = [r[0] for r in rows.join(removed, _null_safe(rows, removed, pairs), "left_semi")
               .select(_FILE).distinct().collect()]
    counted = rows.where(F.col(_FILE).isin(touched)).groupBy(*[quote_identifier(c) for c in columns]).count()
    left = counted.alias("v").join(removed.alias("r"), _null_safe(counted, removed, pairs), "left")
    remaining = left.select(*[F.col("v." + quote_identifier(c)).alias(c) for c in columns],
                            (F.col("v.count") + F.coalesce(F.col(f"r.{PREFIX}n"), F.lit(0))).alias(f"{PREFIX}n"))
    remaining = remaining.localCheckpoint()
    if not remaining.where(F.col(f"{PREFIX}n") < 0).isEmpty() or \
            counted.join(removed, _null_safe(counted, removed, pairs), "left_semi").count() != removed.count():
        raise _Fallback("the view does not hold a row its input's change removes (it will be recomputed)")
    kept = _copies(remaining.where(F.col(f"{PREFIX}n") > 0), f"{PREFIX}n", columns)
    return commit.rewrite(location, view.version, touched, kept.unionByName(added), "REFRESH MATERIALIZED VIEW",
                          parameters)


# ------------------------------------------------------------------------------------------------ aggregations

SMALL_VIEW_ROWS = 200_000                         # rewritten whole as one file up to this size
ONE_TASK_BYTES = 64 << 20                         # a change this small is merged in one task (no shuffle)


def _avg_type(kind: str) -> str:
    if kind.startswith("decimal("):
        precision, scale = (int(p) for p in kind[len("decimal("):-1].split(","))
        return f"decimal({min(precision + 4, 38)},{min(scale + 4, 38)})"
    return "double"


def _avg_types(session: _Session, found: Incrementality, stored: dict[str, str], change_sql: str) -> dict[int, str]:
    """The SQL type of each avg (as Spark's avg of its argument), read back from the type of its sum state: Spark
    sums integers as a bigint and decimal(p, s) as decimal(min(p + 10, 38), s), anything else (floating point)
    inexactly, which is refused. Only a decimal(38, s) sum leaves p open (any p from 28): then the change's rows
    are bound to find it."""
    avg_types: dict[int, str] = {}
    open_types: list[int] = []
    for a in found.aggregates:
        if a.function not in ("SUM", "AVG"):
            continue
        kind = stored[a.state]
        if not kind.startswith(("bigint", "decimal(")):
            raise _Fallback(f"{a.function.lower()}({a.argument}) adds {kind} values, whose sums round differently "
                            "when added in another order")
        if a.function == "AVG" and kind == "bigint":
            avg_types[a.index] = "double"
        elif a.function == "AVG":
            precision, scale = (int(p) for p in kind[len("decimal("):-1].split(","))
            if precision < 38:
                avg_types[a.index] = _avg_type(f"decimal({precision - 10},{scale})")
            else:
                open_types.append(a.index)
    if open_types:
        arguments = {f.name: f.dataType.simpleString() for f in session.sql(change_sql).schema.fields}
        for a in found.aggregates:
            if a.index in open_types:
                avg_types[a.index] = _avg_type(arguments[a.argument_column])
    return avg_types


def _apply_to_groups(session: _Session, location: str, view: Snapshot, found: Incrementality, schema: StructType,
                     change_sql: str, summary: str, one_task: bool) -> int | None:
    """Merge the change (the rows of `change_sql`) into the groups it touches, in one query
    (incremental_views.merge_query): the view's rows stacked with the change's and aggregated once. A small view (a
    gold table's usual size: at most SMALL_VIEW_ROWS rows, not partitioned) is merged whole, collected and written
    on the driver as the view's one file, so that query is the refresh's one Spark job (one stage where little is
    read, `one_task`). A larger one merges only the files holding touched groups, and only those are rewritten,
    with their other rows as they were."""
    import pyarrow.compute as pc

    stored = {field.name: field.dataType for field in _spark_schema(view)}
    needed = [ROWS] + [c for a in found.aggregates for c in (a.state, a.count) if c is not None]
    if any(column not in stored for column in needed):
        raise _Fallback("the view has no state to merge a change into yet (this recompute writes it)")
    avg_types = _avg_types(session, found, {name: kind.simpleString() for name, kind in stored.items()}, change_sql)
    columns = schema.fieldNames()
    hidden = [name for name in stored if name not in columns]
    types = {name: sql_type(kind) for name, kind in stored.items()}

    def merged(old: DataFrame, change: str) -> DataFrame:
        return session.sql(merge_query(found, change, session.register(old), columns, hidden, types, avg_types))

    parameters = {"incremental": "true", "change": summary}
    rows = _rows(location, view.version)
    if not found.keys and rows != 1:
        raise _Fallback("the view of an aggregation without GROUP BY does not hold exactly one row")
    if not view.partition_columns and rows <= SMALL_VIEW_ROWS:
        old = session.register(_view_frame(session.ctx.spark, view))
        result = session.sql(merge_query(found, f"(\n{change_sql}\n)", old, columns, hidden, types, avg_types,
                                         one_task)).toArrow()
        if pc.any(result.column(EXTREME_LOST)).as_py():
            raise _Fallback(_EXTREME_LOST_REASON)
        return commit.replace_with_arrow(location, view.version, result.drop_columns([EXTREME_LOST]),
                                         "REFRESH MATERIALIZED VIEW", parameters)
    return _merge_touched_files(session, location, view, found, columns, change_sql, merged, parameters)


def _merge_touched_files(session: _Session, location: str, view: Snapshot, found: Incrementality,
                         columns: list[str], change_sql: str, merged: Callable[[DataFrame, str], DataFrame],
                         parameters: dict[str, str]) -> int | None:
    """A large view: the files that hold a group the change touches are found (a semi join on the group keys) and
    rewritten with the merged groups; the change's rows are kept in memory for the two reads."""
    from pyspark.sql import functions as F

    rows = _view_rows(session.ctx.spark, view)
    change_rows = session.sql(change_sql).localCheckpoint()
    if found.keys:
        keys = change_rows.select(*[key_column(k) for k in found.keys]).distinct()
        pairs = [(columns[k], key_column(k)) for k in found.keys]
        touched = [r[0] for r in rows.join(keys, _null_safe(rows, keys, pairs), "left_semi")
                   .select(_FILE).distinct().collect()]
        rows = rows.where(F.col(_FILE).isin(touched))
    else:
        touched = list(view.files)
    result = merged(rows.drop(_FILE), quote_identifier(session.register(change_rows)))
    if any(a.function in ("MIN", "MAX") for a in found.aggregates):
        result = result.localCheckpoint()   # computed once: checked here, then written
        if not result.where(F.col(EXTREME_LOST)).isEmpty():
            raise _Fallback(_EXTREME_LOST_REASON)
    result = result.drop(EXTREME_LOST)
    if not touched:
        return commit.append(location, result, "REFRESH MATERIALIZED VIEW", parameters)
    return commit.rewrite(location, view.version, touched, result, "REFRESH MATERIALIZED VIEW", parameters)


def _rows(location: str, version: int) -> int:
    """The view's row count from its log's statistics (no data read); a large number when a file has none."""
    import pyarrow as pa

    actions = pa.table(open_table(location, version=version).get_add_actions(flatten=True))
    counts = actions.column("num_records").to_pylist() if "num_records" in actions.column_names else []
    return sum(counts) if all(c is not None for c in counts) else SMALL_VIEW_ROWS + 1


def sql_type(kind: DataType) -> str:
    """A Spark type as SQL text for CAST (a struct's field names quoted)."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(kind, StructType):
        return "struct<" + ", ".join(f"{quote_identifier(f.name)}: {sql_type(f.dataType)}" for f in kind.fields) + ">"
    if isinstance(kind, ArrayType):
        return f"array<{sql_type(kind.elementType)}>"
    if isinstance(kind, MapType):
        return f"map<{sql_type(kind.keyType)}, {sql_type(kind.valueType)}>"
    return kind.simpleString()


def _spark_schema(view: Snapshot) -> StructType:
    return spark_schema(view.schema)
