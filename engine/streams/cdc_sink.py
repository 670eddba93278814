"""The AUTO CDC sinks: each micro-batch of change events is applied to the table by key, in one Delta commit carrying
txn(stream id, batch id), as every streaming table's batch is. `CdcSink` holds what both SCD types share (the batch's
two commits under the table's lock, ranking, the state table); `Scd1Sink` is SCD type 1, `Scd2Sink`
(engine/streams/cdc_scd2.py) SCD type 2.

SCD type 1 (Databricks' documented semantics; where the docs are silent, chosen as said here and in README.md):
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
- APPLY AS TRUNCATE WHEN: an event matching it (whatever its key, and over APPLY AS DELETE) empties the table as of
  its sequence T: a key's event of a sequence up to T is as if it never came, one sequenced after T applies. So the
  table holds, per key, its winning upsert when that one is sequenced after the latest truncate: the same whichever
  batch, and wherever in a batch, the truncate and the other events arrive (at an equal sequence the truncate comes
  last). The latest truncate's sequence is kept in the state (a row of its own, never dropped); the rows it removed
  become tombstones there (dropped after the threshold, the truncate's sequence still holding them off). Writers
  sharing a state (AUTO CDC flows into one table) all hold to it: a writer without APPLY AS TRUNCATE decides as one
  with it once the state has the truncate flag, which a truncating writer adds to a state made without it.
- An event whose sequence is NULL fails the batch (it cannot be ordered).

Where the ranks live: a Delta table of its own inside the table's folder (`_sg_cdc_state/<stream id>/`: SCD 1, one
row per key, live or deleted, with its rank and, for a tombstone, when it was made; SCD 2, every event), which no
reader of the table sees and VACUUM of the table leaves alone (storage/delta/retention.py). Both tables commit with
the same txn(stream id, batch id), the table first: the batch's decisions are computed from the state table, which
only changes after the table did, so a batch replayed after a crash between the two commits decides the same and
writes the missing commit only.

SCD 1's batch is one Spark job and the rest on the driver (issue 29: what a hand-written foreachBatch costs):
- Ranking: Spark ranks the events (one SQL text over the batch's view, built once per batch schema:
  `Scd1Sink._winners_plan`) and the driver picks each key's winner in Arrow (`winners_of`), writing the ties itself
  when the kept columns are of plain types (engine/streams/cdc_ties.py, the exact text of Spark's to_json). A batch
  Spark estimates above `DRIVER_RANKING_BYTES`, or whose size it cannot tell, is grouped by Spark instead.
- Lookup: the winners' stored ranks are read on the driver from the state's files whose key statistics may hold
  them (`Scd1Sink._driver_changes`); the state is sorted by key in files of about `STATE_FILE_BYTES`, so those
  are the files of the batch's key range.
- The state's commit rewrites those files (read once, up to `STATE_SLICE_BYTES`; the new files are written beside
  the table's MERGE, `Scd1Sink._prepare_state`, and committed after it), or MERGEs when they are larger or a
  tombstone is past the threshold: the MERGE that drops them reads every file, so it runs only when a file's
  statistics say one may be there (`tombstones_before`).
The whole batch runs under the table's lock
(several AUTO CDC flows into one table take turns; a compaction waits).
Flows into one table share one state table, and a batch decides only once no other writer's batch is half
committed (engine/streams/cdc_flows.py). Expectations judge the events before anything is decided: DROP ROW keeps an
event out of the ranking (into the quarantine table), FAIL UPDATE fails the batch (engine/streams/cdc_checks.py).
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from sluicegate.catalog.names import quote_identifier, quote_string
from sluicegate.dialect.streaming.plan import CdcSpec
from sluicegate.engine.sessions import drop_temporary_view, replace_temporary_view
from sluicegate.engine.streams.cdc_checks import judged
from sluicegate.engine.streams.cdc_flows import CdcShare, check_no_half_batch
from sluicegate.engine.streams.cdc_ties import IGNORE_NULL_FIELDS, json_ties, ties_on_driver
from sluicegate.engine.streams.expectations import BatchChecks
from sluicegate.engine.streams.sink import (
    OPERATION,
    BatchSink,
    BatchWritten,
    batch_arrow,
    batch_done,
    estimated_bytes,
    merge_predicate,
)
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.checkpoints import checkpoint_if_due, no_hooks
from sluicegate.storage.delta.files import WrittenFile
from sluicegate.storage.delta.kept import KeptTable, latest_version
from sluicegate.storage.delta.locks import table_lock
from sluicegate.storage.delta.retention import CDC_STATE_FOLDER
from sluicegate.storage.delta.write import AppTransaction, commit_files

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

log = logging.getLogger(__name__)

TOMBSTONE_PROPERTY = "pipelines.cdc.tombstoneGCThresholdInSeconds"
DEFAULT_TOMBSTONE_SECONDS = 2 * 24 * 3600

SEQ, DELETE, TIE, FRESH, DELETED_AT = "__sg_seq", "__sg_delete", "__sg_tie", "__sg_fresh", "__sg_deleted_at"
TRUNCATE, KEEP, WATERMARK = "__sg_truncate", "__sg_keep", "__sg_watermark"
ORDER = "__sg_order"
STATE_PREFIX = "__sg_state_"
# The state's files are cut at this size (delta-rs' writers follow the table's property) and each MERGE's rows are
# sorted by key, so a file holds a range of keys and a batch over some keys reads and rewrites the files of their
# ranges, not the whole state (issue 29: a batch's time flat as the table grows). A state made before has no such
# property: it is read and written as before.
FILE_SIZE_PROPERTY = "delta.targetFileSize"
STATE_FILE_BYTES = 4 << 20
# A batch reads the state's files of its keys' range whole, and rewrites them, when they are at most this large on
# disk (a few files: a batch over a narrow or recent key range, or a small state); else it reads their rows of its
# keys only, and MERGEs (`Scd1Sink._state_slice`), so that the driver never holds a large state whole
STATE_SLICE_BYTES = 32 << 20
# SCD 1 picks each key's winner on the driver for a batch Spark estimates at most this large (its files' bytes):
# the ranked events held there are about the size of the source's JSON lines (`Scd1Sink._batch_winners`)
DRIVER_RANKING_BYTES = 32 << 20


def state_location(location: str, stream_id: str) -> str:
    """The state table of the stream `stream_id` into the table at `location`: one per stream id, so that a full
    refresh (a new stream id, the table emptied) starts from no state."""
    return f"{location.rstrip('/')}/{CDC_STATE_FOLDER}/{stream_id}"


def tombstone_seconds(properties: dict[str, str]) -> float:
    for key, value in properties.items():
        if key.lower() == TOMBSTONE_PROPERTY.lower():
            return float(value)
    return float(DEFAULT_TOMBSTONE_SECONDS)


def q(name: str) -> str:
    return quote_identifier(name)


def same_keys(left: DataFrame, right: DataFrame, keys: Sequence[str], prefix: str) -> list[Column]:
    """Join conditions matching `left`'s keys with `right`'s (named `prefix` + key), NULL matching NULL."""
    return [left[q(key)].eqNullSafe(right[q(prefix + key)]) for key in keys]


def prefixed(frame: DataFrame, columns: Sequence[str], prefix: str) -> DataFrame:
    from pyspark.sql import functions as F

    return frame.select(*[F.col(q(c)).alias(prefix + c) for c in columns])


@dataclass(frozen=True)
class WinnersSql:
    """SCD 1's texts over a batch's view: `events`, each event ranked (kept columns cast, sequence, delete flag,
    and the tie unless `ties_on_driver`: then the driver writes it, engine/streams/cdc_ties.py); `winners`,
    Spark's aggregate of the ranked events to each key's winner."""

    events: str
    winners: str
    ties_on_driver: bool


@dataclass
class Decided:
    """What a batch writes, each computed when first asked for (a replayed batch may need only one): `table` the
    source of the table's MERGE, `state` the rows of the state table's; `truncated`: SCD 1, a new truncate applies."""

    table: Callable[[], pa.Table]
    state: Callable[[], pa.Table]
    truncated: bool = False
    truncating: bool = False   # SCD 1: a writer of the table truncates, so the state keeps truncate flags
    stored: StateSlice | None = None   # SCD 1: the state's files the batch looked its keys up in, read whole
    rewrite: Future[StateRewrite] | None = None   # SCD 1: their rewrite, written while the table's MERGE runs


@dataclass(frozen=True)
class StateSlice:
    """What a batch read of the state table to look its keys' ranks up: `rows`, the whole of the files whose key
    statistics may hold a key of the batch (`paths`, as the log names them), which the state's commit rewrites;
    or, when those files are more than `STATE_SLICE_BYTES`, only the rows of the batch's keys (`paths` None: the
    commit MERGEs)."""

    rows: pa.Table
    paths: list[str] | None


@dataclass(frozen=True)
class StateRewrite:
    """The state's commit of a batch, written but not committed: the files it removes (a `StateSlice`'s paths) and
    those it adds in their place."""

    removed: list[str]
    added: list[WrittenFile]


@dataclass(frozen=True)
class DriverChanges:
    """A batch's winners that outrank the state (`rows`), and the slice of the state they were compared with (None:
    the state was not read: before the first batch, or no winner)."""

    rows: pa.Table
    stored: StateSlice | None


class CdcSink(BatchSink):
    """`foreachBatch` target applying change events to the Delta table at `location` (`columns`: the table's, as
    the source names them, each cast to `types` when the table declared them)."""

    label = ""

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
        # the three tables kept open between batches (storage/delta/kept.py: an open costs more as a table ages)
        self._kept = KeptTable(location)
        self._kept_state = KeptTable(self.state)
        self._kept_quarantine = KeptTable(self.quarantine) if self.quarantine is not None else None
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
        key_names = {key.lower() for key in self.keys}
        self.values = tuple(c for c in self.columns if c.lower() not in key_names)

    def _batch(self, batch: DataFrame, batch_id: int) -> None:
        started = time.perf_counter()
        if self.before_batch is not None:
            self.before_batch()
        version = None
        with table_lock(self.location), ExitStack() as judging:   # the judged events are cached until the end
            table_done = batch_done(self._kept, self.stream_id, batch_id)
            state_done = batch_done(self._kept_state, self.stream_id, batch_id)
            quarantine_done = batch_done(self._kept_quarantine, self.stream_id, batch_id)
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
                txn = AppTransaction(self.stream_id, batch_id)
                parameters = {"outputMode": "Append", "queryId": self.stream_id, "epochId": str(batch_id),
                              "autoCdc": self.label}
                with self._decided(batch) as decided:
                    if not state_done:
                        self._prepare_state(decided)
                    if not table_done:
                        version = self._apply(decided, txn, parameters)
                    if not state_done:
                        self._remember(decided, txn, parameters)
        if not replayed:
            commit.notify_committed(self.location)
        if self.on_batch is not None:
            self.on_batch(BatchWritten(batch_id, replayed, version, time.perf_counter() - started,
                                       quality if not table_done else None))

    def _decided(self, batch: DataFrame) -> AbstractContextManager[Decided]:
        """The batch's `Decided`, for as long as the batch runs (what it cached is released after)."""
        raise NotImplementedError

    def _apply(self, decided: Decided, txn: AppTransaction, parameters: dict[str, str]) -> int:
        raise NotImplementedError

    def _prepare_state(self, decided: Decided) -> None:
        """Before the table's commit: start what the state's commit can do ahead of it (nothing by default)."""

    def _remember(self, decided: Decided, txn: AppTransaction, parameters: dict[str, str]) -> None:
        raise NotImplementedError

    # -- shared steps --------------------------------------------------------------------------------------------

    def _ranked(self, batch: DataFrame) -> DataFrame:
        """The events with their sequence, delete flag (and truncate flag, with APPLY AS TRUNCATE) and tie, each
        kept column cast to the table's type."""
        from pyspark.sql import functions as F

        spec = self.spec
        sequence = F.expr(spec.sequence_sql)
        checked = F.when(sequence.isNull(), F.raise_error(F.lit(
            f"AUTO CDC: an event's SEQUENCE BY value ({spec.sequence_sql}) is NULL, so it cannot be ordered"))) \
            .otherwise(sequence)
        delete = F.coalesce(F.expr(spec.delete_sql), F.lit(False)) if spec.delete_sql else F.lit(False)
        flags = [delete.alias(DELETE)]
        if spec.truncate_sql:
            flags.append(F.coalesce(F.expr(spec.truncate_sql), F.lit(False)).alias(TRUNCATE))
        kept = [self._cast(name) for name in self.columns]
        return batch.select(*kept, checked.alias(SEQ), *flags).withColumn(
            TIE, F.to_json(F.struct(*[F.col(q(c)) for c in self.columns])))

    def _cast(self, name: str) -> Column:
        from pyspark.sql import functions as F

        column = F.col(q(name))
        wanted = self.types.get(name.lower())
        return (column.cast(wanted) if wanted else column).alias(name)

    def _stored(self, session: SparkSession) -> DataFrame | None:
        """The state table as it is (None before the stream's first batch)."""
        from sluicegate.storage.delta.read import snapshot_dataframe
        from sluicegate.storage.delta.snapshots import load_snapshot

        if self._kept_state.latest() is None:
            return None
        return snapshot_dataframe(session, load_snapshot(self.state))

    def _ranks_on_driver(self, events: DataFrame) -> bool:
        """Whether `_driver_changes` may compare this stream's ranks in Arrow exactly as Spark orders them: keys
        and sequence of types both order and match alike (integers, strings in UTF-8 byte order, booleans, dates,
        timestamps; not floating point, whose NaN Spark orders above every number, decimals or structs)."""
        return all(_simple(events.schema[name].dataType) for name in (*self.keys, SEQ))

    def _stored_of(self, state: Any, rows: pa.Table, columns: Sequence[str]) -> pa.Table:
        """The keys and `columns` of the state table `state`'s rows whose keys may be those of `rows` (each key in
        the set of `rows`' values of it: a superset with several keys), cast to `rows`' types. Only the files
        whose statistics may hold such a key (in the range of each key's values) are read."""
        import pyarrow as pa

        dataset = state.to_pyarrow_dataset()
        in_range, of_keys = self._key_filters(dataset, rows)
        found = dataset.to_table(columns=[*self.keys, *columns], filter=in_range & of_keys)
        return found.cast(pa.schema([pa.field(name, rows.schema.field(name).type) for name in found.column_names]))

    def _key_filters(self, dataset: Any, rows: pa.Table) -> tuple[Any, Any]:
        """Filters of the state's `dataset`: each key within the range of `rows`' values of it (which its files'
        statistics decide), and each key one of those values."""
        import pyarrow.compute as pc
        import pyarrow.dataset as ds

        in_range: Any = None
        of_keys: Any = None
        for key in self.keys:
            values = pc.unique(rows.column(key)).cast(dataset.schema.field(key).type)
            bounds = pc.min_max(values)
            term = (ds.field(key) >= bounds["min"]) & (ds.field(key) <= bounds["max"])
            in_range = term if in_range is None else in_range & term
            of_keys = ds.field(key).isin(values) if of_keys is None else of_keys & ds.field(key).isin(values)
        return in_range, of_keys

    def _merge(self, rows: pa.Table, keys: Sequence[str], txn: AppTransaction, parameters: dict[str, str],
               truncate: bool = False) -> int:
        """The table's one commit: a MERGE of `rows` on `keys` (the table's names): a row flagged DELETE deletes
        its match, another updates or inserts it (every column of the table, through `self._updates`); a row
        flagged KEEP (when `rows` has that column) leaves its match alone; with `truncate`, every row no source
        row matches is deleted. No rows: an empty commit, still carrying the txn."""
        import pyarrow as pa

        table = self._kept.existing()
        if rows.num_rows == 0:
            if truncate:   # nothing the batch writes or keeps: the truncate empties the table
                before = int(table.version())
                self._kept.forget()          # delete moves the table it runs on
                table.delete(commit_properties=commit.commit_properties(OPERATION, parameters, txn),
                             post_commithook_properties=no_hooks())
                # under the table's lock: a later version is this delete's commit
                after = latest_version(self.location, before)
                if after != before:
                    checkpoint_if_due(table, after)
                    return after
                table = self._kept.existing()
            return commit.commit_actions(table, [], "append", OPERATION, parameters, txn)
        names = [field.name for field in table.schema().to_arrow()]
        by_name = {name.lower(): name for name in names}
        renamed = rows.rename_columns([by_name.get(name.lower(), name) for name in rows.column_names])
        keys = [by_name.get(key.lower(), key) for key in keys]
        # the table's columns and the flags the clauses read: not the rank's sequence and tie, which the MERGE
        # would carry through its join for nothing
        wanted = {*names, DELETE, KEEP, FRESH}
        source = pa.table({name: renamed.column(name) for name in renamed.column_names if name in wanted})
        writes = f"NOT s.{DELETE}" + (f" AND NOT s.{KEEP}" if KEEP in source.column_names else "")
        inserted = {q(name): f"s.{q(name)}" for name in names}
        merger = table.merge(source, merge_predicate(keys, source), source_alias="s", target_alias="t",
                             streamed_exec=False,
                             commit_properties=commit.commit_properties(OPERATION, parameters, txn),
                             post_commithook_properties=no_hooks())
        merger = (merger.when_matched_delete(f"s.{DELETE}" + (f" AND NOT s.{KEEP}" if KEEP in source.column_names
                                                              else ""))
                  .when_matched_update(self._updates(names, keys), writes)
                  .when_not_matched_insert(inserted, writes))
        if truncate:
            merger = merger.when_not_matched_by_source_delete()
        self._execute(merger, self._kept)
        version = latest_version(self.location, int(table.version()))   # under the table's lock: this MERGE's
        checkpoint_if_due(table, version)
        return version

    def _updates(self, names: Sequence[str], keys: Sequence[str]) -> dict[str, str]:
        """What a matched row's columns become (`names`: the table's; `keys`: the ones the MERGE matches on)."""
        return {q(name): f"s.{q(name)}" for name in names}

    def _commit_state(self, rows: pa.Table, keys: Sequence[str], txn: AppTransaction, parameters: dict[str, str],
                      description: str, gc: str | None = None) -> None:
        """The state table's commit: `rows` replace the rows they match on `keys` (NULL matching NULL), or are
        added; `gc`: a predicate on the state's rows no batch row matches that deletes them (tombstones past the
        threshold). The table is made at the stream's first batch, with `rows`' schema."""
        if self._kept_state.latest() is None:
            commit_files(self.state, [], rows.schema, "append", create=True, name=CDC_STATE_FOLDER,
                         description=description, configuration={FILE_SIZE_PROPERTY: str(STATE_FILE_BYTES)})
        state = self._kept_state.existing()
        if rows.num_rows == 0:
            commit.commit_actions(state, [], "append", OPERATION, parameters, txn)
            return
        rows = by_key(rows, keys)
        predicate = merge_predicate([k for k in keys if k != TRUNCATE], rows)
        evolves = TRUNCATE in keys
        if evolves:
            # a state made before a writer with APPLY AS TRUNCATE came (a flow into a table whose other writers do
            # not truncate) gains the flag in this commit, its rows NULL there: not truncates, and no truncate's
            # row among them yet
            if TRUNCATE in [field.name for field in state.schema().to_arrow()]:
                predicate += f" AND coalesce(t.{TRUNCATE}, false) = s.{TRUNCATE}"
            else:
                predicate += f" AND NOT s.{TRUNCATE}"
        merger = state.merge(rows, predicate, source_alias="s", target_alias="t", streamed_exec=False,
                             merge_schema=evolves, writer_properties=_state_writer(),
                             commit_properties=commit.commit_properties(OPERATION, parameters, txn),
                             post_commithook_properties=no_hooks())
        merger = merger.when_matched_update_all().when_not_matched_insert_all()
        if gc is not None:
            merger = merger.when_not_matched_by_source_delete(gc)
        self._execute(merger, self._kept_state)
        # under the target's lock, which every writer of the table (and so of its state) takes: the latest
        # version is this MERGE's
        checkpoint_if_due(state, latest_version(self.state, int(state.version())))

    @staticmethod
    def _execute(merger: Any, kept: KeptTable) -> None:
        try:
            merger.execute()
        except Exception:
            kept.forget()   # the MERGE may have moved the kept table part of the way
            raise


