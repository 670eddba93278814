"""The stream supervisor without Spark: its transition table and policy, and the supervisor itself driven through its
command queue with a fake Spark edge, a real catalog (SQLite) and a fake clock. Fast: no JVM."""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sluicegate.catalog.store import CatalogStore, StreamEntry, TableEntry
from sluicegate.dialect.schedule import Schedule
from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.engine.streams import lifecycle
from sluicegate.engine.streams.errors import NON_RETRYABLE_ERROR_CLASSES, RAISED_IN_BATCH, StreamError, retryable
from sluicegate.engine.streams.expectations import ExpectationViolationError
from sluicegate.engine.streams.lifecycle import RetryPolicy, StreamState
from sluicegate.engine.streams.manager import StreamManager
from sluicegate.engine.streams.settings import StreamSettings
from sluicegate.engine.streams.sink import BatchWritten, QuarantineMissingError
from sluicegate.engine.streams.spark_edge import LiveQuery

T0 = dt.datetime(2026, 11, 25, 12, 0, 0)
CAST_ERROR = ("[CAST_INVALID_INPUT] The value 'abc' of the type \"STRING\" cannot be cast to \"INT\" because it is "
              "malformed. SQLSTATE: 22018\n== SQL (line 1, position 8) ==\nSELECT CAST(s AS INT)\n\tat org.apache.x")


# -- the pure policy ------------------------------------------------------------------------------------------------

def test_transition_table_has_one_terminal_state_and_rejects_the_rest() -> None:
    assert {StreamState.DROPPED} == lifecycle.TERMINAL
    assert lifecycle.TRANSITIONS[StreamState.DROPPED] == frozenset()
    assert set(lifecycle.TRANSITIONS) == set(StreamState)
    for state in StreamState:
        if state not in lifecycle.TERMINAL:
            assert StreamState.DROPPED in lifecycle.TRANSITIONS[state]
    lifecycle.check_transition(StreamState.REFRESHING, StreamState.SCHEDULED)
    with pytest.raises(lifecycle.StreamTransitionError):
        lifecycle.check_transition(StreamState.SCHEDULED, StreamState.RUNNING)  # only through STARTING
    with pytest.raises(lifecycle.StreamTransitionError):
        lifecycle.check_transition(StreamState.FAILED, StreamState.RETRYING)    # FAILED is for good


def test_failures_back_off_then_end_and_unretryable_classes_end_at_once() -> None:
    policy = RetryPolicy(2.0, 5.0, 3)
    first = lifecycle.after_failure(0, CAST_ERROR, T0, policy)
    assert first.state == StreamState.RETRYING and first.attempts == 1 and first.retry_at == T0 + dt.timedelta(
        seconds=2)
    second = lifecycle.after_failure(1, CAST_ERROR, T0, policy)
    assert second.retry_at == T0 + dt.timedelta(seconds=4)
    third = lifecycle.after_failure(2, CAST_ERROR, T0, policy)
    assert third.state == StreamState.FAILED and third.retry_at is None and "no more retries" in third.reason
    assert policy.delay(10) == 5.0
    assert {"EXPECTATION_VIOLATION", "DELTA_SOURCE_TABLE_REWRITTEN"} <= NON_RETRYABLE_ERROR_CLASSES
    violation = "[EXPECTATION_VIOLATION.VERBOSE] Expectation `valid_id` was violated: id > 0, row {id: -1}"
    assert not retryable(violation) and retryable(CAST_ERROR)
    assert not retryable("SourceRewrittenError: version 3 of the Delta table rewrote rows in place (DELETE)")
    ended = lifecycle.after_failure(0, violation, T0, policy)
    assert ended.state == StreamState.FAILED and ended.attempts == 1 and "EXPECTATION_VIOLATION" in ended.reason


def test_a_pass_is_due_on_its_time_or_on_a_new_input_version_at_most_so_often() -> None:
    hourly = Schedule("every", every=2, unit="HOUR")
    assert lifecycle.next_pass_at(hourly, T0) == T0 + dt.timedelta(hours=2)
    assert lifecycle.first_pass_at(hourly, None, T0) == T0                           # never ran: now
    assert lifecycle.first_pass_at(hourly, T0 - dt.timedelta(minutes=1), T0) == T0   # missed while down: now
    later = T0 + dt.timedelta(minutes=5)
    assert lifecycle.first_pass_at(hourly, later, T0) == later
    assert not lifecycle.pass_due(hourly, later, T0, True, None)
    assert lifecycle.pass_due(hourly, later, later, False, None)
    on_update = Schedule("on_update", at_most_every_seconds=60)
    assert lifecycle.next_pass_at(on_update, T0) is None
    assert not lifecycle.pass_due(on_update, None, T0, False, None)
    assert lifecycle.pass_due(on_update, None, T0, True, T0 - dt.timedelta(seconds=61))
    assert not lifecycle.pass_due(on_update, None, T0, True, T0 - dt.timedelta(seconds=30))


