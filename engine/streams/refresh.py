"""CREATE OR REFRESH of an existing streaming table: compare the new definition with the stored one part by part
(as dbt-databricks does) and decide whether the stream can go on from its checkpoint or must start over."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sluicegate.dialect.streaming.kafka import identity_options
from sluicegate.dialect.streaming.plan import StreamingPlan

UNCHANGED = "unchanged"        # same query: restart with the new properties on the same checkpoint
CONTINUE = "continue"          # a stateless query changed over the same sources: new rows follow the new query
FULL = "full"                  # anything else: empty the table, drop the checkpoint, read the sources from the start


@dataclass(frozen=True)
class RefreshDecision:
    kind: str
    reason: str


def _sources_without_inferred_schema(plan: StreamingPlan, stored: StreamingPlan) -> tuple:
    """A file source's schema inferred at the first CREATE counts as what the user wrote when they wrote none."""
    inferred = {s.view_name: s.schema for s in stored.sources}
    return tuple(replace(s, schema=inferred.get(s.view_name)) if s.kind == "files" and s.schema is None else s
                 for s in plan.sources)


def _identities(sources: tuple) -> tuple:
    """A Kafka source is the same source while its subscription is (see identity_options)."""
    return tuple(replace(s, options=identity_options(s.options)) if s.kind == "kafka" else s for s in sources)


def decide(stored: StreamingPlan, new: StreamingPlan, same_schema: bool) -> RefreshDecision:
    sources_same = _identities(_sources_without_inferred_schema(new, stored)) == _identities(stored.sources)
    query_same = (new.query_sql == stored.query_sql and new.columns == stored.columns
                  and new.static_tables == stored.static_tables)
    if tuple(p.lower() for p in new.partition_by) != tuple(p.lower() for p in stored.partition_by):
        return RefreshDecision(FULL, "the partitioning changed: the table is written again in the new layout, the "
                                     "stream reading its sources from the start")
    if new.cdc != stored.cdc:
        return RefreshDecision(FULL, "the AUTO CDC clause changed: the table is emptied and its change events "
                                     "applied again from the start of the sources")
    if sources_same and query_same and new.output_mode == stored.output_mode:
        return RefreshDecision(UNCHANGED, "the query is unchanged; the stream goes on from its checkpoint")
    changed = [part for part, same in (("sources", sources_same), ("query", query_same),
                                       ("output mode", new.output_mode == stored.output_mode)) if not same]
    stateless = stored.state.startswith("none") and new.state.startswith("none")
    if sources_same and stateless and same_schema and new.output_mode == stored.output_mode:
        return RefreshDecision(CONTINUE, "the query changed but keeps no state and reads the same sources: new "
                                         "input follows the new query, rows already written stay as they are")
    return RefreshDecision(FULL, f"the {' and '.join(changed)} changed"
                                 + ("" if stateless else " and the query keeps state")
                                 + ": the table is emptied and the stream reads its sources from the start")
