"""Streaming-table statements in the warehouse: EXPLAIN renders the checked plan; the statements that would run a
stream are refused with a clear error until the stream runtime is wired in (nothing is created half-way)."""

from __future__ import annotations

from typing import Any

from dialect import statements as st
from dialect.streaming.explain import explain
from runtime.sql import StatementResult
from runtime.warehouse.context import StatementContext
from runtime.warehouse.errors import UnsupportedStatementError
from runtime.warehouse.output import rows_result


def explain_streaming_table(_ctx: StatementContext, statement: st.ExplainStreamingTable) -> StatementResult:
    """One row per line, as Spark's EXPLAIN answers in a single `plan` column split by line for a shell."""
    return rows_result([("plan", "string")], [(line,) for line in explain(statement.plan).splitlines()])


def streams_not_running(_ctx: StatementContext, statement: Any) -> StatementResult:
    raise UnsupportedStatementError(
        f"{type(statement).__name__} needs the stream runtime, which this gateway version does not run yet",
        hint="EXPLAIN CREATE STREAMING TABLE ... checks the query and shows its plan and output mode",
    )


HANDLERS = {
    st.ExplainStreamingTable: explain_streaming_table,
    st.CreateStreamingTable: streams_not_running,
    st.DropStreamingTable: streams_not_running,
    st.ShowStreamingTables: streams_not_running,
    st.DescribeStreamingTable: streams_not_running,
}