# -- the supervisor with a fake edge ----------------------------------------------------------------------------------

@dataclass
class FakeBuilt:
    released: int = 0
    static_versions: dict[Any, int] = field(default_factory=dict)
    checkpoint: str | None = None

    def release(self) -> None:
        self.released += 1


class FakeEdge:
    """What SparkEdge does, recorded: launches (continuous or available-now), halts, and ends the test decides."""

    def __init__(self) -> None:
        self.launched: list[tuple[LiveQuery, str]] = []
        self.halted: list[str] = []
        self.ended_runs: dict[str, str | None] = {}
        self.refuse: str | None = None
        self.versions: dict[Any, int] = {}
        self.static: str | None = None
        self.removed_checkpoints: list[str] = []

    def build(self, key: Any, plan: Any, checkpoint: str | None = None) -> FakeBuilt:
        return FakeBuilt(checkpoint=checkpoint)

    def launch(self, key: Any, stream_id: str, plan: Any, built: Any, location: str, checkpoint: str,
               trigger: float, available_now: bool, on_batch: Any, reset_pending: bool = False) -> LiveQuery:
        if self.refuse:
            raise RuntimeError(self.refuse)
        live = LiveQuery(key, stream_id, plan, built, None, uuid.uuid4().hex, T0, available_now)  # type: ignore
        live.on_batch = on_batch  # type: ignore[attr-defined]
        self.launched.append((live, checkpoint))
        return live

    def ended(self, live: LiveQuery) -> tuple[bool, str | None]:
        return (live.run_id in self.ended_runs, self.ended_runs.get(live.run_id))

    def halt(self, live: LiveQuery, wait_seconds: float) -> None:
        self.halted.append(live.run_id)

    def forget_session(self, key: Any) -> None:
        pass

    def remove_checkpoint(self, checkpoint: str) -> None:
        self.removed_checkpoints.append(checkpoint)

    def static_change(self, live: LiveQuery) -> str | None:
        return self.static

    def input_versions(self, plan: Any) -> dict[Any, int]:
        return dict(self.versions)

    def process_all_available(self, live: LiveQuery) -> None:
        pass


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += dt.timedelta(seconds=seconds)


@pytest.fixture()
def world(tmp_path: Path) -> Iterator[tuple[StreamManager, FakeEdge, Clock, CatalogStore]]:
    store = CatalogStore.for_warehouse(tmp_path)
    store.create_database("db")
    edge, clock = FakeEdge(), Clock()
    settings = StreamSettings(trigger_seconds=1.0, retry_initial=10.0, retry_max=60.0, checkpoints=tmp_path / "cp",
                              static_check_interval=5.0, max_attempts=3, tick_seconds=3600.0)
    manager = StreamManager(None, store, settings, edge=edge, clock=clock)
    yield manager, edge, clock, store
    manager.stop_all()
    store.close()


def _persist(store: CatalogStore, manager: StreamManager, name: str, schedule: Schedule | None = None,
             next_run_at: dt.datetime | None = None) -> StreamEntry:
    plan = analyze(f"CREATE STREAMING TABLE db.{name} AS SELECT id FROM STREAM(db.up)", lambda d, n: "append")
    store.create_table(TableEntry("db", name, "STREAMING_TABLE", f"/nowhere/{name}", None, "...",
                                  schedule=schedule.to_json() if schedule else None))
    stream_id = uuid.uuid4().hex
    return store.put_stream(StreamEntry("db", name, stream_id, plan.to_json(), manager.checkpoint_for(stream_id),
                                        "STARTING", "RUNNING", next_run_at=next_run_at))


def _end(manager: StreamManager, edge: FakeEdge, error: str | None = None) -> None:
    """The listener reports that the last launched query ended (then a tick, so the command has run)."""
    live = edge.launched[-1][0]
    edge.ended_runs[live.run_id] = error
    manager._terminated(live.run_id, error)
    manager.tick()