class Scd1Sink(CdcSink):
    """SCD type 1: per key the row of its winning event (see the module's docstring)."""

    label = "SCD TYPE 1"
    _plan_schema: str | None = None   # the batch schema `_plan` was built for
    _plan: WinnersSql | None = None

    @property
    def _view(self) -> str:
        """The batch's temporary view while the winners' SQL runs (one per stream: streams share a session), a
        plain identifier whatever the stream id holds."""
        return "__sg_cdc_batch_" + re.sub(r"\W", "_", self.stream_id)

    def _winners(self, events: DataFrame) -> DataFrame:
        """Per key of the batch: its winning event's rank and kept columns (under IGNORE NULL UPDATES, each column's
        last non-NULL value after the batch's last delete of the key, and `fresh` when there was such a delete)."""
        from pyspark.sql import functions as F

        rank = F.struct(F.col(SEQ), F.col(DELETE), F.col(TIE))
        last = F.max(rank).alias("__sg_rank")
        if not self.spec.ignore_null_updates and all(_orderable(events.schema[c].dataType) for c in self.values):
            # one max over the rank followed by the kept values, not a max_by per column (issue 29's bench: the
            # aggregate was most of the batch's Spark job): events of an equal rank have an equal tie, the kept
            # values as JSON, so the values never decide which event wins
            values = [F.col(q(c)).alias(f"__sg_value{i}") for i, c in enumerate(self.values)]
            best = F.col("__sg_best")
            grouped = events.groupBy(*[F.col(q(k)) for k in self.keys]).agg(
                F.max(F.struct(F.col(SEQ), F.col(DELETE), F.col(TIE), *values)).alias("__sg_best"))
            by_value = {c: best.getField(f"__sg_value{i}").alias(c) for i, c in enumerate(self.values)}
            return grouped.select(*[by_value.get(c, F.col(q(c))) for c in self.columns],
                                  best.getField(SEQ).alias(SEQ), best.getField(DELETE).alias(DELETE),
                                  best.getField(TIE).alias(TIE), F.lit(True).alias(FRESH))
        if not self.spec.ignore_null_updates:   # a kept column Spark cannot order (a map): each picked by the rank
            picked = [F.max_by(F.col(q(c)), rank).alias(c) for c in self.values]
            grouped = events.groupBy(*[F.col(q(k)) for k in self.keys]).agg(last, *picked)
            return grouped.select(*[F.col(q(c)) for c in self.columns], F.col("__sg_rank").getField(SEQ).alias(SEQ),
                                  F.col("__sg_rank").getField(DELETE).alias(DELETE),
                                  F.col("__sg_rank").getField(TIE).alias(TIE), F.lit(True).alias(FRESH))
        deletes = events.where(F.col(DELETE)).groupBy(*[F.col(q(k)) for k in self.keys]) \
            .agg(F.max(rank).alias("__sg_last_delete"))
        joined = events.join(deletes, on=[events[q(k)].eqNullSafe(deletes[q(k)]) for k in self.keys], how="left") \
            .select(events["*"], deletes["__sg_last_delete"])
        after = F.col("__sg_last_delete").isNull() | (rank > F.col("__sg_last_delete"))
        picked = [F.max_by(F.col(q(c)), F.when(F.col(q(c)).isNotNull() & after, rank)).alias(c) for c in self.values]
        grouped = joined.groupBy(*[F.col(q(k)) for k in self.keys]).agg(
            last, F.max("__sg_last_delete").isNotNull().alias(FRESH), *picked)
        return grouped.select(*[F.col(q(c)) for c in self.columns], F.col("__sg_rank").getField(SEQ).alias(SEQ),
                              F.col("__sg_rank").getField(DELETE).alias(DELETE),
                              F.col("__sg_rank").getField(TIE).alias(TIE), F.col(FRESH))

    def _winners_plan(self, batch: DataFrame) -> WinnersSql | None:
        """`_ranked(batch)` and `_winners(_ranked(batch))` as Spark SQL texts over the view `self._view` (the
        batch), when the ranks may be looked up on the driver and the winners are one max per key (no IGNORE NULL
        UPDATES, every kept column orderable); else None. Built once per batch schema (issue 29: rebuilding the
        DataFrame chain over py4j was 0.13 s of each batch; a text is one `spark.sql` call)."""
        schema = batch.schema.json()
        if self._plan_schema != schema:
            events = self._ranked(batch)
            simple = self._ranks_on_driver(events) and not self.spec.ignore_null_updates and all(
                _orderable(events.schema[c].dataType) for c in self.values)
            driver_ties = ties_on_driver([events.schema[c].dataType for c in self.columns],
                                         str(batch.sparkSession.conf.get(IGNORE_NULL_FIELDS, "true")))
            self._plan_schema, self._plan = schema, self._winners_texts(driver_ties) if simple else None
        return self._plan

    def _winners_texts(self, driver_ties: bool) -> WinnersSql:
        spec = self.spec
        error = quote_string(f"AUTO CDC: an event's SEQUENCE BY value ({spec.sequence_sql}) is NULL, so it cannot "
                             "be ordered")
        kept = [f"CAST({q(c)} AS {self.types[c.lower()]}) AS {q(c)}" if self.types.get(c.lower()) else q(c)
                for c in self.columns]
        delete = f"coalesce(({spec.delete_sql}), false)" if spec.delete_sql else "false"
        ranked = (f"SELECT {', '.join(kept)}, CASE WHEN ({spec.sequence_sql}) IS NULL THEN raise_error({error}) "
                  f"ELSE ({spec.sequence_sql}) END AS {SEQ}, {delete} AS {DELETE} FROM {self._view}")
        tied = f"SELECT *, to_json(struct({', '.join(q(c) for c in self.columns)})) AS {TIE} FROM ({ranked})"
        fields = [f"'{c}', {c}" for c in (SEQ, DELETE, TIE)] + [
            f"'__sg_value{i}', {q(c)}" for i, c in enumerate(self.values)]
        keys = ", ".join(q(k) for k in self.keys)
        grouped = f"SELECT {keys}, max(named_struct({', '.join(fields)})) AS __sg_best FROM ({tied}) GROUP BY {keys}"
        by_value = {c: f"__sg_best.__sg_value{i} AS {q(c)}" for i, c in enumerate(self.values)}
        picked = [by_value.get(c, q(c)) for c in self.columns]
        return WinnersSql(events=ranked if driver_ties else tied, ties_on_driver=driver_ties, winners=(
            f"SELECT {', '.join(picked)}, __sg_best.{SEQ} AS {SEQ}, __sg_best.{DELETE} AS {DELETE}, "
            f"__sg_best.{TIE} AS {TIE}, true AS {FRESH} FROM ({grouped})"))

    def _batch_winners(self, batch: DataFrame, plan: WinnersSql) -> pa.Table | None:
        """`_winners(_ranked(batch))` on the driver, the batch's view registered. A batch Spark estimates at most
        `DRIVER_RANKING_BYTES` comes over ranked but not grouped (and, for kept columns of plain types, without
        its tie, which the driver writes), and each key's winner is picked in Arrow (`winners_of`): one Spark job
        without a shuffle or a sort (issue 29: Spark's aggregate over a struct is a sort aggregate, and to_json a
        third of what was left; together 0.27 s of a 50,000-event batch, now about 0.12 s). A larger batch, or one
        whose size Spark cannot tell, is grouped by Spark, so that the driver never holds more than the winners of
        a large batch. None: a key of the batch is NULL (Spark's join matches it, see `_driver_changes`)."""
        session = batch.sparkSession
        if estimated_bytes(batch) > DRIVER_RANKING_BYTES:
            return batch_arrow(session.sql(plan.winners))
        events = batch_arrow(session.sql(plan.events))
        if any(events.column(key).null_count for key in self.keys):
            return None
        if plan.ties_on_driver:
            events = events.append_column(TIE, json_ties(events, self.columns))
        return winners_of(events, self.keys)

    @contextmanager
    def _decided(self, batch: DataFrame) -> Iterator[Decided]:
        from pyspark.sql import functions as F

        state = self._kept_state.latest()
        shared_truncates = state is not None and TRUNCATE in [f.name for f in state.schema().to_arrow()]
        if not self.spec.truncate_sql and not shared_truncates:
            plan = self._winners_plan(batch)
            changes = None
            if plan is not None:
                replace_temporary_view(batch, self._view)
                try:
                    winners = self._batch_winners(batch, plan)
                    changes = self._driver_changes(winners, state) if winners is not None else None
                finally:
                    drop_temporary_view(batch.sparkSession, self._view)
            if changes is None:
                events = self._ranked(batch)
                if plan is None and self._ranks_on_driver(events):
                    changes = self._driver_changes(batch_arrow(self._winners(events)), state)
                if changes is None:
                    changes = DriverChanges(batch_arrow(self._changes(events, self._stored(batch.sparkSession))),
                                            None)
            rows = changes.rows
            yield Decided(table=lambda: rows, state=lambda: self._state_rows(rows), stored=changes.stored)
            return
        events = self._ranked(batch)
        stored = self._stored(batch.sparkSession)
        # this writer's own APPLY AS TRUNCATE, or another writer's of the table (the state they share has the
        # column): every writer holds off what the latest truncate emptied, whichever writer brought it
        if TRUNCATE not in events.columns:
            events = events.withColumn(TRUNCATE, F.lit(False))
        if stored is not None:   # a state made before a truncating writer came has no flag (or NULL): no truncate
            stored = stored.withColumn(TRUNCATE, F.coalesce(F.col(TRUNCATE), F.lit(False)) if shared_truncates
                                       else F.lit(False))
        events = events.persist()   # read by several jobs: the watermark, the changes, what a truncate keeps
        try:
            yield self._truncating(events, stored)
        finally:
            events.unpersist()

    def _changes(self, events: DataFrame, stored: DataFrame | None, watermark: DataFrame | None = None,
                 truncated: bool = False) -> DataFrame:
        """The batch's winners that outrank what the state table holds for their key (or whose key it lacks);
        with `watermark` (one row: the latest truncate's sequence), only events sequenced after it, and with
        `truncated` (that truncate is new) a key whose stored row it removed starts afresh."""
        from pyspark.sql import functions as F

        if watermark is not None:
            events = events.where(~F.col(TRUNCATE)).crossJoin(watermark) \
                .where(F.col(WATERMARK).isNull() | (F.col(SEQ) > F.col(WATERMARK))).drop(WATERMARK, TRUNCATE)
        winners = self._winners(events)
        if stored is None:
            return winners
        if TRUNCATE in stored.columns:
            stored = stored.where(~F.col(TRUNCATE))
        state = prefixed(stored, (*self.keys, SEQ, DELETE, TIE), STATE_PREFIX)
        joined = winners.join(state, on=same_keys(winners, state, self.keys, STATE_PREFIX), how="left")
        kept = F.struct(*[F.col(q(STATE_PREFIX + c)) for c in (SEQ, DELETE, TIE)])
        mine = F.struct(F.col(SEQ), F.col(DELETE), F.col(TIE))
        newer = F.col(q(STATE_PREFIX + SEQ)).isNull() | (mine > kept)
        if truncated and watermark is not None:   # the stored row is gone with the truncate: nothing to keep of it
            joined = joined.crossJoin(watermark).withColumn(
                FRESH, F.col(FRESH) | F.coalesce(F.col(q(STATE_PREFIX + SEQ)) <= F.col(WATERMARK), F.lit(False)))
        return joined.where(newer).select(*[F.col(q(c)) for c in winners.columns])

    def _driver_changes(self, winners: pa.Table, state: Any) -> DriverChanges | None:
        """`_changes(events, stored)` (`winners`: `_winners(events)`, on the driver) with the state table `state`
        (None before the first batch) looked up on the driver: each winner's stored rank is read from the state's
        Parquet files with delta-rs' dataset, only the keys and (sequence, delete) columns, and only files whose
        key statistics may hold a key of the batch (issue 29: the Spark join read every key's tie, each key's kept
        values as JSON, every batch, most of the batch's time). The stored tie is read only for winners whose
        (sequence, delete) equals the stored one's, which it alone decides. None: a winner's key is NULL (which a
        hash join does not match), left to `_changes`."""
        import pyarrow.compute as pc

        if state is None or winners.num_rows == 0:
            return DriverChanges(winners, None)
        if any(winners.column(key).null_count for key in self.keys):
            return None
        stored = self._state_slice(state, winners)
        lookup = self._stored_ranks(stored.rows, winners, (SEQ, DELETE))
        seq, delete = winners.column(SEQ), winners.column(DELETE)
        stored_seq, stored_delete = lookup.column(STATE_PREFIX + SEQ), lookup.column(STATE_PREFIX + DELETE)
        found = pc.is_valid(stored_seq)
        same_seq = pc.fill_null(pc.equal(seq, stored_seq), False)
        newer = pc.or_(pc.invert(found), pc.fill_null(pc.greater(seq, stored_seq), False))
        newer = pc.or_(newer, pc.and_(same_seq, pc.fill_null(pc.greater(delete, stored_delete), False)))
        tied = pc.and_(same_seq, pc.fill_null(pc.equal(delete, stored_delete), False))
        if pc.any(tied).as_py():
            undecided = winners.filter(tied)
            ties = self._stored_ranks(stored.rows, undecided, (TIE,))
            beats = pc.fill_null(pc.greater(undecided.column(TIE), ties.column(STATE_PREFIX + TIE)), False)
            return DriverChanges(_concat(winners.filter(newer), undecided.filter(beats)), stored)
        return DriverChanges(winners.filter(newer), stored)

    def _state_slice(self, state: Any, rows: pa.Table) -> StateSlice:
        """The files of the state table `state` whose statistics may hold a key of `rows` (each key in the range of
        `rows`' values of it), read whole when they hold at most `STATE_SLICE_BYTES` (issue 29: the batch's lookup
        and the state's commit then read them once), else only their rows of `rows`' keys."""
        import pyarrow as pa
        import pyarrow.dataset as ds

        dataset = state.to_pyarrow_dataset()
        in_range, of_keys = self._key_filters(dataset, rows)
        fragments = list(dataset.get_fragments(filter=in_range))
        files = ds.FileSystemDataset(fragments, dataset.schema, dataset.format, dataset.filesystem)
        paths = [fragment.path for fragment in fragments]
        actions = pa.table(state.get_add_actions(flatten=False))
        sizes = dict(zip([unquote(path) for path in actions.column("path").to_pylist()],
                         actions.column("size_bytes").to_pylist(), strict=True))
        if sum(sizes.get(path, STATE_SLICE_BYTES + 1) for path in paths) <= STATE_SLICE_BYTES:
            return StateSlice(files.to_table(), paths)
        return StateSlice(files.to_table(columns=[*self.keys, SEQ, DELETE, TIE], filter=in_range & of_keys), None)

    def _stored_ranks(self, stored: pa.Table, rows: pa.Table, columns: Sequence[str]) -> pa.Table:
        """The `columns` of the state's rows `stored` (named `STATE_PREFIX` + name, of `rows`' types) of each row of
        `rows` by its keys, in `rows`' order (NULL where the state has no such key; no key of `rows` is NULL)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        keys = list(self.keys)
        found = stored.select([*keys, *columns])
        found = found.cast(pa.schema([pa.field(name, rows.schema.field(name).type) for name in found.column_names]))
        found = found.rename_columns([*keys, *[STATE_PREFIX + c for c in columns]])
        if len(keys) == 1:   # a set lookup of each row's position (a key is at most once in the state)
            at = pc.index_in(rows.column(keys[0]), value_set=found.column(keys[0]))
            return found.select([STATE_PREFIX + c for c in columns]).take(at)
        joined = numbered(rows, keys).join(found, keys=keys, join_type="left outer").sort_by(ORDER)
        return joined.select([STATE_PREFIX + c for c in columns])

    def _truncating(self, events: DataFrame, stored: DataFrame | None) -> Decided:
        """A batch under APPLY AS TRUNCATE: the latest truncate's sequence (the batch's or the stored one) holds
        off every event sequenced up to it; when the batch brings a later one than the state holds, the table's
        rows of keys whose winning event is not sequenced after it go (the MERGE deletes every row the batch
        neither changes nor keeps), and they become tombstones in the state."""
        from pyspark.sql import functions as F

        marks = events.where(F.col(TRUNCATE)).select(F.col(SEQ), F.lit(True).alias("__sg_new"))
        if stored is not None:
            marks = marks.unionByName(stored.where(F.col(TRUNCATE)).select(F.col(SEQ), F.lit(False).alias("__sg_new")))
        latest = marks.agg(F.max(SEQ).alias(WATERMARK),
                           F.max(F.when(~F.col("__sg_new"), F.col(SEQ))).alias("__sg_stored")).persist()
        try:
            newer = latest.select((F.col(WATERMARK).isNotNull() & (
                F.col("__sg_stored").isNull() | (F.col(WATERMARK) > F.col("__sg_stored")))).alias("t")).first()
            truncated = bool(newer is not None and newer[0])
            watermark = latest.select(WATERMARK)
            changes = self._changes(events, stored, watermark, truncated)
            rows = batch_arrow(changes.withColumn(KEEP, F.lit(False)))
            keep = tombstones = marker = None
            if truncated:
                marker = batch_arrow(watermark.select(*[F.lit(None).cast(self._key_type(events, k)).alias(k)
                                                        for k in self.keys], F.col(WATERMARK).alias(SEQ)))
                if stored is not None:
                    live = stored.where(~F.col(TRUNCATE) & ~F.col(DELETE)).crossJoin(watermark)
                    changed = prefixed(changes, self.keys, STATE_PREFIX)
                    untouched = live.join(changed, on=same_keys(live, changed, self.keys, STATE_PREFIX),
                                          how="left_anti")
                    keep = batch_arrow(untouched.where(F.col(SEQ) > F.col(WATERMARK))
                                       .select(*[F.col(q(k)) for k in self.keys], F.lit(True).alias(KEEP)))
                    tombstones = batch_arrow(untouched.where(F.col(SEQ) <= F.col(WATERMARK))
                                             .select(*[F.col(q(k)) for k in self.keys], F.col(SEQ), F.col(TIE)))
        finally:
            latest.unpersist()
        table = _concat(rows, keep) if keep is not None else rows

        def state() -> pa.Table:
            return self._state_rows(rows, tombstones, marker, truncating=True)

        return Decided(table=lambda: table, state=state, truncated=truncated, truncating=True)

    @staticmethod
    def _key_type(events: DataFrame, key: str) -> Any:
        return events.schema[key].dataType

    def _updates(self, names: Sequence[str], keys: Sequence[str]) -> dict[str, str]:
        values = {}
        for name in names:
            new = f"s.{q(name)}"
            if self.spec.ignore_null_updates and name not in keys:
                values[q(name)] = f"CASE WHEN s.{FRESH} THEN {new} ELSE coalesce({new}, t.{q(name)}) END"
            else:
                values[q(name)] = new
        return values

    def _apply(self, decided: Decided, txn: AppTransaction, parameters: dict[str, str]) -> int:
        """The table's one commit: deletes, updates and inserts of the winning events (and, after a new truncate,
        the removal of every row it empties)."""
        return self._merge(decided.table(), self.keys, txn, parameters, truncate=decided.truncated)

    def _state_rows(self, rows: pa.Table, tombstones: pa.Table | None = None,
                    marker: pa.Table | None = None, truncating: bool = False) -> pa.Table:
        """Each changed key's rank (a tombstone for a delete); with APPLY AS TRUNCATE, the keys a new truncate
        removed as tombstones, and the truncate's sequence in a row of its own (its keys NULL)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        now = pa.scalar(int(self.clock() * 1000), pa.int64())
        state_rows = rows.select([*self.keys, SEQ, DELETE, TIE])
        deleted_at = pc.if_else(rows.column(DELETE), now, pa.scalar(None, pa.int64()))
        state_rows = state_rows.append_column(DELETED_AT, deleted_at)
        if not truncating:
            return state_rows
        state_rows = state_rows.append_column(TRUNCATE, pa.array([False] * state_rows.num_rows, pa.bool_()))
        parts = [state_rows]
        if tombstones is not None and tombstones.num_rows:
            count = tombstones.num_rows
            parts.append(pa.table({**{k: tombstones.column(k) for k in self.keys}, SEQ: tombstones.column(SEQ),
                                   DELETE: pa.array([True] * count), TIE: tombstones.column(TIE),
                                   DELETED_AT: pa.array([now.as_py()] * count, pa.int64()),
                                   TRUNCATE: pa.array([False] * count)}))
        if marker is not None and marker.num_rows:
            parts.append(pa.table({**{k: marker.column(k) for k in self.keys}, SEQ: marker.column(SEQ),
                                   DELETE: pa.array([False]), TIE: pa.array([None], pa.string()),
                                   DELETED_AT: pa.array([None], pa.int64()), TRUNCATE: pa.array([True])}))
        return _concat(*parts)

    def _cutoff(self) -> int:
        """Tombstones made before this time (ms) are past the threshold."""
        return int(self.clock() * 1000) - int(self.tombstone_seconds * 1000)

    def _prepare_state(self, decided: Decided) -> None:
        """When the state's commit will rewrite the files the batch looked its keys up in (no tombstone past the
        threshold to drop), write the new files now, beside the table's MERGE (issue 29); they are committed after
        the table's commit, as before. Files of a batch that fails are left uncommitted."""
        state = self._kept_state.latest()
        stored = decided.stored
        if stored is None or stored.paths is None or state is None or tombstones_before(state, self._cutoff()):
            return
        decided.rewrite = _state_writer_pool().submit(self._state_files, decided.state(), stored.rows, stored.paths)

    def _remember(self, decided: Decided, txn: AppTransaction, parameters: dict[str, str]) -> None:
        """The state table's commit: each changed key's rank (a tombstone for a delete), and tombstones older than
        the threshold dropped (with APPLY AS TRUNCATE, the latest truncate's row too)."""
        if decided.rewrite is not None:
            state = self._kept_state.existing()
            try:
                rewrite = decided.rewrite.result()
                commit.replace_files(state, rewrite.removed, rewrite.added, OPERATION, parameters, txn,
                                     announce=False)
            except Exception:
                self._kept_state.forget()
                raise
            return
        cutoff = self._cutoff()
        keys = [*self.keys, TRUNCATE] if decided.truncating else list(self.keys)
        state = self._kept_state.latest()
        self._commit_state(decided.state(), keys, txn, parameters,
                           "AUTO CDC: the rank of every key's latest change, and tombstones",
                           gc=f"t.{DELETE} AND t.{DELETED_AT} < {cutoff}"
                           if state is not None and tombstones_before(state, cutoff) else None)

    def _state_files(self, rows: pa.Table, stored: pa.Table, paths: list[str]) -> StateRewrite:
        """The rewrite of the state's files the batch looked its keys up in (`paths`, whose rows are `stored`, read
        under the table's lock, so still the state's), not committed: their rows but those of `rows`' keys, and
        `rows`, sorted by key, in files of about `STATE_FILE_BYTES` (in memory; smaller on disk). What the MERGE of
        `_commit_state` writes, without reading those files a second time or planning a join (issue 29: 0.06 s of
        a batch's 0.45)."""
        import pyarrow as pa

        new = rows.select(stored.schema.names).cast(stored.schema)
        merged = by_key(pa.concat_tables([without_keys(stored, new, self.keys), new]), self.keys)
        per_file = max(1, merged.num_rows * STATE_FILE_BYTES // max(1, merged.nbytes))
        parts = [merged.slice(start, per_file) for start in range(0, merged.num_rows, per_file)]
        return StateRewrite(paths, commit.write_arrow(self.state, parts, plain_columns=[TIE]))


@cache
def _state_writer_pool() -> ThreadPoolExecutor:
    """Where SCD 1 batches write their state's files while their table's MERGE runs (one thread per core: pyarrow
    and delta-rs run without the GIL)."""
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="sg-cdc-state")


