"""CREATE MATERIALIZED VIEW as a checked statement: what the view is called, its query (and where it starts in the
text), its columns, properties, refresh policy and schedule. Two things are refused here, before anything runs, at
their position: a query that reads a stream (Databricks' INVALID_FLOW_QUERY_TYPE: a materialized view is a batch
query over tables; a stream belongs in a streaming table) and expectations (`CONSTRAINT ... EXPECT`), which
materialized views do not take yet."""

from __future__ import annotations

from sqlglot import exp

from sluicegate.dialect.constraints import KeyConstraint, key_constraint
from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.expressions import RefreshPolicy
from sluicegate.dialect.schedule import create_schedule
from sluicegate.dialect.statements import CreateMaterializedView, Query
from sluicegate.dialect.trees import (
    column_specs,
    create_properties,
    end_of,
    error_at,
    is_key_constraint,
    query_offset,
    table_name,
    view_columns,
)


class StreamingRelationError(DialectError):
    error_class = "INVALID_FLOW_QUERY_TYPE.STREAMING_RELATION_FOR_MATERIALIZED_VIEW"
    sqlstate = "42000"


class ExpectationsNotSupportedError(DialectError):
    error_class = "UNSUPPORTED_FEATURE.MATERIALIZED_VIEW_EXPECTATIONS"
    sqlstate = "0A000"


def _refuse_streams(sql: str, query: exp.Expr) -> None:
    stream = query.find(exp.Stream)
    if stream is not None:
        error = error_at(sql, stream, "Streaming relations cannot be used in the query of a materialized view: "
                         "STREAM reads a source incrementally, a materialized view recomputes a batch query",
                         "remove STREAM(...) to read the table's current rows, or CREATE STREAMING TABLE instead")
        raise StreamingRelationError(error.message, hint=error.hint, line=error.line, column=error.column)


def _refuse_expectations(sql: str, target: exp.Expr) -> None:
    if not isinstance(target, exp.Schema):
        return
    for column in target.expressions:
        if is_key_constraint(column):
            continue   # PRIMARY KEY / FOREIGN KEY: informational, as Databricks takes them
        if isinstance(column, exp.Constraint) or column.find(exp.Constraint) is not None:
            error = error_at(sql, column, "materialized views take no expectations (CONSTRAINT ... EXPECT) yet",
                             "leave the CONSTRAINT out, or put the expectation on a streaming table that feeds the "
                             "view")
            raise ExpectationsNotSupportedError(error.message, hint=error.hint, line=error.line, column=error.column)


def create_materialized_view(sql: str, tree: exp.Create) -> CreateMaterializedView:
    query = tree.args.get("expression")
    if query is None:
        raise error_at(sql, tree.this, "a materialized view needs a query",
                       "write CREATE MATERIALIZED VIEW mv AS SELECT")
    _refuse_expectations(sql, tree.this)
    _refuse_streams(sql, query)
    offset = query_offset(sql, end_of(tree.this), require_as=True)
    partition_by, comment, properties, _ = create_properties(tree)
    container = tree.args.get("properties")
    props = container.expressions if container else []
    policies = [p.this for p in props if isinstance(p, RefreshPolicy)]
    properties = {k: v for k, v in properties.items() if k and k != "None"}  # MaterializedProperty has no key
    return CreateMaterializedView(
        table=table_name(tree.this), query=Query(sql[offset:], offset), replace=bool(tree.args.get("replace")),
        or_refresh=bool(tree.args.get("refresh")), if_not_exists=bool(tree.args.get("exists")),
        columns=view_columns(tree.this), partition_by=partition_by, comment=comment, properties=properties,
        refresh_policy=policies[0] if policies else "AUTO", schedule=create_schedule(sql, tree),
        not_null=tuple(c.name for c in column_specs(tree.this) if not c.nullable)
        if isinstance(tree.this, exp.Schema) else (), keys=_keys(tree.this))


def _keys(target: exp.Expr) -> tuple[KeyConstraint, ...]:
    """The informational PRIMARY KEY / FOREIGN KEY of the view's column list (`CONSTRAINT pk PRIMARY KEY (id)`
    beside the columns, or a column's own `PRIMARY KEY`), which Databricks keeps and information_schema lists."""
    if not isinstance(target, exp.Schema):
        return ()
    found = []
    for item in target.expressions:
        if is_key_constraint(item):
            found.append(key_constraint(item))
        elif isinstance(item, exp.ColumnDef) and any(
                isinstance(c.args.get("kind"), exp.PrimaryKeyColumnConstraint)
                for c in item.args.get("constraints") or []):
            found.append(key_constraint(exp.PrimaryKey(expressions=[item.this.copy()])))
    return tuple(found)
