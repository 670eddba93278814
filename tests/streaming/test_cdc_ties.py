"""The driver's AUTO CDC ties (engine/streams/cdc_ties.py) against Spark's own `to_json(struct(...))`: the same text
for every row, or the ranking of equal-sequence events and the ties kept in the state would differ by the path a
batch took (issue 29)."""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from sluicegate.engine.streams.cdc_ties import json_ties, ties_on_driver

pytestmark = pytest.mark.jvm

# every character Jackson escapes, its neighbours, quotes, and characters of 2, 3 and 4 UTF-8 bytes
ALPHABET = [chr(c) for c in range(0x21)] + ['"', "\\", "/", "'", "a", "Z", "\x7f", "é", "\u2028", "€", "😀", "{", ":"]


def _text(rng: random.Random) -> str | None:
    if rng.random() < 0.2:
        return None
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 6)))


def _rows(rng: random.Random, count: int) -> list[tuple[Any, ...]]:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.15 else value

    return [(maybe(rng.randint(-128, 127)), maybe(rng.randint(-32768, 32767)), maybe(rng.randint(-2**31, 2**31 - 1)),
             maybe(rng.randint(-2**63, 2**63 - 1)), maybe(rng.random() < 0.5), _text(rng), _text(rng))
            for _ in range(count)]


SCHEMA = StructType([StructField("b", ByteType()), StructField("s", ShortType()), StructField("i", IntegerType()),
                     StructField("l", LongType()), StructField("flag", BooleanType()),
                     StructField("name", StringType()), StructField('we"ird\\ \n name', StringType())])


def _spark_and_driver(spark: Any, rows: list[tuple[Any, ...]], columns: list[str]) -> tuple[list[str], list[str]]:
    frame = spark.createDataFrame(rows, SCHEMA)
    quoted = ", ".join("`" + c.replace("`", "``") + "`" for c in columns)
    spark_ties = [r[0] for r in frame.selectExpr(f"to_json(struct({quoted}))").collect()]
    driver_ties = json_ties(frame.toArrow(), columns).to_pylist()
    return spark_ties, driver_ties


def test_driver_ties_equal_spark_to_json_for_random_rows(spark):
    rng = random.Random(2029)
    rows = _rows(rng, 3000)
    spark_ties, driver_ties = _spark_and_driver(spark, rows, [f.name for f in SCHEMA.fields])
    assert len(spark_ties) == 3000
    assert driver_ties == spark_ties
    assert any("\\u00" in t for t in spark_ties) and any('\\"' in t for t in spark_ties)   # escapes were tried


def test_driver_ties_without_nulls_and_of_one_column(spark):
    """Rows without a NULL take one concatenation; a single column, and a struct whose every value is NULL."""
    rng = random.Random(7)
    full = [(1, 2, 3, 4, True, "x\ty", "\"q\"")] + [
        tuple(v if v is not None else d for v, d in zip(row, (0, 0, 0, 0, False, "", ""), strict=True))
        for row in _rows(rng, 500)]
    spark_ties, driver_ties = _spark_and_driver(spark, full, [f.name for f in SCHEMA.fields])
    assert driver_ties == spark_ties
    nulls = [(None, None, None, None, None, None, None), (None, 1, None, None, None, "a", None)]
    spark_ties, driver_ties = _spark_and_driver(spark, nulls, ["b", "name"])
    assert driver_ties == spark_ties == ["{}", '{"name":"a"}']
    plain = [(1, 2, 3, 4, False, "plain", "text")] * 3
    spark_ties, driver_ties = _spark_and_driver(spark, plain, ["name"])
    assert driver_ties == spark_ties == ['{"name":"plain"}'] * 3


def test_only_plain_types_and_spark_s_default_null_fields_go_to_the_driver():
    plain = [ByteType(), ShortType(), IntegerType(), LongType(), BooleanType(), StringType()]
    assert ties_on_driver(plain, "true")
    assert not ties_on_driver(plain, "false")   # NULL fields written as null: Spark writes the tie
    for other in (DateType(), TimestampType(), DecimalType(10, 2), DoubleType(), StructType([])):
        assert not ties_on_driver([IntegerType(), other], "true"), other


def test_sliced_and_chunked_strings_are_escaped_whole():
    """A sliced array's buffer holds bytes outside it; a chunked column, several buffers: each escaped as a whole."""
    values = pa.array(['a"b', "plain", "c\\d", "e\nf"])
    table = pa.table({"v": pa.chunked_array([values.slice(1, 1), values.slice(2, 2)])})
    assert json_ties(table, ["v"]).to_pylist() == ['{"v":"plain"}', '{"v":"c\\\\d"}', '{"v":"e\\nf"}']
