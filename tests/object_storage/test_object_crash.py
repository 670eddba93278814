"""Exactly once with the warehouse on an object store: the gateway (its own process, with Spark's JVM) is killed with
SIGKILL at random moments while files land on the store's landing prefix, its local checkpoint cache is wiped (as a
replaced machine's disk would be), and it is restarted on the same warehouse. The streams resume from their
checkpoints' copies on the store (engine/streams/checkpoint_mirror.py), and at the end the tables on the store
equal the result over all input exactly: no row lost, none duplicated."""

from __future__ import annotations

import json
import os
import random
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from gateway_process import GatewayProcess
from keyed_files import keyed_rows, per_key
from object_store import S3Store
from pyhive_helpers import execute_on

MAX_FILES = 400       # files land every 1-3 s until the last restart (each restart takes a minute on a busy machine)
ROWS_PER_FILE = 40
KEYS = ("a", "b", "c", "d")
KILLS = 3


def _file_rows(index: int) -> list[dict[str, Any]]:
    return keyed_rows(index, ROWS_PER_FILE, KEYS)


def _aggregate(files: int) -> dict[str, tuple[int, int]]:
    return per_key(row for index in range(files) for row in _file_rows(index))




def _conf(path: Path, store: S3Store, state: Path) -> None:
    secret = path.with_name("s3-secret")
    secret.write_text(store.secret_key + "\n")
    secret.chmod(0o600)
    path.write_text(
        '[streams]\ntrigger_interval = 0.3\nretry_initial = 0.5\n\n[spark]\ndriver_memory = "1g"\n\n'
        f'[warehouse]\nlocal_state = "{state}"\n\n'
        f'[storage]\nendpoint = "{store.endpoint}"\naccess_key = "{store.access_key}"\n'
        f'secret_key_file = "{secret}"\nallow_http = true\n')


def _delta(store: S3Store, name: str) -> Any:
    from deltalake import DeltaTable

    return DeltaTable(f"s3://{store.bucket}/warehouse/crash.db/{name}", storage_options=store.storage_options())


def _table(store: S3Store, name: str) -> list[dict[str, Any]]:
    return _delta(store, name).to_pyarrow_table().to_pylist()


def _versions(store: S3Store) -> tuple[int, int]:
    return _delta(store, "appended").version(), _delta(store, "per_key").version()


def _wait_for_commits(store: S3Store, since: tuple[int, int], timeout: float = 180) -> None:
    """Until both tables committed a batch after `since`: a kill then lands among real work (mid-batch,
    between batches, mid-commit), not before the first batch of a run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = _versions(store)
        if all(a > b for a, b in zip(now, since, strict=True)):
            return
        time.sleep(0.2)
    raise AssertionError(f"no batch committed in {timeout:g} s after versions {since}")


@pytest.mark.timeout(900)
def test_sigkill_with_the_local_cache_wiped_loses_and_duplicates_nothing(tmp_path: Path, s3: S3Store) -> None:
    rng = random.Random(int(os.environ.get("SLUICEGATE_CRASH_SEED", "0")) or None)
    state, conf = tmp_path / "state", tmp_path / "sluicegate.toml"
    _conf(conf, s3, state)
    gateway = GatewayProcess(f"s3://{s3.bucket}/warehouse", conf, tmp_path / "gateway.log")  # type: ignore[arg-type]
    gateway.start()
    source = f"s3://{s3.bucket}/warehouse/landing/crash"
    files = f"STREAM read_files('{source}', format => 'json', schema => 'id INT, k STRING')"
    fs = s3.filesystem()
    landed = 0
    last_file = threading.Event()

    def feed() -> None:
        nonlocal landed
        while landed < MAX_FILES and not last_file.is_set():
            with fs.open_output_stream(f"{s3.bucket}/warehouse/landing/crash/part-{landed:04d}.json") as out:
                out.write("".join(json.dumps(row) + "\n" for row in _file_rows(landed)).encode())
            landed += 1
            last_file.wait(rng.uniform(1.0, 3.0))   # files land while it runs and while it is down

    try:
        execute_on(gateway.port, "CREATE DATABASE crash",
                 f"CREATE STREAMING TABLE crash.appended AS SELECT id, k FROM {files}",
                 f"CREATE STREAMING TABLE crash.per_key AS SELECT k, count(*) AS n, sum(id) AS total FROM {files} "
                 "GROUP BY k")
        feeder = threading.Thread(target=feed, daemon=True)
        versions = _versions(s3)
        feeder.start()
        for _ in range(KILLS):
            _wait_for_commits(s3, versions)
            time.sleep(rng.uniform(0.0, 2.0))   # then at a random moment: mid-batch, between batches, mid-commit
            gateway.kill()
            versions = _versions(s3)
            shutil.rmtree(state / "_checkpoints", ignore_errors=True)   # the local cache is lost with the machine
            gateway.start()
        last_file.set()
        feeder.join(timeout=120)
        files = landed
        expected_ids = sorted(index * 1000 + row for index in range(files) for row in range(ROWS_PER_FILE))
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(_table(s3, "appended")) < len(expected_ids):
            time.sleep(0.3)   # polling the table on the store until every file is in
        while time.monotonic() < deadline and \
                {r["k"]: (r["n"], r["total"]) for r in _table(s3, "per_key")} != _aggregate(files):
            time.sleep(0.3)
    finally:
        gateway.stop()
    ids = sorted(row["id"] for row in _table(s3, "appended"))
    assert len(ids) == len(expected_ids), f"{len(ids)} rows for {len(expected_ids)} input rows; see {gateway.log}"
    assert ids == expected_ids
    rows = _table(s3, "per_key")
    assert {r["k"]: (r["n"], r["total"]) for r in rows} == _aggregate(files) and len(rows) == len(KEYS)
    from sluicegate.catalog.store import CatalogStore

    store = CatalogStore.for_warehouse(state)
    try:
        for table in ("appended", "per_key"):
            starts = [kind for _, kind, _ in store.events("crash", table, 100) if kind == "STARTED"]
            assert len(starts) == KILLS + 1, f"{table} started {len(starts)} times"   # resumed after every crash
    finally:
        store.close()
