"""Checks on Spark's own plans: what Spark would run is judged on the tree it parsed or analysed, never on the text.

A plan is read in one call into the JVM by `PlanWalker.java` (compiled in the driver; every node of the tree, nested
subquery plans and expressions included) and every node is judged by its class:
- parsed plans (`check_parsed`, for any text handed to `spark.sql`): deny by default. Query operators and
  expressions are allowed, commands only from `USER_COMMANDS`, and only at the root; script transformation,
  reflection and the commands in `REFUSED` are refused with a reason.
- analysed plans (`check_analyzed`, for every query's DataFrame, views expanded): nothing in `FORBIDDEN_ANALYZED`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

from sluicegate.engine.jvm_objects import compiled_java, escaped_lines
from sluicegate.engine.sessions import session_parser
from sluicegate.policy.errors import StatementNotAllowedError
from sluicegate.storage.spark_errors import from_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)

_LOGICAL = "org.apache.spark.sql.catalyst.plans.logical."
_EXPRESSIONS = "org.apache.spark.sql.catalyst.expressions."
_ANALYSIS = "org.apache.spark.sql.catalyst.analysis."

# Relational operators a query may use (parsed or analysed form).
QUERY_OPERATORS = frozenset([
    "Project", "Filter", "Aggregate", "Join", "Union", "Sort", "GlobalLimit", "LocalLimit", "Offset", "Distinct",
    "Deduplicate", "SubqueryAlias", "UnresolvedWith", "WithCTE", "CTERelationDef", "CTERelationRef", "Window",
    "WithWindowDefinition", "Generate", "Pivot", "Unpivot", "Sample", "Intersect", "Except", "OneRowRelation",
    "LocalRelation", "Range", "RepartitionByExpression", "Repartition", "RebalancePartitions", "UnresolvedHint",
    "ResolvedHint", "Expand", "Tail", "LateralJoin", "Subquery", "View", "ColumnDefinition", "UnresolvedTableSpec",
    "OptionList", "SerdeInfo", "QualifiedColType", "DefaultValueExpression",
])
# Names still to be resolved, from Spark's analysis package: each is judged again on the analysed plan.
UNRESOLVED_FORMS = frozenset([
    "ExpressionWithUnresolvedIdentifier", "PlanWithUnresolvedIdentifier", "NamedParameter", "PosParameter",
    "CurrentNamespace",
])

# Commands a user may hand to Spark as typed, each at the root of the statement only. The warehouse's own
# statements (catalog tables, views, DML, streaming tables, grants) never get here.
USER_COMMANDS = frozenset([
    "SetCommand", "ResetCommand", "SetCatalogAndNamespace", "ShowFunctions", "DescribeFunction", "ExplainCommand",
    "DescribeQueryCommand", "CreateViewCommand", "CreateTempViewUsing", "ShowTables", "ShowTableExtended", "ShowViews",
    "ShowNamespaces", "ShowColumns", "ShowTableProperties", "ShowPartitions", "ShowCreateTable", "DescribeRelation",
    "DescribeRelationJsonCommand", "DescribeColumn", "DescribeNamespace", "ShowCurrentNamespace", "ShowCatalogs",
    "ShowTablesExtended", "CreateTable", "CreateTableAsSelect", "DropTable", "DropView", "InsertIntoStatement",
    "RenameTable", "AddColumns", "CreateVariable", "DropVariable", "SetVariable",
])

# Refused outright, with the reason a user reads.
REFUSED = {
    "ScriptTransformation": "script transforms (TRANSFORM/MAP/REDUCE ... USING) run shell commands on the server",
    "InsertIntoDir": "INSERT OVERWRITE DIRECTORY writes files outside the warehouse",
    "AddJarsCommand": "ADD JAR loads code into the shared driver",
    "AddFilesCommand": "ADD FILE ships server files to every session",
    "AddArchivesCommand": "ADD ARCHIVE ships server files to every session",
    "ListJarsCommand": "LIST JAR shows what the server loaded",
    "ListFilesCommand": "LIST FILE shows what the server shipped",
    "ListArchivesCommand": "LIST ARCHIVE shows what the server shipped",
    "CreateFunction": "CREATE FUNCTION loads classes into the shared driver",
    "CreateFunctionCommand": "CREATE FUNCTION loads classes into the shared driver",
    "CreateUserDefinedFunctionCommand": "CREATE FUNCTION defines code in the shared driver",
    "DropFunction": "DROP FUNCTION changes the shared function registry",
    "RefreshFunction": "REFRESH FUNCTION changes the shared function registry",
    "CacheTable": "CACHE TABLE fills the cache every session shares",
    "CacheTableAsSelect": "CACHE TABLE fills the cache every session shares",
    "UncacheTable": "UNCACHE TABLE empties the cache every session shares",
    "ClearCacheCommand": "CLEAR CACHE empties the cache every session shares",
    "LoadData": "LOAD DATA reads files from the server",
    "UnresolvedExecuteImmediate": "EXECUTE IMMEDIATE runs text that cannot be checked before it runs",
    "ExecuteImmediateQuery": "EXECUTE IMMEDIATE runs text that cannot be checked before it runs",
    "ExecuteImmediateCommands": "EXECUTE IMMEDIATE runs text that cannot be checked before it runs",
    "CallMethodViaReflection": "reflection (java_method, reflect, try_reflect) calls Java methods in the server",
    "TryReflect": "reflection (java_method, reflect, try_reflect) calls Java methods in the server",
}
REFLECTION_NAMES = frozenset({"java_method", "reflect", "try_reflect"})
TABLE_FUNCTIONS = frozenset([
    "range", "explode", "explode_outer", "inline", "inline_outer", "json_tuple", "posexplode", "posexplode_outer",
    "stack", "variant_explode", "variant_explode_outer", "sql_keywords", "collations",
])
FORBIDDEN_ANALYZED = frozenset({
    "ScriptTransformation", "HiveScriptTransformation", "CallMethodViaReflection", "TryReflect", "InsertIntoDir",
    "InsertIntoDataSourceDirCommand", "InsertIntoHiveDirCommand",
})
FILE_FORMATS = frozenset({"parquet", "csv", "json", "orc", "text", "avro", "delta"})
_HINT = "run queries and the warehouse's statements; ask an admin for what needs the server itself"


_WALKER = "sluicegate.policy.PlanWalker"
_WALKER_SOURCE = (resources.files(__package__) / "PlanWalker.java").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Node:
    """One node of a plan: its class's simple name and full name, and what the walker reads of it (a function's
    name; a catalog relation's database and table) or, in a toJSON value, its fields."""

    name: str
    qualified: str
    details: tuple[str, ...] = ()
    fields: dict[str, Any] = field(default_factory=dict)


