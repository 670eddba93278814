"""Compaction: a table's small files merged into bigger ones, as a Delta commit that changes no row.

A stream commits a file or two every trigger, so a table's file count grows with its age, and so does the cost of
every read (measured: 10-18x after 1,500 commits). Compaction rewrites them in size classes, as log-structured stores
do: files are grouped by partition and by class (class 0 below `base_size`, class k below `base_size * fan_in**k`),
and a class with `fan_in` files is merged into one file, which lands in the same or the next class. Above
`base_size` a row is rewritten about once per class it passes through; below it, merged files stay in class 0 and
are merged again as new files arrive (bytes that small are cheap to rewrite: 100-row batches cost about 30 rewrites
of each row over a table's life, a few MiB per merge at most). Never once per commit: a partition holds fewer than
`fan_in` files per class, so the file count stays bounded (about `fan_in` times the number of classes up to
`target_size`) however long the stream runs. Files of `target_size` or more are never touched.

A table that stays quiet (no commit for `settle` seconds, engine/maintenance.py) is settled: the small files a
partition still holds across its size classes are merged into one (`settle_candidates`), so a stream that stopped, or
a table written in bursts, is read as few files as a compacted copy.

The merged file is written before the commit (invisible until then, like any write) and committed with
`dataChange = false` on both its add and the removes, so a downstream `STREAM(t)` or an incremental materialized view
sees no change. The commit runs under the table's lock (storage/delta/locks.py) after checking that every file it
removes is still in the table: a writer that rewrote one of them in the meantime wins, and the merged file is
deleted unreferenced.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from sluicegate.storage.delta.commit import commit_actions
from sluicegate.storage.delta.compaction_policy import CompactionPolicy
from sluicegate.storage.delta.errors import DeltaCommitConflictError
from sluicegate.storage.delta.files import metadata_stats
from sluicegate.storage.delta.tables import open_table
from sluicegate.storage.files import filesystem

if TYPE_CHECKING:
    import pyarrow as pa

OPERATION = "OPTIMIZE"

# How a merged file's pages are laid out, as Spark's own writer lays them out: a page index (min/max per page) and
# pages of 128 KiB, so that a point or range query reads the pages that can match, not the whole column. Measured
# (bench/parquet_layout_bench.py, 1,000,000 rows in one file read by Spark): a point query 129-142 ms with pyarrow's
# defaults (no page index, 1 MiB pages), 82-90 ms with these, 66-74 ms on the file Spark writes.
PAGE_LAYOUT = {"write_page_index": True, "data_page_size": 128 * 1024}


@dataclass(frozen=True)
class LiveFile:
    path: str                              # relative to the table's root, as it lies on disk or in the store
    size: int
    partition_values: dict[str, str | None]


@dataclass(frozen=True)
class Compacted:
    """What one merge did; `version` is None when a concurrent writer won and nothing was committed."""

    files_removed: int
    bytes_removed: int
    files_added: int
    bytes_added: int
    version: int | None


def live_files(table: Any) -> list[LiveFile]:
    """The data files of `table`'s version, in log order (a stream's files in the order it wrote them)."""
    actions = table.get_add_actions(flatten=True)
    if not actions.num_rows:
        return []
    names = actions.column_names
    partitions = [name for name in names if name.startswith("partition.")]
    paths = actions.column("path").to_pylist()
    sizes = actions.column("size_bytes").to_pylist()
    times = actions.column("modification_time").to_pylist()
    values = [actions.column(name).to_pylist() for name in partitions]
    files = []
    for index, path in enumerate(paths):
        partition = {name.removeprefix("partition."): (None if column[index] is None else str(column[index]))
                     for name, column in zip(partitions, values, strict=True)}
        files.append((times[index], LiveFile(unquote(path), int(sizes[index] or 0), partition)))
    return [file for _, file in sorted(files, key=lambda pair: (str(pair[0]), pair[1].path))]


def merge_candidates(files: Sequence[LiveFile], policy: CompactionPolicy) -> list[list[LiveFile]]:
    """The groups to merge now: per partition and size class, the class's files once it has `fan_in` of them (the
    oldest first, as many as stay under `target_size` together)."""
    classes: dict[tuple[str, int], list[LiveFile]] = {}
    for file in files:
        if file.size >= policy.target_size:
            continue
        key = (json.dumps(file.partition_values, sort_keys=True), policy.size_class(file.size))
        classes.setdefault(key, []).append(file)
    return [group for members in classes.values() if len(members) >= policy.fan_in
            if len(group := _oldest_under_target(members, policy)) > 1]


def _oldest_under_target(members: Sequence[LiveFile], policy: CompactionPolicy) -> list[LiveFile]:
    """The first of `members` (the oldest), as many as stay under `target_size` together."""
    group: list[LiveFile] = []
    total = 0
    for file in members:
        if group and total + file.size > policy.target_size:
            break
        group.append(file)
        total += file.size
    return group


def settle_candidates(files: Sequence[LiveFile], policy: CompactionPolicy) -> list[list[LiveFile]]:
    """The group per partition that makes a quiet table's partition one file where that is cheap: its files below
    `target_size`, smallest first, each taken while it is at most `fan_in` times the size of those taken before it
    and all stay under `target_size` together (so a big file is rewritten only when the small ones add an eighth
    of it, and a byte is rewritten a bounded number of times however often the table goes quiet); in log order."""
    partitions: dict[str, list[LiveFile]] = {}
    for file in files:
        if file.size < policy.target_size:
            partitions.setdefault(json.dumps(file.partition_values, sort_keys=True), []).append(file)
    groups = []
    for members in partitions.values():
        taken: set[str] = set()
        total = 0
        for file in sorted(members, key=lambda member: member.size):
            if taken and (file.size > policy.fan_in * total or total + file.size > policy.target_size):
                break
            taken.add(file.path)
            total += file.size
        if len(taken) > 1:
            groups.append([file for file in members if file.path in taken])
    return groups


def candidates(files: Sequence[LiveFile], policy: CompactionPolicy, settle: bool) -> list[list[LiveFile]]:
    return settle_candidates(files, policy) if settle else merge_candidates(files, policy)


def compact(location: str, policy: CompactionPolicy, max_merges: int | None = None, *, settle: bool = False,
            latest: Callable[[], Any] | None = None) -> list[Compacted]:
    """Merge every group `merge_candidates` names now (`settle`: `settle_candidates`, for a table that has been
    quiet), at most `max_merges`, one commit each. `latest`: the table at its latest version when the caller keeps
    it (storage/delta/kept.py), else it is opened."""
    table = latest() if latest is not None else open_table(location)
    if table is None or "deletionVectors" in (table.protocol().reader_features or ()):
        return []  # a file's deleted rows live beside it: rewriting the file whole would bring them back
    done = []
    for group in candidates(live_files(table), policy, settle)[:max_merges]:
        done.append(merge_files(location, table.version(), group, latest=latest))
    return done


def merge_files(location: str, read_version: int, group: Sequence[LiveFile],
                parameters: dict[str, str] | None = None, latest: Callable[[], Any] | None = None) -> Compacted:
    """Rewrite the files of `group` (one partition) as one file and commit the swap; see the module's docstring.
    `latest`: as for `compact`."""
    latest = latest or (lambda: open_table(location))
    fs, root = filesystem(location)
    rows = _read(fs, root, group)
    folder = _partition_folder(group[0].path)
    relative = f"_sg_write_{uuid.uuid4().hex}/{folder}part-00000-{uuid.uuid4().hex}.snappy.parquet"
    size, stats = _write(fs, f"{root}/{relative}", rows)
    from deltalake.transaction import AddAction, RemoveAction

    removed_bytes = sum(file.size for file in group)
    now = int(time.time() * 1000)
    actions: list[Any] = [RemoveAction(file.path, False, now, file.size, file.partition_values) for file in group]
    actions.append(AddAction(relative, size, group[0].partition_values, now, False, stats))
    try:
        # held against the latest version: a merge's files are either all still live, or a rewrite won
        version = commit_actions(latest(), actions, "append", OPERATION,
                                 {"auto": "true", "readVersion": str(read_version), **(parameters or {})},
                                 announce=False, latest=latest)
    except DeltaCommitConflictError:
        fs.delete_file(f"{root}/{relative}")   # a concurrent rewrite won; this merge is moot
        return Compacted(len(group), removed_bytes, 1, size, None)
    return Compacted(len(group), removed_bytes, 1, size, version)


def _read(fs: Any, root: str, group: Sequence[LiveFile]) -> pa.Table:
    """The rows of the files in order, in one table; INT96 timestamps (Spark's default) read as microseconds, and
    each file's own schema metadata (Spark's row metadata) dropped, so files of two writers concatenate."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = []
    for file in group:
        with fs.open_input_file(f"{root}/{file.path}") as source:
            parquet = pq.ParquetFile(source, coerce_int96_timestamp_unit="us")
            tables.append(parquet.read(use_threads=False).replace_schema_metadata(None))
    return pa.concat_tables(tables, promote_options="permissive")


def _write(fs: Any, path: str, rows: pa.Table) -> tuple[int, str]:
    """One Parquet file at `path`, timestamps as microseconds (Spark's reader does not take nanoseconds); returns its
    size and Delta statistics."""
    import pyarrow.parquet as pq

    if fs.type_name == "local":  # an object store has no folders (creating one would leave a marker object)
        fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    with fs.open_output_stream(path) as stream:
        writer = pq.ParquetWriter(stream, rows.schema, compression="snappy", coerce_timestamps="us",
                                  allow_truncated_timestamps=False, **PAGE_LAYOUT)
        writer.write_table(rows, row_group_size=1024 * 1024)
        writer.close()
        size = stream.tell()
    return size, metadata_stats(writer.writer.metadata)


def _partition_folder(path: str) -> str:
    """The `key=value/` folders a file lies in below its write's staging folder, for the merged file to lie in too
    (readers take partition values from them)."""
    parts = path.split("/")[:-1]
    folders = [part for part in parts if "=" in part]
    return "".join(f"{folder}/" for folder in folders)
