"""The AUTO CDC sink of SCD type 2 (engine/streams/cdc_sink.py has what it shares with SCD type 1: the batch's two
commits with one txn under the table's lock, ranking, the state table).

The table after every batch is a pure function of the set of events seen so far, so it does not depend on how the
events are split into micro-batches nor on the order they arrive in. Per key (Databricks' documented semantics; where
the docs are silent, chosen as said here and in README.md):
- One event per sequence value: of several with an equal sequence, a delete wins over an upsert, then the event whose
  kept values as JSON sort last (SCD type 1's tie rule; exact duplicates are one event).
- The key's events in sequence order make its versions: an upsert opens a version (`__START_AT` = its sequence) when
  the key has none open, or when a tracked column (TRACK HISTORY ON; by default every kept column but the keys) differs
  from the open version's (NULL equals NULL): then the open version ends there (`__END_AT` = that sequence). An upsert
  changing only untracked columns updates the open version in place (its values become the upsert's, its
  `__START_AT` stays). A delete ends the open version (`__END_AT` = the delete's sequence); a later upsert opens a new
  one. The current version has `__END_AT` NULL. A delete with no open version changes nothing.
- So an event arriving late takes its place in the history: the version before it ends at its sequence, and it ends
  at the next event's that opens a version or deletes.
- IGNORE NULL UPDATES: an upsert's NULL columns take the key's last non-NULL value since its last delete (in sequence
  order; what the delete event itself carries does not count), before the comparison above.
- Nothing is ever forgotten: no tombstone threshold applies (the history is the table).

How: the state table holds every event that won its (key, sequence), with its kept values. A batch adds its winners
to it; the keys a batch changed have their versions computed again from all their events, and one MERGE on (keys,
`__START_AT`) inserts, updates and deletes exactly the rows that differ from what the table holds for those keys.
The stored events of the batch's keys are read on the driver, from the state's files whose key statistics may hold
them (`Scd2Sink._driver_new`, as SCD type 1's lookup), not by joining the whole state in Spark; a NULL key, or a key
or sequence Arrow does not order as Spark, takes that join.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sluicegate.dialect.streaming.cdc import END_AT, START_AT, tracked_columns
from sluicegate.engine.streams.cdc_sink import (
    DELETE,
    ORDER,
    SEQ,
    STATE_PREFIX,
    TIE,
    CdcSink,
    Decided,
    _concat,
    numbered,
    prefixed,
    q,
    same_keys,
    without_keys,
)
from sluicegate.engine.streams.sink import batch_arrow
from sluicegate.storage.delta.write import AppTransaction

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

VERSION, NEXT, OPENS = "__sg_version", "__sg_next", "__sg_opens"


class Scd2Sink(CdcSink):
    """SCD type 2: one row per version of a key (see the module's docstring)."""

    label = "SCD TYPE 2"

    @property
    def tracked(self) -> list[str]:
        return tracked_columns(list(self.columns), self.spec)

    def _one_per_sequence(self, events: DataFrame) -> DataFrame:
        """Of a key's events with an equal sequence, the winner: a delete, then the greater tie."""
        from pyspark.sql import functions as F

        columns = [*self.columns, SEQ, DELETE, TIE]
        event = F.struct(*[F.col(q(c)) for c in columns])
        grouped = events.groupBy(*[F.col(q(c)) for c in (*self.keys, SEQ)]).agg(
            F.max_by(event, F.struct(F.col(DELETE), F.col(TIE))).alias("__sg_event"))
        return grouped.select(*[F.col("__sg_event").getField(c).alias(c) for c in columns])

    def _driver_new(self, winners: pa.Table, state: Any) -> tuple[pa.Table, pa.Table] | None:
        """On the driver, as SCD 1's `_driver_changes`: of the batch's `winners` (one per key and sequence), those
        the state table `state` (None before the first batch) lacks or that beat its event of their (key,
        sequence), and the history of their keys: the stored events of those keys but the ones they replace, with
        them. Only the state's files whose key statistics may hold a key of the batch are read (issue 29: the
        Spark join read the whole state every batch). None: a winner's key is NULL (a hash join does not match
        it), left to Spark's join."""
        import pyarrow.compute as pc

        if any(winners.column(key).null_count for key in self.keys):
            return None
        if state is None or winners.num_rows == 0:
            return winners, winners
        keys, by = list(self.keys), [*self.keys, SEQ]
        stored = self._stored_of(state, winners, [c for c in winners.column_names if c not in keys])
        ranks = stored.select([*by, DELETE, TIE]).rename_columns([*by, STATE_PREFIX + DELETE, STATE_PREFIX + TIE])
        looked = numbered(winners, by).join(ranks, keys=by, join_type="left outer").sort_by(ORDER)
        delete, stored_delete = winners.column(DELETE), looked.column(STATE_PREFIX + DELETE)
        beats = pc.or_(pc.fill_null(pc.greater(delete, stored_delete), False), pc.and_(
            pc.fill_null(pc.equal(delete, stored_delete), False),
            pc.fill_null(pc.greater(winners.column(TIE), looked.column(STATE_PREFIX + TIE)), False)))
        new = winners.filter(pc.or_(pc.is_null(stored_delete), beats))
        touched = new.group_by(keys).aggregate([])
        kept = numbered(stored, keys).join(touched, keys=keys, join_type="left semi")
        before = stored.take(kept.column(ORDER).combine_chunks())
        history = _concat(without_keys(before, new, by), new)
        return new, history.select(winners.column_names).cast(winners.schema)

    @contextmanager
    def _decided(self, batch: DataFrame) -> Iterator[Decided]:
        from pyspark.sql import functions as F
        from pyspark.sql.types import StructType

        session = batch.sparkSession
        events = self._ranked(batch)
        winners = self._one_per_sequence(events)
        looked = self._driver_new(batch_arrow(winners), self._kept_state.latest()) \
            if self._ranks_on_driver(events) else None
        if looked is not None:
            new_rows, history_rows = looked
            schema = winners.schema
            history = session.createDataFrame(history_rows, schema=schema)
            touched = session.createDataFrame(new_rows.select(list(self.keys)),
                                              schema=StructType([schema[k] for k in self.keys]))
            yield Decided(table=lambda: batch_arrow(self._changed_rows(session, self._versions(history), touched)),
                          state=lambda: new_rows)
            return
        stored = self._stored(session)
        if stored is None:
            new, history = winners, winners
        else:
            state = prefixed(stored, (*self.keys, SEQ, DELETE, TIE), STATE_PREFIX)
            on = [*same_keys(winners, state, self.keys, STATE_PREFIX),
                  winners[SEQ].eqNullSafe(state[q(STATE_PREFIX + SEQ)])]
            joined = winners.join(state, on=on, how="left")
            beats = F.struct(F.col(DELETE), F.col(TIE)) > F.struct(F.col(q(STATE_PREFIX + DELETE)),
                                                                    F.col(q(STATE_PREFIX + TIE)))
            columns = [F.col(q(c)) for c in winners.columns]
            new = joined.where(F.col(q(STATE_PREFIX + SEQ)).isNull() | beats).select(*columns)
            touched = prefixed(new, self.keys, STATE_PREFIX).distinct()
            events = stored.select(*columns)
            before = events.join(touched, on=same_keys(events, touched, self.keys, STATE_PREFIX), how="left_semi")
            history = self._one_per_sequence(before.unionByName(new))
        new = new.persist()   # read by both commits' jobs
        try:
            state_rows: list[pa.Table] = []

            def remembered() -> pa.Table:
                if not state_rows:
                    state_rows.append(batch_arrow(new))
                return state_rows[0]

            yield Decided(table=lambda: batch_arrow(self._changed_rows(session, self._versions(history), new)),
                          state=remembered)
        finally:
            new.unpersist()

    def _versions(self, history: DataFrame) -> DataFrame:
        """Each key's versions from all its events (one per sequence): the table's rows for those keys."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        ordered = Window.partitionBy(*[F.col(q(k)) for k in self.keys]).orderBy(F.col(SEQ))
        so_far = ordered.rowsBetween(Window.unboundedPreceding, Window.currentRow)
        frame = history
        if self.spec.ignore_null_updates:   # each column's last non-NULL value since the key's last delete
            frame = frame.withColumn("__sg_since", F.sum(F.col(DELETE).cast("int")).over(so_far))
            since = Window.partitionBy(*[F.col(q(k)) for k in self.keys], F.col("__sg_since")) \
                .orderBy(F.col(SEQ)).rowsBetween(Window.unboundedPreceding, Window.currentRow)
            frame = frame.select(*[F.col(q(k)) for k in self.keys],
                                 *[F.last(F.when(~F.col(DELETE), F.col(q(c))), ignorenulls=True).over(since)
                                   .alias(c) for c in self.values],
                                 F.col(SEQ), F.col(DELETE))
        unchanged: Column = F.lit(True)
        for name in self.tracked:
            unchanged = unchanged & F.col(q(name)).eqNullSafe(F.lag(F.col(q(name))).over(ordered))
        opens = ~F.col(DELETE) & (F.lag(F.col(SEQ)).over(ordered).isNull()
                                  | F.lag(F.col(DELETE)).over(ordered) | ~unchanged)
        frame = frame.withColumn(OPENS, opens).withColumn(NEXT, F.lead(F.col(SEQ)).over(ordered))
        frame = frame.withColumn(VERSION, F.sum(F.col(OPENS).cast("int")).over(so_far))
        last = F.max_by(F.struct(*[F.col(q(c)) for c in self.values], F.col(NEXT)), F.col(SEQ))
        versions = frame.where(~F.col(DELETE)).groupBy(*[F.col(q(k)) for k in self.keys], F.col(VERSION)).agg(
            F.min(F.col(SEQ)).alias(START_AT), last.alias("__sg_last"))
        return versions.select(*[F.col(q(k)) for k in self.keys],
                               *[F.col("__sg_last").getField(c).alias(c) for c in self.values],
                               self._bound(F.col(START_AT), START_AT),
                               self._bound(F.col("__sg_last").getField(NEXT), END_AT))

    def _bound(self, column: Column, name: str) -> Column:
        wanted = self.types.get(name.lower())
        return (column.cast(wanted) if wanted else column).alias(name)

    def _changed_rows(self, session: SparkSession, versions: DataFrame, new: DataFrame) -> DataFrame:
        """The MERGE's source: the versions of the keys `new` touches that the table does not hold as they are
        (to insert or update), and the table's rows of those keys no version has anymore (flagged DELETE)."""
        from pyspark.sql import functions as F

        from sluicegate.storage.delta.read import snapshot_dataframe
        from sluicegate.storage.delta.snapshots import load_snapshot

        table = snapshot_dataframe(session, load_snapshot(self.location))
        by_name = {name.lower(): name for name in table.columns}
        names = [*self.columns, START_AT, END_AT]
        versions = versions.select(*[F.col(q(n)).alias(by_name.get(n.lower(), n)) for n in names])
        names = versions.columns
        keys = [by_name.get(k.lower(), k) for k in self.keys]
        touched = prefixed(new, self.keys, STATE_PREFIX).distinct()
        rows = table.select(*[F.col(q(n)) for n in names])
        held = rows.join(touched, how="left_semi", on=[
            rows[q(k)].eqNullSafe(touched[q(STATE_PREFIX + c)]) for k, c in zip(keys, self.keys, strict=True)])
        mine, theirs = versions.alias("v"), held.alias("h")
        start = by_name.get(START_AT.lower(), START_AT)
        same_row = [F.col(f"v.{q(n)}").eqNullSafe(F.col(f"h.{q(n)}")) for n in names]
        same_version = [F.col(f"v.{q(n)}").eqNullSafe(F.col(f"h.{q(n)}")) for n in (*keys, start)]
        written = mine.join(theirs, on=same_row, how="left_anti").withColumn(DELETE, F.lit(False))
        gone = theirs.join(mine, on=same_version, how="left_anti").withColumn(DELETE, F.lit(True))
        return written.unionByName(gone)

    def _apply(self, decided: Decided, txn: AppTransaction, parameters: dict[str, str]) -> int:
        """The table's one commit: the changed versions of the batch's keys, MERGEd on (keys, `__START_AT`)."""
        return self._merge(decided.table(), [*self.keys, START_AT], txn, parameters)

    def _remember(self, decided: Decided, txn: AppTransaction, parameters: dict[str, str]) -> None:
        """The state table's commit: the batch's events that won their (key, sequence)."""
        self._commit_state(decided.state(), [*self.keys, SEQ], txn, parameters,
                           "AUTO CDC: every key's changes, one per sequence value")
