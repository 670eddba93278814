"""Reading and writing one commit file of a local Delta table's log by its name, with no listing of the log.

delta-rs lists the whole `_delta_log/` folder each time it commits or brings a table forward (three listings for a
stream's commit and the next batch's look at the table), and a streaming table's log gains an entry a micro-batch:
measured on the same table state, a commit and a bring-forward cost 44.5 and 24.0 ms with 9,903 log entries, 7.8 and
5.5 ms with 3. A blind append needs no listing: the version it writes is the one after the latest, which a `stat`
of the next commit file finds (storage/delta/kept.py), and putting the file in place only if absent is the log's own
guard against a concurrent writer, as delta-rs does it (a temporary file, then a hard link that fails if the name is
taken). The JSON written is delta-rs's, field for field (tests/delta/test_log_append.py commits the same actions
both ways and compares the files).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sluicegate.catalog.uris import ObjectLocation
from sluicegate.storage.delta.kept import commit_file

# the characters delta-rs leaves as they are in an add action's path (measured over printable ASCII); every other
# one is %-encoded, UTF-8 bytes included
PATH_SAFE = "!$&'()+,-.:;=@_~/"

# writer protocol features an append of data files honours by writing nothing more than delta-rs's append writes;
# a table with any other feature (row tracking, in-commit timestamps, deletion vectors, column mapping, identity
# columns, domain metadata...) is appended to through delta-rs
APPEND_SAFE_WRITER_FEATURES = frozenset({
    "appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns", "timestampNtz",
})
# writer versions before table features whose every feature is in the set above
APPEND_SAFE_WRITER_VERSIONS = frozenset({1, 2, 3, 4})


def appends_directly(protocol: Any) -> bool:
    """Whether a commit of add actions written as delta-rs writes them is a valid commit for a table with this
    protocol (a deltalake ProtocolVersions)."""
    version = int(protocol.min_writer_version)
    if version in APPEND_SAFE_WRITER_VERSIONS:
        return True
    if version != 7:
        return False
    return set(protocol.writer_features or ()) <= APPEND_SAFE_WRITER_FEATURES


def add_action(path: str, size: int, partition_values: dict[str, str | None], modification_time: int,
               stats: str | None) -> dict[str, Any]:
    """An add action of a data file (`path` relative to the table, as written on disk), as delta-rs writes it."""
    return {"add": {"path": quote(path, safe=PATH_SAFE), "partitionValues": dict(partition_values), "size": size,
                    "modificationTime": modification_time, "dataChange": True, "stats": stats, "tags": None,
                    "baseRowId": None, "defaultRowCommitVersion": None, "clusteringProvider": None}}


def append_commit_info(timestamp: int, partition_columns: Sequence[str], custom: dict[str, str],
                       client_version: str) -> dict[str, Any]:
    """The commitInfo of an append, in delta-rs's shape (its operation and parameters; `custom`: the gateway's own
    keys, as delta-rs puts a commit's custom metadata)."""
    info: dict[str, Any] = {
        "timestamp": timestamp, "operation": "WRITE",
        "operationParameters": {"mode": "Append", "partitionBy": json.dumps(list(partition_columns))},
    }
    info.update(custom)
    info["clientVersion"] = client_version
    return {"commitInfo": info}


def transaction_action(app_id: str, version: int) -> dict[str, Any]:
    return {"txn": {"appId": app_id, "version": version}}


@cache
def client_version() -> str:
    """What a commit written here names as its writer (DESCRIBE HISTORY's clientVersion)."""
    try:
        return f"sluicegate-{metadata.version('sluicegate')}"
    except metadata.PackageNotFoundError:
        return "sluicegate"


def put_commit(location: str | Path | ObjectLocation, version: int, actions: Iterable[dict[str, Any]]) -> bool:
    """Write the commit file of `version` if no writer has: False when the name is taken (nothing written)."""
    final = commit_file(location, version)
    temporary = os.path.join(os.path.dirname(final), f"_commit_{uuid.uuid4().hex}.json.tmp")
    with open(temporary, "x", encoding="utf-8") as file:
        file.write("\n".join(json.dumps(action, separators=(",", ":"), ensure_ascii=False) for action in actions))
    try:
        os.link(temporary, final)
    except FileExistsError:
        return False
    finally:
        os.unlink(temporary)
    return True


def read_commit(location: str | Path | ObjectLocation, version: int) -> list[dict[str, Any]]:
    """The actions of the commit file of `version` (FileNotFoundError when there is none)."""
    with open(commit_file(location, version), encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]
