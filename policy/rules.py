"""The rules a statement kind may need, each once: `decide.RULES` gives every kind one of them.

A rule is a check (raise a PolicyError unless the request may run the statement) and, for a statement on one named
table, what it does to that table: reads it or changes it. The catalog's tables get that answer from their owner and
grants (SELECT to read, MODIFY or ownership to change); Spark's own tables, which the catalog does not know, from
their owner in this process (`decide.check_spark_run`). Objects the catalog does not have pass: the statement then
fails with the catalog's or Spark's own "not found", or Spark runs it on one of its own tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from sluicegate.catalog.functions import FunctionStore
from sluicegate.catalog.keys import dropped_name, dropped_primary_key, referencing_foreign_keys
from sluicegate.dialect import statements as st
from sluicegate.policy.grants import Principal
from sluicegate.policy.statements import authorize_sources, authorize_streaming

if TYPE_CHECKING:
    from sluicegate.catalog.functions import FunctionEntry
    from sluicegate.catalog.store import CatalogStore, TableEntry
    from sluicegate.policy.grants import Grants
    from sluicegate.policy.policy import Policy

Access = Literal["read", "change"]


@dataclass(frozen=True)
class Request:
    """One statement's question to the policy: who asks, of which catalog, in which current database."""

    policy: Policy
    principal: Principal
    store: CatalogStore
    current_database: str

    @property
    def grants(self) -> Grants:
        return self.policy.grants  # read only by the rules that need it: a gateway without a catalog has none

    def existing(self, table: st.TableName) -> TableEntry | None:
        return self.store.get_table(*table.qualified(self.current_database))

    def function(self, name: st.TableName) -> FunctionEntry | None:
        return FunctionStore(self.store).get(*name.qualified(self.current_database))

    def schema_of(self, table: st.TableName) -> str | None:
        """The database `table` is in, if the catalog has it (a missing one fails later, with its own error)."""
        database = table.qualified(self.current_database)[0]
        return database if self.store.get_database(database) is not None else None


@dataclass(frozen=True)
class Rule:
    """What one statement kind needs of its user: `check` raises unless the request may run the statement; `access`
    what the statement does to the one table it names, for the owner of a table only Spark's session knows (None: it
    names no existing table); `why` says why a rule that checks nothing needs nothing."""

    check: Callable[[Request, Any], None]
    access: Access | None = None
    why: str = ""


def _nothing(_request: Request, _statement: Any) -> None:
    return None


def anyone(why: str) -> Rule:
    """Nothing is asked of the user; `why` names where what matters is checked instead, or why nothing does."""
    return Rule(_nothing, why=why)


def owner(action: str, access: Access = "change") -> Rule:
    """The ownership of the existing catalog object the statement names (of it or of its schema), to `action` it."""
    def check(request: Request, statement: Any) -> None:
        found = request.existing(statement.table)
        if found is not None:
            request.grants.require_owner(request.principal, found, action)
    return Rule(check, access)


def privilege(name: Literal["SELECT", "MODIFY"]) -> Rule:
    """`name` on the existing catalog table or view the statement names: SELECT to read it, MODIFY to change its
    rows (ownership and ALL PRIVILEGES count as either)."""
    def check(request: Request, statement: Any) -> None:
        found = request.existing(statement.table)
        if found is not None:
            request.grants.require(request.principal, name, found)
    return Rule(check, "read" if name == "SELECT" else "change")


def create_in_schema(request: Request, table: st.TableName) -> None:
    """CREATE in the schema a new object goes to: its ownership or a CREATE grant."""
    database = request.schema_of(table)
    if database is not None:
        request.grants.require_create(request.principal, database)


def creates_spark_table(statement: st.CreateTable) -> bool:
    """`CREATE TABLE ... USING` anything but delta makes one of Spark's own tables (in memory, forgotten on restart),
    not a catalog one: Spark runs it."""
    return statement.using is not None and statement.using.lower() != "delta"


# -- rules of one kind each (or a few alike) -------------------------------------------------------------------------