def test_a_crash_loop_retries_with_backoff_then_stays_failed_with_one_line_each(world, caplog) -> None:
    manager, edge, clock, store = world
    manager.start(_persist(store, manager, "looping"))
    assert store.get_stream("db", "looping").status == "RUNNING"
    caplog.set_level(logging.WARNING, logger="sluicegate.engine.streams.manager")
    _end(manager, edge, CAST_ERROR)
    entry = store.get_stream("db", "looping")
    assert (entry.status, entry.failures) == ("RETRYING", 1) and "CAST_INVALID_INPUT" in entry.last_error
    clock.advance(9)
    manager.tick()
    assert len(edge.launched) == 1                                  # the backoff is not over
    clock.advance(2)
    manager.tick()
    assert len(edge.launched) == 2
    entry = store.get_stream("db", "looping")
    assert entry.status == "RUNNING" and entry.last_error and entry.failures == 1  # never RUNNING without its error
    _end(manager, edge, CAST_ERROR)
    clock.advance(21)
    manager.tick()
    _end(manager, edge, CAST_ERROR)
    entry = store.get_stream("db", "looping")
    assert (entry.status, entry.failures) == ("FAILED", 3)
    clock.advance(3600)
    manager.tick()
    assert len(edge.launched) == 3                                  # FAILED is for good: no tick revives it
    warnings = [r for r in caplog.records if "db.looping failed" in r.getMessage()]
    assert len(warnings) == 3 and all("\n" not in r.getMessage() and r.exc_info is None for r in warnings)
    assert "attempt 3 of 3: no more retries" in warnings[-1].getMessage()
    kinds = [kind for _, kind, _ in store.events("db", "looping")]
    assert kinds.count("FAILED") == 3 and kinds.count("RETRY") == 2
    # REFRESH starts it again with a fresh set of attempts
    manager.refresh("db", "looping")
    assert len(edge.launched) == 4 and store.get_stream("db", "looping").status == "RUNNING"
    _end(manager, edge, CAST_ERROR)
    assert store.get_stream("db", "looping").status == "RETRYING"


def test_an_unretryable_failure_ends_at_once_and_a_committed_batch_resets_the_count(world) -> None:
    manager, edge, clock, store = world
    manager.start(_persist(store, manager, "strict"))
    _end(manager, edge, "[EXPECTATION_VIOLATION.VERBOSE] Expectation `positive` was violated")
    entry = store.get_stream("db", "strict")
    assert (entry.status, entry.failures) == ("FAILED", 1)
    manager.start(_persist(store, manager, "healing"))
    _end(manager, edge, CAST_ERROR)
    clock.advance(11)
    manager.tick()
    live = edge.launched[-1][0]
    live.on_batch(BatchWritten(batch_id=4, replayed=False, version=7, seconds=0.1))  # type: ignore[attr-defined]
    manager.tick()
    entry = store.get_stream("db", "healing")
    assert (entry.status, entry.failures, entry.last_error, entry.last_batch_id) == ("RUNNING", 0, None, 4)


def test_the_retry_decision_reads_the_class_the_batch_recorded_not_the_text(world) -> None:
    """The sink records its typed error's class by stream id before Spark wraps the error in a Java exception whose
    text need not name it; a failure nothing recorded is judged by its text, as the tests above show."""
    manager, edge, _, store = world
    wrapped = "org.apache.spark.api.python.PythonException: An exception was thrown from the Python worker."
    assert retryable(wrapped) and not retryable(wrapped, ExpectationViolationError.error_class)
    strict = manager.start(_persist(store, manager, "typed"))
    RAISED_IN_BATCH.record(strict.stream_id, ExpectationViolationError("Flow 'db.typed' failed to meet the "
                                                                       "expectation."))
    _end(manager, edge, wrapped)
    entry = store.get_stream("db", "typed")
    assert (entry.status, entry.failures) == ("FAILED", 1)
    assert RAISED_IN_BATCH.take(strict.stream_id) is None          # taken by the one failure it explains
    assert any("EXPECTATION_VIOLATION is not retried" in message for _, kind, message in store.events("db", "typed")
               if kind == "FAILED")
    cured = manager.start(_persist(store, manager, "cured"))        # a typed error a retry can cure: its text aside
    RAISED_IN_BATCH.record(cured.stream_id, QuarantineMissingError("the quarantine table db.cured__quarantine is "
                                                                   "missing"))
    _end(manager, edge, "QuarantineMissingError: the quarantine table of an EXPECTATION_VIOLATION is missing")
    assert store.get_stream("db", "cured").status == "RETRYING"


