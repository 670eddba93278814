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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from catalog.names import quote_identifier
from dialect.incremental_views import (
    PREFIX,
    ROWS,
    SIGN,
    Aggregate,
    Incrementality,
    key_column,
    term_query,
    visible_expression,
)
from runtime.warehouse import commit
from runtime.warehouse.mv_changes import TableChange, change_frames, table_bytes, table_change

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from runtime.delta.read import Snapshot
    from runtime.warehouse.context import StatementContext

_FILE = f"{PREFIX}file"
_OLD = f"{PREFIX}old_"


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


def _refresh(session: _Session, location: str, found: Incrementality, query_sql: str, schema: StructType,
             before: dict[str, int], after: dict[str, int], policy: str, last_version: int | None) -> Applied:
    from pyspark.sql import functions as F

    from runtime.delta.read import load_snapshot, pinned_dataframe
    from runtime.warehouse.binder import catalog_resolver

    view = load_snapshot(location)
    if view.version != last_version:  # applying the change again would count it twice
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
    if policy == "AUTO":
        _worth_it(inputs, changes)
    plus, minus = {}, {}
    for name, change in moved.items():
        added, removed = change_frames(ctx.spark, change, net=not found.aggregation)
        plus[name], minus[name] = session.register(added), session.register(removed)
    folders = dict(inputs)
    pinned: dict[tuple[str, int], str] = {}

    def at(name: str, version: int) -> str:
        """The view of `name` at `version`, registered once (a table that did not change is one snapshot)."""
        if (name, version) not in pinned:
            snapshot = load_snapshot(folders[name], version)
            pinned[(name, version)] = session.register(pinned_dataframe(ctx.spark, snapshot))
        return pinned[(name, version)]

    terms: list[DataFrame] = []
    for i, (name, _) in enumerate(inputs):
        if name not in moved:
            continue
        for sign, views in ((1, plus), (-1, minus)):
            files = moved[name].added if sign > 0 else moved[name].removed
            if not files:
                continue
            replacements = [(ref, at(n, after[n]) if j < i else views[n] if j == i else at(n, before[n]))
                            for j, (ref, (n, _)) in enumerate(zip(found.references, inputs))]
            text = term_query(query_sql, found, replacements)
            terms.append(session.sql(text).withColumn(SIGN, F.lit(sign)))
    change_rows = terms[0]
    for term in terms[1:]:
        change_rows = change_rows.unionAll(term)
    if found.aggregation:
        version = _apply_to_groups(session, location, view, found, schema, change_rows, summary)
    elif not any(change.removed for change in moved.values()):  # appends only: the new rows are the whole change
        version = commit.append(location, change_rows.drop(SIGN), "REFRESH MATERIALIZED VIEW",
                                {"incremental": "true", "change": summary})
    else:
        version = _apply_to_rows(ctx.spark, location, view, schema, change_rows, summary)
    return Applied(version, f"incremental ({summary})")


def _worth_it(inputs: list[tuple[str, str]], changes: dict[str, TableChange]) -> None:
    """AUTO's estimate: an incremental refresh reads each change and, per changed reference, every other
    reference in full; a recompute reads every input once. The cheaper wins (the view's own files aside)."""
    sizes = {name: table_bytes(folder, changes[name].after) for name, folder in dict(inputs).items()}
    full = sum(sizes[name] for name, _ in inputs)
    incremental = sum(changes[name].bytes + full - sizes[name] for name, _ in inputs if not changes[name].empty)
    if incremental >= full:
        raise _Fallback(f"the change is about as large as the inputs ({incremental} bytes to read incrementally, "
                        f"{full} to recompute): a recompute is cheaper")


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


def _view_rows(spark: SparkSession, view: Snapshot) -> DataFrame:
    """Every column of the view's current files (the hidden state too), with the file each row is in."""
    from runtime.delta.read import snapshot_dataframe

    return snapshot_dataframe(spark, replace(view, hidden=()), source_file=_FILE)


def _apply_to_rows(spark: SparkSession, location: str, view: Snapshot, schema: StructType, change_rows: DataFrame,
                   summary: str) -> int | None:
    """A projection's view as a multiset: each distinct row's net count (added minus removed) is appended, or taken
    out of the view's files that hold it; a count below zero means the view and its inputs disagree."""
    from pyspark.sql import functions as F

    from runtime.warehouse.mv_changes import comparable

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