def _state_writer() -> Any:
    """How the state's files are written: its tie column, a distinct text per key that nothing filters on, without
    a dictionary or statistics (issue 29: building them was a third of the state's MERGE)."""
    from deltalake import ColumnProperties, WriterProperties

    return WriterProperties(column_properties={TIE: ColumnProperties(dictionary_enabled=False,
                                                                     statistics_enabled="NONE")})


def tombstones_before(state: Any, cutoff: int) -> bool:
    """Whether a file of the state table `state` may hold a tombstone made before `cutoff` (ms): its statistics'
    least DELETED_AT is below it, or it has no statistics of it. Only then does the state's MERGE carry the clause
    dropping them, which makes delta-rs read and rewrite every file of the state, not just those of the batch's
    keys (issue 29: 0.5 s more a batch with a state of 1M keys). Skipping it drops no row the clause would."""
    import pyarrow as pa

    actions = pa.table(state.get_add_actions(flatten=True))
    lowest, nulls = f"min.{DELETED_AT}", f"null_count.{DELETED_AT}"
    if not actions.num_rows:
        return False
    if lowest not in actions.column_names or nulls not in actions.column_names:
        return True
    for least, null_count, records in zip(actions.column(lowest).to_pylist(), actions.column(nulls).to_pylist(),
                                          actions.column("num_records").to_pylist(), strict=True):
        if least is None:
            if null_count is None or records is None or null_count < records:   # no statistics of its values
                return True
        elif least < cutoff:
            return True
    return False


