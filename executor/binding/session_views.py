"""Temporary views defined by a query, read afresh by every statement, as Spark reads its own.

Spark keeps a SQL temporary view as text and resolves its names on each use, so `CREATE TEMP VIEW v AS SELECT *
FROM t`, an INSERT into `t`, then `SELECT * FROM v` shows the new rows. Spark cannot resolve the warehouse's Delta
tables and catalog views, so the gateway defines the view itself: the query is bound (every catalog table pinned, the
policy judging the plan) and Spark's temporary view is made from the analysed DataFrame, which gives DESCRIBE and
Spark-run statements its columns. The query text is kept here, and the binder binds it again in every later statement
that names the view, so each statement reads the tables at its own pinned versions, as with a catalog view.

An entry is valid only while Spark's temporary view is the one it was made with (compared by JVM identity): a view
dropped or replaced by anything else (`DROP VIEW`, a `USING` view, a DataFrame) is Spark's again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class _Entry:
    sql: str
    identity: int


def _identity(spark: SparkSession, name: str) -> int | None:
    found = spark._jsparkSession.sessionState().catalog().getRawTempView(name)
    if not found.isDefined():
        return None
    jvm = spark._jvm
    assert jvm is not None  # typed optional; a session always has its JVM
    return int(jvm.System.identityHashCode(found.get()))


class SessionViews:
    """One client session's query-defined temporary views: name -> the query text as typed."""

    def __init__(self) -> None:
        self._views: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def define(self, spark: SparkSession, name: str, df: DataFrame, sql: str, replace: bool) -> None:
        """Make Spark's temporary view `name` from the bound `df` and remember `sql` for later statements. Without
        `replace`, an existing view fails with Spark's TEMP_TABLE_OR_VIEW_ALREADY_EXISTS."""
        if replace:
            df.createOrReplaceTempView(name)
        else:
            df.createTempView(name)
        identity = _identity(spark, name)
        with self._lock:
            if identity is None:
                self._views.pop(name.lower(), None)
            else:
                self._views[name.lower()] = _Entry(sql, identity)

    def query_of(self, spark: SparkSession, name: str) -> str | None:
        """The query of `name` if the gateway defined Spark's current temporary view of that name, else None."""
        with self._lock:
            entry = self._views.get(name.lower())
        if entry is None:
            return None
        if _identity(spark, name) != entry.identity:
            with self._lock:
                if self._views.get(name.lower()) is entry:
                    del self._views[name.lower()]
            return None
        return entry.sql