_EXACT_SUMS = ("tinyint", "smallint", "int", "bigint", "decimal")
_EXTREME_LOST = "SLUICEGATE_MV_EXTREME_REMOVED"   # raised inside the write when a group's min/max row went
SMALL_VIEW_ROWS = 200_000                         # merged on the driver up to this size


def _avg_type(kind: str) -> str:
    if kind.startswith("decimal("):
        precision, scale = (int(p) for p in kind[len("decimal("):-1].split(","))
        return f"decimal({min(precision + 4, 38)},{min(scale + 4, 38)})"
    return "double"


def _change_by_group(found: Incrementality, change_rows: DataFrame) -> DataFrame:
    """The change aggregated by the group keys: the row count and, per aggregate, what it adds and removes."""
    from pyspark.sql import functions as F

    sign = F.col(SIGN)
    adding, removing = sign > 0, sign < 0
    columns = [F.sum(sign).alias(f"{PREFIX}d_rows")]
    for a in found.aggregates:
        x = F.col(a.argument_column) if a.argument is not None else None
        if a.function == "COUNT_STAR":
            columns.append(F.sum(sign).alias(f"{PREFIX}d_s{a.index}"))
        elif a.function == "COUNT":
            columns.append(F.sum(F.when(x.isNotNull(), sign).otherwise(0)).alias(f"{PREFIX}d_s{a.index}"))
        elif a.function in ("SUM", "AVG"):
            columns += [F.sum(F.when(adding, x)).alias(f"{PREFIX}d_p{a.index}"),
                        F.sum(F.when(removing, x)).alias(f"{PREFIX}d_n{a.index}"),
                        F.sum(F.when(x.isNotNull(), sign).otherwise(0)).alias(f"{PREFIX}d_c{a.index}")]
        else:
            extreme = F.min if a.function == "MIN" else F.max
            columns += [extreme(F.when(adding, x)).alias(f"{PREFIX}d_p{a.index}"),
                        extreme(F.when(removing, x)).alias(f"{PREFIX}d_n{a.index}")]
    return change_rows.groupBy(*[key_column(k) for k in found.keys]).agg(*columns)


def _new_state(a: Aggregate, types: dict[str, str]) -> list[tuple[str, Column]]:
    """An aggregate's state columns after the change: old plus added minus removed."""
    from pyspark.sql import functions as F

    def old(name: str) -> Column:
        return F.col(_OLD + name)

    def delta(kind: str) -> Column:
        return F.col(f"{PREFIX}d_{kind}{a.index}")

    if a.function in ("COUNT_STAR", "COUNT"):
        return [(a.state, F.coalesce(old(a.state), F.lit(0)) + F.coalesce(delta("s"), F.lit(0)))]
    if a.function in ("SUM", "AVG"):
        count = F.coalesce(old(a.count or ""), F.lit(0)) + F.coalesce(delta("c"), F.lit(0))
        total = (F.coalesce(old(a.state), F.lit(0)) + F.coalesce(delta("p"), F.lit(0))
                 - F.coalesce(delta("n"), F.lit(0))).cast(types[a.state])
        return [(a.state, F.when(count == 0, F.lit(None)).otherwise(total)), (a.count or "", count)]
    merge = F.least if a.function == "MIN" else F.greatest
    return [(a.state, merge(old(a.state), delta("p")))]


def _extreme_removed(a: Aggregate) -> Column:
    """Whether a row the change removed may have been the group's min (max) and no added row reaches it: then only
    a recompute knows the next one. (An added row at or beyond the old extreme is the new one.)"""
    from pyspark.sql import functions as F

    removed, added, current = (F.col(f"{PREFIX}d_n{a.index}"), F.col(f"{PREFIX}d_p{a.index}"),
                               F.col(_OLD + a.state))
    if a.function == "MIN":
        reached, covered = removed <= current, added <= current
    else:
        reached, covered = removed >= current, added >= current
    return removed.isNotNull() & (current.isNull() | (reached & (added.isNull() | ~covered)))