def test_a_drop_during_the_backoff_is_final(world) -> None:
    manager, edge, clock, store = world
    manager.start(_persist(store, manager, "doomed"))
    _end(manager, edge, CAST_ERROR)
    manager.drop("db", "doomed")
    assert edge.removed_checkpoints == [edge.launched[0][1]]        # its copy on an object store goes too
    store.drop_table("db", "doomed")
    clock.advance(3600)
    manager.tick()
    assert len(edge.launched) == 1 and manager.running() == []


def test_a_scheduled_table_runs_passes_on_its_schedule(world) -> None:
    manager, edge, clock, store = world
    every = Schedule("every", every=1, unit="HOUR")
    entry = manager.start(_persist(store, manager, "hourly", every))
    live, checkpoint = edge.launched[-1]
    assert live.available_now and entry.status == "REFRESHING" and entry.last_refresh_status == "RUNNING"
    _end(manager, edge)                                             # the first pass, at CREATE, ends
    entry = store.get_stream("db", "hourly")
    assert (entry.status, entry.last_refresh_status, entry.next_run_at) == ("SCHEDULED", "COMPLETED",
                                                                           T0 + dt.timedelta(hours=1))
    assert manager.running() == []                                  # no query between passes
    clock.advance(1800)
    manager.tick()
    assert len(edge.launched) == 1
    clock.advance(1801)
    manager.tick()
    assert len(edge.launched) == 2 and edge.launched[-1][1] == checkpoint  # the same checkpoint
    _end(manager, edge, CAST_ERROR)
    entry = store.get_stream("db", "hourly")
    assert (entry.status, entry.last_refresh_status) == ("RETRYING", "FAILED")
    # REFRESH runs a pass now; SYNC waits for its end
    manager.refresh("db", "hourly")
    assert edge.launched[-1][0].available_now
    _end(manager, edge)
    manager.catch_up("db", "hourly", lambda: False)
    assert store.get_stream("db", "hourly").last_refresh_status == "COMPLETED"


def test_the_tick_leaves_an_ended_pass_to_the_listener_so_its_last_progress_is_kept(world) -> None:
    """The listener runs behind the query: a pass's last batch is reported after isActive turned false. The tick's
    safety net waits a grace period, or that batch's flow_progress event was dropped (seen through beeline)."""
    manager, edge, clock, store = world
    manager.start(_persist(store, manager, "lagging", Schedule("every", every=1, unit="HOUR")))
    live = edge.launched[-1][0]
    edge.ended_runs[live.run_id] = None                             # the query ended; its listener is behind
    manager.tick()
    assert store.get_stream("db", "lagging").status == "REFRESHING"
    manager._progress(live.run_id, {"batchId": 0, "numInputRows": 2, "sources": []})   # the late report
    assert [event.event_type for event in store.event_log("db", "lagging")].count("flow_progress") == 1
    clock.advance(9)
    manager.tick()
    assert store.get_stream("db", "lagging").status == "REFRESHING"
    clock.advance(2)
    manager.tick()                                                  # the listener's end never came: the tick's
    entry = store.get_stream("db", "lagging")
    assert (entry.status, entry.last_refresh_status) == ("SCHEDULED", "COMPLETED")


def test_a_failed_pass_fails_the_refresh_that_waits_for_it(world) -> None:
    manager, edge, _clock, store = world
    manager.start(_persist(store, manager, "sync", Schedule("every", every=1, unit="DAY")))
    _end(manager, edge, "[EXPECTATION_VIOLATION] Expectation `x` was violated")
    with pytest.raises(StreamError, match="EXPECTATION_VIOLATION"):
        manager.catch_up("db", "sync", lambda: False)


def test_boot_runs_a_missed_pass_and_waits_for_one_still_to_come(world) -> None:
    manager, edge, clock, store = world
    missed = _persist(store, manager, "missed", Schedule("every", every=1, unit="HOUR"), T0 - dt.timedelta(hours=2))
    waiting = _persist(store, manager, "waiting", Schedule("every", every=1, unit="HOUR"),
                       T0 + dt.timedelta(minutes=20))
    assert manager.restart_all() == 2
    assert [live.key for live, _ in edge.launched] == [("db", "missed")]
    assert store.get_stream("db", "waiting").status == "SCHEDULED"
    clock.advance(20 * 60)
    manager.tick()
    assert [live.key for live, _ in edge.launched] == [("db", "missed"), ("db", "waiting")]
    assert missed.checkpoint == edge.launched[0][1] and waiting.checkpoint == edge.launched[1][1]


