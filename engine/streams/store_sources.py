"""Spark Python data sources that carry an object store's settings: the settings ride on a subclass made here,
pickled by value with it, never on an option (options are shown in Spark's plans and UI)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.storage.settings import ObjectStoreSettings


def register_carrying(spark: SparkSession, source: type[Any], store: ObjectStoreSettings) -> str:
    """Register a subclass of `source` whose `store` is `store`, under a name of its own, and return the name: Spark
    refuses to register a name another session (the thread's active one) already has, and each stream has its own
    session."""
    name = f"{source.name()}_{uuid.uuid4().hex[:16]}"

    class Carrying(source):  # type: ignore[misc, valid-type]
        @classmethod
        def name(cls) -> str:
            return name

    Carrying.store = store
    spark.dataSource.register(Carrying)
    return name
