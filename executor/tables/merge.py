"""MERGE INTO a Delta table: one full outer join of the pinned target with the source computes, per row, the first
WHEN clause that applies (Spark's order); the files holding an updated or deleted row are rewritten and the inserted
rows added, as one remove+add commit checked against the version read.

Values are cast to the column types with CAST (not the stricter INSERT store assignment). As in Spark with Delta,
several source rows matching one target row that a WHEN MATCHED clause would change is an error (which source row
wins would be arbitrary); nothing is written then. A WHEN NOT MATCHED [BY TARGET] clause reads only the source, as
Databricks documents: its condition's and INSERT values' unqualified columns are the source's.

`MERGE WITH SCHEMA EVOLUTION` (Databricks): the source's columns the target lacks are added after the target's, NULL
in every row no clause assigns them, when `UPDATE SET *` / `INSERT *` or an explicit assignment names them (a column
only read in an expression is not added); `*` then assigns the target columns the source has, leaving the others as
they are (UPDATE) or NULL (INSERT). delta-rs commits a new schema only in an overwrite, so a merge that adds columns
writes every row of the target again, in one commit with the new schema; once the columns exist, later merges
rewrite only the files they touch. Without new columns the clause changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sluicegate.catalog.names import quote_identifier, quote_qualified
from sluicegate.dialect.constraints import checks_of
from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.statements import Merge, Query
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.binding.binder import SOURCE_FILE, bind
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import UnresolvedColumnError, UnsupportedStatementError, WarehouseError
from sluicegate.executor.lookups import require_table
from sluicegate.executor.output import modified, no_result
from sluicegate.executor.tables.dml import inserted_result, source_file, table_schema
from sluicegate.storage.constraints import enforce
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.tables import open_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructField, StructType

_FILE, _HIT, _KEEP, _ROW, _MATCHED = "__sg_file", "__sg_hit", "__sg_keep", "__sg_row", "__sg_matched"


def _sql(node: exp.Expression) -> str:
    return node.sql(dialect=StreamingSpark)


def _source(using: exp.Expression) -> tuple[str, str]:
    """The source's text without its alias, and the alias its columns are qualified with."""
    alias = using.alias or (using.name if isinstance(using, exp.Table) else "")
    if isinstance(using, exp.Subquery):
        text = f"({_sql(using.this)})"
    else:
        bare = using.copy()
        bare.set("alias", None)
        text = _sql(bare)
    return text, alias or "__sg_source"


def _is_star(then: exp.Expression | None) -> bool:
    """`UPDATE SET *` or `INSERT *` (every column, by name)."""
    if isinstance(then, exp.Update):
        return not then.expressions or isinstance(then.expressions[0], exp.Star)
    return isinstance(then, exp.Insert) and (
        isinstance(then.this, exp.Star) or (then.this is None and then.expression is None))


def _named_columns(then: exp.Expression | None) -> list[str]:
    """The columns an UPDATE SET or INSERT (...) clause assigns explicitly."""
    if isinstance(then, exp.Update):
        return [eq.this.name for eq in then.expressions]
    if isinstance(then, exp.Insert) and isinstance(then.this, exp.Tuple):
        return [c.name for c in then.this.expressions]
    return []


def _source_only(node: exp.Expression, source: str) -> exp.Expression:
    """A WHEN NOT MATCHED [BY TARGET] clause's condition or INSERT value with its unqualified columns qualified by
    the source's alias: as Databricks documents, these read only the source's columns (there is no target row), so
    `INSERT (id) VALUES (id)`, as dbt-databricks' snapshots send it, is the source's `id`, not an ambiguous one. A
    lambda's own variables stay as written."""
    def qualify(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Column) or node.table or isinstance(node.this, exp.Star):
            return node
        outer = node.parent
        while outer is not None:
            if isinstance(outer, exp.Lambda) and node.name.lower() in {v.name.lower() for v in outer.expressions}:
                return node
            outer = outer.parent
        return exp.column(node.this.copy(), table=exp.to_identifier(source, quoted=True))
    return node.copy().transform(qualify)


