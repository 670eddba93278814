"""Expectations on an AUTO CDC table: judged on the change events of a micro-batch before any of them is ranked.

Databricks defines an AUTO CDC target's expectations with the same CONSTRAINT clause as any streaming table's; here
they are conditions over the events' columns (the source's, so `op IN ('U', 'D')` may be checked though the table
keeps no `op`). An event that fails a DROP ROW expectation never takes part in the ranking (it cannot win, delete or
leave a tombstone) and goes to the quarantine table `<table>__quarantine`; a FAIL UPDATE that an event fails makes
the batch commit nothing; each batch's counts go to its flow_progress event and DESCRIBE's totals, as for every
streaming table. The verdict needs counting before anything commits, so the flagged events are cached for the batch.
The quarantine's commit carries the batch's txn like the table's and the state's: on a replay each of the three
checks its own, and the same events are judged the same way.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sluicegate.engine.streams.expectations import TOTALS, BatchChecks
from sluicegate.engine.streams.sink import require_quarantine, write_quarantine
from sluicegate.storage.delta.write import AppTransaction

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@contextmanager
def judged(checks: BatchChecks | None, batch: DataFrame, batch_id: int, stream_id: str, quarantine: str | None,
           quarantine_done: bool, counted: bool = True) -> Iterator[tuple[DataFrame, dict[str, Any] | None]]:
    """The events the table's expectations keep, and the batch's `data_quality` (None without expectations).
    Raises before anything commits when a FAIL UPDATE expectation fails or the quarantine table is missing. The
    quarantine is written here unless `quarantine_done`; the totals are added once the block ends well, when
    `counted` (a batch whose table commit was made before a restart was counted then)."""
    if checks is None:
        yield batch, None
        return
    if not quarantine_done:
        require_quarantine(quarantine)
    flagged = checks.flagged(batch).persist()
    try:
        counts = checks.counts_from(flagged.agg(*checks.count_columns()).collect()[0].asDict())
        violated = checks.violated(counts)
        if violated:
            raise checks.violation(violated, checks.offending_record(flagged, violated))
        if not quarantine_done and quarantine is not None and counts.dropped:
            parameters = {"outputMode": "Append", "queryId": stream_id, "epochId": str(batch_id)}
            write_quarantine(quarantine, checks.quarantined(flagged, batch_id, dt.datetime.now(dt.timezone.utc)),
                             AppTransaction(stream_id, batch_id), parameters)
        quality = checks.quality(counts)
        yield checks.kept(flagged), quality
        if counted:
            TOTALS.add(stream_id, checks.specs, quality)
    finally:
        flagged.unpersist()
