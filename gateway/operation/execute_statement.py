"""ExecuteStatement: a SQL statement run in the session's Spark session, tagged so that cancel reaches its jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway.operation.base import Operation, OperationType
from runtime.sql import StatementResult, cancel_job_group, run_sql

if TYPE_CHECKING:
    from gateway.session import Session


class ExecuteStatement(Operation):
    op_type = OperationType.EXECUTE_STATEMENT

    def __init__(self, session: Session, statement: str, conf_overlay: dict[str, str], include_stack_trace: bool):
        super().__init__(session, statement)
        self._conf_overlay = conf_overlay
        self._include_stack_trace = include_stack_trace

    def execute(self) -> StatementResult:
        assert self.statement is not None
        for key, value in self._conf_overlay.items():
            self.session.spark.conf.set(key, value)
        return run_sql(
            self.session.spark, self.statement, self.handle.hex, include_stack_trace=self._include_stack_trace
        )

    def cancel_work(self) -> None:
        cancel_job_group(self.session.spark, self.handle.hex)