def drop_schema(request: Request, statement: st.DropDatabase) -> None:
    """DROP SCHEMA: the schema's owner (its tables go with it under CASCADE)."""
    if request.store.get_database(statement.name) is not None:
        request.grants.require_schema_owner(request.principal, statement.name.lower(), "drop")


def drop_constraint(request: Request, statement: st.DropConstraint) -> None:
    """ALTER TABLE ... DROP CONSTRAINT | PRIMARY KEY | FOREIGN KEY: the table's owner. CASCADE of a primary key also
    drops the foreign keys of the tables that reference it: as Databricks documents, the caller must own each of
    those tables (a key on someone else's table is theirs to drop), checked before anything changes."""
    found = request.existing(statement.table)
    if found is None:
        return
    request.grants.require_owner(request.principal, found, "alter")
    name = dropped_name(found, statement)
    if statement.cascade and name is not None and dropped_primary_key(found, name) is not None:
        for table, _key in referencing_foreign_keys(request.store.list_tables(), found):
            request.grants.require_owner(request.principal, table, "drop a foreign key (by CASCADE) of")


def create_or_replace(request: Request, statement: st.CreateTable | st.CreateView | st.CloneTable) -> None:
    """CREATE in the schema; OR REPLACE of an existing object also its ownership. A Spark table replaces no catalog
    object (Spark's catalog holds it): CREATE in the schema only, its LOCATION judged on Spark's plan."""
    create_in_schema(request, statement.table)
    if isinstance(statement, st.CreateTable) and creates_spark_table(statement):
        return
    found = request.existing(statement.table)
    if found is not None and statement.replace:
        request.grants.require_owner(request.principal, found, "replace")


def clone_table(request: Request, statement: st.CloneTable) -> None:
    """As Databricks: SELECT on the source (its rows, schema and properties become the clone's, owned by the
    creator), and what CREATE [OR REPLACE] TABLE needs of the target (CREATE in the schema; the owner to replace)."""
    source = request.existing(statement.source)
    if source is not None:
        request.grants.require(request.principal, "SELECT", source)
    create_or_replace(request, statement)


def create_materialized_view(request: Request, statement: st.CreateMaterializedView) -> None:
    """CREATE in the schema; OR REPLACE / OR REFRESH of an existing view: its owner. SELECT on every input is checked
    where the query is bound (executor/binding/resolver.py), with the creator's rights."""
    found = request.existing(statement.table)
    if found is not None and (statement.replace or statement.or_refresh) and not statement.if_not_exists:
        request.grants.require_owner(request.principal, found, "replace" if statement.replace else "refresh")
    else:
        create_in_schema(request, statement.table)


def merge(request: Request, statement: st.Merge) -> None:
    """MODIFY on the target (ownership counts); WITH SCHEMA EVOLUTION may add columns to it, which is the owner's
    here as ALTER TABLE ADD COLUMNS is: a user who may only change its rows cannot change its schema by a MERGE."""
    found = request.existing(statement.table)
    if found is None:
        return
    request.grants.require(request.principal, "MODIFY", found)
    if statement.schema_evolution:
        request.grants.require_owner(request.principal, found, "evolve the schema of")


def refresh(request: Request, statement: st.Refresh) -> None:
    """A materialized view: its owner or a REFRESH grant (it refreshes with the owner's rights); a streaming table:
    its owner; a plain table: nothing (REFRESH TABLE changes nothing: every statement reads its latest version)."""
    found = request.existing(statement.table)
    if found is not None and found.kind == "MATERIALIZED_VIEW":
        request.grants.require(request.principal, "REFRESH", found)
    elif found is not None and found.kind != "TABLE":
        request.grants.require_owner(request.principal, found, "refresh")


def rename(request: Request, statement: st.RenameTable) -> None:
    """The object's owner, and CREATE in the schema it moves to."""
    found = request.existing(statement.table)
    if found is not None:
        request.grants.require_owner(request.principal, found, "rename")
        create_in_schema(request, statement.new_name)


def create_streaming_table(request: Request, statement: st.CreateStreamingTable) -> None:
    """CREATE in the schema (OR REFRESH of an existing one: its owner), and what the stream reads: SELECT on its
    tables, allowed folders and reader options for its files, allowed brokers for Kafka (policy/statements.py)."""
    authorize_streaming(request.policy, request.principal, request.store, statement.plan, request.current_database)


