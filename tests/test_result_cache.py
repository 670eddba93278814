"""The exact result cache through PyHive on a real gateway: a query run again on the same table versions is answered
without a Spark job (its job group runs none, the JVM makes no plan, the history says `from_result_cache`), with the
same rows; a commit to an input is seen at once; the policy still decides every statement (a user without SELECT is
refused though someone's answer is kept, a revoked grant refuses a kept answer); users never share an answer; what
reads the clock or chance, temporary views and a changed setting are never served from the cache; the setting turns
it off and the memory bound evicts."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from pyhive import hive
from pyhive_helpers import error_status
from spark_work import work_during

from sluicegate.gateway.app import RunningGateway

SUFFIX = uuid.uuid4().hex[:6]
DB = f"rc_{SUFFIX}"
ALICE, BOB, CAROL = f"rc_alice_{SUFFIX}", f"rc_bob_{SUFFIX}", f"rc_carol_{SUFFIX}"
COUNT = f"SELECT count(*) AS n, max(id) AS top, sum(id) AS total FROM {DB}.t"
VIEW = f"SELECT id, v FROM {DB}.small ORDER BY id"


@pytest.fixture(scope="module")
def cached(start_gateway: Callable[..., RunningGateway]) -> RunningGateway:
    """A gateway of its own (a fresh cache) with the default settings: the cache on. alice owns the database, its
    table `t` (ids 0..999) and the view `small` (ids below 10); carol may read `t`, bob only `small`."""
    gateway = start_gateway()
    cursor = hive.connect(gateway.host, gateway.port, username=ALICE).cursor()
    for sql in (f"CREATE DATABASE {DB}",
                f"CREATE TABLE {DB}.t (id BIGINT, v STRING) USING delta",
                f"INSERT INTO {DB}.t SELECT id, CAST(id AS STRING) FROM range(1000)",
                f"CREATE VIEW {DB}.small AS SELECT id, v FROM {DB}.t WHERE id < 10",
                f"GRANT SELECT ON TABLE {DB}.t TO `{CAROL}`",
                f"GRANT SELECT ON TABLE {DB}.small TO `{BOB}`"):
        cursor.execute(sql)
    cursor.close()
    return gateway


def execute(cursor: Any, sql: str) -> tuple[list[tuple[Any, ...]], str]:
    """`sql` on `cursor`, its rows fetched; returns the rows and the statement's id (its Spark job group)."""
    cursor.execute(sql)
    rows = cursor.fetchall() if cursor.description else []
    return rows, cursor._operationHandle.operationId.guid.hex()


def run(gateway: RunningGateway, user: str, sql: str) -> tuple[list[tuple[Any, ...]], str]:
    """`sql` as `user` on a connection of its own (a pool's next connection), the statement closed after."""
    connection = hive.connect(gateway.host, gateway.port, username=user)
    try:
        cursor = connection.cursor()
        found = execute(cursor, sql)
        cursor.close()
    finally:
        connection.close()
    return found


def jobs(spark: Any, statement_id: str) -> int:
    """The Spark jobs the statement's job group ran."""
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(statement_id))


def from_cache(gateway: RunningGateway, user: str, *statement_ids: str) -> list[bool]:
    """What the query history says of each statement (read as `user`, who ran them)."""
    assert gateway.history is not None and gateway.history.flush(30)
    ids = ", ".join(f"'{each}'" for each in statement_ids)
    rows, _ = run(gateway, user, "SELECT statement_id, from_result_cache FROM system.query.history "
                                 f"WHERE statement_id IN ({ids})")
    found = dict(rows)
    return [found[each] for each in statement_ids]


def test_the_second_run_is_answered_without_spark(cached: RunningGateway, spark: Any) -> None:
    first, first_id = run(cached, ALICE, COUNT)
    assert first == [(1000, 999, 499500)]
    connection = hive.connect(cached.host, cached.port, username=ALICE)   # another session (opening one is work)
    cursor = connection.cursor()
    windows, ids = [], []
    for _ in range(5):   # a window another module's background work disturbed is measured again
        spark_jobs, plans, (second, second_id) = work_during(spark, lambda: execute(cursor, COUNT))
        windows.append((spark_jobs, plans))
        ids.append(second_id)
        if windows[-1] == (0, 0):
            break
    connection.close()
    assert second == first
    assert jobs(spark, first_id) >= 1 and [jobs(spark, each) for each in ids] == [0] * len(ids)
    assert windows[-1] == (0, 0), f"Spark jobs and plans while the kept answer was served, per window: {windows}"
    assert from_cache(cached, ALICE, first_id, *ids) == [False] + [True] * len(ids)


def test_a_commit_to_the_input_is_seen_at_once(cached: RunningGateway, spark: Any) -> None:
    run(cached, ALICE, COUNT)
    assert run(cached, ALICE, COUNT)[0] == [(1000, 999, 499500)]
    run(cached, ALICE, f"INSERT INTO {DB}.t VALUES (5000, 'new')")
    after, after_id = run(cached, ALICE, COUNT)
    assert after == [(1001, 5000, 504500)] and jobs(spark, after_id) >= 1
    again, again_id = run(cached, ALICE, COUNT)
    assert again == after and jobs(spark, again_id) == 0
    assert from_cache(cached, ALICE, after_id, again_id) == [False, True]


