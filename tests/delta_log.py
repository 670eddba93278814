"""What a Delta table's log says about exactly-once writes, read straight from its JSON commits (not through delta-rs,
so a test sees what any reader would)."""

from __future__ import annotations

import json
from pathlib import Path


def txn_actions(location: str | Path) -> list[tuple[str, int]]:
    """Every txn action in the table's log as (app id, version), in commit order: a stream's id and the micro-batch
    the commit holds (version -1: the table emptied for that stream by a full refresh)."""
    found = []
    for commit in sorted((Path(location) / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            txn = json.loads(line).get("txn")
            if txn is not None:
                found.append((txn["appId"], txn["version"]))
    return found


def delta_log_operations(location: str | Path) -> list[str]:
    """The operation of every commit in the table's log, in commit order: the gateway's own name for it
    (`sluicegate.operation`, as DESCRIBE HISTORY shows it) where it recorded one, else the writer's."""
    operations = []
    for commit in sorted((Path(location) / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            info = json.loads(line).get("commitInfo")
            if info is not None:
                operations.append(info.get("sluicegate.operation") or info.get("operation"))
    return operations
