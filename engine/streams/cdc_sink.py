"""The AUTO CDC sink (SCD type 1): each micro-batch of change events is applied to the table by key, in one Delta
commit carrying txn(stream id, batch id), as every streaming table's batch is.

Semantics (Databricks' documented ones; where the docs are silent, chosen as said here and in README.md):
- An event's rank is (sequence, is-delete, tie) where `tie` is the event's kept columns as JSON. Per key the event of
  the highest rank wins, over all batches, whatever order and batching the events arrive in. Events with an equal
  sequence are ordered deterministically: a delete wins over an upsert, and among upserts the one whose kept values
  as JSON sort last wins (exact duplicates are one event).
- A winning upsert replaces the row (inserts it when there is none); a winning delete removes it and leaves a
  tombstone, so that an event ranked below it arriving later does not bring the row back. Tombstones are kept for
  `pipelines.cdc.tombstoneGCThresholdInSeconds` (a table property, as Databricks names it; 2 days by default), then
  dropped: an event older than the delete arriving after that would be applied.
- IGNORE NULL UPDATES: a winning upsert keeps the stored value of every column it has NULL. The upserts of one key in
  one batch are applied in rank order (a column takes its last non-NULL value after the batch's last delete of the
  key); an event ranked below what the table already holds is dropped whole, as any late event is.
- An event whose sequence is NULL fails the batch (it cannot be ordered).

Where the ranks live: a Delta table of its own inside the table's folder (`_sg_cdc_state/<stream id>/`: one row per
key, live
or deleted, with its rank and, for a tombstone, when it was made), which no reader of the table sees and VACUUM of
the table leaves alone (storage/delta/retention.py). Both tables commit with the same txn(stream id, batch id), the
table first: the batch's decisions are computed from the state table, which only changes after the table did, so a
batch replayed after a crash between the two commits decides the same and writes the missing commit only. The whole
batch runs under the table's lock (several AUTO CDC flows into one table take turns; a compaction waits).
Flows into one table share one state table, and a batch decides only once no other writer's batch is half
committed (engine/streams/cdc_flows.py). Expectations judge the events before anything is decided: DROP ROW keeps an
event out of the ranking (into the quarantine table), FAIL UPDATE fails the batch (engine/streams/cdc_checks.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.names import quote_identifier
from sluicegate.dialect.streaming.plan import CdcSpec
from sluicegate.engine.streams.cdc_checks import judged
from sluicegate.engine.streams.cdc_flows import CdcShare, check_no_half_batch
from sluicegate.engine.streams.expectations import BatchChecks
from sluicegate.engine.streams.sink import OPERATION, BatchSink, BatchWritten, batch_arrow, merge_predicate
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.locks import table_lock
from sluicegate.storage.delta.retention import CDC_STATE_FOLDER
from sluicegate.storage.delta.tables import is_delta_table, open_table
from sluicegate.storage.delta.write import AppTransaction, commit_files, committed_version

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame

log = logging.getLogger(__name__)

TOMBSTONE_PROPERTY = "pipelines.cdc.tombstoneGCThresholdInSeconds"
DEFAULT_TOMBSTONE_SECONDS = 2 * 24 * 3600

SEQ, DELETE, TIE, FRESH, DELETED_AT = "__sg_seq", "__sg_delete", "__sg_tie", "__sg_fresh", "__sg_deleted_at"
_STATE_PREFIX = "__sg_state_"


def state_location(location: str, stream_id: str) -> str:
    """The state table of the stream `stream_id` into the table at `location`: one per stream id, so that a full
    refresh (a new stream id, the table emptied) starts from no state."""
    return f"{location.rstrip('/')}/{CDC_STATE_FOLDER}/{stream_id}"


def tombstone_seconds(properties: dict[str, str]) -> float:
    for key, value in properties.items():
        if key.lower() == TOMBSTONE_PROPERTY.lower():
            return float(value)
    return float(DEFAULT_TOMBSTONE_SECONDS)


def _q(name: str) -> str:
    return quote_identifier(name)


def _done(location: str, stream_id: str, batch_id: int) -> bool:
    done = committed_version(location, stream_id) if is_delta_table(location) else None
    return done is not None and batch_id <= done


class CdcSink(BatchSink):
    """`foreachBatch` target applying change events to the Delta table at `location` (`columns`: the table's, as
    the source names them, each cast to `types` when the table declared them)."""

    def __init__(self, location: str, stream_id: str, spec: CdcSpec, columns: Sequence[str],
                 types: dict[str, str] | None = None, on_batch: Callable[[BatchWritten], None] | None = None,
                 before_batch: Callable[[], Any] | None = None, tombstone_seconds: float = DEFAULT_TOMBSTONE_SECONDS,
                 clock: Callable[[], float] = time.time, share: CdcShare | None = None,
                 checks: BatchChecks | None = None, quarantine: str | None = None) -> None:
        self.location = location
        self.state = state_location(location, share.state_id if share is not None else stream_id)
        self.share = share
        self.checks = checks if checks is not None and checks.specs else None
        self.quarantine = quarantine if self.checks is not None and self.checks.drops else None
        self.stream_id = stream_id
        self.spec = spec
        self.columns = tuple(columns)
        self.types = types or {}
        self.on_batch = on_batch
        self.before_batch = before_batch
        self.tombstone_seconds = tombstone_seconds
        self.clock = clock
        by_name = {name.lower(): name for name in self.columns}
        self.keys = tuple(by_name.get(key.lower(), key) for key in spec.keys)

    def _batch(self, batch: DataFrame, batch_id: int) -> None:
        started = time.perf_counter()
        if self.before_batch is not None:
            self.before_batch()
        version = None
        with table_lock(self.location), ExitStack() as judging:   # the judged events are cached until the end
            table_done = _done(self.location, self.stream_id, batch_id)
            state_done = _done(self.state, self.stream_id, batch_id)
            quarantine_done = self.quarantine is None or _done(self.quarantine, self.stream_id, batch_id)
            replayed = table_done and state_done and quarantine_done
            quality = None
            if replayed:
                batch.write.format("noop").mode("overwrite").save()
                log.info("stream %s: batch %d was committed before a restart; replayed without writing",
                         self.stream_id, batch_id)
            else:
                if self.share is not None and not table_done:
                    check_no_half_batch(self.location, self.state, self.share.others())
                batch, quality = judging.enter_context(judged(self.checks, batch, batch_id, self.stream_id,
                                                              self.quarantine, quarantine_done, not table_done))
                changes = self._changes(batch)
                rows = batch_arrow(changes)
                txn = AppTransaction(self.stream_id, batch_id)
                parameters = {"outputMode": "Append", "queryId": self.stream_id, "epochId": str(batch_id),
                              "autoCdc": "SCD TYPE 1"}
                if not table_done:
                    version = self._apply(rows, txn, parameters)
                if not state_done:
                    self._remember(changes, rows, txn, parameters)
        if not replayed:
            commit.notify_committed(self.location)
        if self.on_batch is not None:
            self.on_batch(BatchWritten(batch_id, replayed, version, time.perf_counter() - started,
                                       quality if not table_done else None))

    # -- what a batch changes ------------------------------------------------------------------------------------

    def _ranked(self, batch: DataFrame) -> DataFrame:
        """The events with their sequence, delete flag and tie, each kept column cast to the table's type."""
        from pyspark.sql import functions as F

        spec = self.spec
        sequence = F.expr(spec.sequence_sql)
        checked = F.when(sequence.isNull(), F.raise_error(F.lit(
            f"AUTO CDC: an event's SEQUENCE BY value ({spec.sequence_sql}) is NULL, so it cannot be ordered"))) \
            .otherwise(sequence)
        delete = F.coalesce(F.expr(spec.delete_sql), F.lit(False)) if spec.delete_sql else F.lit(False)
        kept = [self._cast(name) for name in self.columns]
        return batch.select(*kept, checked.alias(SEQ), delete.alias(DELETE)).withColumn(
            TIE, F.to_json(F.struct(*[F.col(_q(c)) for c in self.columns])))

    def _cast(self, name: str) -> Column:
        from pyspark.sql import functions as F

        column = F.col(_q(name))
        wanted = self.types.get(name.lower())
        return (column.cast(wanted) if wanted else column).alias(name)

    def _winners(self, batch: DataFrame) -> DataFrame:
        """Per key of the batch: its winning event's rank and kept columns (under IGNORE NULL UPDATES, each column's
        last non-NULL value after the batch's last delete of the key, and `fresh` when there was such a delete)."""
        from pyspark.sql import functions as F

        events = self._ranked(batch)
        rank = F.struct(F.col(SEQ), F.col(DELETE), F.col(TIE))
        values = [c for c in self.columns if c.lower() not in {k.lower() for k in self.keys}]
        last = F.max(rank).alias("__sg_rank")
        if not self.spec.ignore_null_updates:
            picked = [F.max_by(F.col(_q(c)), rank).alias(c) for c in values]
            grouped = events.groupBy(*[F.col(_q(k)) for k in self.keys]).agg(last, *picked)
            return grouped.select(*[F.col(_q(c)) for c in self.columns], F.col("__sg_rank").getField(SEQ).alias(SEQ),
                                  F.col("__sg_rank").getField(DELETE).alias(DELETE),
                                  F.col("__sg_rank").getField(TIE).alias(TIE), F.lit(True).alias(FRESH))
        deletes = events.where(F.col(DELETE)).groupBy(*[F.col(_q(k)) for k in self.keys]) \
            .agg(F.max(rank).alias("__sg_last_delete"))
        joined = events.join(deletes, on=[events[_q(k)].eqNullSafe(deletes[_q(k)]) for k in self.keys], how="left") \
            .select(events["*"], deletes["__sg_last_delete"])
        after = F.col("__sg_last_delete").isNull() | (rank > F.col("__sg_last_delete"))
        picked = [F.max_by(F.col(_q(c)), F.when(F.col(_q(c)).isNotNull() & after, rank)).alias(c) for c in values]
        grouped = joined.groupBy(*[F.col(_q(k)) for k in self.keys]).agg(
            last, F.max("__sg_last_delete").isNotNull().alias(FRESH), *picked)
        return grouped.select(*[F.col(_q(c)) for c in self.columns], F.col("__sg_rank").getField(SEQ).alias(SEQ),
                              F.col("__sg_rank").getField(DELETE).alias(DELETE),
                              F.col("__sg_rank").getField(TIE).alias(TIE), F.col(FRESH))

    def _changes(self, batch: DataFrame) -> DataFrame:
        """The batch's winners that outrank what the state table holds for their key (or whose key it lacks)."""
        from pyspark.sql import functions as F

        from sluicegate.storage.delta.read import snapshot_dataframe
        from sluicegate.storage.delta.snapshots import load_snapshot

        winners = self._winners(batch)
        if not is_delta_table(self.state):
            return winners
        state = snapshot_dataframe(batch.sparkSession, load_snapshot(self.state))
        state = state.select(*[F.col(_q(c)).alias(_STATE_PREFIX + c) for c in (*self.keys, SEQ, DELETE, TIE)])
        joined = winners.join(state, on=[winners[_q(k)].eqNullSafe(state[_q(_STATE_PREFIX + k)]) for k in self.keys],
                              how="left")
        stored = F.struct(*[F.col(_q(_STATE_PREFIX + c)) for c in (SEQ, DELETE, TIE)])
        mine = F.struct(F.col(SEQ), F.col(DELETE), F.col(TIE))
        newer = F.col(_q(_STATE_PREFIX + SEQ)).isNull() | (mine > stored)
        return joined.where(newer).select(*winners.columns)

    # -- the two commits -----------------------------------------------------------------------------------------

    def _apply(self, rows: pa.Table, txn: AppTransaction, parameters: dict[str, str]) -> int:
        """The table's one commit: deletes, updates and inserts of the winning events."""
        import pyarrow as pa

        table = open_table(self.location)
        if rows.num_rows == 0:
            return commit.commit_actions(table, [], "append", OPERATION, parameters, txn)
        names = [field.name for field in table.schema().to_arrow()]
        by_name = {name.lower(): name for name in names}
        renamed = rows.rename_columns([by_name.get(name.lower(), name) for name in rows.column_names])
        keys = [by_name.get(key.lower(), key) for key in self.keys]
        source = pa.table({name: renamed.column(name) for name in renamed.column_names})
        values = {}
        for name in names:
            new = f"s.{_q(name)}"
            if self.spec.ignore_null_updates and name not in keys:
                values[_q(name)] = f"CASE WHEN s.{FRESH} THEN {new} ELSE coalesce({new}, t.{_q(name)}) END"
            else:
                values[_q(name)] = new
        inserted = {_q(name): f"s.{_q(name)}" for name in names}
        merger = table.merge(source, merge_predicate(keys, source), source_alias="s", target_alias="t",
                             streamed_exec=False,
                             commit_properties=commit.commit_properties(OPERATION, parameters, txn))
        merger = (merger.when_matched_delete(f"s.{DELETE}").when_matched_update(values, f"NOT s.{DELETE}")
                  .when_not_matched_insert(inserted, f"NOT s.{DELETE}"))
        merger.execute()
        return int(open_table(self.location).version())

    def _remember(self, changes: DataFrame, rows: pa.Table, txn: AppTransaction, parameters: dict[str, str]) -> None:
        """The state table's commit: each changed key's rank (a tombstone for a delete), and tombstones older than
        the threshold dropped."""
        import pyarrow as pa
        import pyarrow.compute as pc

        now_ms = int(self.clock() * 1000)
        state_rows = rows.select([*self.keys, SEQ, DELETE, TIE])
        deleted_at = pc.if_else(rows.column(DELETE), pa.scalar(now_ms, pa.int64()), pa.scalar(None, pa.int64()))
        state_rows = state_rows.append_column(DELETED_AT, deleted_at)
        if not is_delta_table(self.state):
            commit_files(self.state, [], state_rows.schema, "append", create=True, name=CDC_STATE_FOLDER,
                         description="AUTO CDC: the rank of every key's latest change, and tombstones")
        state = open_table(self.state)
        if state_rows.num_rows == 0:
            commit.commit_actions(state, [], "append", OPERATION, parameters, txn)
            return
        cutoff = now_ms - int(self.tombstone_seconds * 1000)
        merger = state.merge(state_rows, merge_predicate(self.keys, state_rows), source_alias="s", target_alias="t",
                             streamed_exec=False,
                             commit_properties=commit.commit_properties(OPERATION, parameters, txn))
        merger.when_matched_update_all().when_not_matched_insert_all() \
            .when_not_matched_by_source_delete(f"t.{DELETE} AND t.{DELETED_AT} < {cutoff}").execute()
