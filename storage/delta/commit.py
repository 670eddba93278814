"""Writing a catalog table's data: Spark writes the files, one Delta transaction (delta-rs) makes them visible.

Appends retry on top of concurrent commits (they read nothing); rewrites (DELETE, UPDATE, MERGE) commit against
the version they read, so a concurrent commit that removed what they read fails them with DELTA_CONCURRENT_WRITE
instead of being lost. Every commit records the SQL operation in its commitInfo for DESCRIBE HISTORY.

Compactions (storage/delta/compaction.py, OPTIMIZE) remove files without changing a row, and delta-rs does not see
that a later commit removing the same files conflicts with them. So every commit here runs under the table's lock
(storage/delta/locks.py) and is first held against what landed since its read version: an overwrite over
compactions only replaces what the table holds now; a commit whose removed files a compaction already rewrote fails
with DELTA_CONCURRENT_WRITE, as for any concurrent rewrite.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from sluicegate.catalog.uris import as_location, is_object_uri
from sluicegate.storage.delta.changes import table_change
from sluicegate.storage.delta.checkpoints import checkpoint_due, checkpoint_if_due, no_hooks
from sluicegate.storage.delta.errors import DeltaCommitConflictError
from sluicegate.storage.delta.files import WrittenFile, list_written_files
from sluicegate.storage.delta.kept import latest_version, table_location
from sluicegate.storage.delta.locks import table_lock
from sluicegate.storage.delta.log_commits import (
    add_action,
    append_commit_info,
    client_version,
    put_commit,
    transaction_action,
)
from sluicegate.storage.delta.log_tail import LogTail, TailState
from sluicegate.storage.delta.object_write import write_arrow_files
from sluicegate.storage.delta.tables import open_table
from sluicegate.storage.delta.write import AppTransaction, write_files

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

OPERATION_KEY = "sluicegate.operation"
PARAMETERS_KEY = "sluicegate.operationParameters"

# called with a table's location after each commit that added data (the background compactor listens)
_listeners: list[Callable[[str], None]] = []


def add_commit_listener(listener: Callable[[str], None]) -> None:
    _listeners.append(listener)


def remove_commit_listener(listener: Callable[[str], None]) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def notify_committed(location: str) -> None:
    """Tell the listeners that the table at `location` has a new commit; a listener's failure is its own."""
    for listener in list(_listeners):
        listener(location)


def commit_properties(operation: str, parameters: dict[str, str] | None = None,
                      app_transaction: AppTransaction | None = None) -> Any:
    """The commitInfo of a statement's commit, and the txn action (app id, version) a stream's batch carries."""
    from deltalake import CommitProperties
    from deltalake.transaction import Transaction

    transactions = [Transaction(app_transaction.app_id, app_transaction.version)] if app_transaction else None
    return CommitProperties(custom_metadata={OPERATION_KEY: operation, PARAMETERS_KEY: json.dumps(parameters or {})},
                            app_transactions=transactions)


def _adds(files: Sequence[WrittenFile]) -> list[Any]:
    from deltalake.transaction import AddAction

    return [AddAction(f.path, f.size, f.partition_values, f.modification_time, True, f.stats) for f in files]


def commit_actions(table: Any, actions: list[Any], mode: str, operation: str, parameters: dict[str, str] | None,
                   app_transaction: AppTransaction | None = None, *, announce: bool = True,
                   schema: Any = None, latest: Callable[[], Any] | None = None) -> int:
    """Commit `actions` against `table`'s version under the table's lock, first held against what landed since
    (`_rebased`); returns the new version. `announce`: tell the commit listeners (a compaction's own commit, which
    changes no row, does not). `schema` (a deltalake Schema; an overwrite only): the table's schema from this
    commit on, written in the same commit as its files. `latest`: how to get the table at its latest version when
    the check needs it (a kept table's; by default the table is opened)."""
    from deltalake.exceptions import CommitFailedError

    location = table_location(table)
    with table_lock(location):
        table = _rebased(table, location, actions, mode, latest or (lambda: open_table(location)))
        metadata = table.metadata()
        try:
            table.create_write_transaction(
                actions, mode, schema if schema is not None else table.schema(),
                partition_by=list(metadata.partition_columns) or None,
                commit_properties=commit_properties(operation, parameters, app_transaction),
                post_commithook_properties=no_hooks(),
            )
        except CommitFailedError as exc:
            raise DeltaCommitConflictError(
                f"another writer committed to the table first: {exc}",
                hint="run the statement again; it reads the new version",
            ) from exc
        # under the lock every later commit of the gateway waits: the latest version is this commit's
        version = latest_version(location, int(table.version()))
        checkpoint_if_due(table, version)
    if announce:
        notify_committed(str(as_location(location)))
    return int(version)