def _orderable(data_type: Any) -> bool:
    """Whether Spark can order values of `data_type` (max over a struct holding it): not a map or a variant,
    nor a struct or array holding one."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(data_type, MapType) or data_type.typeName() == "variant":
        return False
    if isinstance(data_type, ArrayType):
        return _orderable(data_type.elementType)
    if isinstance(data_type, StructType):
        return all(_orderable(f.dataType) for f in data_type.fields)
    return True


def _simple(data_type: Any) -> bool:
    """Whether Arrow compares and matches values of `data_type` as Spark does (see `_ranks_on_driver`)."""
    from pyspark.sql.types import (
        BooleanType,
        ByteType,
        DateType,
        IntegerType,
        LongType,
        ShortType,
        StringType,
        TimestampNTZType,
        TimestampType,
    )

    return isinstance(data_type, (BooleanType, ByteType, ShortType, IntegerType, LongType, StringType, DateType,
                                  TimestampType, TimestampNTZType))


def winners_of(events: pa.Table, keys: Sequence[str]) -> pa.Table:
    """Each key's winning event of the ranked `events` (no key NULL), as Spark's max of the struct (sequence,
    delete, tie) picks it: sorted by key and that rank, the first of each key's run, marked fresh. Arrow orders
    the ranks' types as Spark does (`_simple`; strings, the ties among them, by their UTF-8 bytes)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    order = pc.sort_indices(events, sort_keys=[*[(key, "ascending") for key in keys], (SEQ, "descending"),
                                               (DELETE, "descending"), (TIE, "descending")])
    ranked = events.take(order)
    count = ranked.num_rows
    first = pa.array([True] * min(count, 1), pa.bool_())
    if count > 1:
        changed = None
        for key in keys:
            column = ranked.column(key).combine_chunks()
            differs = pc.not_equal(column.slice(1), column.slice(0, count - 1))
            changed = differs if changed is None else pc.or_(changed, differs)
        first = pa.concat_arrays([first, changed])
    winners = ranked.filter(first)
    return winners.append_column(FRESH, pa.array([True] * winners.num_rows, pa.bool_()))