def test_trigger_on_update_runs_a_pass_when_an_input_changes_at_most_so_often(world) -> None:
    manager, edge, clock, store = world
    edge.versions = {("db", "up"): 3}
    manager.start(_persist(store, manager, "follows", Schedule("on_update", at_most_every_seconds=60)))
    _end(manager, edge)
    clock.advance(10)
    manager.tick()
    assert len(edge.launched) == 1                                  # nothing new
    edge.versions = {("db", "up"): 4}
    clock.advance(10)
    manager.tick()
    assert len(edge.launched) == 1                                  # new, but the last pass was 20 s ago
    clock.advance(50)
    manager.tick()
    assert len(edge.launched) == 2


def test_reschedule_switches_between_continuous_and_passes_on_one_checkpoint(world) -> None:
    manager, edge, _clock, store = world
    manager.start(_persist(store, manager, "switch"))
    continuous, checkpoint = edge.launched[-1]
    assert not continuous.available_now
    store.update_table("db", "switch", schedule=Schedule("every", every=2, unit="HOUR").to_json())
    manager.reschedule("db", "switch")
    entry = store.get_stream("db", "switch")
    assert continuous.run_id in edge.halted and entry.status == "SCHEDULED"
    assert entry.next_run_at == T0 + dt.timedelta(hours=2)
    store.update_table("db", "switch", schedule=None)
    manager.reschedule("db", "switch")
    again, same = edge.launched[-1]
    assert not again.available_now and same == checkpoint and store.get_stream("db", "switch").status == "RUNNING"


def test_a_refresh_during_a_pass_gets_one_more_pass_after_it(world) -> None:
    manager, edge, _clock, store = world
    manager.start(_persist(store, manager, "busy", Schedule("every", every=1, unit="HOUR")))
    pending = manager.refresh("db", "busy")             # the pass under way may have started before new input
    assert pending is not None and not pending.done() and len(edge.launched) == 1
    _end(manager, edge)
    assert len(edge.launched) == 2 and edge.launched[-1][0].available_now and not pending.done()
    _end(manager, edge)
    manager.catch_up("db", "busy", lambda: False, pending)
    assert pending.done() and store.get_stream("db", "busy").status == "SCHEDULED"
    pending = manager.refresh("db", "busy")
    manager.drop("db", "busy")                          # a drop ends the wait, and says why
    with pytest.raises(StreamError, match="stopped before it ended"):
        manager.catch_up("db", "busy", lambda: False, pending)


def test_a_continuous_refresh_notes_its_outcome(world) -> None:
    manager, edge, _clock, store = world
    manager.start(_persist(store, manager, "steady"))
    manager.catch_up("db", "steady", lambda: False)
    entry = store.get_stream("db", "steady")
    assert entry.last_refresh_status == "COMPLETED" and entry.last_refresh_at is not None
    _end(manager, edge, CAST_ERROR)
    with pytest.raises(StreamError, match="not running"):
        manager.catch_up("db", "steady", lambda: False)
    assert store.get_stream("db", "steady").last_refresh_status == "FAILED"


# -- flows: streams keyed (database, table, flow) in the same supervisor --------------------------------------------

def _persist_flow(store: CatalogStore, manager: StreamManager, table: str, flow: str) -> StreamEntry:
    plan = analyze(f"CREATE STREAMING TABLE db.{table} AS SELECT id FROM STREAM(db.{flow}_in)", lambda d, n: "append")
    stream_id = uuid.uuid4().hex
    return store.create_flow(StreamEntry("db", table, stream_id, plan.to_json(), manager.checkpoint_for(stream_id),
                                         "STARTING", "RUNNING", flow=flow), None, "alice")


