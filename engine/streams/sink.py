"""The Delta sink: each micro-batch becomes exactly one Delta commit carrying txn(appId = stream id, version = batch
id), through `foreachBatch`.

Exactly once: Spark logs a batch's offsets before running it and replays the batch after a crash until its own commit
log says it is done. A replayed batch whose txn version is already in the Delta log was committed before the crash:
it still runs (to the `noop` sink, so stateful operators commit their state stores, or the query dies with "Not all
StateStores committed") but writes nothing. Files of a batch that crashed before its commit have no log entry, are
never seen, and are removed by VACUUM.

append   executors write the batch's Parquet files; one commit adds them.
complete the batch is the whole result; one commit replaces every file.
update   the batch holds only the groups it changed: it comes to the driver as Arrow (bounded by the groups one batch
         touches, not by the table) and delta-rs MERGEs it on the keys in one commit. A result with no keys (a
         global aggregate) is a single row: the commit replaces it.

Expectations (engine/streams/expectations.py) are judged on the result rows before anything commits. A FAIL
UPDATE that a row fails raises before either commit (the batch is cached, counted, then written); without one, the
counts ride on the table's write as observed metrics, in a throwaway clone of the query's session whose listener
goes with it (storage/observations.py: an Observation's listener would otherwise hold each start's session forever).
Rows a DROP ROW keeps out go to the quarantine table in a commit of their own carrying the same txn(stream id, batch
id); each table checks its own txn version on replay, so a crash between the two commits writes the missing one
only. In complete mode the quarantine holds the rejected rows of the current result (overwritten with it); in update
mode a changed group that now fails a DROP ROW is deleted from the table (its old value is no longer the result) and
its new row quarantined.

NOT NULL: the columns the Delta table's own schema declares NOT NULL (a streaming table's column list, a flow
target's) are checked in the write of the rows that go into the table, after the expectations kept theirs out
(storage/delta/not_null.py): a null fails the batch with DELTA_NOT_NULL_CONSTRAINT_VIOLATED before anything commits,
and the same batch fails the same way when replayed, so the stream is FAILED at once (engine/streams/errors.py).

`before_batch` runs first in each call, before anything of the batch commits: with the warehouse on an object store
it uploads the stream's checkpoint (engine/streams/checkpoint_mirror.py says why that keeps exactly once).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.names import quote_identifier
from sluicegate.catalog.uris import is_object_uri
from sluicegate.dialect.errors import SqlError
from sluicegate.engine.streams.errors import RAISED_IN_BATCH, StreamError
from sluicegate.engine.streams.expectations import TOTALS, BatchChecks, Counts
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.checkpoints import checkpoint_if_due, no_hooks
from sluicegate.storage.delta.kept import KeptTable, latest_version
from sluicegate.storage.delta.locks import table_lock
from sluicegate.storage.delta.log_tail import LogTail
from sluicegate.storage.delta.not_null import check_not_null, not_null_columns
from sluicegate.storage.delta.write import AppTransaction
from sluicegate.storage.observations import observable
from sluicegate.storage.spark_errors import from_spark

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, Observation

log = logging.getLogger(__name__)

OPERATION = "STREAMING UPDATE"
MODES = ("append", "update", "complete")


@dataclass(frozen=True)
class BatchWritten:
    """What one call of the sink did, for the stream's status."""

    batch_id: int
    replayed: bool
    version: int | None
    seconds: float
    # expectations' counts, in the shape of Databricks' event log `details:flow_progress:data_quality`:
    # {"dropped_records": n, "expectations": [{"name", "dataset", "passed_records", "failed_records"}]}
    quality: dict[str, Any] | None = None


def _quoted(path: tuple[str, ...]) -> str:
    """A column (whose name may hold a dot: Spark names `window(...).start` `window.start`) or a struct's field."""
    return ".".join(quote_identifier(part) for part in path)


def merge_predicate(keys: Sequence[str], rows: pa.Table) -> str:
    """`t.k = s.k AND ...`; a struct key (a time window) matches on its fields. A key part with nulls in this batch
    matches null-safely (IS NOT DISTINCT FROM); plain `=` elsewhere lets delta-rs prune target files by the batch's
    key ranges, so a batch reads the files its groups can be in, not the whole table."""
    import pyarrow as pa
    import pyarrow.compute as pc

    terms = []
    for key in keys:
        column = rows.column(key)
        if pa.types.is_struct(column.type):
            parts = [((key, field.name), pc.struct_field(column, [i]).null_count + column.null_count)
                     for i, field in enumerate(column.type)]
        else:
            parts = [((key,), column.null_count)]
        for part, nulls in parts:
            operator = "IS NOT DISTINCT FROM" if nulls else "="
            terms.append(f"(t.{_quoted(part)} {operator} s.{_quoted(part)})")
    return " AND ".join(terms)


