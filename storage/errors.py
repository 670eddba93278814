"""Errors of the storage layer, in the gateway's typed hierarchy. Their messages name locations, never
credentials."""

from __future__ import annotations

from sluicegate.storage.spark_errors import RuntimeQueryError


class StorageError(RuntimeQueryError):
    error_class = "STORAGE_ERROR"
    sqlstate = "58030"


class UnknownObjectStoreError(StorageError):
    """An object URI under no prefix the gateway was configured with: credentials are never guessed."""

    error_class = "OBJECT_STORE_NOT_CONFIGURED"
    sqlstate = "42501"


class ObjectStoreUnavailableError(StorageError):
    """The store could not be reached, or refused the request (a wrong endpoint, key or bucket)."""

    error_class = "OBJECT_STORE_UNAVAILABLE"
    sqlstate = "08001"
