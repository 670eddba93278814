"""The exact result cache through PyHive on a real gateway: a query run again on the same table versions is answered
without a Spark job (its job group runs none, the JVM makes no plan, the history says `from_result_cache`), with the
same rows; a commit to an input is seen at once; what reads the clock or chance, temporary views and a changed setting
are never served from the cache; the setting turns it off and the memory bound evicts. That the policy still decides
every statement and users never share an answer: tests/security/test_result_cache_access.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pyhive import hive
from result_cache_helpers import Names, cached_gateway, execute, from_cache, jobs, run
from spark_work import work_during

from sluicegate.gateway.app import RunningGateway

NAMES = Names()
DB, (ALICE, _, _), COUNT = NAMES.db, NAMES.users, NAMES.count


@pytest.fixture(scope="module")
def cached(start_gateway: Callable[..., RunningGateway]) -> RunningGateway:
    return cached_gateway(start_gateway, NAMES)


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


def test_an_aggregate_over_decimals_and_dates_is_kept_on_the_same_cursor(cached: RunningGateway, spark: Any) -> None:
    """The shape of bench/result_cache_bench.py's TPC-H queries: money as DECIMAL(15,2), dates, date arithmetic,
    a CTAS-made table, both runs on one cursor."""
    connection = hive.connect(cached.host, cached.port, username=ALICE)
    cursor = connection.cursor()
    cursor.execute(f"CREATE TABLE {DB}.money USING delta AS SELECT id AS k, CAST(id % 7 AS DECIMAL(15, 2)) AS price, "
                   "date_add(DATE'1995-01-01', CAST(id % 300 AS INT)) AS shipped FROM range(1000)")
    sql = (f"SELECT k % 3 AS flag, sum(price * (1 - 0.05)) AS revenue, avg(price) AS mean, count(*) AS n "
           f"FROM {DB}.money WHERE shipped <= date_sub(DATE'1995-12-01', 90) GROUP BY k % 3 ORDER BY flag")
    first, first_id = execute(cursor, sql)
    second, second_id = execute(cursor, sql)
    connection.close()
    assert first == second and len(first) == 3
    assert jobs(spark, first_id) >= 1 and jobs(spark, second_id) == 0
    assert from_cache(cached, ALICE, first_id, second_id) == [False, True]