def live_paths(table: Any) -> set[str]:
    """The data files of `table`'s version, relative to its root and decoded (as remove actions name them)."""
    actions = table.get_add_actions(flatten=True)
    return {unquote(path) for path in actions.column("path").to_pylist()} if actions.num_rows else set()


def _rebased(table: Any, location: str, actions: list[Any], mode: str, latest: Callable[[], Any]) -> Any:
    """The table object to commit `actions` with, under the table's lock: `table` itself when nothing landed since
    its version; the latest version for an overwrite when only compactions landed (it replaces what is there now).
    Raises DeltaCommitConflictError when a file the commit removes is no longer in the table. A plain append (no
    file removed) is never held against anything: it reads nothing."""
    from deltalake.transaction import RemoveAction

    # remove actions name files decoded, as `live_paths` does (decoding again would turn `%25` into `%`)
    removed = {action.path for action in actions if isinstance(action, RemoveAction)}
    if mode != "overwrite" and not removed:
        return table
    newest = latest_version(location, int(table.version()))
    if mode == "overwrite":
        if newest == table.version():
            return table
        change = table_change(str(as_location(location)), table.version(), newest)
        # a data change since the read: delta-rs's own check judges the commit against it
        return latest() if change is not None and change.empty else table
    # checked even when nothing landed since `table`'s version: delta-rs accepts removing a file already gone
    gone = removed - live_paths(table if newest == table.version() else latest())
    if gone:
        raise DeltaCommitConflictError(
            f"another writer rewrote {len(gone)} of the files this statement replaces (for example "
            f"{sorted(gone)[0]}) after it read version {table.version()}",
            hint="run the statement again; it reads the new version")
    return table


def append(location: str, df: DataFrame, operation: str = "WRITE",
           parameters: dict[str, str] | None = None, app_transaction: AppTransaction | None = None,
           table: Any = None) -> int:
    """Add `df`'s rows (already in the table's schema) as one commit; returns the new version. `table`: the table
    at its latest version when the caller keeps it (storage/delta/kept.py), else it is opened."""

    table = open_table(location) if table is None else table
    files = write_files(df, location, table.metadata().partition_columns)
    return commit_actions(table, _adds(files), "append", operation, parameters or {"mode": "Append"}, app_transaction)


def append_logged(tail: LogTail, df: DataFrame, operation: str, parameters: dict[str, str],
                  app_transaction: AppTransaction) -> int:
    """A stream's append of `df`'s rows to the local table `tail` follows: the commit file written by name after the
    latest version (storage/delta/log_commits.py: no listing of the log, whose length grows with the stream's age);
    through delta-rs (`append`) when the table is on an object store or its protocol asks more of a writer."""
    state = None if is_object_uri(tail.location) else tail.current()
    if state is None or not state.direct:
        return append(tail.location, df, operation, parameters, app_transaction, table=tail.kept.latest())
    return commit_appended(tail, write_files(df, tail.location, state.partition_columns), operation, parameters,
                           app_transaction)


def commit_appended(tail: LogTail, files: Sequence[WrittenFile], operation: str, parameters: dict[str, str],
                    app_transaction: AppTransaction) -> int:
    """Commit the data files a stream's batch wrote to the local table `tail` follows, by name (`append_logged`);
    the checkpoint when the version makes one due, as `commit_actions` does."""
    with table_lock(tail.location):
        version = _put_append(tail, files, operation, parameters, app_transaction)
        if version is None:  # the table changed under the append: delta-rs's commit judges it
            return commit_actions(tail.kept.existing(), _adds(files), "append", operation, parameters,
                                  app_transaction)
        state = tail.current()
        if state is not None and checkpoint_due(version, state.configuration):
            checkpoint_if_due(tail.kept.existing(), version)
            tail.rebase()
    notify_committed(str(as_location(tail.location)))
    return version


def _put_append(tail: LogTail, files: Sequence[WrittenFile], operation: str, parameters: dict[str, str],
                app_transaction: AppTransaction) -> int | None:
    """Put the append's commit file in place after the latest version, moving past commits other processes land
    first (an append reads nothing, so it is valid after any of them); None when the table's metadata or protocol
    changed meanwhile. A commit of the same stream's txn that landed first fails it, as in delta-rs."""
    adds = [add_action(f.path, f.size, f.partition_values, f.modification_time, f.stats or None) for f in files]
    txn = (app_transaction.app_id, app_transaction.version)
    while True:
        state: TailState | None = tail.current()
        if state is None or not state.direct:
            return None
        done = state.transaction_version(app_transaction.app_id)
        if done is not None and done >= app_transaction.version:
            raise DeltaCommitConflictError(
                f"another writer committed batch {done} of stream {app_transaction.app_id} to the table first",
                hint="the stream's batch is already in the table; restart the stream to carry on from it")
        info = append_commit_info(int(time.time() * 1000), state.partition_columns,
                                  {OPERATION_KEY: operation, PARAMETERS_KEY: json.dumps(parameters)},
                                  client_version())
        version = state.version + 1
        if put_commit(tail.location, version, [info, *adds, transaction_action(*txn)]):
            tail.committed(state, version, txn)
            return version