def batch_done(kept: KeptTable | LogTail | None, stream_id: str, batch_id: int) -> bool:
    """Whether the kept table (None: no such table to write) already has this batch's commit."""
    if kept is None:
        return True
    table = kept.current() if isinstance(kept, LogTail) else kept.latest()
    done = None if table is None else table.transaction_version(stream_id)
    return done is not None and batch_id <= done


def estimated_bytes(frame: DataFrame) -> int:
    """Spark's estimate of `frame`'s size before it runs: for a micro-batch of a file source, the bytes of the
    batch's files (Spark's file statistics); a source that reports none (the Python data sources: Kafka, Delta
    tables) is estimated at `spark.sql.defaultSizeInBytes`, so as large as can be."""
    return int(frame._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())


def batch_arrow(rows: DataFrame) -> pa.Table:
    """The rows on the driver; a failure of the job computing them (a NOT NULL violation) in the gateway's shape."""
    try:
        return rows.toArrow()
    except SqlError:
        raise
    except Exception as exc:
        raise from_spark(exc) from exc


class QuarantineMissingError(StreamError):
    """The quarantine table of DROP ROW expectations is gone: its rows would be lost, so the batch stops (and is
    retried: CREATE OR REFRESH makes the table again)."""

    error_class = "STREAMING_QUARANTINE_TABLE_MISSING"
    sqlstate = "42P01"


class BatchSink:
    """A `foreachBatch` target of a stream: a typed error a batch raises leaves its class with errors.RAISED_IN_BATCH
    first (Spark passes only its text on to the stream's listener)."""

    stream_id: str

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        try:
            self._batch(batch, batch_id)
        except SqlError as exc:
            RAISED_IN_BATCH.record(self.stream_id, exc)
            raise

    def _batch(self, batch: DataFrame, batch_id: int) -> None:
        raise NotImplementedError