def _assignments(when: exp.When, schema: StructType, source: str,
                 source_columns: set[str] | None = None) -> dict[str, str] | None:
    """Column (lower-cased) -> value for an UPDATE or INSERT clause; None for DELETE. `source_columns` (lower-cased;
    WITH SCHEMA EVOLUTION only): `*` assigns only the target columns the source has, the others keep their value
    (UPDATE) or are NULL (INSERT)."""
    then = when.args.get("then")
    names = {f.name.lower(): f.name for f in schema.fields}
    star = {n: quote_qualified(source, names[n]) for n in names if source_columns is None or n in source_columns}
    if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
        return None
    if _is_star(then):
        return star
    if isinstance(then, exp.Update):
        pairs = [(eq.this.name, _sql(eq.expression)) for eq in then.expressions]
    elif isinstance(then, exp.Insert):
        values = then.expression.expressions if isinstance(then.expression, exp.Tuple) else []
        columns = _named_columns(then) or list(names.values())
        pairs = list(zip(columns, (_sql(_source_only(v, source)) for v in values), strict=False))
    else:
        raise UnsupportedStatementError(f"this MERGE action is not supported: {_sql(then) if then else ''}",
                                        hint="use UPDATE SET, DELETE or INSERT")
    result = {}
    for column, value in pairs:
        if column.lower() not in names:
            raise UnresolvedColumnError(f"A column with name `{column}` cannot be resolved in the MERGE target.",
                                        hint=f"columns: {', '.join(names.values())}; MERGE WITH SCHEMA EVOLUTION "
                                             "adds a column of the source's")
        result[column.lower()] = value
    return result


def _new_columns(ctx: StatementContext, whens: list[exp.When], schema: StructType,
                 source_text: str) -> tuple[list[StructField], set[str]]:
    """WITH SCHEMA EVOLUTION: the source's columns the target lacks that a clause assigns (`*` assigns every source
    column; an explicit assignment its column), in the source's order, nullable, of the source's types; and the
    source's column names (lower-cased)."""
    from pyspark.sql.types import StructField

    df, binder = bind(ctx, Query(f"SELECT * FROM {source_text} AS __sg_src"))
    try:
        source_fields = list(df.schema.fields)
    finally:
        binder.close()
    assigned: set[str] = set()
    for when in whens:
        then = when.args.get("then")
        if _is_star(then):
            assigned.update(f.name.lower() for f in source_fields)
        else:
            assigned.update(name.lower() for name in _named_columns(then))
    taken = {f.name.lower() for f in schema.fields}
    added = [StructField(f.name, f.dataType, True) for f in source_fields
             if f.name.lower() in assigned and f.name.lower() not in taken]
    return added, {f.name.lower() for f in source_fields}


def _evolved_schema(location: str, added: list[StructField]) -> Any:
    """The target's Delta schema with the `added` columns after its own (nullable, as ADD COLUMNS adds them)."""
    from deltalake.schema import Field, Schema
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    fields = Schema.from_arrow(to_arrow_schema(StructType(added))).fields
    return Schema([*open_table(location).schema().fields, *(Field(f.name, f.type, nullable=True) for f in fields)])


