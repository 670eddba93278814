"""The checkpoint mirror against a real S3 store (weed mini), no JVM: what reaches the store, in which order, what a
restore brings back, and what it throws away."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from object_store import S3Store, seaweed_s3
from pyarrow.fs import FileSelector, FileType

from sluicegate.engine.streams.checkpoint_mirror import CheckpointMirror, CheckpointStore
from sluicegate.storage.registry import register, unregister
from sluicegate.storage.settings import ObjectStoreSettings


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Store]:
    with seaweed_s3(tmp_path_factory.mktemp("weed")) as running:
        prefix = f"s3://{running.bucket}"
        register(prefix, ObjectStoreSettings(endpoint=running.endpoint, region=running.region,
                                             access_key=running.access_key, secret_key=running.secret_key,
                                             allow_http=True))
        yield running
        unregister(prefix)


def _remote(store: S3Store, prefix: str) -> dict[str, bytes]:
    fs = store.filesystem()
    found = {}
    for info in fs.get_file_info(FileSelector(prefix, recursive=True, allow_not_found=True)):
        if info.type == FileType.File:
            with fs.open_input_stream(info.path) as stream:
                found[info.path[len(prefix) + 1:]] = stream.read()
    return found


def _write(root: Path, relative: str, text: str, mtime_ns: int | None = None) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


def test_upload_copies_new_and_changed_files_and_skips_temporary_ones(store: S3Store, tmp_path: Path) -> None:
    local = tmp_path / "0123abcd"
    mirror = CheckpointStore(f"s3://{store.bucket}/wh/_checkpoints").mirror(local)
    assert mirror.restore() == 0 and local.is_dir()  # nothing on the store: an empty folder
    _write(local, "metadata", '{"id":"q"}')
    _write(local, "offsets/0", "v1\n{}")
    _write(local, "offsets/.1.0f3e.tmp", "half written")
    _write(local, "offsets/.0.crc", "checksum")
    _write(local, "state/0/0/1.delta", "state")
    assert mirror.upload() == 3
    prefix = f"{store.bucket}/wh/_checkpoints/0123abcd"
    assert _remote(store, prefix) == {"metadata": b'{"id":"q"}', "offsets/0": b"v1\n{}", "state/0/0/1.delta": b"state"}
    assert mirror.upload() == 0  # nothing changed since
    _write(local, "offsets/0", "v1\n{rewritten}")
    _write(local, "commits/0", "v1\n{}")
    assert mirror.upload() == 2
    assert _remote(store, prefix)["offsets/0"] == b"v1\n{rewritten}"


def test_uploads_follow_the_order_spark_wrote_in_and_removals_follow(store: S3Store, tmp_path: Path) -> None:
    """Oldest first: a crash in the middle of an upload leaves a prefix of Spark's writes (sources before offsets)."""
    local = tmp_path / "ordered"
    calls: list[str] = []
    fs = store.filesystem()

    mirror = CheckpointMirror(fs, f"{store.bucket}/ordered", local)
    mirror.restore()
    base = 1_700_000_000_000_000_000
    _write(local, "offsets/1", "o1", base + 3)
    _write(local, "sources/0/1", "s1", base + 1)
    _write(local, "state/0/0/1.delta", "d1", base + 2)
    original = fs.open_output_stream

    class Spy:
        def __getattr__(self, name: str):
            return getattr(fs, name)

        def open_output_stream(self, path: str):
            calls.append(path.rsplit("ordered/", 1)[1])
            return original(path)

    mirror.filesystem = Spy()  # type: ignore[assignment]
    assert mirror.upload() == 3
    assert calls == ["sources/0/1", "state/0/0/1.delta", "offsets/1"]
    (local / "sources/0/1").unlink()   # Spark's cleanup of an old batch: removed from the store too
    mirror.upload()
    assert set(_remote(store, f"{store.bucket}/ordered")) == {"state/0/0/1.delta", "offsets/1"}


def test_restore_makes_the_store_win_over_local_leftovers(store: S3Store, tmp_path: Path) -> None:
    local = tmp_path / "stream1"
    checkpoints = CheckpointStore(f"s3://{store.bucket}/restore/_checkpoints")
    first = checkpoints.mirror(local)
    first.restore()
    _write(local, "offsets/0", "zero")
    _write(local, "commits/0", "zero")
    first.upload()
    _write(local, "offsets/1", "one, never uploaded")   # written after the last upload, then the process died
    _write(local, "commits/0", "changed locally")
    again = checkpoints.mirror(local)
    assert again.restore() == 2
    assert sorted(str(p.relative_to(local)) for p in local.rglob("*") if p.is_file()) == ["commits/0", "offsets/0"]
    assert (local / "commits/0").read_text() == "zero"
    assert again.upload() == 0  # what was restored is known to be on the store
    (local.parent / "wiped").mkdir()
    wiped = checkpoints.mirror(local.parent / "wiped")   # another stream id: its own, empty copy
    assert wiped.restore() == 0


def test_remove_drops_the_stores_copy(store: S3Store, tmp_path: Path) -> None:
    checkpoints = CheckpointStore(f"s3://{store.bucket}/removed")
    mirror = checkpoints.mirror(tmp_path / "gone")
    mirror.restore()
    _write(tmp_path / "gone", "offsets/0", "x")
    mirror.upload()
    checkpoints.remove(tmp_path / "gone")
    assert _remote(store, f"{store.bucket}/removed/gone") == {}
    checkpoints.remove(tmp_path / "gone")  # twice: nothing left to remove, no error