def create_empty_streaming_table(request: Request, statement: st.CreateStreamingTableSchema) -> None:
    """An empty streaming table that flows fill: CREATE in the schema (each flow's reads are its own rule's)."""
    create_in_schema(request, statement.table)


def create_flow(request: Request, statement: st.CreateFlow) -> None:
    """A flow changes what its table holds for good: the table's owner decides (Databricks: the pipeline's), and
    the flow's reads are checked as a streaming table's are."""
    found = request.existing(statement.table)
    if found is not None:
        request.grants.require_owner(request.principal, found, "add a flow to")
    authorize_sources(request.policy, request.principal, request.store, statement.plan, request.current_database)


def create_auto_cdc(request: Request, statement: st.CreateAutoCdc) -> None:
    """AUTO CDC: as a streaming table's CREATE (`FLOW AUTO CDC`: CREATE in the schema, OR REFRESH its owner) or as
    CREATE FLOW's (`AS AUTO CDC INTO t`: the table's owner), and the source's reads either way."""
    if statement.flow is None:
        authorize_streaming(request.policy, request.principal, request.store, statement.plan,
                            request.current_database)
        return
    found = request.existing(statement.table)
    if found is not None:
        request.grants.require_owner(request.principal, found, "add a flow to")
    authorize_sources(request.policy, request.principal, request.store, statement.plan, request.current_database)


def drop_flow(request: Request, statement: st.DropFlow) -> None:
    """The owner of the flow's table, as to add it."""
    flow = request.store.find_flow(*statement.flow.qualified(request.current_database))
    found = request.store.get_table(flow.database, flow.name) if flow is not None else None
    if found is not None:
        request.grants.require_owner(request.principal, found, "drop a flow of")


def temporary_view(request: Request, statement: st.CreateTemporaryView) -> None:
    """A session's temporary view is its own (its query is bound and judged like any other, its files, in the USING
    form, on Spark's plan); a global one is every session's, so no user may make one (admins with
    `admin_unrestricted` may)."""
    request.policy.check_temporary_view(statement.is_global, request.principal)


def create_function(request: Request, statement: st.CreateFunction) -> None:
    """CREATE in the schema; OR REPLACE of an existing function: its owner. The body is bound as a query of the
    creator's where the handler checks it (executor/functions.py): no table the creator may not read."""
    create_in_schema(request, statement.table)
    found = request.function(statement.table) if statement.replace else None
    if found is not None:
        request.grants.require_function_owner(request.principal, found, "replace")


def drop_function(request: Request, statement: st.DropFunction) -> None:
    """The function's owner (or its schema's)."""
    found = request.function(statement.table)
    if found is not None:
        request.grants.require_function_owner(request.principal, found, "drop")


def describe_function(request: Request, statement: st.DescribeFunction) -> None:
    """A catalog function's body is its owner's SQL: EXECUTE on it, as to call it. Spark's built-ins: anyone."""
    found = request.function(statement.table)
    if found is not None:
        request.grants.require_execute(request.principal, found)


def securable_owner(action: str) -> Rule:
    """GRANT and REVOKE: the owner of the existing object (or schema) they name. An object that is not what the
    statement calls it (ON MATERIALIZED VIEW naming a table) is refused as such by the handler, whoever asks."""
    def check(request: Request, statement: st.Grant | st.Revoke) -> None:
        securable = statement.securable
        if securable.kind == "SCHEMA":
            database = securable.name.name.lower()
            if request.store.get_database(database) is not None:
                request.grants.require_schema_owner(request.principal, database, action)
            return
        if securable.kind == "FUNCTION":
            function = request.function(securable.name)
            if function is not None:
                request.grants.require_function_owner(request.principal, function, action)
            return
        found = request.existing(securable.name)
        if found is not None and (securable.kind != "MATERIALIZED VIEW" or found.kind == "MATERIALIZED_VIEW"):
            request.grants.require_owner(request.principal, found, action)
    return Rule(check)