def merge(ctx: StatementContext, stmt: Merge) -> StatementResult:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    entry = require_table(ctx, stmt.table, "MERGE")
    existing = table_schema(entry)
    tree = stmt.tree
    target = tree.this.alias or entry.name
    source_text, source = _source(tree.args["using"])
    on = _sql(tree.args["on"])
    whens = tree.args["whens"].expressions
    added: list[StructField] = []
    source_columns = None
    if stmt.schema_evolution:
        added, source_columns = _new_columns(ctx, whens, existing, source_text)
    schema = StructType([*existing.fields, *added])
    new_names = {f.name for f in added}
    t, s = quote_identifier(target), quote_identifier(source)  # aliases as Spark SQL identifiers
    clauses = []  # (condition, assignments or None for delete, is_insert)
    for when in whens:
        matched, by_source = bool(when.args.get("matched")), bool(when.args.get("source"))
        if matched:
            base = f"{t}.__sg_t IS NOT NULL AND {s}.__sg_s IS NOT NULL"
        elif by_source:
            base = f"{s}.__sg_s IS NULL"
        else:
            base = f"{t}.__sg_t IS NULL"
        extra = when.args.get("condition")
        if extra is not None and not matched and not by_source:
            extra = _source_only(extra, source)
        condition = f"({base}) AND coalesce(({_sql(extra)}), false)" if extra is not None else f"({base})"
        clauses.append((condition, _assignments(when, schema, source, source_columns),
                        not matched and not by_source))
    columns = []
    for field in schema.fields:
        cases = []
        # what the target row holds: NULL in a column the merge adds
        current = (f"CAST(NULL AS {field.dataType.simpleString()})" if field.name in new_names
                   else quote_qualified(target, field.name))
        for condition, values, is_insert in clauses:
            if values is None:
                value = current
            elif field.name.lower() in values:
                value = f"CAST(({values[field.name.lower()]}) AS {field.dataType.simpleString()})"
            else:
                value = "NULL" if is_insert else current
            cases.append(f"WHEN {condition} THEN {value}")
        columns.append(f"CASE {' '.join(cases)} ELSE {current} END AS {quote_identifier(field.name)}")
    first = " ".join(f"WHEN {c} THEN {i}" for i, (c, _, _) in enumerate(clauses))
    action = f"CASE {first} ELSE -1 END"
    delete_ids = [str(i) for i, (_, v, _) in enumerate(clauses) if v is None] or ["-2"]
    insert_ids = [str(i) for i, (_, _, ins) in enumerate(clauses) if ins] or ["-2"]
    _, files = source_file(entry)
    file_sql = SOURCE_FILE if files else "input_file_name()"
    sql = (
        f"SELECT {', '.join(columns)}, {t}.__sg_file AS {_FILE}, "
        f"{t}.__sg_t IS NOT NULL AND {action} >= 0 AS {_HIT}, "
        f"NOT ({action} IN ({', '.join(delete_ids)})) AND ({t}.__sg_t IS NOT NULL "
        f"OR {action} IN ({', '.join(insert_ids)})) AS {_KEEP}, {t}.__sg_row AS {_ROW}, "
        f"{t}.__sg_t IS NOT NULL AND {s}.__sg_s IS NOT NULL AND {action} >= 0 AS {_MATCHED} "
        f"FROM (SELECT *, {file_sql} AS __sg_file, monotonically_increasing_id() AS __sg_row, "
        f"true AS __sg_t FROM {quote_qualified(entry.database, entry.name)}) "
        f"AS {t} FULL OUTER JOIN (SELECT *, true AS __sg_s FROM {source_text} AS __sg_src) AS {s} "
        f"ON {on}"
    )
    df, binder = bind(ctx, Query(sql), source_files=files)
    snapshot = binder.snapshots.get((entry.database, entry.name))
    try:
        if any(when.args.get("matched") for when in whens):
            _refuse_multiple_matches(df, quote_qualified(entry.database, entry.name))
        hits = df.where(F.col(_HIT)).groupBy(_FILE, _KEEP).count().collect()  # target rows updated or deleted
        touched = sorted({row[0] for row in hits})
        inserted = df.where(F.col(_KEEP) & F.col(_FILE).isNull())
        if not added and not touched and not inserted.limit(1).count():
            return modified(0)
        read_version = snapshot.version if snapshot else 0
        qualified = quote_qualified(entry.database, entry.name)
        if added:  # a new schema: delta-rs commits one only with every file, so every row is written again
            checked = enforce(df.where(F.col(_KEEP)), schema, qualified, checks_of(entry.properties))
            version = commit.overwrite_with_schema(
                entry.location or "", read_version, checked, _evolved_schema(entry.location or "", added), "MERGE",
                {"predicate": on, "schemaEvolution": ", ".join(f.name for f in added)})
            ctx.store.update_table(entry.database, entry.name, schema_json=schema.json())
        else:
            rows = df.where(F.col(_KEEP) & (F.col(_FILE).isin(touched) | F.col(_FILE).isNull()))
            checked = enforce(rows, schema, qualified, checks_of(entry.properties))
            version = commit.rewrite(entry.location or "", read_version, touched, checked, "MERGE",
                                     {"predicate": on})
    finally:
        binder.close()
    return _merged(entry.location or "", version, hit=sum(row[2] for row in hits),
                   deleted=sum(row[2] for row in hits if not row[1]))


def _merged(location: str, version: int, hit: int, deleted: int) -> StatementResult:
    """MERGE's count: the target rows it updated or deleted plus the rows it inserted, which are the commit's net
    change in rows (from the Delta log's statistics) plus the deleted ones."""
    net = inserted_result(location, version, replaced=False).modified_rows
    return no_result() if net is None else modified(hit + net + deleted)


def _refuse_multiple_matches(df: DataFrame, table: str) -> None:
    """A target row (file, row id) that more than one source row matches with a WHEN MATCHED clause applying."""
    from pyspark.sql import functions as F

    twice = (df.where(F.col(_MATCHED)).groupBy(_FILE, _ROW).count().where(F.col("count") > 1).limit(1).collect())
    if twice:
        raise WarehouseError(
            f"MERGE into {table} failed: {twice[0]['count']} rows of the source matched the same target row, and a "
            "WHEN MATCHED clause would change it; which source row should win is undefined.",
            error_class="DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE", sqlstate="21506",
            hint="make the source unique on the ON condition's keys (aggregate it, or keep one row per key with "
                 "row_number() in a subquery)",
        )