def _node(qualified: str, details: tuple[str, ...] = (), fields: dict[str, Any] | None = None) -> Node:
    return Node(qualified.rsplit(".", 1)[-1].rstrip("$"), qualified, details, fields or {})  # `$`: a Scala object


def nodes_in(value: Any) -> Iterator[Node]:
    """Every node in a parsed toJSON value (a plan, an expression list or one node's fields), pre-order."""
    if isinstance(value, dict):
        qualified = value.get("class")
        if isinstance(qualified, str):
            yield _node(qualified, fields=value)
        for item in value.values():
            yield from nodes_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from nodes_in(item)


def plan_nodes(spark: SparkSession, jplan: Any) -> list[Node]:
    """Every node of a JVM logical plan, expressions and subqueries included: the root first, then each distinct
    (class, details) once."""
    try:
        walked = compiled_java(spark, _WALKER, _WALKER_SOURCE).walk(jplan)
    except Exception as exc:
        log.warning("could not read a plan for the policy check: %s", exc)
        raise StatementNotAllowedError("the statement's plan could not be checked, so it is not run",
                                       hint=_HINT) from exc
    nodes = [_node(qualified, tuple(details)) for qualified, *details in escaped_lines(str(walked))]
    if not nodes:   # the walker always names the root; nothing at all is no plan to judge
        raise StatementNotAllowedError("the statement's plan could not be checked, so it is not run", hint=_HINT)
    return nodes


