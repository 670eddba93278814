"""Without a JVM: the one function that makes a streaming table's schema from its column list and its query's result,
Delta's NOT NULL error read back from what Spark answers for the gateway's `raise_error`, a stream's stored failure
turned back into an error of its class and SQLSTATE, and CREATE's choice to wait for the first update (the
configuration, the session's setting, the bound)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from sluicegate.dialect.columns import ColumnSpec
from sluicegate.engine.declared_schema import declared_schema
from sluicegate.engine.streams.errors import NON_RETRYABLE_ERROR_CLASSES, retryable, stream_failure
from sluicegate.engine.streams.settings import StreamSettings
from sluicegate.executor.streaming_tables import CREATE_WAITS, _first_update
from sluicegate.policy.settings import check_setting
from sluicegate.storage.delta.not_null import violation_message
from sluicegate.storage.spark_errors import from_spark

RESULT = StructType([StructField("ID", LongType(), True), StructField("n", LongType(), False),
                     StructField("v", StringType(), True)])


def test_the_column_list_decides_nullability_and_comments_the_result_the_rest() -> None:
    declared = (ColumnSpec("id", "bigint", False, "the key"), ColumnSpec("n", "bigint"), ColumnSpec("v", "string"))
    schema = declared_schema(declared, RESULT)
    assert [(f.name, f.nullable, dict(f.metadata)) for f in schema.fields] == [
        ("ID", False, {"comment": "the key"}), ("n", True, {}), ("v", True, {})]
    assert declared_schema((), RESULT) == RESULT          # no list: the result's own schema


def test_a_not_null_violation_reads_as_deltas_error_wherever_spark_wraps_it() -> None:
    message = violation_message("id", "`db`.`t`")
    for text in (f"[USER_RAISED_EXCEPTION] {message} SQLSTATE: P0001",
                 f"[TASK_WRITE_FAILED] Task failed while writing rows to file:/w/t.\nCaused by: "
                 f"[USER_RAISED_EXCEPTION] {message} SQLSTATE: P0001\n== DataFrame ==\n"):
        error = from_spark(RuntimeError(text))
        assert (error.error_class, error.sqlstate) == ("DELTA_NOT_NULL_CONSTRAINT_VIOLATED", "23502")
        assert error.message == "[DELTA_NOT_NULL_CONSTRAINT_VIOLATED] NOT NULL constraint violated for column: id " \
                                "of `db`.`t`."
    other = from_spark(RuntimeError("[USER_RAISED_EXCEPTION] [SOMETHING_ELSE] mine SQLSTATE: P0001"))
    assert other.error_class != "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"
    assert "DELTA_NOT_NULL_CONSTRAINT_VIOLATED" in NON_RETRYABLE_ERROR_CLASSES and not retryable(message)


def test_a_streams_stored_failure_keeps_its_class_and_sqlstate() -> None:
    error = stream_failure("[CAST_INVALID_INPUT] The value 'abc' of the type \"STRING\" cannot be cast to \"INT\" "
                           "because it is malformed. SQLSTATE: 22018")
    assert (error.error_class, error.sqlstate) == ("CAST_INVALID_INPUT", "22018")
    assert (stream_failure(violation_message("id", "`db`.`t`")).sqlstate,
            stream_failure("the query ended").error_class) == ("23502", "STREAM_FAILED")


class _Streams:
    def __init__(self, waits: bool, outcome: str) -> None:
        self.settings = StreamSettings(1.0, 1.0, 1.0, Path("/nowhere"), create_waits=waits, first_update_timeout=5.0)
        self.outcome = outcome
        self.waited: list[tuple[str, str, float]] = []

    def first_update(self, database: str, name: str, cancelled: Any, timeout_seconds: float) -> str:
        self.waited.append((database, name, timeout_seconds))
        return self.outcome


def _ctx(session_setting: str | None, notes: list[str]) -> Any:
    conf = {CREATE_WAITS: session_setting} if session_setting is not None else {}
    return SimpleNamespace(spark=SimpleNamespace(conf=SimpleNamespace(get=conf.get)),
                           cancelled=lambda: False, notice=notes.append)


@pytest.mark.parametrize("configured, session, waits", [
    (True, None, True), (False, None, False), (True, "false", False), (False, "TRUE", True)])
def test_create_waits_as_configured_unless_the_session_says_otherwise(configured: bool, session: str | None,
                                                                       waits: bool) -> None:
    streams, notes = _Streams(configured, "COMPLETED"), []
    _first_update(_ctx(session, notes), streams, "db", "t")
    assert streams.waited == ([("db", "t", 5.0)] if waits else []) and notes == []
    check_setting(CREATE_WAITS)      # a session may set it (no error)


def test_a_first_update_longer_than_the_bound_returns_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    streams, notes = _Streams(True, "TIMED_OUT"), []
    caplog.set_level(logging.WARNING, logger="sluicegate.executor.streaming_tables")
    _first_update(_ctx(None, notes), streams, "db", "t")
    assert len(notes) == 1 and notes[0].startswith("WARNING: the first update of `db`.`t`")
    assert "streams.first_update_timeout (5 s)" in notes[0]
    assert [r.getMessage() for r in caplog.records] == [notes[0].removeprefix("WARNING: ")]