def _apply_to_groups(session: _Session, location: str, view: Snapshot, found: Incrementality, schema: StructType,
                     change_rows: DataFrame, summary: str) -> int | None:
    """Merge the change into the groups it touches. A small view (a gold table's usual size: at most
    SMALL_VIEW_ROWS rows, not partitioned) is merged on the driver and rewritten whole: the change's groups are the
    one Spark job. A larger one is merged by Spark, and only the files holding touched groups are rewritten, with
    their other rows as they were."""
    stored = {field.name: field.dataType.simpleString() for field in _spark_schema(view)}
    needed = [ROWS] + [c for a in found.aggregates for c in (a.state, a.count) if c is not None]
    if any(column not in stored for column in needed):
        raise _Fallback("the view has no state to merge a change into yet (this recompute writes it)")
    argument_types = {f.name: f.dataType.simpleString() for f in change_rows.schema.fields}
    avg_types: dict[int, str] = {}
    for a in found.aggregates:
        if a.function in ("SUM", "AVG") and not argument_types[a.argument_column].startswith(_EXACT_SUMS):
            raise _Fallback(f"{a.function.lower()}({a.argument}) adds {argument_types[a.argument_column]} values, "
                            "whose sums round differently when added in another order")
        if a.function == "AVG":
            avg_types[a.index] = _avg_type(argument_types[a.argument_column])
    merge = _Merge(session.ctx.spark, found, schema, view, stored, avg_types)
    changed = _change_by_group(found, change_rows)
    parameters = {"incremental": "true", "change": summary}
    try:
        if not view.partition_columns and _rows(location, view.version) <= SMALL_VIEW_ROWS \
                and all(merge.simple_key(k) for k in found.keys):
            return merge.on_driver(location, changed, parameters)
        return merge.with_spark(location, changed, parameters)
    except Exception as exc:
        if _EXTREME_LOST in str(exc):
            raise _Fallback("a row the change removed may have been the min or max of its group") from None
        raise


def _rows(location: str, version: int) -> int:
    """The view's row count from its log's statistics (no data read); a large number when a file has none."""
    import pyarrow as pa

    from runtime.storage.delta import open_table

    actions = pa.table(open_table(location, version=version).get_add_actions(flatten=True))
    counts = actions.column("num_records").to_pylist() if "num_records" in actions.column_names else []
    return sum(counts) if all(c is not None for c in counts) else SMALL_VIEW_ROWS + 1


