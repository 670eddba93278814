"""The gateway on a real Spark standalone cluster: a master and two one-core workers started from pyspark's jars on
loopback, the gateway a process of its own whose only change is `spark.master`, driven by PyHive.

One cluster and one gateway serve the module; its tests run in file order and the last one kills the gateway with
SIGKILL while the cluster stays up. Executors have no PYTHONPATH and import the project from the archive the gateway
ships (the probe reports where they imported it from).
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gateway_process import GatewayProcess
from pyhive import hive
from pyhive_helpers import poll_until
from spark_cluster import StandaloneCluster, standalone_cluster
from TCLIService import ttypes

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(600)]

KEYS = ("a", "b", "c")


SECRET = "cluster-test-" + uuid.uuid4().hex


def cluster_conf(path: Path, master: str, landing: Path, secret: str | None = None, **spark: str | bool) -> Path:
    extra = "".join(f"{key} = {json.dumps(value)}\n" for key, value in spark.items())
    secured = ('"spark.authenticate" = "true"\n"spark.network.crypto.enabled" = "true"\n'
               f'"spark.authenticate.secret" = "{secret}"\n') if secret else ""
    path.write_text(
        "[streams]\ntrigger_interval = 0.3\nretry_initial = 0.5\nstatic_check_interval = 1.0\n\n"
        f'[security]\nallowed_paths = ["{landing}"]\n\n'
        f'[spark]\nmaster = "{master}"\ndriver_memory = "1g"\n{extra}\n'
        '[spark.conf]\n"spark.executor.memory" = "512m"\n"spark.sql.session.timeZone" = "UTC"\n' + secured,
        encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    with standalone_cluster(tmp_path_factory.mktemp("cluster"), secret=SECRET) as running:
        yield running


@pytest.fixture(scope="module")
def landing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("landing")


@pytest.fixture(scope="module")
def gateway(cluster: StandaloneCluster, landing: Path, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[GatewayProcess]:
    folder = tmp_path_factory.mktemp("gateway")
    conf = cluster_conf(folder / "sluicegate.toml", cluster.master, landing, SECRET)
    process = GatewayProcess(folder / "warehouse", conf, folder / "gateway.log")
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture()
def cursor(gateway: GatewayProcess) -> Iterator[Any]:
    connection = hive.connect("127.0.0.1", gateway.port, username="tester")
    try:
        cur = connection.cursor()
        cur.execute("CREATE DATABASE IF NOT EXISTS cl")
        cur.execute("USE cl")
        yield cur
    finally:
        connection.close()


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return [tuple(row) for row in cursor.fetchall()]


def land(folder: Path, records: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    name = f"part-{uuid.uuid4().hex}.json"
    (folder / f".{name}").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    os.rename(folder / f".{name}", folder / name)


def file_rows(index: int) -> list[dict[str, Any]]:
    return [{"id": index * 100 + row, "k": KEYS[(index + row) % len(KEYS)]} for row in range(20)]


def per_key(files: range) -> list[tuple[str, int, int]]:
    totals: dict[str, tuple[int, int]] = {}
    for index in files:
        for row in file_rows(index):
            count, total = totals.get(row["k"], (0, 0))
            totals[row["k"]] = (count + 1, total + row["id"])
    return sorted((k, n, total) for k, (n, total) in totals.items())


def test_executors_run_the_shipped_code_and_see_the_warehouse(gateway: GatewayProcess,
                                                               cluster: StandaloneCluster) -> None:
    probe = [line for line in gateway.banner if line.startswith("sluicegate cluster:")]
    assert probe, gateway.banner
    assert "2 executors and the driver see the same" in probe[0]
    imported_from = probe[0].rsplit("import the project from ", 1)[1].strip()
    # the executor's copy of the archive in its work folder, not the project's folder or an install
    assert re.fullmatch(r"(.*/)?sluicegate-[0-9a-f]{16}\.zip", imported_from), probe[0]
    apps = cluster.applications()
    assert [(app["name"], app["cores"]) for app in apps] == [("sluicegate", 2)], apps


def test_users_cannot_read_the_clusters_secret(cursor: Any) -> None:
    """The driver and the daemons share spark.authenticate's secret (set in [spark.conf]); Spark redacts it."""
    assert rows(cursor, "SET spark.authenticate.secret") == [("spark.authenticate.secret", "*********(redacted)")]
    for statement in ("SET", "SET -v"):
        assert SECRET not in str(rows(cursor, statement))


def test_batch_sql_tables_dml_merge_and_time_travel(cursor: Any) -> None:
    assert rows(cursor, "SELECT count(*), sum(id) FROM range(0, 200000, 1, 8)") == [(200000, 19999900000)]
    cursor.execute("CREATE TABLE orders AS SELECT id, CAST(id % 3 AS INT) AS k FROM range(1000)")
    cursor.execute("INSERT INTO orders SELECT id, 7 FROM range(1000, 1500)")
    cursor.execute("MERGE INTO orders AS o USING (SELECT * FROM VALUES (1, 40), (5000, 50) AS c(id, k)) AS c "
                   "ON o.id = c.id WHEN MATCHED THEN UPDATE SET k = c.k "
                   "WHEN NOT MATCHED THEN INSERT (id, k) VALUES (c.id, c.k)")
    cursor.execute("DELETE FROM orders WHERE k = 7")
    assert rows(cursor, "SELECT count(*), sum(k) FROM orders") == [(1001, 999 + 40 - 1 + 50)]
    assert rows(cursor, "SELECT count(*) FROM orders VERSION AS OF 0") == [(1000,)]
    assert rows(cursor, "SELECT count(*) FROM orders VERSION AS OF 1") == [(1500,)]
    assert rows(cursor, "SELECT k, count(*) FROM orders WHERE id < 1000 GROUP BY k ORDER BY k") == [
        (0, 334), (1, 332), (2, 333), (40, 1)]


