"""What one commit costs as a table's log grows (issue 25, "commit time flat"): the gateway's commit path against
delta-rs's own, no JVM.

    .venv/bin/python bench/commit_log_bench.py                  # 3,000 appends, a compaction every 10
    .venv/bin/python bench/commit_log_bench.py --commits 300    # to try it out

Both sides make the same commits, one table each, taking turns commit by commit: an append of one file with a
stream's txn (as a micro-batch's), and after every 10 appends a compaction's commit that removes those 10 files and
adds one (dataChange = false), as the background compactor keeps a streaming table at a few live files. The files
are named, not written: a commit only records them.
  delta-rs   `create_write_transaction` with delta-rs's post-commit hook, on a table kept open and brought forward
             with `load_as_version` (the gateway's commit path before 2026-12-06)
  gateway    storage/delta/commit.py `commit_actions` on the sink's KeptTable (storage/delta/kept.py): the hook off,
             the checkpoint written by the gateway (storage/delta/checkpoints.py), the kept table opened anew from a
             newer checkpoint every ~100 commits (the path of the sinks that MERGE or overwrite, and of compactions)
  by-name    an append sink's commit since 2026-12-06: `commit_appended` on a LogTail (storage/delta/log_tail.py),
             the commit file written by name and the tail brought forward by reading new commits by name; the
             compactions committed as the compactor commits them (`commit_actions` on a KeptTable of its own)
Printed per 500 commits: the median of the last 200 appends' commit and of bringing the kept table forward after
it, the mean of the two together (checkpoints and re-openings, which come once in ~100 commits, are in the mean, not
the medians), and the log's entries.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, write_deltalake
from deltalake.transaction import AddAction, RemoveAction, Transaction

from sluicegate.storage.delta.commit import commit_actions, commit_appended
from sluicegate.storage.delta.files import WrittenFile
from sluicegate.storage.delta.kept import KeptTable
from sluicegate.storage.delta.log_tail import LogTail
from sluicegate.storage.delta.write import AppTransaction

COMPACT_EVERY = 10


class DeltaRsSide:
    """delta-rs's commit with its post-commit hook, the table kept open and brought forward in place."""

    name = "delta-rs"

    def __init__(self, path: Path) -> None:
        self.table = DeltaTable(str(path))

    def commit(self, actions: list[Any], txn: AppTransaction | None) -> None:
        properties = CommitProperties(
            custom_metadata={"sluicegate.operation": "STREAMING UPDATE"},
            app_transactions=[Transaction(txn.app_id, txn.version)] if txn else None)
        self.table.create_write_transaction(actions, "append", self.table.schema(), commit_properties=properties)

    def forward(self) -> None:
        self.table.load_as_version(int(self.table.version()) + 1)


class GatewaySide:
    """The gateway's commit (`commit_actions`) on a KeptTable, as the stream's sink makes it."""

    name = "gateway"

    def __init__(self, path: Path) -> None:
        self.kept = KeptTable(str(path))
        self.kept.latest()

    def commit(self, actions: list[Any], txn: AppTransaction | None) -> None:
        commit_actions(self.kept.latest(), actions, "append", "STREAMING UPDATE", None, txn, announce=False)

    def forward(self) -> None:
        self.kept.latest()


class ByNameSide:
    """An append sink's commit (`commit_appended` on a LogTail); compactions as the background compactor makes them."""

    name = "by-name"

    def __init__(self, path: Path) -> None:
        self.tail = LogTail(KeptTable(str(path)))
        self.tail.current()
        self.compactor = KeptTable(str(path))

    def commit(self, actions: list[Any], txn: AppTransaction | None) -> None:
        if txn is None:
            commit_actions(self.compactor.existing(), actions, "append", "OPTIMIZE", None, announce=False)
            return
        files = [WrittenFile(add.path, add.size, add.modification_time, {}, "") for add in actions]
        commit_appended(self.tail, files, "STREAMING UPDATE", {}, txn)

    def forward(self) -> None:
        self.tail.current()


def timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=3000, help="appends per side (default 3,000)")
    parser.add_argument("--every", type=int, default=500, help="print a line every this many appends")
    parser.add_argument("--out", default="bench/out", help="folder for the JSON of the figures")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="commit_log_bench-"))
    sides: list[Any] = []
    for side_class in (DeltaRsSide, GatewaySide, ByNameSide):
        path = root / side_class.name
        write_deltalake(str(path), pa.table({"id": pa.array([0], pa.int64())}))
        sides.append(side_class(path))
    commits: dict[str, list[float]] = {side.name: [] for side in sides}
    forwards: dict[str, list[float]] = {side.name: [] for side in sides}
    lines: list[dict[str, Any]] = []
    small: list[str] = []
    started = time.time()
    print(f"{'appends':>8} {'log entries':>12} | " + " | ".join(
        f"{side.name}: commit / forward (median) / both (mean) ms" for side in sides), flush=True)
    try:
        for n in range(1, args.commits + 1):
            name = f"part-{n:06d}.parquet"
            now = int(time.time() * 1000)
            for side in sides:
                add = AddAction(name, 1_000, {}, now, True, None)
                start = time.perf_counter()
                side.commit([add], AppTransaction("stream", n))
                commits[side.name].append(time.perf_counter() - start)
                forwards[side.name].append(timed(side.forward))
            small.append(name)
            if len(small) == COMPACT_EVERY:
                for side in sides:
                    actions = [RemoveAction(path, False, now) for path in small]
                    actions.append(AddAction(f"merged-{n:06d}.parquet", 10_000, {}, now, False, None))
                    side.commit(actions, None)
                    side.forward()
                small = []
            if n % args.every == 0 or n == args.commits:
                entries = len(os.listdir(root / "gateway" / "_delta_log"))
                line: dict[str, Any] = {"appends": n, "log_entries": entries}
                for side in sides:
                    recent = [c + f for c, f in zip(commits[side.name][-200:], forwards[side.name][-200:], strict=True)]
                    line[side.name] = {"commit_ms": round(statistics.median(commits[side.name][-200:]) * 1000, 1),
                                       "forward_ms": round(statistics.median(forwards[side.name][-200:]) * 1000, 1),
                                       "mean_ms": round(statistics.mean(recent) * 1000, 1)}
                lines.append(line)
                print(f"{n:>8} {entries:>12} | " + " | ".join(
                    f"{line[side.name]['commit_ms']:>8.1f} / {line[side.name]['forward_ms']:<6.1f} / "
                    f"{line[side.name]['mean_ms']:<6.1f}" for side in sides),
                    flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    first, last = lines[0], lines[-1]
    for side in sides:
        before = first[side.name]["commit_ms"] + first[side.name]["forward_ms"]
        after = last[side.name]["commit_ms"] + last[side.name]["forward_ms"]
        print(f"{side.name}: commit + forward {before:.1f} ms at {first['appends']} appends, {after:.1f} ms at "
              f"{last['appends']}: {after / before:.2f}x (medians); mean {first[side.name]['mean_ms']:.1f} to "
              f"{last[side.name]['mean_ms']:.1f} ms")
    os.makedirs(args.out, exist_ok=True)
    out = Path(args.out) / f"commit_log_bench-{args.commits}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps({"started": started, "commits": args.commits, "lines": lines,
                               "load_average": os.getloadavg()}, indent=1))
    print(f"figures: {out}")


if __name__ == "__main__":
    main()
