"""What every statement kind needs of its user: the policy's table of contents, and its one decision.

The executor asks `decide` once per statement, before it chooses between the warehouse and Spark. `decide` looks the
statement's type up in `RULES` and runs its rule (policy/rules.py); a type without a rule is refused, so a new
statement kind runs for nobody until this table says what it needs. Three things are judged later, where what they
judge exists, and are therefore not in the table:
- the tables and views a query reads: SELECT on each where the query is bound (executor/binding/resolver.py), and
  the analysed plan by `Policy.check_query` before its first row;
- the text Spark runs itself (passthrough statements, Spark's own tables, file views): Spark's own parse of it, and
  the owner of the Spark table it names (`check_spark_run`, after `decide`);
- the files and reader options of `read_files`, where the call is bound (executor/binding/file_reads.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from sluicegate.dialect import statements as st
from sluicegate.policy import rules
from sluicegate.policy.errors import StatementNotAllowedError
from sluicegate.policy.grants import Principal
from sluicegate.policy.rules import Rule, anyone, owner, privilege, securable_owner

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.catalog.store import CatalogStore
    from sluicegate.policy.policy import Policy

_NAMES = "it lists names and kinds only, no data"
_STREAMS = "it lists the schema's streams and their states (status, last batch, last error), as they run"

# How to read the table: `owner(action)` needs the ownership of the named object or of its schema; `privilege(p)`
# needs p on the named table or view (SELECT to read it, MODIFY to change its rows; ownership counts); `anyone(why)`
# needs nothing, for the reason given; `Rule(f)` is the one rule f of policy/rules.py, summed up beside it. Admins
# pass every owner and grant check; what no user may run (spark_plans) holds for them too.
RULES: dict[type[st.Statement], Rule] = {
    # -- the catalog and its schemas
    st.UseCatalog: anyone("it names the gateway's one catalog (or `system`) and changes nothing"),
    st.ShowCatalogs: anyone("it names the gateway's one catalog (and `system`)"),
    st.CreateDatabase: anyone("a new schema belongs to its creator; an existing one stays its owner's"),
    st.UseDatabase: anyone("it changes the session's current schema only; every statement after it is checked"),
    st.ShowDatabases: anyone("a schema's name is no secret (information_schema.schemata shows it too)"),
    st.DescribeDatabase: anyone("a schema's name, comment and owner, as SHOW SCHEMAS and information_schema show"),
    st.DropDatabase: Rule(rules.drop_schema),  # the schema's owner
    # -- tables and views: creating, changing, dropping
    st.CreateTable: Rule(rules.create_or_replace),  # CREATE in the schema; OR REPLACE also the owner (not of Spark's)
    st.CloneTable: Rule(rules.clone_table),  # SELECT on the source, and what CREATE [OR REPLACE] TABLE needs
    st.CreateView: Rule(rules.create_or_replace),  # CREATE in the schema; OR REPLACE also the owner
    st.DropTable: owner("drop"),
    st.AddColumns: owner("alter"),
    st.SetColumnComment: owner("alter"),
    st.SetTableComment: owner("alter"),
    st.SetTableProperties: owner("alter"),
    st.UnsetTableProperties: owner("alter"),
    st.AddConstraint: owner("alter"),  # as Databricks: the table's owner; its CHECK is judged by the dialect first
    st.DropConstraint: Rule(rules.drop_constraint, "change"),  # the owner; CASCADE also of the tables whose keys go
    st.SetColumnNullability: owner("alter"),  # SET NOT NULL first checks the column's rows
    st.SetColumnType: owner("alter"),  # rewrites the table with the column cast, as DROP COLUMNS
    st.DropColumns: owner("alter"),  # rewrites the table without them: what ADD COLUMNS needs, for the same reason
    st.SetClustering: owner("alter"),  # the table's layout, as Databricks: its owner
    st.RenameTable: Rule(rules.rename, "change"),  # the owner, and CREATE in the schema it moves to
    st.Vacuum: owner("vacuum"),
    # -- tables and views: rows
    st.SelectQuery: anyone("what it reads needs SELECT, checked where the query is bound, its plan before it runs"),
    st.Insert: privilege("MODIFY"),
    st.Delete: privilege("MODIFY"),
    st.Update: privilege("MODIFY"),
    st.Merge: Rule(rules.merge, "change"),  # MODIFY; WITH SCHEMA EVOLUTION also the owner (it may add columns)
    st.Optimize: privilege("MODIFY"),  # rewrites files, not rows: what may change the rows may compact them
    # -- tables and views: reading what they are (their schema, properties and history may quote their data)
    st.DescribeTable: privilege("SELECT"),
    st.DescribeHistory: privilege("SELECT"),
    st.DescribeDetail: privilege("SELECT"),
    st.ShowCreateTable: privilege("SELECT"),
    st.ShowTblProperties: privilege("SELECT"),
    st.ShowColumns: privilege("SELECT"),
    st.ShowTables: anyone(_NAMES),
    st.ShowViews: anyone(_NAMES),
    st.ShowTableExtended: anyone("every name is listed; a table's columns only to a user who may read it"),
    # -- what Spark runs itself, and the session's own views
    st.Passthrough: anyone("Spark runs it: its own parse of the text is judged by `check_spark_run`"),
    st.CreateTemporaryView: Rule(rules.temporary_view),  # the session's own: nothing; GLOBAL: refused
    # -- streaming tables and flows
    st.CreateStreamingTable: Rule(rules.create_streaming_table),  # CREATE (OR REFRESH: owner), and its reads
    st.CreateStreamingTableSchema: Rule(rules.create_empty_streaming_table),  # CREATE in the schema
    st.ExplainStreamingTable: anyone("nothing runs: it prints the plan the dialect made of the text"),
    st.DescribeStreamingTable: privilege("SELECT"),
    st.ShowStreamingTables: anyone(_STREAMS),
    st.DropStreamingTable: owner("drop"),
    st.CreateFlow: Rule(rules.create_flow),  # the table's owner, and the flow's reads
    st.CreateAutoCdc: Rule(rules.create_auto_cdc),  # as CREATE STREAMING TABLE (FLOW AUTO CDC) or CREATE FLOW
    st.DropFlow: Rule(rules.drop_flow),  # the table's owner
    st.ShowFlows: anyone(_STREAMS),
    # -- materialized views
    st.CreateMaterializedView: Rule(rules.create_materialized_view),  # CREATE; OR REPLACE / OR REFRESH: the owner
    st.ExplainMaterializedView: anyone("nothing runs: it reads the query's text and which objects it names, as "
                                       "SHOW TABLES does"),
    st.ShowMaterializedViews: anyone("names and refresh states; a failed refresh's error only to a user who may "
                                     "read the view"),
    st.DropMaterializedView: owner("drop"),
    # -- refreshing and scheduling (streaming tables and materialized views; on a Spark table REFRESH only reads)
    st.Refresh: Rule(rules.refresh, "read"),  # a materialized view: owner or REFRESH grant; a streaming table: owner
    st.AlterSchedule: owner("change the refresh schedule of"),
    # -- SQL functions (a call: EXECUTE on the function, checked where the query is bound, executor/functions.py)
    st.CreateFunction: Rule(rules.create_function),  # CREATE in the schema; OR REPLACE: the owner; body: its reads
    st.DropFunction: Rule(rules.drop_function),  # the function's owner
    st.DescribeFunction: Rule(rules.describe_function),  # a catalog function's: EXECUTE (its body is shown)
    st.ShowFunctions: anyone(_NAMES),
    # -- grants
    st.Grant: securable_owner("grant privileges on"),
    st.Revoke: securable_owner("revoke privileges on"),
    st.ShowGrants: anyone("who holds what is no secret: dbt reads it to decide what to grant"),
    # -- live statements
    st.KillQuery: anyone("its handler cancels only a statement of the caller's own, or any for an admin "
                         "(executor/listings/runtime_tables.py); an id of someone else's is refused with 42501"),
}


def decide(policy: Policy, principal: Principal, store: CatalogStore, statement: st.Statement,
           current_database: str) -> None:
    """Raise a PolicyError unless `principal` may run `statement`; a statement kind without a rule is refused, for
    admins too: nobody has said what it needs."""
    rule = RULES.get(type(statement))
    if rule is None:
        raise StatementNotAllowedError(
            f"not allowed: the statement kind {type(statement).__name__} has no rule in the policy",
            hint="the gateway does not know what this statement needs of its user, so nobody may run it")
    rule.check(rules.Request(policy, principal, store, current_database), statement)


def check_spark_run(policy: Policy, principal: Principal, spark: SparkSession, statement: st.Statement, sql: str,
                    current_database: str, *, original: str, to_original: Callable[[int], int] | None,
                    is_temporary_view: Callable[[str], bool]) -> None:
    """A statement Spark runs itself, once `decide` allowed it, judged where its plan exists: Spark's own parse of the
    text it runs (`Policy.check_spark_sql`), then, if it names one of Spark's own tables, that table's owner, to read
    or change it as the kind's rule says. A session's temporary view is nobody else's: no owner to ask."""
    policy.check_spark_sql(spark, sql, principal, original=original, to_original=to_original)
    access = RULES[type(statement)].access
    if access is None:
        return
    # a kind whose rule reads or changes one table names it in `table` (tests/security/test_policy_rules.py)
    table = cast("st.TableName", statement.table)  # type: ignore[union-attr]
    if table.database is None and is_temporary_view(table.name):
        return
    policy.spark_tables.require(principal, *table.qualified(current_database), access)
