"""What a stream's appending sink knows of its table at the latest version, kept up by reading each new commit file
by name: the version, the partition columns, the configuration, whether the protocol lets it append directly, and
the txn versions of the streams that wrote since.

An append sink asks two things a micro-batch: has this batch been committed (its txn version), and which version
comes next. With a delta-rs table kept open, each answer brought the table forward with `load_as_version`, which
lists the whole log folder (storage/delta/log_commits.py has the figures). Here the delta-rs table (the KeptTable's)
is the base, at the version it was last brought to; the commits after it are read one by one by name (a `stat` finds
each), keeping only their txn actions. A commit that changes the table's metadata or protocol, a table dropped and
made again (the commit file's fingerprint), or more than `MAX_COMMITS_TO_CATCH_UP` commits at once: the base is
brought forward through delta-rs instead, as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sluicegate.storage.delta.kept import MAX_COMMITS_TO_CATCH_UP, Fingerprint, KeptTable, fingerprint, newest_version
from sluicegate.storage.delta.log_commits import appends_directly, read_commit


@dataclass
class TailState:
    """The table as of `version`: its base delta-rs table (at `base_version`, or later when its other users moved
    it) and what the commits after the base's version said."""

    base: Any
    base_version: int
    version: int
    fingerprint: Fingerprint | None
    partition_columns: tuple[str, ...]
    configuration: dict[str, str]
    direct: bool
    # app id -> (the version of the commit, its txn version) for the txn actions of the commits after the base's
    transactions: dict[str, tuple[int, int]] = field(default_factory=dict)

    def transaction_version(self, app_id: str) -> int | None:
        """The last txn version of `app_id` in the table: the tail's when its commit is newer than what the base
        table holds now (another user of the KeptTable may have moved it on), else the base's."""
        seen = self.transactions.get(app_id)
        if seen is not None and seen[0] > int(self.base.version()):
            return seen[1]
        return self.base.transaction_version(app_id)


class LogTail:
    """The latest state of the local table a KeptTable keeps, brought forward without listing its log."""

    def __init__(self, kept: KeptTable) -> None:
        self.kept = kept
        self._state: TailState | None = None

    @property
    def location(self) -> str:
        return self.kept.location

    def current(self) -> TailState | None:
        """The table at its latest version; None when there is no Delta table."""
        state = self._state
        if state is not None and self._follow(state):
            return state
        return self.rebase()

    def rebase(self) -> TailState | None:
        """Bring the base forward through delta-rs (the KeptTable's own way) and start the tail from it."""
        table = self.kept.latest()
        if table is None:
            self._state = None
            return None
        metadata = table.metadata()
        version = int(table.version())
        self._state = TailState(table, version, version, fingerprint(self.location, version),
                                tuple(metadata.partition_columns), dict(metadata.configuration),
                                appends_directly(table.protocol()))
        return self._state

    def committed(self, state: TailState, version: int, transaction: tuple[str, int] | None) -> None:
        """Record the commit of `version` this writer just put in place after `state.version`."""
        state.version = version
        state.fingerprint = fingerprint(self.location, version)
        if transaction is not None:
            state.transactions[transaction[0]] = (version, transaction[1])

    def _follow(self, state: TailState) -> bool:
        """Read the commits after `state.version` into `state`; False when the base must be brought forward."""
        if state.fingerprint is None or fingerprint(self.location, state.version) != state.fingerprint:
            return False
        latest = newest_version(self.location, state.version, MAX_COMMITS_TO_CATCH_UP)
        if latest is None:
            return False
        for version in range(state.version + 1, latest + 1):
            try:
                actions = read_commit(self.location, version)
            except (OSError, ValueError):
                return False
            if any("metaData" in action or "protocol" in action for action in actions):
                return False
            for action in actions:
                txn = action.get("txn")
                if txn is not None:
                    state.transactions[str(txn["appId"])] = (version, int(txn["version"]))
            state.version = version
        state.fingerprint = fingerprint(self.location, state.version)
        return True
