"""What EXPLAIN adds before Spark's plan (executor/binding/explain.py): which statements are EXPLAINs, and the line
each Delta table reference gets."""

from __future__ import annotations

import pyarrow as pa

from sluicegate.engine.results import ResultColumn
from sluicegate.engine.sql import ListBatchSource, StatementResult
from sluicegate.executor.binding.binder import TableRead
from sluicegate.executor.binding.explain import explains, read_line, with_reads


def test_explain_is_the_first_token_after_comments() -> None:
    assert explains("EXPLAIN SELECT 1")
    assert explains("-- why\n  /* slow */ explain extended SELECT * FROM t")
    assert not explains("SELECT 'EXPLAIN'")
    assert not explains("DESCRIBE t")


def test_each_reference_says_what_it_read() -> None:
    assert read_line(TableRead("main.db.t", 12, 3, 3000)) == (
        "Delta main.db.t version 12: read 3 of 3000 files (2997 skipped by statistics)")
    assert read_line(TableRead("main.db.t", 12, 3000, 3000)) == "Delta main.db.t version 12: read 3000 files"
    assert read_line(TableRead("main.db.t", 0, 0, 0)) == "Delta main.db.t version 0: read 0 files"
    assert read_line(TableRead("main.db.t", 4, 9, 9, skipping=False)) == (
        "Delta main.db.t version 4: read 9 files (data skipping is off)")


def test_the_lines_go_before_sparks_plan_which_stays_as_it_was() -> None:
    plan = "== Physical Plan ==\n*(1) Scan\n"
    batch = pa.RecordBatch.from_arrays([pa.array([plan])], names=["_c0"])
    result = StatementResult([ResultColumn("plan", "string")], lambda: ListBatchSource([batch]))
    reads = [TableRead("main.db.t", 2, 1, 5), TableRead("main.db.u", 7, 4, 4)]
    schema, source = with_reads(result, reads).open()
    text = pa.Table.from_batches(list(source), schema=schema).column(0)[0].as_py()
    assert text == ("== Delta files ==\nDelta main.db.t version 2: read 1 of 5 files (4 skipped by statistics)\n"
                    "Delta main.db.u version 7: read 4 files\n\n" + plan)
    assert with_reads(result, []) is result
