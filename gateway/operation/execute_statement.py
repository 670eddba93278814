"""ExecuteStatement: a SQL statement classified first, then run by the executor (Delta tables in the
persistent catalog) or, for what Spark runs as it is, by the session's Spark; tagged so that cancel reaches its jobs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sluicegate.dialect.classify import classified
from sluicegate.engine.sessions import set_current_user
from sluicegate.engine.sql import StatementResult, cancel_job_group
from sluicegate.executor.context import StatementContext
from sluicegate.executor.dispatch import execute
from sluicegate.gateway.operation.base import COLUMNS, Operation, OperationType, ResultFormat
from sluicegate.gateway.operation.state import TERMINAL
from sluicegate.gateway.variables import require_bound, substitute
from sluicegate.policy.settings import is_client_hint

if TYPE_CHECKING:
    from sqlglot import exp

    from sluicegate.catalog.store import CatalogStore
    from sluicegate.dialect.statements import Statement
    from sluicegate.engine.result_cache import ResultCache
    from sluicegate.engine.streams.manager import StreamManager
    from sluicegate.executor.listings.runtime_view import RuntimeView
    from sluicegate.executor.system_work import SystemWork
    from sluicegate.gateway.session import Session
    from sluicegate.policy import Policy


class ExecuteStatement(Operation):
    op_type = OperationType.EXECUTE_STATEMENT

    def __init__(self, session: Session, statement: str, conf_overlay: dict[str, str], include_stack_trace: bool,
                 catalog: CatalogStore, warehouse: Path, policy: Policy, streams: StreamManager | None = None,
                 result_format: ResultFormat = COLUMNS, runtime: RuntimeView | None = None,
                 system_work: SystemWork | None = None, result_cache: ResultCache | None = None) -> None:
        """`runtime`: the gateway's live sessions and statements (system.runtime, kill_query); `system_work`: what
        records the background work a statement starts (the pass of a REFRESH ... ASYNC) in the query history;
        `result_cache`: the gateway's exact result cache, None when it is off."""
        super().__init__(session, statement, result_format)
        self._runtime = runtime
        self._system_work = system_work
        self.classified: tuple[Statement, exp.Expr | None] | None = None   # once classified
        self._conf_overlay = conf_overlay
        self._include_stack_trace = include_stack_trace
        self._catalog = catalog
        self._warehouse = warehouse
        self._policy = policy
        self._streams = streams
        self._result_cache = result_cache

    def execute(self) -> StatementResult:
        assert self.statement is not None
        principal = self._policy.principal(self.session.user)
        set_current_user(self.session.spark, self.session.user)
        for key, value in self._conf_overlay.items():
            if not is_client_hint(key):
                self._policy.check_setting(key, principal)
                self.session.spark.conf.set(key, value)
        # What sqlglot cannot parse comes back as Passthrough(parsed=False), for the policy to judge on Spark's plan;
        # a syntax error in a statement the gateway runs itself is raised here with its position.
        sql = substitute(self.statement, lambda name: self.session.spark.conf.get(name, None))
        require_bound(sql)
        statement, tree = classified(sql)
        self.classified = (statement, tree)   # what the query history reads of it, without parsing it again
        context = StatementContext(
            spark=self.session.spark, store=self._catalog, warehouse=self._warehouse, user=self.session.user,
            sql=sql, job_group=self.handle.hex, policy=self._policy,
            include_stack_trace=self._include_stack_trace,
            streams=self._streams, session_views=self.session.views,
            cancelled=lambda: self.state in TERMINAL, runtime=self._runtime, system_work=self._system_work,
            notice=self.log.add, result_cache=self._result_cache, result_types=self.result_format.types, tree=tree,
            database=self.session.database,
        )
        return execute(context, statement)

    def cancel_work(self) -> None:
        cancel_job_group(self.session.spark, self.handle.hex)
