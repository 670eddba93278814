"""Exactly once across crashes: the gateway runs as its own process and is killed with SIGKILL (gateway and Spark's
JVM together, as a machine loses power) at random moments while files keep landing (and the same rows reach a
Kafka topic, one committed transaction per file), then restarted on the same warehouse, several times. At the end
each Delta table must equal the result over all input exactly (no row lost, none duplicated), and a reader polling
the tables all along must only ever have seen the result over some prefix of the input.

An AUTO CDC table (SCD type 1) takes part: change events of a few keys, their sequences shuffled across the files and
some events landed twice (also in another file), upserts, deletes and NULLs; its reference, per key the event with
the highest sequence and the key present when that event is no delete, is computed here in Python. An SCD type 2
table reads the same files (TRACK HISTORY ON name: a change of name opens a version, one of amount updates the open
one in place, a late event splits the version around it, a delete closes one); at the end its `__START_AT` /
`__END_AT` history must equal the randomized reference test's batch SQL reference over all the events
(tests/cdc_reference.py `scd2_reference`, window functions over the events, not the sink's code).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from cdc_reference import scd2_reference
from delta_log import delta_log_operations
from deltalake import DeltaTable
from gateway_process import GatewayProcess, restart_conf
from kafka_broker import MockKafka
from keyed_files import keyed_rows, per_key
from pyhive import hive
from pyhive_helpers import execute_on

FILES = 36
ROWS_PER_FILE = 50
KEYS = ("a", "b", "c", "d", "e")
KILLS = 3
# `scheduled` runs available-now passes (its schedule is written on its row while the gateway is down, and each boot
# finds a missed pass); `refreshed` gets REFRESH STREAMING TABLE statements all along, kills or not.
APPENDED = ("appended", "scheduled")
AGGREGATED = ("per_key", "refreshed")
# fed by read_kafka (one partition, capped batches that end anywhere, also inside a file's rows): a snapshot must be
# the result over a prefix of the topic's records
KAFKA_APPENDED, KAFKA_AGGREGATED = ("kafka_appended",), ("kafka_per_key",)
CDC_KEYS, CDC_EVENTS = 12, 300
CDC_SCHEMA = "id INT, op STRING, seq BIGINT, name STRING, amount INT"


def _file_rows(index: int) -> list[dict[str, Any]]:
    return keyed_rows(index, ROWS_PER_FILE, KEYS)


def _aggregate(files: int) -> dict[str, tuple[int, int]]:
    """The update-mode table's expected content after the first `files` files: k -> (count, sum of id)."""
    return per_key(row for index in range(files) for row in _file_rows(index))


def _cdc_files(seed: int) -> list[list[dict[str, Any]]]:
    """FILES files of change events: each sequence value once (so the reference needs no tie rule), the events
    shuffled across the files (late events), about one in ten landed twice, the copy in a random file."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    for seq in rng.sample(range(10 * CDC_EVENTS), CDC_EVENTS):
        key = rng.randrange(CDC_KEYS)
        if rng.random() < 0.2:
            events.append({"id": key, "op": "D", "seq": seq, "name": None, "amount": None})
        else:
            events.append({"id": key, "op": "U", "seq": seq, "name": rng.choice(["a", "b", None]),
                           "amount": rng.randrange(100)})
    events += [dict(event) for event in rng.sample(events, CDC_EVENTS // 10)]
    rng.shuffle(events)
    return [events[index::FILES] for index in range(FILES)]


def _cdc_result(files: list[list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    """The SCD type 1 table over `files`: per id the event with the highest seq, when it is no delete."""
    latest: dict[int, dict[str, Any]] = {}
    for event in (event for events in files for event in events):
        if event["id"] not in latest or event["seq"] > latest[event["id"]]["seq"]:
            latest[event["id"]] = event
    return sorted((e["id"], e["seq"], e["name"], e["amount"]) for e in latest.values() if e["op"] != "D")


def _cdc_rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["seq"], r["name"], r["amount"]) for r in rows)


def _scd2_rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The SCD type 2 table's versions, ordered as the reference's rows are (`sorted_rows`)."""
    return sorted(((r["id"], r["seq"], r["name"], r["amount"], r["__START_AT"], r["__END_AT"]) for r in rows),
                  key=repr)


def _scd2_expected(port: int, folder: Path) -> list[tuple[Any, ...]]:
    """The reference history over every change event landed in `folder`, computed by the gateway at `port`."""
    connection = hive.connect("127.0.0.1", port, username="tester")
    try:
        return scd2_reference(connection.cursor(), folder)
    finally:
        connection.close()


