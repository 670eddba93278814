"""Snapshot isolation and concurrent writers through the gateway, and a restart that keeps the warehouse."""

from __future__ import annotations

import threading
from typing import Any

from deltalake import DeltaTable
from pyhive import exc as hive_exc
from pyhive import hive

DB = "wh_conc"
ROWS = 1000
BATCH_SUM = ROWS * (ROWS - 1) // 2


def _setup(connect: Any, table: str) -> Any:
    cursor = connect().cursor()
    cursor.execute(f"CREATE DATABASE IF NOT EXISTS {DB}")
    cursor.execute(f"DROP TABLE IF EXISTS {DB}.{table}")
    cursor.execute(f"CREATE TABLE {DB}.{table} (x BIGINT) USING DELTA")
    return cursor


def test_reader_only_sees_whole_inserts(connect):
    writer = _setup(connect, "counted")
    reader = connect().cursor()
    seen: list[tuple[int, int]] = []
    failures: list[BaseException] = []
    done = threading.Event()

    def poll() -> None:
        try:
            while not done.is_set():
                reader.execute(f"SELECT count(*), coalesce(sum(x), 0) FROM {DB}.counted")
                seen.append(tuple(reader.fetchall()[0]))
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            failures.append(exc)

    thread = threading.Thread(target=poll)
    thread.start()
    try:
        for _ in range(20):
            writer.execute(f"INSERT INTO {DB}.counted SELECT id FROM range({ROWS})")
    finally:
        done.set()
        thread.join(timeout=120)
    assert not failures
    assert len(seen) >= 2
    for count, total in seen:
        assert count % ROWS == 0 and total == count // ROWS * BATCH_SUM, (count, total)
    writer.execute(f"SELECT count(*) FROM {DB}.counted")
    assert writer.fetchall() == [(20 * ROWS,)]


def test_concurrent_appends_all_land_once(connect, warehouse):
    _setup(connect, "appended")
    path = str(warehouse / f"{DB}.db" / "appended")
    errors: list[BaseException] = []

    def append(worker: int) -> None:
        cursor = connect().cursor()
        try:
            for i in range(4):
                cursor.execute(f"INSERT INTO {DB}.appended VALUES ({worker * 100 + i})")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=append, args=(w,)) for w in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors
    assert DeltaTable(path).version() == 12  # create + 12 commits, none lost
    values = sorted(DeltaTable(path).to_pyarrow_table().column("x").to_pylist())
    assert values == sorted(w * 100 + i for w in range(3) for i in range(4))


def test_concurrent_rewrites_succeed_in_order_or_conflict(connect, warehouse):
    cursor = _setup(connect, "rewritten")
    cursor.execute(f"INSERT INTO {DB}.rewritten SELECT id FROM range(10)")
    path = str(warehouse / f"{DB}.db" / "rewritten")
    outcomes: dict[int, str] = {}
    start = threading.Barrier(2)

    def delete(value: int) -> None:
        own = connect().cursor()
        start.wait()
        try:
            own.execute(f"DELETE FROM {DB}.rewritten WHERE x = {value}")
            outcomes[value] = "ok"
        except hive_exc.OperationalError as exc:
            outcomes[value] = exc.args[0].status.sqlState

    threads = [threading.Thread(target=delete, args=(v,)) for v in (3, 7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert set(outcomes.values()) <= {"ok", "40001"} and "ok" in outcomes.values()
    deleted = {v for v, outcome in outcomes.items() if outcome == "ok"}
    remaining = sorted(DeltaTable(path).to_pyarrow_table().column("x").to_pylist())
    assert remaining == [v for v in range(10) if v not in deleted]
    assert DeltaTable(path).version() == 1 + len(deleted)


def test_a_second_gateway_on_the_same_warehouse_sees_the_tables(connect, start_gateway):
    cursor = _setup(connect, "kept")
    cursor.execute(f"INSERT INTO {DB}.kept VALUES (42)")
    cursor.execute(f"CREATE OR REPLACE VIEW {DB}.kept_view AS SELECT x + 1 AS y FROM {DB}.kept")
    second = start_gateway()
    conn = hive.connect(second.host, second.port, username="tester", database=DB)
    try:
        other = conn.cursor()
        other.execute("SELECT y FROM kept_view")
        assert other.fetchall() == [(43,)]
        other.execute("SHOW TABLES LIKE 'kept*'")
        assert {row[1] for row in other.fetchall()} == {"kept", "kept_view"}
    finally:
        conn.close()
