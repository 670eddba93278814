"""What a stream needs of its user: the table it creates and everything it reads (tables, files, Kafka brokers),
checked on the streaming plan before the stream exists. The rules of CREATE STREAMING TABLE and CREATE FLOW
(policy/rules.py) call these; what every other statement kind needs is in policy/decide.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluicegate.policy.grants import Principal

if TYPE_CHECKING:
    from sluicegate.catalog.store import CatalogStore
    from sluicegate.dialect.streaming.plan import StreamingPlan
    from sluicegate.policy.policy import Policy


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