class Reader(threading.Thread):
    """Polls both tables through the gateway and checks every snapshot against the results over input prefixes."""

    def __init__(self, gateway: GatewayProcess, cdc_files: list[list[dict[str, Any]]]) -> None:
        super().__init__(daemon=True)
        self.gateway = gateway
        self.stop = threading.Event()
        self.snapshots = 0
        self.errors = 0
        self.violations: list[str] = []
        self.prefixes = [_aggregate(n) for n in range(FILES + 1)]
        self.records = [row for index in range(FILES) for row in _file_rows(index)]
        self.record_prefixes = [per_key(self.records[:n]) for n in range(len(self.records) + 1)]
        self.cdc_prefixes = [_cdc_result(cdc_files[:n]) for n in range(FILES + 1)]

    def _check(self, cursor: Any) -> None:
        for table in APPENDED:
            cursor.execute(f"SELECT id FROM crash.{table}")
            ids = [row[0] for row in cursor.fetchall()]
            files = Counter(i // 1000 for i in ids)
            whole = len(ids) == len(set(ids)) and all(n == ROWS_PER_FILE for n in files.values())
            if not whole or sorted(files) != list(range(len(files))):
                self.violations.append(f"{table}: {len(ids)} rows from files {sorted(files)}: not a prefix")
        for table in AGGREGATED:
            cursor.execute(f"SELECT k, n, total FROM crash.{table}")
            seen = {k: (n, total) for k, n, total in cursor.fetchall()}
            if seen not in self.prefixes:
                self.violations.append(f"{table}: {seen} is no prefix's result")
        for table in KAFKA_APPENDED:
            cursor.execute(f"SELECT id FROM crash.{table}")
            ids = sorted(row[0] for row in cursor.fetchall())
            if ids != [row["id"] for row in self.records[:len(ids)]]:
                self.violations.append(f"{table}: {len(ids)} rows that are not the topic's first records")
        for table in KAFKA_AGGREGATED:
            cursor.execute(f"SELECT k, n, total FROM crash.{table}")
            seen = {k: (n, total) for k, n, total in cursor.fetchall()}
            if seen not in self.record_prefixes:
                self.violations.append(f"{table}: {seen} is no prefix's result over the topic")
        cursor.execute("SELECT id, seq, name, amount FROM crash.cdc")
        rows = sorted(cursor.fetchall())
        if rows not in self.cdc_prefixes:
            self.violations.append(f"cdc: {rows} is no prefix's result over the change events")
        self.snapshots += 1

    def run(self) -> None:
        from pyhive import hive

        while not self.stop.is_set():
            try:
                connection = hive.connect("127.0.0.1", self.gateway.port, username="tester")
                try:
                    cursor = connection.cursor()
                    while not self.stop.is_set():
                        self._check(cursor)
                        time.sleep(0.1)
                finally:
                    connection.close()
            except Exception:  # noqa: BLE001 - the gateway is being killed under us: reconnect
                self.errors += 1
                time.sleep(0.3)




def _land(folder: Path, index: int, rows: list[dict[str, Any]] | None = None) -> None:
    name = f"part-{index:04d}.json"
    hidden = folder / f".{name}"
    rows = _file_rows(index) if rows is None else rows
    hidden.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    os.rename(hidden, folder / name)


def _pass_missed(warehouse: Path) -> None:
    """While the gateway is down: crash.scheduled has a schedule (as ALTER ... ADD SCHEDULE writes it) and its next
    pass is overdue, so the next boot runs it."""
    import datetime as dt

    from sluicegate.catalog.store import CatalogStore
    from sluicegate.dialect.schedule import Schedule

    store = CatalogStore.for_warehouse(warehouse)
    try:
        store.update_table("crash", "scheduled", schedule=Schedule("every", every=1, unit="HOUR").to_json())
        store.update_stream("crash", "scheduled", next_run_at=dt.datetime.utcnow() - dt.timedelta(minutes=1))
    finally:
        store.close()


def _scheduled_passes(warehouse: Path) -> int:
    from sluicegate.catalog.store import CatalogStore

    store = CatalogStore.for_warehouse(warehouse)
    try:
        entry = store.get_stream("crash", "scheduled")
        assert entry.status == "SCHEDULED" and entry.last_refresh_status == "COMPLETED", entry
        return sum(kind == "REFRESH_COMPLETED" for _, kind, _ in store.events("crash", "scheduled", 500))
    finally:
        store.close()


@pytest.mark.timeout(900)
def test_sigkill_at_random_moments_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    rng = random.Random(int(os.environ.get("SLUICEGATE_CRASH_SEED", "0")) or None)
    warehouse, source, cdc_source = tmp_path / "warehouse", tmp_path / "input", tmp_path / "cdc_input"
    source.mkdir()
    cdc_source.mkdir()
    cdc_files = _cdc_files(rng.randrange(1 << 30))
    gateway = GatewayProcess(warehouse, restart_conf(tmp_path), tmp_path / "gateway.log")
    gateway.start()
    kafka = MockKafka()                      # in this process: it outlives every kill of the gateway
    topic = f"read_kafka(bootstrapServers => '{kafka.bootstrap}', subscribe => 'rows', startingOffsets => 'earliest'"
    json_row = "from_json(CAST(value AS STRING), 'id INT, k STRING')"
    schema = "schema => 'id INT, k STRING'"
    execute_on(gateway.port, "CREATE DATABASE crash",
             f"CREATE STREAMING TABLE crash.appended AS SELECT id, k FROM STREAM "
             f"read_files('{source}', format => 'json', {schema})",
             f"CREATE STREAMING TABLE crash.per_key AS SELECT k, count(*) AS n, sum(id) AS total FROM STREAM "
             f"read_files('{source}', format => 'json', {schema}) GROUP BY k",
             f"CREATE STREAMING TABLE crash.scheduled AS SELECT id, k FROM STREAM "
             f"read_files('{source}', format => 'json', {schema})",
             f"CREATE STREAMING TABLE crash.refreshed AS SELECT k, count(*) AS n, sum(id) AS total FROM STREAM "
             f"read_files('{source}', format => 'json', {schema}) GROUP BY k",
             f"CREATE STREAMING TABLE crash.kafka_appended AS SELECT r.id, r.k FROM (SELECT {json_row} AS r FROM "
             f"STREAM {topic}, maxOffsetsPerTrigger => 120))",
             f"CREATE STREAMING TABLE crash.kafka_per_key AS SELECT r.k, count(*) AS n, sum(r.id) AS total FROM "
             f"(SELECT {json_row} AS r FROM STREAM {topic})) GROUP BY r.k",
             f"CREATE STREAMING TABLE crash.cdc FLOW AUTO CDC FROM STREAM read_files('{cdc_source}', format => "
             f"'json', schema => '{CDC_SCHEMA}') KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq "
             "COLUMNS * EXCEPT (op, _rescued_data) STORED AS SCD TYPE 1",
             f"CREATE STREAMING TABLE crash.scd2 FLOW AUTO CDC FROM STREAM read_files('{cdc_source}', format => "
             f"'json', schema => '{CDC_SCHEMA}') KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq "
             "COLUMNS * EXCEPT (op, _rescued_data) STORED AS SCD TYPE 2 TRACK HISTORY ON name")
    landed = 0
    refreshes: list[str] = []   # each REFRESH's outcome
    done = threading.Event()

    def refresh() -> None:
        while not done.is_set():
            try:
                execute_on(gateway.port, "REFRESH STREAMING TABLE crash.refreshed")
                refreshes.append("ok")
            except Exception as exc:  # noqa: BLE001 - killed under the statement: the next one tries again
                refreshes.append(str(exc)[:300])
                time.sleep(0.3)

    def feed() -> None:
        nonlocal landed
        for index in range(FILES):
            _land(source, index)
            _land(cdc_source, index, cdc_files[index])
            kafka.produce_transaction("rows", [(None, json.dumps(row).encode(), 0) for row in _file_rows(index)],
                                      transactional_id="crash")
            landed = index + 1
            time.sleep(rng.uniform(0.6, 2.0))  # spread over the kills: files land while it runs and while it is down

    feeder = threading.Thread(target=feed, daemon=True)
    reader = Reader(gateway, cdc_files)
    refresher = threading.Thread(target=refresh, daemon=True)
    feeder.start()
    reader.start()
    refresher.start()
    try:
        for _ in range(KILLS):
            time.sleep(rng.uniform(1.5, 6.0))  # after boot: mid-batch, between batches, mid-commit
            gateway.kill()
            _pass_missed(warehouse)
            gateway.start()
        feeder.join(timeout=120)
        assert landed == FILES
        execute_on(gateway.port, "REFRESH STREAMING TABLE crash.scheduled", "REFRESH STREAMING TABLE crash.refreshed")
        expected_ids = sorted(index * 1000 + row for index in range(FILES) for row in range(ROWS_PER_FILE))
        appended = str(warehouse / "crash.db" / "appended")
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:  # poll the Delta table itself until every file is in
            if len(DeltaTable(appended).to_pyarrow_table(columns=["id"])) >= len(expected_ids):
                break
            time.sleep(0.3)
        per_key = str(warehouse / "crash.db" / "per_key")
        while time.monotonic() < deadline:
            rows = DeltaTable(per_key).to_pyarrow_table().to_pylist()
            if {r["k"]: (r["n"], r["total"]) for r in rows} == _aggregate(FILES):
                break
            time.sleep(0.3)
        for table in KAFKA_APPENDED + KAFKA_AGGREGATED:   # the topic's last records, read in
            location = str(warehouse / "crash.db" / table)
            while time.monotonic() < deadline:
                rows = DeltaTable(location).to_pyarrow_table().to_pylist()
                if len(rows) >= len(expected_ids) or (table in KAFKA_AGGREGATED and {
                        r["k"]: (r["n"], r["total"]) for r in rows} == _aggregate(FILES)):
                    break
                time.sleep(0.3)
        cdc = str(warehouse / "crash.db" / "cdc")
        while time.monotonic() < deadline:
            if _cdc_rows(DeltaTable(cdc).to_pyarrow_table().to_pylist()) == _cdc_result(cdc_files):
                break
            time.sleep(0.3)
        scd2, scd2_expected = str(warehouse / "crash.db" / "scd2"), _scd2_expected(gateway.port, cdc_source)
        while time.monotonic() < deadline:
            if _scd2_rows(DeltaTable(scd2).to_pyarrow_table().to_pylist()) == scd2_expected:
                break
            time.sleep(0.3)
        passes = _scheduled_passes(warehouse)
        done.set()
        refresher.join(timeout=300)
        snapshots = reader.snapshots
        while reader.snapshots < snapshots + 5 and time.monotonic() < deadline:
            time.sleep(0.2)  # a few more triggers, read through the gateway: anything written twice would show now
    finally:
        done.set()
        reader.stop.set()
        reader.join(timeout=30)
        gateway.stop()
        kafka.close()
    for table in APPENDED:
        location = str(warehouse / "crash.db" / table)
        ids = sorted(DeltaTable(location).to_pyarrow_table(columns=["id"]).column("id").to_pylist())
        assert len(ids) == len(expected_ids), f"{table}: {len(ids)} rows for {len(expected_ids)} input rows"
        assert ids == expected_ids, table
    for table in KAFKA_APPENDED:
        ids = sorted(DeltaTable(str(warehouse / "crash.db" / table)).to_pyarrow_table(columns=["id"])
                     .column("id").to_pylist())
        assert ids == expected_ids, f"{table}: {len(ids)} rows for {len(expected_ids)} records"
    for table in AGGREGATED + KAFKA_AGGREGATED:
        rows = DeltaTable(str(warehouse / "crash.db" / table)).to_pyarrow_table().to_pylist()
        assert {r["k"]: (r["n"], r["total"]) for r in rows} == _aggregate(FILES), table
        assert len(rows) == len(KEYS)
    cdc_rows = _cdc_rows(DeltaTable(str(warehouse / "crash.db" / "cdc")).to_pyarrow_table().to_pylist())
    assert cdc_rows == _cdc_result(cdc_files), "cdc: not the result over all change events"
    scd2_rows = _scd2_rows(DeltaTable(str(warehouse / "crash.db" / "scd2")).to_pyarrow_table().to_pylist())
    assert len({row[0] for row in scd2_rows}) > 1 and len(scd2_rows) > CDC_KEYS, scd2_rows   # histories, not rows
    assert scd2_rows == scd2_expected, "scd2: not the history over all change events"
    # the compactor raced the streams and the kills (restart_conf: it merges every 2 small files at once)
    merges = {table: delta_log_operations(warehouse / "crash.db" / table).count("OPTIMIZE")
              for table in APPENDED + AGGREGATED + KAFKA_APPENDED + KAFKA_AGGREGATED}
    assert sum(merges.values()) >= 3, merges
    # a pass at each boot (a kill may end one midway: its batches are redone by the next) and the final REFRESH
    assert passes >= 2, f"the scheduled table completed {passes} passes"
    assert "ok" in refreshes, f"no REFRESH of crash.refreshed succeeded: {refreshes[-3:]}"
    assert reader.snapshots >= 5, f"the reader checked only {reader.snapshots} snapshots ({reader.errors} errors)"
    assert reader.violations == [], reader.violations[:3]
    from sluicegate.catalog.store import CatalogStore

    store = CatalogStore.for_warehouse(warehouse)
    try:
        for table in ("appended", "per_key", "cdc", "scd2"):
            starts = [kind for _, kind, _ in store.events("crash", table, 100) if kind == "STARTED"]
            assert len(starts) == KILLS + 1, f"{table} started {len(starts)} times"  # resumed after every crash
        for table in KAFKA_APPENDED + KAFKA_AGGREGATED:   # also retried when a Python worker is slow to connect
            starts = [kind for _, kind, _ in store.events("crash", table, 100) if kind == "STARTED"]
            assert len(starts) >= KILLS + 1, f"{table} started {len(starts)} times"
    finally:
        store.close()
    print(f"reader checked {reader.snapshots} snapshots ({reader.errors} reconnects); gateway log: {gateway.log}")