class _Merge:
    """The view's old groups joined with the change's (`_OLD` columns beside the `d_` ones), turned into the new
    rows of the touched groups: the same Spark expressions whether the join ran on the driver or in Spark."""

    def __init__(self, spark: SparkSession, found: Incrementality, schema: StructType, view: Snapshot,
                 stored: dict[str, str], avg_types: dict[int, str]) -> None:
        self.spark, self.found, self.view, self.stored, self.avg_types = spark, found, view, stored, avg_types
        self.columns = schema.fieldNames()
        self.hidden = [f.name for f in view.schema if f.name not in self.columns]

    def simple_key(self, position: int) -> bool:
        """Whether a key's values compare alike in Arrow and Spark (not floating point, not nested)."""
        kind = self.stored[self.columns[position]]
        return kind.startswith(("tinyint", "smallint", "int", "bigint", "string", "date", "timestamp", "decimal",
                                "boolean", "binary", "varchar", "char"))

    def new_rows(self, merged: DataFrame) -> DataFrame:
        from functools import reduce

        from pyspark.sql import functions as F

        found, stored, columns = self.found, self.stored, self.columns
        remaining = F.coalesce(F.col(_OLD + ROWS), F.lit(0)) + F.coalesce(F.col(f"{PREFIX}d_rows"), F.lit(0))
        keep = remaining > 0 if found.keys else F.lit(True)
        extremes = [a for a in found.aggregates if a.function in ("MIN", "MAX")]
        if extremes:  # checked while the rows are made (no job of its own); a group the change empties needs none
            lost = reduce(lambda x, y: x | y, [_extreme_removed(a) for a in extremes]) & (remaining > 0)
            keep = keep & F.when(lost, F.raise_error(F.lit(_EXTREME_LOST))).otherwise(F.lit(True))
        state = [(ROWS, remaining)]
        for a in found.aggregates:
            state += _new_state(a, stored)
        keys = [(key_column(k), F.coalesce(F.col(_OLD + columns[k]), F.col(key_column(k)))) for k in found.keys]
        groups = merged.where(keep).select(*[value.alias(name) for name, value in keys + state])
        key_columns = {k: key_column(k) for k in found.keys}
        visible = [F.expr(visible_expression(found, p, key_columns, self.avg_types)).cast(stored[c]).alias(c)
                   for p, c in enumerate(columns)]
        return groups.select(*visible, *[F.col(c).cast(stored[c]).alias(c) for c in self.hidden])

    def _old(self, rows: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        return rows.select(*[F.col(quote_identifier(c)).alias(_OLD + c) for c in [*self.columns, *self.hidden]])

    def with_spark(self, location: str, changed: DataFrame, parameters: dict[str, str]) -> int | None:
        from pyspark.sql import functions as F

        found, view = self.found, self.view
        rows = _view_rows(self.spark, view)
        pairs = [(self.columns[k], key_column(k)) for k in found.keys]
        if found.keys:
            changed = changed.localCheckpoint()   # read twice: to find the files, and to merge
            touched = [r[0] for r in rows.join(changed, _null_safe(rows, changed, pairs), "left_semi")
                       .select(_FILE).distinct().collect()]
            old = self._old(rows.where(F.col(_FILE).isin(touched)))
            merged = old.join(changed, _null_safe(old, changed, [(_OLD + a, b) for a, b in pairs]), "full_outer")
        else:
            touched = list(view.files)
            merged = self._old(rows).crossJoin(changed)   # one row each: the view's and the change's
        result = self.new_rows(merged)
        if not touched:
            return commit.append(location, result, "REFRESH MATERIALIZED VIEW", parameters)
        return commit.rewrite(location, view.version, touched, result, "REFRESH MATERIALIZED VIEW", parameters)

    def on_driver(self, location: str, changed: DataFrame, parameters: dict[str, str]) -> int | None:
        """The change's groups collected (the one Spark job), joined with the view's rows read by delta-rs, the new
        rows computed by Spark over the joined rows in memory (no job), written as the view's one file."""
        import pyarrow as pa

        from runtime.storage.delta import open_table

        found = self.found
        names = [*self.columns, *self.hidden]
        old = open_table(location, version=self.view.version).to_pyarrow_table(columns=names)
        old = old.rename_columns([_OLD + c for c in names])
        change = changed.toArrow()
        if found.keys:
            joined = _null_safe_full_join(old, change, [(_OLD + self.columns[k], key_column(k)) for k in found.keys])
        elif old.num_rows == 1 and change.num_rows == 1:
            joined = pa.Table.from_arrays([*old.columns, *change.columns], names=[*old.column_names,
                                                                                   *change.column_names])
        else:
            raise _Fallback("the view of an aggregation without GROUP BY does not hold exactly one row")
        result = self.new_rows(self.spark.createDataFrame(joined)).toArrow()
        return commit.replace_with_arrow(location, self.view.version, result, "REFRESH MATERIALIZED VIEW",
                                         parameters)


def _null_safe_full_join(left: Any, right: Any, pairs: list[tuple[str, str]]) -> Any:
    """A full outer join of two Arrow tables on key pairs where NULL matches NULL (Arrow's join never matches
    nulls): each key joins as (value with nulls filled, is-null flag)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def keyed(table: Any, columns: list[str], side: str) -> tuple[Any, list[str]]:
        names = []
        for i, column in enumerate(columns):
            values = table.column(column)
            filler = pa.scalar(_filler(values.type), type=values.type)
            table = table.append_column(f"{PREFIX}{side}v{i}", pc.fill_null(values, filler))
            table = table.append_column(f"{PREFIX}{side}n{i}", pc.is_null(values))
            names += [f"{PREFIX}{side}v{i}", f"{PREFIX}{side}n{i}"]
        return table, names

    left, left_keys = keyed(left, [a for a, _ in pairs], "l")
    right, right_keys = keyed(right, [b for _, b in pairs], "r")
    joined = left.join(right, keys=left_keys, right_keys=right_keys, join_type="full outer", coalesce_keys=False)
    return joined.drop_columns(left_keys + right_keys)


def _filler(kind: Any) -> Any:
    import datetime as dt
    import decimal

    import pyarrow as pa

    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return ""
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return b""
    if pa.types.is_boolean(kind):
        return False
    if pa.types.is_date(kind):
        return dt.date(1970, 1, 1)
    if pa.types.is_timestamp(kind):
        return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc if kind.tz else None)
    if pa.types.is_decimal(kind):
        return decimal.Decimal(0)
    return 0


def _spark_schema(view: Snapshot) -> StructType:
    from runtime.delta.read import spark_schema

    return spark_schema(view.schema)
