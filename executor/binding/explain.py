"""EXPLAIN of a query over Delta tables says which files each table reference reads: Spark's plan shows only the
temporary view the binder put there, so how many files data skipping left out (or that it was off) would otherwise
be nowhere to see. The lines go before Spark's plan text, which stays as Spark wrote it."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from sqlglot.errors import TokenError

from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.engine.sql import ListBatchSource, StatementResult
from sluicegate.executor.binding.binder import TableRead

HEADER = "== Delta files =="


def explains(sql: str) -> bool:
    """Whether the statement is an EXPLAIN (its first token, comments skipped)."""
    try:
        tokens = StreamingSpark().tokenize(sql)
    except TokenError:
        return False  # not text sqlglot reads: no binder ran on it either
    return bool(tokens) and tokens[0].text.upper() == "EXPLAIN"


def read_line(read: TableRead) -> str:
    """`Delta main.db.t version 12: read 3 of 3000 files (2997 skipped by statistics)`."""
    head = f"Delta {read.table} version {read.version}: "
    if not read.skipping:
        return head + f"read {read.files} files (data skipping is off)"
    if read.files == read.total:
        return head + f"read {read.files} files"
    return head + f"read {read.files} of {read.total} files ({read.total - read.files} skipped by statistics)"


def with_reads(result: StatementResult, reads: Sequence[TableRead]) -> StatementResult:
    """EXPLAIN's one-row, one-column result with the lines of `reads` before Spark's plan text."""
    if not reads or len(result.columns) != 1:
        return result
    schema, source = result.open()
    try:
        batches = list(source)
    finally:
        source.close()
    table = pa.Table.from_batches(batches, schema=schema)
    if table.num_rows != 1 or not pa.types.is_string(table.schema.field(0).type):
        return result
    plan = table.column(0)[0].as_py() or ""
    text = "\n".join([HEADER, *(read_line(read) for read in reads), "", plan])
    batch = pa.RecordBatch.from_arrays([pa.array([text], schema.field(0).type)], schema=schema)
    return StatementResult(result.columns, lambda: ListBatchSource([batch]))
