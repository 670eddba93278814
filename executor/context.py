"""What one warehouse statement runs with: the session's Spark, the catalog, the warehouse folder, who asks and the
policy that decides what they may do."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sluicegate.catalog.names import NameKind, check_name, table_folder
from sluicegate.dialect.positions import line_column
from sluicegate.dialect.statements import TableName
from sluicegate.engine.results import TEXT, WireTypes
from sluicegate.executor.binding.session_views import SessionViews

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from sqlglot import exp

    from sluicegate.catalog.store import CatalogStore
    from sluicegate.engine.result_cache import ResultCache
    from sluicegate.engine.sessions import CurrentDatabase
    from sluicegate.engine.streams.protocols import Streams
    from sluicegate.executor.listings.runtime_view import RuntimeView
    from sluicegate.executor.system_work import SystemWork
    from sluicegate.policy import Policy, Principal


@dataclass
class StatementContext:
    spark: SparkSession
    store: CatalogStore
    warehouse: Path
    user: str
    sql: str                       # the statement as typed: error positions point into it
    job_group: str
    policy: Policy                 # the one point that decides what `user` may run
    include_stack_trace: bool = False
    streams: Streams | None = None   # runs the streaming tables' streams (engine/streams/manager.py)
    session_views: SessionViews = field(default_factory=SessionViews)  # the client session's query-defined views
    cancelled: Callable[[], bool] = lambda: False  # whether the statement was cancelled or timed out (long waits)
    runtime: RuntimeView | None = None  # the gateway's live sessions and statements (system.runtime, kill_query)
    system_work: SystemWork | None = None  # records the gateway's own work in the query history (background refreshes)
    notice: Callable[[str], None] = lambda _line: None  # a line for the statement's log (FetchResults' log rows)
    result_cache: ResultCache | None = None   # the gateway's exact result cache (executor/result_cache.py); None: off
    result_types: WireTypes = TEXT   # the types the client reads the result in (a cached answer is kept per types)
    tree: exp.Expr | None = None     # `sql`'s tree as the classifier parsed it (read it, never change it), if known
    database: CurrentDatabase | None = None  # the client session's current database, kept without a round trip

    @property
    def principal(self) -> Principal:
        return self.policy.principal(self.user)

    @property
    def current_database(self) -> str:
        kept = self._kept_database()
        return (kept.get() if kept is not None else self.spark.catalog.currentDatabase()).lower()

    def _kept_database(self) -> CurrentDatabase | None:
        """The kept current database if it is `spark`'s (a context copied onto another session has none)."""
        return self.database if self.database is not None and self.database.spark is self.spark else None

    def use_database(self, name: str) -> None:
        """Make `name` the session's current database (Spark's errors pass through)."""
        kept = self._kept_database()
        if kept is not None:
            kept.use(name)
        else:
            self.spark.catalog.setCurrentDatabase(name)

    def forget_database(self) -> None:
        """After Spark ran a statement as typed: it may have changed the current database; read it again."""
        kept = self._kept_database()
        if kept is not None:
            kept.forget()

    def is_temporary_view(self, name: str) -> bool:
        return bool(self.spark._jsparkSession.sessionState().catalog().getTempView(name).isDefined())

    def qualify(self, table: TableName) -> tuple[str, str]:
        return table.qualified(self.current_database)

    def checked(self, table: TableName, kind: NameKind = "table") -> tuple[str, str]:
        """`table` qualified and lower-cased, each part checked against the name rule (InvalidNameError at the
        name's position): run before a statement creates or renames anything under this name."""
        line, column = self.position_of(table)
        database, name = self.qualify(table)
        check_name(database, "database", line=line, column=column)
        check_name(name, kind, line=line, column=column)
        return database, name

    def location(self, database: str, name: str, kind: NameKind = "table") -> str:
        """Where a managed table lives: WAREHOUSE/<database>.db/<table>, absolute, checked to lie inside the
        warehouse (storage/locations.py creates, moves and removes it)."""
        return str(table_folder(self.warehouse, database, name, kind))

    def position_of(self, table: TableName) -> tuple[int | None, int | None]:
        """Line and column (1-based) where the statement names `table`, as the classifier carried it; (None, None)
        for a name the statement did not write."""
        return self.position_at(table.offset)

    def position_at(self, offset: int | None) -> tuple[int | None, int | None]:
        """Line and column (1-based) of a character offset the classifier carried into the statement's text."""
        if offset is None or not 0 <= offset < len(self.sql):
            return None, None
        return line_column(self.sql, offset)
