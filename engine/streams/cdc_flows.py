"""Several AUTO CDC writers of one table (`CREATE FLOW f AS AUTO CDC INTO t ...`, beside the table's own AUTO CDC
stream or into a table declared with columns only): their events are ranked together, so they share one state
table (each key's rank and tombstone, engine/streams/cdc_sink.py), and no writer decides from a state that lags the
table.

Which state: the table's own AUTO CDC stream's (`_sg_cdc_state/<its stream id>`) when it has one, else one named
`FLOWS_STATE`. Either stays the table's for as long as it has flows: a full refresh, the only thing that starts a
new state (a new stream id), is refused while the table has flows (executor/flows.py), and DROP FLOW keeps the rows
the flow wrote and so keeps their ranks too (a flow created again over the same input applies nothing twice).

Exactly once: each writer commits the table, then the state, each with txn(its own stream id, batch id), under the
table's lock, so in a running gateway no writer sees the state between another's two commits. A crash can leave one
writer's batch in the table but not yet in the state; a batch of another writer decided from that state could
undo the first one's newer changes. So before deciding, a writer compares, for each other writer of the table (the
catalog's stream ids, asked at every batch), its txn version in the table and in the state: while the table is
ahead, the batch fails with AUTO_CDC_BATCH_PENDING and the stream is retried with the usual backoff, until that
writer's replay (at its next start, which a boot does at once) has written the missing state commit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sluicegate.engine.streams.errors import StreamError
from sluicegate.storage.delta.write import committed_version

FLOWS_STATE = "flows"   # the state of a table without an AUTO CDC stream of its own (stream ids are hex: no clash)


@dataclass(frozen=True)
class CdcShare:
    """What a writer of a shared AUTO CDC table needs beyond its own stream: the state's id (a folder under the
    table's `_sg_cdc_state/`) and the stream ids of the table's other writers (read from the catalog per batch)."""

    state_id: str
    others: Callable[[], Sequence[str]]


class CdcBatchPendingError(StreamError):
    """Another writer's batch is in the table but not yet in the shared state (a crash between its two commits):
    deciding now could undo its changes, so this batch waits for that writer's replay (the stream is retried)."""

    error_class = "AUTO_CDC_BATCH_PENDING"
    sqlstate = "40001"


def check_no_half_batch(location: str, state: str, others: Sequence[str]) -> None:
    """Raise CdcBatchPendingError when a writer in `others` has a batch committed to the table at `location` whose
    ranks are not in the state table at `state` yet. The caller holds the table's lock."""
    for other in others:
        in_table = committed_version(location, other)
        if in_table is None or in_table < 0:   # -1: only the emptying commit of a full refresh, no batch
            continue
        in_state = committed_version(state, other)
        if in_state is None or in_state < in_table:
            raise CdcBatchPendingError(
                f"AUTO CDC: the batch {in_table} of stream {other} into this table is applied but its ranks are not "
                "remembered yet (the gateway stopped between its two commits); this flow waits for that stream to "
                "replay it", hint="nothing to do: the stream is retried, and goes on once the other flow has "
                                  "started again (DESCRIBE STREAMING TABLE shows the flows' status)")
