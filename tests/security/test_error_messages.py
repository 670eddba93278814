"""With errors.include_stack_trace = false no JVM stack frame, Py4J wrapper or cause chain reaches a client (review
row 24): real Py4J errors from the real Spark session, cut by sluicegate.storage.spark_errors."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sluicegate.storage.spark_errors import from_spark, short_message

FRAME = re.compile(r"^\s*at [\w$.<>/-]+\(", re.MULTILINE)


def _error(call: Any) -> BaseException:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the error is what the test wants
        return exc
    raise AssertionError("the call did not fail")


def _assert_clean(text: str) -> None:
    assert not FRAME.search(text), text
    assert "An error occurred while calling" not in text, text
    assert "JVM stacktrace" not in text and "Driver stacktrace" not in text, text
    assert text.count("Caused by:") <= 1, text
    assert len(text.splitlines()) <= 13, text


def test_py4j_errors_lose_their_frames_and_wrappers(spark: Any) -> None:
    failures = [
        _error(lambda: spark._jsparkSession.sql(None)),  # a Py4J call with a bad argument: NullPointerException
        _error(lambda: spark.sql("SELECT java_method('java.lang.Integer', 'parseInt', 'x')").collect()),
        _error(lambda: spark.sparkContext._jvm.java.lang.Integer.parseInt("not a number")),
    ]
    for exc in failures:
        raw = str(exc)
        message = from_spark(exc, include_stack_trace=False).message
        _assert_clean(message)
        _assert_clean(short_message(raw))
        assert message.strip(), raw
    npe = from_spark(failures[0]).message
    assert npe.startswith("java.lang.NullPointerException"), npe
    assert "NumberFormatException" in from_spark(failures[1]).message + str(failures[1])


@pytest.mark.parametrize("text, expected", [
    ("An error occurred while calling o15705.getResult.\n: org.apache.spark.SparkException: Exception thrown in "
     "awaitResult: \n\tat org.apache.spark.util.SparkThreadUtils$.awaitResult(SparkThreadUtils.scala:56)\n\t"
     "at java.base/java.lang.Thread.run(Thread.java:840)\nCaused by: java.lang.IllegalStateException: gone\n\t"
     "at a.b.C.d(C.java:1)\n\t... 12 more\nCaused by: java.io.IOException: deeper\n",
     "org.apache.spark.SparkException: Exception thrown in awaitResult:\nCaused by: java.lang.IllegalStateException: "
     "gone"),
    ("[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012\n\nJVM stacktrace:\norg.apache.spark.SparkArithmetic"
     "Exception\n\tat org.apache.spark.sql.errors.QueryExecutionErrors$.divideByZeroError(X.scala:1)",
     "[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012"),
])
def test_short_message_keeps_the_first_sentences(text: str, expected: str) -> None:
    assert short_message(text) == expected


def test_an_error_whose_query_context_cannot_be_read_reaches_the_client_as_itself(spark: Any) -> None:
    """A DataFrame call of the gateway's own fails with a DataFrame context, whose startIndex() raises: the error
    is still Spark's own, with its class and SQLSTATE, not an INTERNAL_ERROR about the context."""
    from pyspark.sql import functions as F

    frame = spark.sql("SELECT id, CAST(id AS INT) AS id FROM range(1)")
    exc = _error(lambda: frame.select(F.col("id")))
    error = from_spark(exc, "INSERT INTO t SELECT id, CAST(id AS INT) FROM range(1)")
    assert (error.error_class, error.sqlstate) == ("AMBIGUOUS_REFERENCE", "42704")
    assert "ambiguous" in error.message and (error.line, error.column) == (None, None)
