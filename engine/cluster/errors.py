"""Errors of running on a cluster."""

from __future__ import annotations

from sluicegate.dialect.errors import SqlError


class SharedStorageError(SqlError):
    """Executors and driver do not see the same files at a folder's path: rows written there would be lost."""

    error_class = "CLUSTER_STORAGE_NOT_SHARED"
    sqlstate = "58030"


class ExecutorsUnavailableError(SqlError):
    """No executor registered with the driver in time, or executors cannot run the project's code."""

    error_class = "CLUSTER_EXECUTORS_UNAVAILABLE"
    sqlstate = "08001"
