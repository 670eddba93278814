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
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from catalog.names import quote_identifier
from runtime.delta.write import AppTransaction, committed_version
from runtime.warehouse import commit

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

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


class DeltaSink:
    """`foreachBatch` target writing a stream's result into the Delta table at `location`."""

    def __init__(self, location: str, stream_id: str, mode: str, keys: Sequence[str],
                 on_batch: Callable[[BatchWritten], None] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"output mode must be one of {MODES}, got {mode!r}")
        self.location = location
        self.stream_id = stream_id
        self.mode = mode
        self.keys = tuple(keys)
        self.on_batch = on_batch

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        started = time.perf_counter()
        done = committed_version(self.location, self.stream_id)
        if done is not None and batch_id <= done:
            batch.write.format("noop").mode("overwrite").save()
            version = None
            replayed = True
            log.info("stream %s: batch %d was committed before a restart; replayed without writing",
                     self.stream_id, batch_id)
        else:
            version = self._write(batch, batch_id)
            replayed = False
        if self.on_batch is not None:
            self.on_batch(BatchWritten(batch_id, replayed, version, time.perf_counter() - started))

    def _write(self, batch: DataFrame, batch_id: int) -> int:
        txn = AppTransaction(self.stream_id, batch_id)
        parameters = {"outputMode": self.mode.capitalize(), "queryId": self.stream_id, "epochId": str(batch_id)}
        if self.mode == "append":
            return commit.append(self.location, batch, OPERATION, parameters, txn)
        if self.mode == "complete" or not self.keys:
            return commit.overwrite(self.location, batch, OPERATION, parameters, txn)
        return self._merge(batch, txn, parameters)

    def _merge(self, batch: DataFrame, txn: AppTransaction, parameters: dict[str, str]) -> int:
        from deltalake import DeltaTable

        rows = batch.toArrow()
        table = DeltaTable(self.location)
        if rows.num_rows == 0:  # nothing changed: still one commit, so the batch is known as done
            return commit.append(self.location, batch.limit(0), OPERATION, parameters, txn)
        # streamed_exec=False: the batch is already in memory, and delta-rs derives its file pruning from the
        # source's key ranges only when the source is not streamed
        (table.merge(rows, merge_predicate(self.keys, rows), source_alias="s", target_alias="t",
                     streamed_exec=False, commit_properties=commit.commit_properties(OPERATION, parameters, txn))
         .when_matched_update_all().when_not_matched_insert_all().execute())
        return DeltaTable(self.location).version()