def numbered(rows: pa.Table, columns: Sequence[str]) -> pa.Table:
    """`rows`' `columns` and each row's index (ORDER): a join's probe that carries no other column (Arrow's hash
    join takes no nested column along) and says which rows of `rows` matched."""
    import pyarrow as pa

    return rows.select(list(columns)).append_column(ORDER, pa.array(range(rows.num_rows), pa.int64()))


def without_keys(rows: pa.Table, other: pa.Table, keys: Sequence[str]) -> pa.Table:
    """`rows` but those whose `keys` (none NULL) some row of `other` has, in `rows`' order."""
    import pyarrow.compute as pc

    if len(keys) == 1:   # a set lookup: a tenth of a hash join's time
        return rows.filter(pc.invert(pc.is_in(rows.column(keys[0]), value_set=other.column(keys[0]))))
    unmatched = numbered(rows, keys).join(other.select(list(keys)), keys=list(keys), join_type="left anti")
    return rows.take(unmatched.column(ORDER).combine_chunks().sort())


def by_key(rows: pa.Table, keys: Sequence[str]) -> pa.Table:
    """`rows` sorted by `keys`, as far as Arrow sorts their types (left as they are otherwise)."""
    import pyarrow as pa

    if not all(pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
               or pa.types.is_boolean(t) or pa.types.is_temporal(t) for t in (rows.schema.field(k).type for k in keys)):
        return rows
    return rows.sort_by([(key, "ascending") for key in keys])


def _concat(*tables: pa.Table) -> pa.Table:
    """Tables of the same columns (some may lack a few: NULL there) as one, in the first's schema order."""
    import pyarrow as pa

    first = tables[0]
    names = list(first.column_names)
    for table in tables[1:]:
        names += [n for n in table.column_names if n not in names]
    types: dict[str, pa.DataType] = {}
    for table in tables:
        for field in table.schema:
            if field.name not in types or pa.types.is_null(types[field.name]):
                types[field.name] = field.type
    filled = [pa.table({n: (t.column(n).cast(types[n]) if n in t.column_names
                            else pa.nulls(t.num_rows, types[n])) for n in names}) for t in tables]
    return pa.concat_tables(filled)