def root_fields(jplan: Any) -> dict[str, Any]:
    """The fields of a plan's root as `TreeNode.toJSON` writes them (nested nodes included): for the few commands
    whose settings the policy reads. Costs Scala reflection per node, so only for those, never for queries."""
    try:
        rendered = json.loads(jplan.toJSON())
    except Exception as exc:
        log.warning("could not read a command for the policy check: %s", exc)
        raise StatementNotAllowedError("the statement could not be checked, so it is not run", hint=_HINT) from exc
    return rendered[0] if isinstance(rendered, list) and rendered and isinstance(rendered[0], dict) else {}


def _refuse(reason: str) -> StatementNotAllowedError:
    return StatementNotAllowedError(f"not allowed: {reason}", hint=_HINT)


def _function_name(node: Node) -> str:
    return (node.details[-1] if node.details else "").lower()


def _judge(node: Node, is_root: bool) -> None:
    if node.name in REFUSED:
        raise _refuse(REFUSED[node.name])
    if node.name == "UnresolvedFunction" and _function_name(node) in REFLECTION_NAMES:
        raise _refuse(REFUSED["CallMethodViaReflection"])
    if node.name == "UnresolvedTableValuedFunction":
        name = _function_name(node)
        if name not in TABLE_FUNCTIONS:
            raise _refuse(f"the table function {name}() is not available to users")
        return
    if node.qualified.startswith(_EXPRESSIONS):
        return  # functions are looked up in the session's registry, which has no reflection; judged again analysed
    if node.qualified.startswith(_ANALYSIS) and (node.name.startswith("Unresolved") or node.name in UNRESOLVED_FORMS):
        return  # names not yet resolved: what they name is checked when it resolves
    if node.name in QUERY_OPERATORS and node.qualified.startswith((_LOGICAL, "org.apache.spark.sql.catalyst")):
        return
    if node.name in USER_COMMANDS and is_root:
        return
    if node.name in USER_COMMANDS:
        raise _refuse(f"{node.name} may only stand alone, not inside another statement")
    raise _refuse(f"the statement kind {node.name} is not on the list of what users may run")


def parse(spark: SparkSession, sql: str, original: str | None = None,
          to_original: Callable[[int], int] | None = None) -> Any:
    """Spark's parsed (unresolved) plan of `sql`: nothing is looked up or run. Raises Spark's own syntax error."""
    try:
        return session_parser(spark).parsePlan(sql)
    except Exception as exc:
        raise from_spark(exc, sql, original=original, to_original=to_original) from exc


def check_parsed(nodes: list[Node], *, commands: bool = True) -> None:
    """Judge a parsed plan; with `commands` False (text meant to be a query) no command is allowed anywhere."""
    for index, node in enumerate(nodes):
        _judge(node, commands and index == 0)


def check_analyzed(df: DataFrame) -> list[tuple[str, str]]:
    """Refuse a query whose analysed plan (views and subqueries expanded) holds anything no user may run; returns
    the Spark catalog tables it reads, as (database, name), for their owners to be checked."""
    return check_analyzed_plan(df.sparkSession, df._jdf.queryExecution().analyzed())


def analyzed_without_running(spark: SparkSession, jplan: Any, sql: str, original: str | None = None,
                             to_original: Callable[[int], int] | None = None) -> Any:
    """The analysed plan of a parsed command (CREATE TABLE AS, INSERT), without running it: what it would read."""
    jvm = spark._jvm
    assert jvm is not None  # typed optional; a session always has its JVM
    mode = jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP()
    try:
        return spark._jsparkSession.sessionState().executePlan(jplan, mode).analyzed()
    except Exception as exc:
        raise from_spark(exc, sql, original=original, to_original=to_original) from exc


def check_analyzed_plan(spark: SparkSession, jplan: Any) -> list[tuple[str, str]]:
    tables: list[tuple[str, str]] = []
    for node in plan_nodes(spark, jplan):
        if node.name in FORBIDDEN_ANALYZED:
            raise _refuse(REFUSED.get(node.name, f"{node.name} is not allowed"))
        if node.name == "LogicalRelation" and len(node.details) == 2:
            database, table = node.details
            tables.append((database or "default", table))
    return tables
