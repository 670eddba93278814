"""Incremental refresh of a materialized view, where it is exact and cheap: a filter/projection (SELECT ... FROM one
catalog Delta table [WHERE ...], deterministic, no aggregate, join, window, DISTINCT, LIMIT or subquery) over an
input that only got appends since the version the view reflects. Then the new rows are the query over the files
those commits added, appended to the view in one commit; any other change (a remove: UPDATE, DELETE, MERGE,
OVERWRITE; a schema change) is a full recompute.

`analyse` decides by the query's tree whether a view is incrementalizable, with Databricks' reason when it is not
(`MATERIALIZED_VIEW_NOT_INCREMENTALIZABLE.<reason>`); EXPLAIN CREATE MATERIALIZED VIEW shows it.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

from sqlglot import exp

from dialect.references import parse, splice, table_references

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from runtime.warehouse.context import StatementContext

NONDETERMINISTIC = frozenset({
    "rand", "randn", "random", "uuid", "shuffle", "current_timestamp", "now", "current_date", "curdate",
    "localtimestamp", "unix_timestamp", "monotonically_increasing_id", "spark_partition_id", "input_file_name",
    "current_user", "session_user", "user", "try_reflect", "reflect", "java_method",
})


@dataclass(frozen=True)
class Incrementality:
    incremental: bool
    reason: str | None = None          # Databricks' reason code when not incrementalizable
    detail: str = ""                   # what in the query decided it
    database: str | None = None        # the one input table, when incrementalizable
    table: str | None = None


def _function_name(node: exp.Func) -> str:
    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


def analyse(query_sql: str) -> Incrementality:
    """Whether appends to the query's one input can be applied to its result by appending the query over them."""
    def no(reason: str, detail: str) -> Incrementality:
        return Incrementality(False, reason, detail)

    tree = parse(query_sql)
    if not isinstance(tree, exp.Select) or tree.args.get("with"):
        return no("OPERATOR_NOT_INCREMENTALIZABLE", "the query is not one SELECT (a set operation, VALUES or WITH)")
    if tree.find(exp.AggFunc) is not None or tree.args.get("group") or tree.args.get("having"):
        return no("OPERATOR_NOT_INCREMENTALIZABLE", "an aggregation (only filters and projections are incremental)")
    if tree.find(exp.Window) is not None:
        return no("OPERATOR_NOT_INCREMENTALIZABLE", "a window function")
    if tree.args.get("distinct") or tree.args.get("limit") or tree.args.get("order") or tree.args.get("joins"):
        return no("OPERATOR_NOT_INCREMENTALIZABLE", "DISTINCT, LIMIT, ORDER BY or a join")
    if any(isinstance(node, exp.Query) for node in tree.find_all(exp.Subquery, exp.Select) if node is not tree):
        return no("SUBQUERY_EXPRESSION_NOT_INCREMENTALIZABLE", "a subquery")
    for function in tree.find_all(exp.Func):
        if _function_name(function) in NONDETERMINISTIC or isinstance(function, (exp.Rand, exp.Randn)):
            return no("EXPRESSION_NOT_DETERMINISTIC", f"{_function_name(function)}() is not deterministic")
    tables = list(tree.find_all(exp.Table))
    refs = table_references(query_sql, tree)
    if len(tables) != 1 or len(refs) != 1 or refs[0].version is not None or refs[0].timestamp is not None:
        return no("INPUT_NOT_IN_DELTA", "the query reads no single Delta table (a table function or time travel)")
    return Incrementality(True, detail=f"a filter/projection of {refs[0].name}", database=refs[0].database,
                          table=refs[0].name)


def appended_files(location: str, since: int, until: int) -> list[str] | None:
    """The data files the commits after `since` up to `until` added, as file URIs; None when any of them removed a
    file or changed the table's metadata (then only a full recompute is exact)."""
    root = os.path.abspath(location)
    added: list[str] = []
    for version in range(since + 1, until + 1):
        log = os.path.join(root, "_delta_log", f"{version:020d}.json")
        if not os.path.exists(log):
            return None  # cleaned up: the change cannot be read
        with open(log, encoding="utf-8") as handle:
            for line in handle:
                action = json.loads(line) if line.strip() else {}
                if "remove" in action or "metaData" in action or "cdc" in action:
                    return None
                add = action.get("add")
                if add is not None and add.get("dataChange", True):
                    added.append("file://" + os.path.join(root, unquote(add["path"])))
    return added


def appended_rows(ctx: StatementContext, query_sql: str, found: Incrementality, location: str, version: int,
                  files: list[str]) -> tuple[DataFrame, str]:
    """The query over the appended files only, checked by the policy as any query (SELECT on the input: the
    caller's, who refreshes with the view owner's rights), and the temporary view it reads, which the caller drops
    once the rows are written."""
    import pyarrow as pa
    from deltalake import DeltaTable

    from runtime.delta.read import Snapshot, pinned_dataframe
    from runtime.warehouse.binder import catalog_resolver

    resolved = catalog_resolver(ctx).resolve(found.database, found.table or "")  # SELECT on the input
    if resolved is None or os.path.abspath(resolved.location or "") != os.path.abspath(location):
        raise LookupError(f"{found.table} no longer names the table the view read")
    table = DeltaTable(location, version=version)
    snapshot = Snapshot(location, version, tuple(files), pa.schema(table.schema().to_arrow()),
                        tuple(table.metadata().partition_columns))
    name = f"__sg_appended_{uuid.uuid4().hex}"
    pinned_dataframe(ctx.spark, snapshot).createOrReplaceTempView(name)
    try:
        spliced = splice(query_sql, [(table_references(query_sql)[0], name)])
        # as every text the binder hands to spark.sql: Spark runs a command at once, before the plan check below
        ctx.policy.check_query_text(ctx.spark, spliced.sql, ctx.principal)
        df = ctx.spark.sql(spliced.sql)
        ctx.policy.check_query(df, ctx.principal)
    except BaseException:
        ctx.spark.catalog.dropTempView(name)
        raise
    return df, name