class DeltaSink(BatchSink):
    """`foreachBatch` target writing a stream's result into the Delta table at `location` (`table`: its name as a
    NOT NULL violation names it); with `checks`, the table's expectations judge each batch first and `quarantine`
    (a Delta table folder, or None when 'sluicegate.quarantine' = 'false') receives the rows DROP ROW keeps out."""

    def __init__(self, location: str, stream_id: str, mode: str, keys: Sequence[str],
                 on_batch: Callable[[BatchWritten], None] | None = None, checks: BatchChecks | None = None,
                 quarantine: str | None = None, before_batch: Callable[[], Any] | None = None,
                 table: str = "") -> None:
        if mode not in MODES:
            raise ValueError(f"output mode must be one of {MODES}, got {mode!r}")
        self.location = location
        self.stream_id = stream_id
        self.mode = mode
        self.keys = tuple(keys)
        self.on_batch = on_batch
        self.checks = checks if checks is not None and checks.specs else None
        self.quarantine = quarantine if self.checks is not None and self.checks.drops else None
        self.before_batch = before_batch
        self.table = table or location
        self._not_null: tuple[str, ...] | None = None   # read off the table's log at the first write
        # the table and the quarantine kept open between batches: opening one from its checkpoint costs more the
        # longer the stream runs (storage/delta/kept.py)
        self._kept = KeptTable(location)
        # an append sink follows its table's log by reading each new commit by name (storage/delta/log_tail.py)
        self._tail = LogTail(self._kept) if mode == "append" and not is_object_uri(location) else None
        self._kept_quarantine = KeptTable(self.quarantine) if self.quarantine is not None else None

    def _batch(self, batch: DataFrame, batch_id: int) -> None:
        started = time.perf_counter()
        if self.before_batch is not None:
            self.before_batch()
        table_done = batch_done(self._tail or self._kept, self.stream_id, batch_id)
        quarantine_done = batch_done(self._kept_quarantine, self.stream_id, batch_id)
        quality = None
        if table_done and quarantine_done:
            batch.write.format("noop").mode("overwrite").save()
            version = None
            replayed = True
            log.info("stream %s: batch %d was committed before a restart; replayed without writing",
                     self.stream_id, batch_id)
        elif self.checks is None:
            version = self._write(batch, batch_id)
            replayed = False
        else:
            version, quality = self._write_checked(self.checks, batch, batch_id, table_done, quarantine_done)
            replayed = table_done
            if replayed:
                quality = None  # counted when the table's commit was made
            else:
                TOTALS.add(self.stream_id, self.checks.specs, quality)
        if self.on_batch is not None:
            self.on_batch(BatchWritten(batch_id, replayed, version, time.perf_counter() - started, quality))

    def _parameters(self, batch_id: int) -> dict[str, str]:
        return {"outputMode": self.mode.capitalize(), "queryId": self.stream_id, "epochId": str(batch_id)}

    def _checked(self, rows: DataFrame, written: str | None = None) -> DataFrame:
        """`rows` with the table's NOT NULL columns checked (`written`: the boolean column of the rows that go into
        the table; None: all of them). The table's schema changes only with a new start of the stream."""
        if self._not_null is None:
            self._not_null = not_null_columns(self.location)
        if not self._not_null:
            return rows
        from pyspark.sql import functions as F

        return check_not_null(rows, self._not_null, self.table,
                              F.col(quote_identifier(written)) if written is not None else None)

    def _write(self, batch: DataFrame, batch_id: int) -> int:
        txn = AppTransaction(self.stream_id, batch_id)
        parameters = self._parameters(batch_id)
        batch = self._checked(batch)
        if self.mode == "append" and self._tail is not None:
            return commit.append_logged(self._tail, batch, OPERATION, parameters, txn)
        if self.mode == "append":
            return commit.append(self.location, batch, OPERATION, parameters, txn, table=self._kept.latest())
        if self.mode == "complete" or not self.keys:
            return commit.overwrite(self.location, batch, OPERATION, parameters, txn, table=self._kept.latest())
        return self._merge(batch, txn, parameters)

    def _merge(self, batch: DataFrame, txn: AppTransaction, parameters: dict[str, str],
               rows: pa.Table | None = None, keep: str | None = None) -> int:
        """MERGE the changed groups on the keys. With `keep` (a boolean column of `rows`), a group whose row is not
        kept is deleted from the table instead of updated, and not inserted."""
        rows = batch_arrow(self._checked(batch)) if rows is None else rows
        if rows.num_rows == 0:  # nothing changed: still one commit, so the batch is known as done
            return commit.append(self.location, batch.limit(0), OPERATION, parameters, txn,
                                 table=self._kept.latest())
        # under the table's lock from the snapshot it reads to its commit: a compaction cannot land in between
        with table_lock(self.location):
            version = self._merge_rows(rows, txn, parameters, keep)
        commit.notify_committed(self.location)
        return version

    def _merge_rows(self, rows: pa.Table, txn: AppTransaction, parameters: dict[str, str], keep: str | None) -> int:
        table = self._kept.existing()
        # streamed_exec=False: the batch is already in memory, and delta-rs derives its file pruning from the
        # source's key ranges only when the source is not streamed
        merger = table.merge(rows, merge_predicate(self.keys, rows), source_alias="s", target_alias="t",
                             streamed_exec=False,
                             commit_properties=commit.commit_properties(OPERATION, parameters, txn),
                             post_commithook_properties=no_hooks())
        if keep is None:
            merger = merger.when_matched_update_all().when_not_matched_insert_all()
        else:
            kept = f"s.{_quoted((keep,))}"
            values = {_quoted((name,)): f"s.{_quoted((name,))}" for name in rows.column_names if name != keep}
            merger = (merger.when_matched_delete(f"NOT {kept}").when_matched_update(values, kept)
                      .when_not_matched_insert(values, kept))
        try:
            merger.execute()
        except Exception:
            self._kept.forget()  # the MERGE may have moved the kept table part of the way
            raise
        # under the table's lock: the latest version is this MERGE's commit
        version = latest_version(self.location, int(table.version()))
        checkpoint_if_due(table, version)
        return version

    # -- with expectations -------------------------------------------------------------------------------------

    def _write_checked(self, checks: BatchChecks, batch: DataFrame, batch_id: int, table_done: bool,
                       quarantine_done: bool) -> tuple[int | None, dict[str, Any]]:
        if not quarantine_done:
            self._require_quarantine()
        if self.mode == "update" and self.keys:
            return self._merge_checked(checks, batch, batch_id, table_done, quarantine_done)
        if checks.warn_only:
            return self._write_warned(checks, batch, batch_id)  # warn-only has no quarantine: the table is not done
        if not checks.fails and not table_done:
            return self._write_dropping(checks, batch, batch_id, quarantine_done)
        flagged = checks.flagged(batch).persist()
        try:
            counts = checks.counts_from(flagged.agg(*checks.count_columns()).collect()[0].asDict())
            self._fail_if_violated(checks, counts, lambda names: checks.offending_record(flagged, names))
            at = dt.datetime.now(dt.timezone.utc)
            # no rows kept out, no quarantine commit (a replay recomputes the same nothing); complete mode
            # replaces the quarantine with the current result's rejected rows, even none
            if not quarantine_done and self.quarantine is not None and (counts.dropped or self.mode == "complete"):
                self._write_quarantine(checks.quarantined(flagged, batch_id, at), batch_id)
            version = None if table_done else self._write(checks.kept(flagged), batch_id)
        finally:
            flagged.unpersist()
        return version, checks.quality(counts)

    def _observation(self, batch_id: int) -> Observation:
        from pyspark.sql import Observation

        return Observation(f"sluicegate_expectations_{self.stream_id}_{batch_id}")

    def _write_warned(self, checks: BatchChecks, batch: DataFrame, batch_id: int) -> tuple[int, dict[str, Any]]:
        """Warn-only: the counts ride on the table's write, no second pass over the batch."""
        with observable(batch) as observed_batch:
            observation = self._observation(batch_id)
            version = self._write(observed_batch.observe(observation, *checks.observed_columns()), batch_id)
            counts = checks.counts_from(observation.get)
        return version, checks.quality(counts)

    def _write_dropping(self, checks: BatchChecks, batch: DataFrame, batch_id: int,
                        quarantine_done: bool) -> tuple[int | None, dict[str, Any]]:
        """DROP ROW without FAIL UPDATE: nothing has to be known before the table's commit, so the counts ride on
        its write (which also fills the cache) and the quarantine is written from the cache only when a row was
        kept out. A crash between the two commits is healed by the replay: each table checks its own txn."""
        with observable(batch) as observed_batch:
            flagged = checks.flagged(observed_batch).persist()
            try:
                observation = self._observation(batch_id)
                version = self._write(checks.kept(flagged.observe(observation, *checks.count_columns())), batch_id)
                counts = checks.counts_from(observation.get)
                if not quarantine_done and self.quarantine is not None and (counts.dropped or self.mode == "complete"):
                    self._write_quarantine(checks.quarantined(flagged, batch_id, dt.datetime.now(dt.timezone.utc)),
                                           batch_id)
            finally:
                flagged.unpersist()
        return version, checks.quality(counts)

    def _merge_checked(self, checks: BatchChecks, batch: DataFrame, batch_id: int, table_done: bool,
                       quarantine_done: bool) -> tuple[int | None, dict[str, Any]]:
        """Update mode: the changed groups come to the driver with their flags, are counted there, and MERGEd."""
        import pyarrow.compute as pc

        flagged = self._checked(checks.flagged(batch), written=checks.keep_column())
        rows = batch_arrow(flagged)
        counts = checks.arrow_counts(rows)

        def record(names: list[str]) -> dict[str, Any] | None:
            for row in rows.to_pylist():
                if set(names) & set(checks.failed_names(row)):
                    return {k: v for k, v in row.items() if not k.startswith("__sg_")}
            return None

        self._fail_if_violated(checks, counts, record)
        at = dt.datetime.now(dt.timezone.utc)
        if not quarantine_done and self.quarantine is not None and counts.dropped:
            rejected = rows.filter(pc.invert(rows.column(checks.keep_column())))
            self._write_quarantine(
                checks.quarantined(batch.sparkSession.createDataFrame(rejected, flagged.schema), batch_id, at),
                batch_id)
        if table_done:
            return None, checks.quality(counts)
        keep = checks.keep_column() if counts.dropped else None  # with a row to keep out: MERGE deletes its group
        table_rows = rows.select([n for n in rows.column_names if not n.startswith("__sg_") or n == keep])
        txn = AppTransaction(self.stream_id, batch_id)
        return self._merge(batch, txn, self._parameters(batch_id), table_rows, keep), checks.quality(counts)

    @staticmethod
    def _fail_if_violated(checks: BatchChecks, counts: Counts,
                          record: Callable[[list[str]], dict[str, Any] | None]) -> None:
        violated = checks.violated(counts)
        if violated:
            raise checks.violation(violated, record(violated))

    def _require_quarantine(self) -> None:
        require_quarantine(self.quarantine)

    def _write_quarantine(self, rows: DataFrame, batch_id: int) -> None:
        assert self.quarantine is not None
        write_quarantine(self.quarantine, rows, AppTransaction(self.stream_id, batch_id), self._parameters(batch_id),
                         replace=self.mode == "complete")


def require_quarantine(quarantine: str | None) -> None:
    """Before anything commits: a batch whose dropped rows would have nowhere to go commits nothing."""
    from sluicegate.storage.delta.tables import is_delta_table

    if quarantine is not None and not is_delta_table(quarantine):
        folder = Path(quarantine)
        raise QuarantineMissingError(
            f"the quarantine table {folder.parent.name.removesuffix('.db')}.{folder.name} is missing, so the rows "
            "DROP ROW keeps out of the table would be lost; CREATE OR REFRESH STREAMING TABLE creates it again")


def write_quarantine(quarantine: str, rows: DataFrame, txn: AppTransaction, parameters: dict[str, str],
                     replace: bool = False) -> None:
    """The rows DROP ROW kept out of a batch, in the quarantine table's commit carrying the batch's txn
    (`replace`: complete mode, where the quarantine holds the current result's rejects)."""
    parameters = {**parameters, "quarantine": "true"}
    if replace:
        commit.overwrite(quarantine, rows, OPERATION, parameters, txn)
    else:
        commit.append(quarantine, rows, OPERATION, parameters, txn)