def test_cancel_frees_the_executors(cursor: Any, gateway: GatewayProcess) -> None:
    cursor.execute("SELECT count(*) FROM range(0, 1000000000000, 1, 4) WHERE id % 7 = 3", async_=True)
    poll_until(lambda: cursor.poll().operationState == ttypes.TOperationState.RUNNING_STATE, "the query to run", 60)
    cursor.cancel()
    state = poll_until(lambda: cursor.poll().operationState != ttypes.TOperationState.RUNNING_STATE and
                       cursor.poll().operationState, "the cancel", 60)
    assert state == ttypes.TOperationState.CANCELED_STATE
    # both executors' only core was running that query: a new query completes only if its tasks were interrupted
    other = hive.connect("127.0.0.1", gateway.port, username="tester").cursor()
    started = time.monotonic()
    assert rows(other, "SELECT count(*) FROM range(0, 100000, 1, 4)") == [(100000,)]
    assert time.monotonic() - started < 60


def test_streams_of_every_source_and_mode(cursor: Any, landing: Path) -> None:
    source = landing / "events"
    for index in range(3):
        land(source, file_rows(index))
    reader = f"STREAM read_files('{source}', format => 'json', schema => 'id INT, k STRING')"
    cursor.execute(f"CREATE STREAMING TABLE raw AS SELECT id, k FROM {reader}")
    cursor.execute(f"CREATE STREAMING TABLE per_key AS SELECT k, count(*) AS n, sum(id) AS total FROM {reader} "
                   "GROUP BY k")
    cursor.execute("CREATE STREAMING TABLE leaders TBLPROPERTIES ('sluicegate.output_mode' = 'complete') AS "
                   f"SELECT k, count(*) AS n FROM {reader} GROUP BY k ORDER BY n DESC")
    cursor.execute("CREATE STREAMING TABLE doubled AS SELECT id * 2 AS id2, k FROM STREAM(raw)")
    cursor.execute("CREATE STREAMING TABLE ticks AS SELECT value FROM STREAM rate(rows_per_second => 20)")
    expected_ids = sorted(r["id"] for index in range(3) for r in file_rows(index))
    poll_until(lambda: sorted(i for i, in rows(cursor, "SELECT id FROM raw")) == expected_ids, "raw", 180)
    poll_until(lambda: rows(cursor, "SELECT k, n, total FROM per_key ORDER BY k") == per_key(range(3)),
               "per_key (update mode)", 180)
    poll_until(lambda: rows(cursor, "SELECT sum(n) FROM leaders") == [(60,)], "leaders (complete mode)", 180)
    poll_until(lambda: sorted(i for i, in rows(cursor, "SELECT id2 FROM doubled")) == [2 * i for i in expected_ids],
               "doubled (STREAM of a table)", 180)
    poll_until(lambda: rows(cursor, "SELECT count(*) FROM ticks")[0][0] > 0, "ticks (rate source)", 180)
    values = [v for v, in rows(cursor, "SELECT value FROM ticks")]
    assert len(values) == len(set(values))


def test_sigkill_of_the_gateway_while_the_cluster_stays_up_loses_nothing(
        gateway: GatewayProcess, cluster: StandaloneCluster, landing: Path) -> None:
    source = landing / "events"
    land(source, file_rows(3))
    gateway.kill()
    poll_until(lambda: not cluster.applications(), "the master to drop the killed driver's application", 120)
    assert cluster.alive_workers() == 2
    for index in range(4, 7):
        land(source, file_rows(index))
    gateway.start()
    connection = hive.connect("127.0.0.1", gateway.port, username="tester")
    try:
        cur = connection.cursor()
        cur.execute("USE cl")
        expected_ids = sorted(r["id"] for index in range(7) for r in file_rows(index))
        poll_until(lambda: sorted(i for i, in rows(cur, "SELECT id FROM raw")) == expected_ids,
                   "raw to hold every file once", 240)
        poll_until(lambda: rows(cur, "SELECT k, n, total FROM per_key ORDER BY k") == per_key(range(7)),
                   "per_key to equal the result over every file", 240)
        poll_until(lambda: rows(cur, "SELECT sum(n) FROM leaders") == [(140,)], "leaders", 240)
        poll_until(lambda: sorted(i for i, in rows(cur, "SELECT id2 FROM doubled")) == [2 * i for i in expected_ids],
                   "doubled", 240)
        cur.execute("SELECT id, count(*) FROM raw GROUP BY id HAVING count(*) > 1")
        assert cur.fetchall() == []
    finally:
        connection.close()
    assert [(app["name"], app["cores"]) for app in cluster.applications()] == [("sluicegate", 2)]
