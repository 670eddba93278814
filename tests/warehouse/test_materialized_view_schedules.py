"""Materialized views refreshed on their schedules: TRIGGER ON UPDATE when an input table gets a new version (at most
once per AT MOST EVERY, along a chain of views), SCHEDULE EVERY when its time has come. The scheduler runs here
with a clock the test moves, over the shared gateway's catalog and policy; everything else goes through PyHive."""

from __future__ import annotations

import datetime as dt
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pyhive_helpers import cursor_in, sorted_rows

from sluicegate.executor.context import StatementContext
from sluicegate.executor.materialized_views import refresh as mv_refresh
from sluicegate.executor.materialized_views.background import as_owner
from sluicegate.executor.materialized_views.scheduler import MaterializedViewScheduler


class Clock:
    """The real time plus what the test moved it on by (refreshes stamp their rows with the real time)."""

    def __init__(self) -> None:
        self.offset = dt.timedelta()

    def __call__(self) -> dt.datetime:
        return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += dt.timedelta(seconds=seconds)


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def scheduler(spark: Any, gateway: Any, clock: Clock) -> MaterializedViewScheduler:
    service = gateway.service
    return MaterializedViewScheduler(spark, service.catalog, gateway.config.warehouse, service.policy, clock=clock)


@pytest.fixture()
def cursor(connect: Any, request: pytest.FixtureRequest) -> Any:
    database = "mvs_" + request.node.name.removeprefix("test_")[:40].lower()
    cur = cursor_in(connect, database)
    cur.database = database
    cur.execute("CREATE TABLE events (id INT, kind STRING)")
    cur.execute("INSERT INTO events VALUES (1, 'a'), (2, 'b')")
    return cur


def _mine(refreshed: list[tuple[str, str]], database: str) -> list[str]:
    return sorted(name for db, name in refreshed if db == database)


def _info(cursor: Any, name: str) -> dict[str, str]:
    cursor.execute(f"DESCRIBE EXTENDED {name}")
    return {row[0]: row[1] for row in cursor.fetchall()}


def test_trigger_on_update_refreshes_a_chain(cursor: Any, scheduler: MaterializedViewScheduler,
                                             clock: Clock) -> None:
    cursor.execute("CREATE MATERIALIZED VIEW silver TRIGGER ON UPDATE AS SELECT id, upper(kind) AS kind FROM events")
    cursor.execute("CREATE MATERIALIZED VIEW gold TRIGGER ON UPDATE AS "
                   "SELECT kind, count(*) AS n FROM silver GROUP BY kind")
    assert _mine(scheduler.tick(), cursor.database) == []          # no input has a new version
    cursor.execute("INSERT INTO events VALUES (3, 'a')")
    assert _mine(scheduler.tick(), cursor.database) == ["silver"]  # gold's input (silver) changes in this tick
    assert _mine(scheduler.tick(), cursor.database) == ["gold"]
    assert sorted_rows(cursor, "SELECT * FROM gold") == [("A", 2), ("B", 1)]
    assert _mine(scheduler.tick(), cursor.database) == []
    cursor.execute("SELECT details FROM event_log(TABLE(gold)) "
                   "WHERE get_json_object(details, '$.create_update.cause') = 'INPUT_CHANGED'")
    assert len(cursor.fetchall()) == 1


def test_at_most_every_spaces_the_refreshes(cursor: Any, scheduler: MaterializedViewScheduler,
                                            clock: Clock) -> None:
    cursor.execute("CREATE MATERIALIZED VIEW spaced TRIGGER ON UPDATE AT MOST EVERY INTERVAL 2 MINUTES AS "
                   "SELECT count(*) AS n FROM events")
    cursor.execute("INSERT INTO events VALUES (3, 'c')")
    assert _mine(scheduler.tick(), cursor.database) == []             # CREATE refreshed it less than 2 minutes ago
    clock.advance(121)
    assert _mine(scheduler.tick(), cursor.database) == ["spaced"]
    cursor.execute("INSERT INTO events VALUES (4, 'd')")
    clock.advance(60)
    assert _mine(scheduler.tick(), cursor.database) == []             # a minute after the last: not yet
    assert sorted_rows(cursor, "SELECT * FROM spaced") == [(3,)]
    clock.advance(121)
    assert _mine(scheduler.tick(), cursor.database) == ["spaced"]
    assert sorted_rows(cursor, "SELECT * FROM spaced") == [(4,)]


def test_schedule_every_runs_when_due(cursor: Any, scheduler: MaterializedViewScheduler, clock: Clock) -> None:
    cursor.execute("CREATE MATERIALIZED VIEW hourly SCHEDULE EVERY 1 HOUR AS SELECT count(*) AS n FROM events")
    assert _info(cursor, "hourly")["Next Refresh"] is not None
    cursor.execute("INSERT INTO events VALUES (3, 'c')")
    assert _mine(scheduler.tick(), cursor.database) == []
    clock.advance(3601)
    assert _mine(scheduler.tick(), cursor.database) == ["hourly"]
    assert sorted_rows(cursor, "SELECT * FROM hourly") == [(3,)]
    assert _mine(scheduler.tick(), cursor.database) == []           # the next one is an hour later
    cursor.execute("ALTER MATERIALIZED VIEW hourly DROP SCHEDULE")
    clock.advance(7200)
    assert _mine(scheduler.tick(), cursor.database) == []


def test_a_trigger_that_waited_for_a_statements_refresh_does_nothing(
        cursor: Any, scheduler: MaterializedViewScheduler) -> None:
    """dbt's `--full-refresh` replaces a TRIGGER ON UPDATE view right after its input changed: the scheduler's pass,
    due on the change, waits for the statement's refresh lock, and must then find the view caught up instead of
    recording a no-op pass over the statement's refresh."""
    cursor.execute("CREATE MATERIALIZED VIEW caught TRIGGER ON UPDATE AS SELECT id, upper(kind) AS kind FROM events")
    cursor.execute("INSERT INTO events VALUES (3, 'a')")
    store = scheduler.store
    entry = store.require_table(cursor.database, "caught")
    statement = as_owner(StatementContext(spark=scheduler.spark, store=store, warehouse=scheduler.warehouse,
                                          user="", sql="", job_group="", policy=scheduler.policy), entry,
                         detached=True)
    with ThreadPoolExecutor(1) as pool:
        with mv_refresh.refresh_lock(cursor.database, "caught"):
            ticked = pool.submit(scheduler.tick)
            time.sleep(1.0)   # the pass has seen the new version of events and waits for the lock (late: sees none)
            outcome = mv_refresh.refresh_unlocked(statement, entry, full=True)
        refreshed = ticked.result(timeout=120)
    assert outcome.kind == mv_refresh.FULL
    assert _mine(refreshed, cursor.database) == []
    assert _info(cursor, "caught")["Last Refresh Type"] == "FULL"
    assert sorted_rows(cursor, "SELECT * FROM caught") == [(1, "A"), (2, "B"), (3, "A")]
    cursor.execute("SELECT count(*) FROM event_log(TABLE(caught)) "
                   "WHERE get_json_object(details, '$.create_update.cause') = 'INPUT_CHANGED'")
    assert cursor.fetchall() == [(0,)]
