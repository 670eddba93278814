"""Cluster mode's pure logic, without a JVM: masters, the configuration rules, the code archive, the write check."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest

from sluicegate.engine.cluster.code_archive import build_code_archive
from sluicegate.engine.spark import python_for_workers, spark_conf, with_code_archive
from sluicegate.gateway.config import load_config
from sluicegate.gateway.errors import ConfigError
from sluicegate.storage.delta.errors import DeltaFilesNotVisibleError
from sluicegate.storage.delta.files import WrittenFile
from sluicegate.storage.delta.verify import require_all_rows_visible
from sluicegate.storage.masters import is_local, is_loopback_cluster, standalone_hosts

SECURE = {"spark.authenticate": "true", "spark.authenticate.secret": "s3cret"}


def test_masters() -> None:
    assert is_local("local") and is_local("local[4]") and is_local("local[*, 3]")
    assert not is_local("local-cluster[2,1,1024]") and not is_local("spark://h:7077") and not is_local("yarn")
    assert standalone_hosts("spark://a:7077,b:7078") == ["a", "b"]
    assert is_loopback_cluster("spark://127.0.0.1:7077") and is_loopback_cluster("spark://localhost:1")
    assert not is_loopback_cluster("spark://127.0.0.1:7077,10.0.0.2:7077")
    assert not is_loopback_cluster("yarn") and not is_loopback_cluster("k8s://https://10.0.0.1:6443")


def _spark(tmp_path: Path, **spark: object) -> object:
    return load_config(warehouse=tmp_path, overrides={"spark": spark}).spark


def test_a_loopback_cluster_keeps_the_loopback_driver(tmp_path: Path) -> None:
    settings = _spark(tmp_path, master="spark://127.0.0.1:7077")
    assert spark_conf(settings)["spark.driver.host"] == "127.0.0.1"  # type: ignore[arg-type]


def test_a_remote_cluster_needs_a_reachable_authenticated_driver(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="bind_loopback = true binds the driver to 127.0.0.1"):
        _spark(tmp_path, master="spark://10.0.0.5:7077")
    with pytest.raises(ConfigError, match="needs spark.driver_host"):
        _spark(tmp_path, master="yarn", bind_loopback=False)
    with pytest.raises(ConfigError, match="spark.authenticate"):
        _spark(tmp_path, master="spark://10.0.0.5:7077", bind_loopback=False, driver_host="10.0.0.9")
    with pytest.raises(ConfigError, match="spark.authenticate"):  # a standalone cluster needs the shared secret
        _spark(tmp_path, master="spark://10.0.0.5:7077", bind_loopback=False, driver_host="10.0.0.9",
               conf={"spark.authenticate": "true"})
    with pytest.raises(ConfigError, match="needs spark.bind_loopback = false"):
        _spark(tmp_path, driver_host="10.0.0.9")
    # YARN and Kubernetes make the secret themselves
    assert _spark(tmp_path, master="yarn", bind_loopback=False, driver_host="10.0.0.9",
                  conf={"spark.authenticate": "true"})
    settings = _spark(tmp_path, master="spark://10.0.0.5:7077", bind_loopback=False, driver_host="10.0.0.9",
                      conf=SECURE)
    conf = spark_conf(settings)  # type: ignore[arg-type]
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "10.0.0.9"
    assert _spark(tmp_path, master="spark://10.0.0.5:7077", bind_loopback=False, driver_host="10.0.0.9",
                  require_authentication=False)


def test_the_operators_python_for_workers_is_respected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert python_for_workers(_spark(tmp_path)) == sys.executable  # type: ignore[arg-type]
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py/bin/python3")
    assert python_for_workers(_spark(tmp_path)) == "/opt/py/bin/python3"  # type: ignore[arg-type]
    settings = _spark(tmp_path, conf={"spark.pyspark.python": "/srv/py/bin/python"})
    assert python_for_workers(settings) == "/srv/py/bin/python"  # type: ignore[arg-type]


def test_the_code_archive_is_named_by_its_contents(tmp_path: Path) -> None:
    first = build_code_archive(tmp_path / "code")
    assert build_code_archive(tmp_path / "code") == first  # unchanged code: the same archive, not rebuilt
    names = zipfile.ZipFile(first).namelist()
    assert "sluicegate/engine/streams/delta_source.py" in names and "sluicegate/catalog/names.py" in names
    assert "sluicegate/__init__.py" in names and "sluicegate/dialect/errors.py" in names
    assert not any(n.startswith("sluicegate/gateway/") or "__pycache__" in n for n in names)
    other = build_code_archive(tmp_path / "code", ("dialect",))
    assert other != first and not first.exists()  # other contents, another name; the old archive removed
    conf = with_code_archive({"spark.submit.pyFiles": "/opt/udfs.zip"}, other)
    assert conf["spark.submit.pyFiles"] == f"{other},/opt/udfs.zip"


def _file(rows: int) -> WrittenFile:
    return WrittenFile("part-0.parquet", 10, 0, {}, json.dumps({"numRecords": rows}))


def test_a_write_whose_rows_the_driver_cannot_see_is_refused() -> None:
    require_all_rows_visible("/w/t", 30, [_file(10), _file(20)])
    require_all_rows_visible("/w/t", 0, [])
    with pytest.raises(DeltaFilesNotVisibleError, match="produced 30 rows but the driver sees 0 rows in 0 files") as e:
        require_all_rows_visible("/w/t", 30, [])
    assert e.value.error_class == "DELTA_FILES_NOT_VISIBLE" and e.value.sqlstate == "58030"
    assert "shared" in (e.value.hint or "") or "mounts" in (e.value.hint or "")
    with pytest.raises(DeltaFilesNotVisibleError):
        require_all_rows_visible("/w/t", 30, [_file(10)])