def overwrite(location: str, df: DataFrame, operation: str = "WRITE",
              parameters: dict[str, str] | None = None, app_transaction: AppTransaction | None = None,
              table: Any = None) -> int:
    """Replace every row of the table by `df`'s as one commit (`table`: as for `append`)."""

    table = open_table(location) if table is None else table
    files = write_files(df, location, table.metadata().partition_columns)
    return commit_actions(table, _adds(files), "overwrite", operation, parameters or {"mode": "Overwrite"},
                          app_transaction)


def overwrite_with_schema(location: str, read_version: int, df: DataFrame, schema: Any, operation: str,
                          parameters: dict[str, str] | None = None) -> int:
    """Replace every row of the table (as of `read_version`) by `df`'s, whose columns are `schema`'s (a deltalake
    Schema that adds or drops columns), as one commit: the new schema and the files written in it land together.
    delta-rs can change a schema only in an overwrite, so a change of columns rewrites the whole table."""
    table = open_table(location, version=read_version)
    files = write_files(df, location, table.metadata().partition_columns)
    return commit_actions(table, _adds(files), "overwrite", operation, parameters, schema=schema)


def rewrite(location: str, read_version: int, removed: Sequence[str], df: DataFrame | None, operation: str,
            parameters: dict[str, str] | None = None) -> int:
    """Replace the files `removed` (absolute paths or URIs of version `read_version`) by `df`'s rows, as one commit
    checked against what happened since `read_version`."""
    table = open_table(location, version=read_version)
    files = write_files(df, location, table.metadata().partition_columns) if df is not None else []
    return replace_files(table, _relative_paths(location, removed), files, operation, parameters)


def replace_files(table: Any, removed: Sequence[str], files: Sequence[WrittenFile], operation: str,
                  parameters: dict[str, str] | None = None, app_transaction: AppTransaction | None = None, *,
                  announce: bool = True) -> int:
    """One commit removing the data files `removed` (relative to the table and decoded, as remove actions name
    them) and adding `files`: the rows of part of the table, rewritten by the caller."""
    from deltalake.transaction import RemoveAction

    now = int(time.time() * 1000)
    actions: list[Any] = [RemoveAction(path, True, now) for path in removed]
    actions.extend(_adds(files))
    return commit_actions(table, actions, "append", operation, parameters, app_transaction, announce=announce)


def _relative_paths(location: str, removed: Sequence[str]) -> list[str]:
    """The paths of `removed` (file URIs, as the readers' file column gives them) relative to the table, decoded as
    delta-rs takes them."""
    if is_object_uri(location):
        root = str(as_location(location)) + "/"
        return [path.removeprefix(root) for path in removed]
    root = os.path.abspath(location)
    return [os.path.relpath(unquote(path.removeprefix("file:")), root) for path in removed]


def replace_with_arrow(location: str, read_version: int, rows: Any, operation: str,
                       parameters: dict[str, str] | None = None) -> int:
    """Replace every file of the table (as of `read_version`) by one Parquet file of the Arrow table `rows`, written
    on the driver (for a small result Spark has already computed in memory), as one commit."""
    files = write_arrow(location, [rows])
    return commit_actions(open_table(location, version=read_version), _adds(files), "overwrite", operation, parameters)


def write_arrow(location: str, parts: Sequence[pa.Table], plain_columns: Sequence[str] = ()) -> list[WrittenFile]:
    """The driver writes each Arrow table of `parts` as one Parquet file of the (unpartitioned) table at `location`,
    not committed yet. `plain_columns`: written without a dictionary or statistics, for a column of distinct values
    nothing filters on (on an object store every column has both)."""
    import uuid

    import pyarrow.parquet as pq

    if is_object_uri(location):
        return [file for part in parts for file in write_arrow_files(location, part)]
    staging = f"_sg_write_{uuid.uuid4().hex}"
    os.makedirs(os.path.join(location, staging))

    def write(number: int) -> None:
        part = parts[number]
        encoded = [name for name in part.column_names if name not in plain_columns]
        pq.write_table(part, os.path.join(location, staging, f"part-{number:05d}-{uuid.uuid4().hex}.snappy.parquet"),
                       compression="snappy", use_dictionary=encoded, write_statistics=encoded)

    if len(parts) > 1:   # pyarrow writes without the GIL: the parts side by side
        with ThreadPoolExecutor(max_workers=min(len(parts), os.cpu_count() or 1)) as pool:
            list(pool.map(write, range(len(parts))))
    elif parts:
        write(0)
    return list_written_files(location, staging)