def test_flows_of_one_table_start_fail_resume_and_drop_each_on_their_own(world) -> None:
    manager, edge, _clock, store = world
    table = _persist(store, manager, "events")
    first, second = _persist_flow(store, manager, "events", "a"), _persist_flow(store, manager, "events", "b")
    assert manager.restart_all() == 3
    assert sorted(live.key for live, _ in edge.launched) == [("db", "events"), ("db", "events", "a"),
                                                            ("db", "events", "b")]
    checkpoints = {live.key: checkpoint for live, checkpoint in edge.launched}
    assert checkpoints[("db", "events", "a")] == first.checkpoint != second.checkpoint != table.checkpoint
    live_a = next(live for live, _ in edge.launched if live.key == ("db", "events", "a"))
    edge.ended_runs[live_a.run_id] = CAST_ERROR
    manager._terminated(live_a.run_id, CAST_ERROR)
    manager.tick()
    assert store.get_stream("db", "events", "a").status == "RETRYING"      # one flow failed ...
    assert store.get_stream("db", "events", "b").status == "RUNNING"       # ... the other and the table run on
    assert store.get_stream("db", "events").status == "RUNNING"
    assert "a" in store.event_log("db", "events")[-1].origin
    manager.drop("db", "events", flow="b")
    assert sorted(manager.running()) == [("db", "events")]
    assert store.get_stream("db", "events", "b").status == "STOPPED"       # the caller removes its row


# -- CREATE's wait for the first update (engine/streams/manager.py: first_update) ------------------------------------

NOT_NULL_ERROR = ("[DELTA_NOT_NULL_CONSTRAINT_VIOLATED] NOT NULL constraint violated for column: id of "
                  "`db`.`broken`.")


def _failing_first(manager: StreamManager, edge: FakeEdge, error: str, times: int) -> list[str]:
    """The edge's wait for a query to catch up fails the first `times` queries as Spark does (the query ends, the
    listener reports it, the wait raises); the run ids it drained are returned."""
    drained: list[str] = []

    def drain(live: LiveQuery) -> None:
        drained.append(live.run_id)
        if len(drained) <= times:
            edge.ended_runs[live.run_id] = error
            manager._terminated(live.run_id, error)
            raise RuntimeError(error)

    edge.process_all_available = drain  # type: ignore[method-assign]
    return drained


def _status_becomes(store: CatalogStore, name: str, status: str) -> None:
    for _ in range(1000):
        if store.get_stream("db", name).status == status:
            return
        time.sleep(0.01)
    raise AssertionError(f"{name} never became {status}: {store.get_stream('db', name).status}")


def test_a_first_update_completes_once_caught_up_and_raises_the_streams_error_once_failed(world) -> None:
    manager, edge, _, store = world
    manager.start(_persist(store, manager, "fresh"))
    assert manager.first_update("db", "fresh", lambda: False, 60, poll_seconds=0.01) == "COMPLETED"
    manager.start(_persist(store, manager, "broken"))
    _failing_first(manager, edge, NOT_NULL_ERROR, times=1)
    with pytest.raises(StreamError) as raised:
        manager.first_update("db", "broken", lambda: False, 60, poll_seconds=0.01)
    assert (raised.value.error_class, raised.value.sqlstate) == ("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", "23502")
    assert raised.value.message == NOT_NULL_ERROR and "REFRESH STREAMING TABLE" in (raised.value.hint or "")
    entry = store.get_stream("db", "broken")
    assert (entry.status, entry.failures) == ("FAILED", 1)      # not retried: the same batch fails the same way


def test_a_first_update_waits_through_a_retry_and_is_bounded(world) -> None:
    manager, edge, clock, store = world
    manager.start(_persist(store, manager, "flaky"))
    drained = _failing_first(manager, edge, CAST_ERROR, times=1)
    outcome: list[str] = []
    waiter = threading.Thread(target=lambda: outcome.append(
        manager.first_update("db", "flaky", lambda: False, 60, poll_seconds=0.01)))
    waiter.start()
    _status_becomes(store, "flaky", "RETRYING")
    assert outcome == []                    # a retryable failure: the statement waits for the retry
    clock.advance(11)
    manager.tick()
    waiter.join(30)
    assert outcome == ["COMPLETED"] and len(drained) == 2 and len(set(drained)) == 2
    # a first update longer than the bound: TIMED_OUT, the stream goes on; a cancelled statement: CANCELED
    manager.start(_persist(store, manager, "slow"))
    release = threading.Event()
    edge.process_all_available = lambda live: release.wait(30)  # type: ignore[method-assign,assignment,return-value]
    try:
        assert manager.first_update("db", "slow", lambda: False, 0.05, poll_seconds=0.01) == "TIMED_OUT"
        assert manager.first_update("db", "slow", lambda: True, 60, poll_seconds=0.01) == "CANCELED"
        assert store.get_stream("db", "slow").status == "RUNNING"
    finally:
        release.set()
