"""Nothing lost to a disk the driver cannot see: a worker with its own disk at the warehouse's path.

The worker runs in a private mount namespace where the warehouse folder shows another folder's files, exactly as a
second machine without a shared mount sees its own disk there. The gateway must refuse to start (the storage probe),
and with the probe turned off every write must still refuse to commit rows whose files the driver cannot see.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gateway_process import GatewayProcess
from pyhive import exc as hive_exc
from pyhive import hive
from spark_cluster import StandaloneCluster, mount_namespaces_work, private_mount, standalone_cluster
from test_cluster_gateway import cluster_conf

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StandaloneCluster, Path]]:
    """A one-worker cluster whose worker sees `own-disk` at the warehouse's path; yields it and the warehouse."""
    folder = tmp_path_factory.mktemp("split")
    if not mount_namespaces_work(folder):
        pytest.skip("this machine does not allow bind mounts in a private mount namespace (unshare --mount)")
    warehouse, own_disk = folder / "warehouse", folder / "own-disk"
    warehouse.mkdir()
    own_disk.mkdir()
    with standalone_cluster(folder / "cluster", workers=1, worker_prefix=private_mount(own_disk, warehouse)) as c:
        yield c, warehouse


def test_the_gateway_refuses_a_warehouse_its_executors_do_not_see(split: tuple[StandaloneCluster, Path],
                                                                  tmp_path: Path) -> None:
    cluster, warehouse = split
    log = tmp_path / "gateway.log"
    gateway = GatewayProcess(warehouse, cluster_conf(tmp_path / "sluicegate.toml", cluster.master, tmp_path), log)
    try:
        with pytest.raises(AssertionError, match="exited before it was ready"):
            gateway.start()
        assert gateway.process is not None and gateway.process.wait(timeout=60) == 2
    finally:
        gateway.stop()
    text = log.read_text(encoding="utf-8")
    assert "[CLUSTER_STORAGE_NOT_SHARED]" in text, text[-3000:]
    assert f"do not see the same files at {warehouse}:" in text
    assert "mount the folder at the same path" in text
    assert list(warehouse.glob(".sg-probe-*")) == []  # the driver's side of the probe is cleaned up


def test_without_the_probe_no_write_commits_rows_the_driver_cannot_see(split: tuple[StandaloneCluster, Path],
                                                                        tmp_path: Path) -> None:
    cluster, warehouse = split
    conf = cluster_conf(tmp_path / "sluicegate.toml", cluster.master, tmp_path, verify_shared_storage=False)
    gateway = GatewayProcess(warehouse, conf, tmp_path / "gateway.log")
    gateway.start()
    try:
        cursor = hive.connect("127.0.0.1", gateway.port, username="tester").cursor()
        with pytest.raises(hive_exc.OperationalError, match="DELTA_FILES_NOT_VISIBLE") as failed:
            cursor.execute("CREATE TABLE lost AS SELECT id FROM range(1000)")
        assert "produced 1000 rows but the driver sees 0 rows" in str(failed.value)
        cursor.execute("SHOW TABLES")
        assert "lost" not in [row[1] for row in cursor.fetchall()]
        cursor.execute("CREATE TABLE kept (id BIGINT) USING DELTA")  # the driver alone writes its log
        with pytest.raises(hive_exc.OperationalError, match="DELTA_FILES_NOT_VISIBLE"):
            cursor.execute("INSERT INTO kept SELECT id FROM range(10)")
        cursor.execute("DESCRIBE HISTORY kept")
        assert len(cursor.fetchall()) == 1  # the create only: the insert committed nothing
        cursor.execute("SELECT count(*) FROM kept")
        assert cursor.fetchall() == [(0,)]
    finally:
        gateway.stop()
