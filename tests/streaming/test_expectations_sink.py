"""The Delta sink with expectations, driven batch by batch on real Spark and Delta: both tables' commits are exactly
once under replay (each checks its own txn version, so a crash between the quarantine's commit and the table's
writes the missing one only), a FAIL UPDATE commits neither, and complete mode replaces the quarantine with the
current result's rejected rows."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from sluicegate.dialect.streaming.plan import ExpectationSpec
from sluicegate.engine.streams.errors import RAISED_IN_BATCH
from sluicegate.engine.streams.expectations import BatchChecks, ExpectationViolationError, quarantine_schema
from sluicegate.engine.streams.sink import BatchWritten, DeltaSink, QuarantineMissingError
from sluicegate.storage.delta.write import commit_files

STREAM = "0123456789abcdef0123456789abcdef"
DROP = (ExpectationSpec("positive", "amount > 0", "drop"), ExpectationSpec("named", "name IS NOT NULL", "warn"))


def _tables(spark: Any, root: Path) -> tuple[str, str, Any]:
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = spark.createDataFrame([], "name STRING, amount DOUBLE").schema
    table, quarantine = str(root / "t"), str(root / "t__quarantine")
    commit_files(table, [], to_arrow_schema(schema), "append", create=True)
    commit_files(quarantine, [], to_arrow_schema(quarantine_schema(schema)), "append", create=True)
    return table, quarantine, schema


def _rows(location: str, *columns: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(r[c] for c in columns) for r in DeltaTable(location).to_pyarrow_table().to_pylist()),
                  key=repr)


def test_replays_write_each_table_once(spark: Any, tmp_path: Path) -> None:
    table, quarantine, schema = _tables(spark, tmp_path)
    written: list[BatchWritten] = []
    checks = BatchChecks(DROP, "db.t")
    sink = DeltaSink(table, STREAM, "append", (), written.append, checks, quarantine)
    first = spark.createDataFrame([("a", 1.0), ("b", -1.0), (None, 2.0)], schema)
    sink(first, 0)
    sink(first, 0)  # replayed after a crash that came after both commits: nothing more
    assert DeltaTable(table).version() == 1 and DeltaTable(quarantine).version() == 1
    assert [w.replayed for w in written] == [False, True] and written[1].quality is None
    assert written[0].quality == {"dropped_records": 1, "expectations": [
        {"name": "positive", "dataset": "db.t", "passed_records": 2, "failed_records": 1},
        {"name": "named", "dataset": "db.t", "passed_records": 2, "failed_records": 1}]}
    # a crash between the quarantine's commit of batch 1 and the table's: the replay writes the table only
    second = spark.createDataFrame([("c", -3.0), ("d", 4.0)], schema)
    sink._write_quarantine(checks.quarantined(checks.flagged(second), 1, dt.datetime.now(dt.timezone.utc)), 1)
    sink(second, 1)
    assert DeltaTable(quarantine).version() == 2 and DeltaTable(table).version() == 2
    # `named` only warns: the unnamed row stays in the table
    assert _rows(table, "name", "amount") == sorted([("a", 1.0), (None, 2.0), ("d", 4.0)], key=repr)
    assert _rows(quarantine, "name", "_batch_id") == [("b", 0), ("c", 1)]
    assert DeltaTable(table).transaction_version(STREAM) == DeltaTable(quarantine).transaction_version(STREAM) == 1
    # and the other way round: the table's commit of batch 2 made, the quarantine's not: the replay writes it only
    third = spark.createDataFrame([("e", -4.0), ("f", 5.0)], schema)
    sink._write(checks.kept(checks.flagged(third)), 2)
    sink(third, 2)
    assert DeltaTable(table).version() == 3 and DeltaTable(quarantine).version() == 3
    assert [r for r in _rows(table, "name") if r[0] in ("e", "f")] == [("f",)]
    assert _rows(quarantine, "name", "_batch_id") == [("b", 0), ("c", 1), ("e", 2)]
    assert written[-1].replayed and written[-1].quality is None  # counted once, with the table's commit


def test_fail_update_commits_neither_table(spark: Any, tmp_path: Path) -> None:
    table, quarantine, schema = _tables(spark, tmp_path)
    specs = (ExpectationSpec("positive", "amount > 0", "drop"), ExpectationSpec("small", "amount < 100", "fail"))
    sink = DeltaSink(table, STREAM, "append", (), None, BatchChecks(specs, "db.t"), quarantine)
    with pytest.raises(ExpectationViolationError) as raised:
        sink(spark.createDataFrame([("ok", 1.0), ("neg", -1.0), ("big", 500.0)], schema), 0)
    message = str(raised.value)
    assert message.startswith("[EXPECTATION_VIOLATION.FAIL_UPDATE] Flow 'db.t' failed to meet the expectation.")
    assert "Violated expectations: 'small'" in message and '"name": "big"' in message
    assert raised.value.sqlstate == "22000"
    assert DeltaTable(table).version() == 0 and DeltaTable(quarantine).version() == 0
    assert RAISED_IN_BATCH.take(STREAM) == "EXPECTATION_VIOLATION.FAIL_UPDATE"  # the class, for the retry decision


def test_complete_mode_replaces_the_quarantine_with_the_current_rejects(spark: Any, tmp_path: Path) -> None:
    table, quarantine, schema = _tables(spark, tmp_path)
    sink = DeltaSink(table, STREAM, "complete", (), None, BatchChecks(DROP, "db.t"), quarantine)
    sink(spark.createDataFrame([("a", 1.0), ("b", -1.0)], schema), 0)
    sink(spark.createDataFrame([("a", 2.0), ("b", 3.0), ("c", -2.0)], schema), 1)
    assert _rows(table, "name", "amount") == [("a", 2.0), ("b", 3.0)]
    assert _rows(quarantine, "name", "_batch_id") == [("c", 1)]
    sink(spark.createDataFrame([("a", 2.0)], schema), 2)
    assert _rows(quarantine, "name") == []  # the result has no rejected row any more


def test_a_missing_quarantine_table_stops_the_batch_before_any_commit(spark: Any, tmp_path: Path) -> None:
    table, _quarantine, schema = _tables(spark, tmp_path)
    gone = str(tmp_path / "db.db" / "t__quarantine")  # a quarantine table dropped by hand
    sink = DeltaSink(table, STREAM, "append", (), None, BatchChecks(DROP, "db.t"), gone)
    with pytest.raises(QuarantineMissingError, match="db.t__quarantine is missing"):
        sink(spark.createDataFrame([("a", 1.0), ("b", -1.0)], schema), 0)
    assert RAISED_IN_BATCH.take(STREAM) == QuarantineMissingError.error_class  # for the retry decision
    assert DeltaTable(table).version() == 0  # nothing committed: the replay, once it exists again, writes both
