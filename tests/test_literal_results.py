"""A projection of plain literals (`SELECT 1`) answered by the gateway itself is Spark's own answer: the same column
names, types, nullability and values, checked against Spark's analysis of each statement and, through PyHive,
against the same projection that Spark computes (wrapped in a subquery, which the gateway leaves to Spark). What is
not exactly computable here goes to Spark."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from sluicegate.engine.literal_results import literal_result
from sluicegate.engine.sql import stream_dataframe

ANSWERED = [
    "SELECT 1",
    "select 0",
    "SELECT 007",
    "SELECT 2147483647, 2147483648, 9223372036854775807",
    "SELECT TRUE, false",
    "SELECT 'abc', '', 'héllo wörld'",
    "SELECT 1 AS a, 2 AS a",
    "SELECT 1 AS MixedCase, 'x' as `quoted name`, true AS _b2",
    "  SELECT\n1 ,2  ",
]
TO_SPARK = [
    "SELECT -1",
    "SELECT 1.5",
    "SELECT 1L",
    "SELECT 9223372036854775808",  # a DECIMAL(19,0)
    "SELECT 'a\\'b'",
    "SELECT 'a' 'b'",
    "SELECT \"a\"",
    "SELECT NULL",
    "SELECT 1 AS from",
    "SELECT 1 x",
    "SELECT 1 -- a comment",
    "SELECT 1 FROM range(1)",
    "SELECT 1 LIMIT 0",
    "SELECT DISTINCT 1",
    "SELECT 1,",
    "SELECT 1 + 1",
    "SELECT current_user()",
]


def _spark_answer(spark: Any, sql: str) -> tuple[list[Any], list[dict[str, Any]]]:
    result = stream_dataframe(spark, spark.sql(sql), sql, "literal-results-test")
    schema, source = result.open()
    return result.columns, pa.Table.from_batches(list(source), schema=schema).to_pylist()


@pytest.mark.parametrize("sql", ANSWERED)
def test_the_gateway_answers_as_spark_does(spark: Any, sql: str) -> None:
    answered = literal_result(sql)
    assert answered is not None, f"{sql!r} should be answered without Spark"
    schema, source = answered.open()
    columns, rows = _spark_answer(spark, sql)
    assert answered.columns == columns
    assert pa.Table.from_batches(list(source), schema=schema).to_pylist() == rows


@pytest.mark.parametrize("sql", TO_SPARK)
def test_what_is_not_plain_goes_to_spark(sql: str) -> None:
    assert literal_result(sql) is None


def test_pyhive_sees_spark_s_answer(connect: Any) -> None:
    """Through the gateway: each statement as answered here, and wrapped so that Spark computes it."""
    cursor = connect().cursor()
    for sql in ANSWERED:
        cursor.execute(sql)
        here = (cursor.description, cursor.fetchall())
        cursor.execute(f"SELECT * FROM ({sql}) AS t")
        assert here == (cursor.description, cursor.fetchall()), sql