def test_a_user_without_select_is_refused_though_an_answer_is_kept(cached: RunningGateway) -> None:
    run(cached, ALICE, COUNT)
    _, kept_id = run(cached, ALICE, COUNT)
    assert from_cache(cached, ALICE, kept_id) == [True]
    hits = cached.service.result_cache.counts.hits if cached.service.result_cache else -1
    cursor = hive.connect(cached.host, cached.port, username=BOB).cursor()
    status = error_status(cursor, COUNT)
    assert status.sqlState == "42501" and "does not have SELECT" in status.errorMessage
    assert cached.service.result_cache is not None and cached.service.result_cache.counts.hits == hits


def test_users_never_share_an_answer_and_a_revoked_grant_refuses_a_kept_one(cached: RunningGateway,
                                                                           spark: Any) -> None:
    expected = [(i, str(i)) for i in range(10)]
    assert run(cached, ALICE, VIEW)[0] == expected
    alice_again, alice_id = run(cached, ALICE, VIEW)
    bob_first, bob_first_id = run(cached, BOB, VIEW)       # rights through the view's grant only: his own answer
    bob_again, bob_again_id = run(cached, BOB, VIEW)
    assert alice_again == bob_first == bob_again == expected
    assert jobs(spark, alice_id) == 0 and jobs(spark, bob_first_id) >= 1 and jobs(spark, bob_again_id) == 0
    carol_first, carol_id = run(cached, CAROL, COUNT)      # carol may read `t`: alice's kept answer is not hers
    assert jobs(spark, carol_id) >= 1 and carol_first == run(cached, ALICE, COUNT)[0]
    cursor = hive.connect(cached.host, cached.port, username=CAROL).cursor()
    assert error_status(cursor, VIEW).sqlState == "42501"  # carol has no SELECT on the view
    run(cached, ALICE, f"REVOKE SELECT ON TABLE {DB}.small FROM `{BOB}`")
    cursor = hive.connect(cached.host, cached.port, username=BOB).cursor()
    assert error_status(cursor, VIEW).sqlState == "42501"
    assert from_cache(cached, BOB, bob_first_id, bob_again_id) == [False, True]


@pytest.mark.parametrize("sql", [
    f"SELECT id, rand() AS r FROM {DB}.t WHERE id < 3 ORDER BY id",
    f"SELECT id, current_timestamp() AS now FROM {DB}.t WHERE id < 3 ORDER BY id",
])
def test_what_reads_chance_or_the_clock_is_never_kept(cached: RunningGateway, spark: Any, sql: str) -> None:
    first, first_id = run(cached, ALICE, sql)
    second, second_id = run(cached, ALICE, sql)
    assert jobs(spark, first_id) >= 1 and jobs(spark, second_id) >= 1
    assert [row[0] for row in first] == [row[0] for row in second] == [0, 1, 2]
    assert first != second   # another draw, another instant
    assert from_cache(cached, ALICE, first_id, second_id) == [False, False]


def test_temporary_views_and_changed_settings_are_not_served_from_the_cache(cached: RunningGateway,
                                                                            spark: Any) -> None:
    connection = hive.connect(cached.host, cached.port, username=ALICE)
    cursor = connection.cursor()
    cursor.execute(f"CREATE TEMPORARY VIEW rc_tv AS SELECT id FROM {DB}.t WHERE id < 5")
    ids = []
    for _ in range(2):
        rows, statement_id = execute(cursor, "SELECT count(*) FROM rc_tv")
        assert rows == [(5,)]
        ids.append(statement_id)
    run(cached, ALICE, COUNT)
    ids.append(execute(cursor, COUNT)[1])   # the same settings as that session's: the kept answer
    cursor.execute("SET spark.sql.session.timeZone = Asia/Tokyo")
    ids += [execute(cursor, COUNT)[1] for _ in range(2)]
    connection.close()
    assert [jobs(spark, each) >= 1 for each in ids] == [True, True, False, True, False]


def test_the_setting_turns_it_off(cached: RunningGateway, start_gateway: Callable[..., RunningGateway],
                                  spark: Any) -> None:
    off = start_gateway({"result_cache": {"enabled": False}})
    assert off.service.result_cache is None
    ids = [run(off, ALICE, COUNT)[1] for _ in range(2)]
    assert [jobs(spark, each) >= 1 for each in ids] == [True, True]
    assert from_cache(off, ALICE, *ids) == [False, False]


def test_the_memory_bound_evicts_and_a_large_answer_is_not_kept(cached: RunningGateway,
                                                                start_gateway: Callable[..., RunningGateway],
                                                                spark: Any) -> None:
    """Two answers of 600 BIGINTs (about 4.8 kB each) do not fit in 8,000 bytes; 1,000 rows with their text do not
    fit in one entry."""
    small = start_gateway({"result_cache": {"max_bytes": 8000, "max_entry_bytes": 8000}})
    cache = small.service.result_cache
    assert cache is not None
    low, high = f"SELECT id FROM {DB}.t WHERE id < 600", f"SELECT id FROM {DB}.t WHERE id >= 400 AND id < 1000"
    run(small, ALICE, low)
    assert jobs(spark, run(small, ALICE, low)[1]) == 0
    run(small, ALICE, high)                                   # kept: the low answer goes
    assert cache.counts.evicted == 1 and len(cache) == 1 and cache.nbytes <= 8000
    assert jobs(spark, run(small, ALICE, high)[1]) == 0
    assert jobs(spark, run(small, ALICE, low)[1]) >= 1
    whole = f"SELECT id, v FROM {DB}.t WHERE id < 1000"
    rows, _ = run(small, ALICE, whole)
    assert len(rows) == 1000 and cache.counts.too_large >= 1
    assert jobs(spark, run(small, ALICE, whole)[1]) >= 1
