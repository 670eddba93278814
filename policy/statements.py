"""What each warehouse statement needs of its user, decided on the classified statement before it runs.

The queries inside a statement are checked where they are bound (every catalog table or view they read needs
SELECT, `warehouse/binding/resolver.py`), and their analysed plans by `Policy.check_query`; this module covers the
objects a statement creates, changes or drops, and the files and tables a streaming table will read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluicegate.dialect import statements as st
from sluicegate.policy.grants import Principal

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore, TableEntry
    from sluicegate.dialect.streaming.plan import StreamingPlan
    from sluicegate.policy.policy import Policy


def authorize(policy: Policy, principal: Principal, store: CatalogStore, statement: st.Statement,
              current_database: str) -> None:
    """Raise a PolicyError unless `principal` may run `statement`; statements on objects the catalog does not have
    pass (they fail later with Spark's or the catalog's own "not found")."""
    grants = policy.grants

    def existing(table: st.TableName) -> TableEntry | None:
        return store.get_table(*table.qualified(current_database))

    def database_of(table: st.TableName) -> str:
        return table.qualified(current_database)[0]

    if isinstance(statement, (st.UseCatalog, st.ShowCatalogs)):
        pass  # anyone: they name the gateway's one catalog (or `system`) and change nothing
    elif isinstance(statement, st.DescribeDatabase):
        pass  # anyone: a schema's name, comment and owner, as SHOW SCHEMAS and information_schema.schemata show
    elif isinstance(statement, st.DropDatabase):
        if store.get_database(statement.name) is not None:
            grants.require_schema_owner(principal, statement.name.lower(), "drop")
    elif isinstance(statement, (st.CreateTable, st.CreateView)):
        if store.get_database(database_of(statement.table)) is not None:
            grants.require_create(principal, database_of(statement.table))
        found = existing(statement.table)
        if found is not None and statement.replace:
            grants.require_owner(principal, found, "replace")
    elif isinstance(statement, st.ExplainMaterializedView):
        pass  # nothing runs: it reads the query's text and which catalog objects it names (as SHOW TABLES does)
    elif isinstance(statement, st.CreateMaterializedView):
        # CREATE in the schema; OR REPLACE / OR REFRESH of an existing view: its owner. SELECT on every input is
        # checked where the query is bound (warehouse/binding/resolver.py), with the creator's rights.
        found = existing(statement.table)
        if found is not None and (statement.replace or statement.or_refresh) and not statement.if_not_exists:
            grants.require_owner(principal, found, "replace" if statement.replace else "refresh")
        elif store.get_database(database_of(statement.table)) is not None:
            grants.require_create(principal, database_of(statement.table))
    elif isinstance(statement, (st.DropTable, st.DropStreamingTable, st.DropMaterializedView)):
        found = existing(statement.table)
        if found is not None:
            grants.require_owner(principal, found, "drop")
    elif isinstance(statement, (st.AddColumns, st.SetColumnComment, st.SetTableComment, st.SetTableProperties,
                                st.UnsetTableProperties, st.Vacuum)):
        found = existing(statement.table)
        if found is not None:
            grants.require_owner(principal, found, "vacuum" if isinstance(statement, st.Vacuum) else "alter")
    elif isinstance(statement, st.AlterSchedule):
        found = existing(statement.table)
        if found is not None:
            grants.require_owner(principal, found, "change the refresh schedule of")
    elif isinstance(statement, st.Refresh):
        found = existing(statement.table)
        if found is not None and found.kind == "MATERIALIZED_VIEW":
            grants.require(principal, "REFRESH", found)  # its owner or a REFRESH grant; it runs as the owner
        elif found is not None and found.kind != "TABLE":
            grants.require_owner(principal, found, "refresh")
    elif isinstance(statement, st.RenameTable):
        found = existing(statement.table)
        if found is not None:
            grants.require_owner(principal, found, "rename")
            if store.get_database(database_of(statement.new_name)) is not None:
                grants.require_create(principal, database_of(statement.new_name))
    elif isinstance(statement, (st.DescribeTable, st.DescribeHistory, st.ShowCreateTable,
                                st.DescribeStreamingTable, st.ShowTblProperties, st.ShowColumns)):
        found = existing(statement.table)
        if found is not None:
            grants.require(principal, "SELECT", found)
    elif isinstance(statement, (st.Insert, st.Delete, st.Update, st.Merge)):
        found = existing(statement.table)
        if found is not None:
            grants.require(principal, "MODIFY", found)
    elif isinstance(statement, st.CreateStreamingTable):
        authorize_streaming(policy, principal, store, statement.plan, current_database)
    elif isinstance(statement, st.CreateStreamingTableSchema):
        if store.get_database(database_of(statement.table)) is not None:
            grants.require_create(principal, database_of(statement.table))
    elif isinstance(statement, st.CreateFlow):
        # a flow changes what its table holds for good: the table's owner decides (Databricks: the pipeline's)
        found = existing(statement.table)
        if found is not None:
            grants.require_owner(principal, found, "add a flow to")
        authorize_sources(policy, principal, store, statement.plan, current_database)
    elif isinstance(statement, st.DropFlow):
        flow = store.find_flow(*statement.flow.qualified(current_database))
        found = store.get_table(flow.database, flow.name) if flow is not None else None
        if found is not None:
            grants.require_owner(principal, found, "drop a flow of")


def authorize_streaming(policy: Policy, principal: Principal, store: CatalogStore, plan: StreamingPlan,
                        current_database: str) -> None:
    """A streaming table: CREATE in its schema (ownership to refresh it), SELECT on every table it streams from or
    joins, allowed folders and reader options for its files."""
    grants = policy.grants
    database = (plan.database or current_database).lower()
    found = store.get_table(database, plan.name.lower())
    if found is not None and plan.or_refresh:
        grants.require_owner(principal, found, "refresh")
    elif store.get_database(database) is not None:
        grants.require_create(principal, database)
    authorize_sources(policy, principal, store, plan, current_database)


def authorize_sources(policy: Policy, principal: Principal, store: CatalogStore, plan: StreamingPlan,
                      current_database: str) -> None:
    """What a stream reads (a streaming table's query or a flow's): SELECT on every table it streams from or joins,
    allowed folders and reader options for its files, allowed brokers and client settings for Kafka."""
    grants = policy.grants
    tables = [(s.database, s.table) for s in plan.sources if s.kind == "table"]
    tables += [(s.database, s.table) for s in plan.static_tables]
    for source_database, name in tables:
        entry = store.get_table((source_database or current_database).lower(), (name or "").lower())
        if entry is not None:
            grants.require(principal, "SELECT", entry)
    for source in plan.sources:
        if source.kind == "files":
            policy.check_read_path(source.path or "", principal)
            policy.check_reader_options(source.options, principal)
        elif source.kind == "rate":
            policy.check_reader_options(source.options, principal)
        elif source.kind == "kafka":
            policy.check_kafka_source(source.options, principal)
