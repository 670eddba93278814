"""`SELECT 1` answered by the gateway itself: a projection of plain literals, without a py4j round trip.

Every connection pool validates its connections with `SELECT 1`, and a dashboard tile may be a constant. Through
Spark such a statement makes a dozen py4j round trips (Spark's parse for the policy's text check, `spark.sql`, the
plan check, the schema, and the driver-side rows of engine/driver_results.py), and under load each waits for a JVM
thread on a JVM that Spark's tasks keep busy: the outside load test (issue 28) measured `SELECT 1` at 583 ms p50 with
64 clients, against 4.5 ms alone.

Only what the gateway can compute exactly as Spark does is answered here, and only the text form Spark would name and
type without any setting mattering: `SELECT item, ...` where each item is an unsigned integer literal (INT up to
2^31-1, BIGINT up to 2^63-1, named by its value: `SELECT 007` is column `7`), TRUE / FALSE (BOOLEAN, named `true` /
`false`) or a single-quoted string without quotes or backslashes inside (STRING, named by its text), each optionally
`AS alias` (a plain identifier that is no SQL keyword, or a back-quoted one). Anything else (a sign, a decimal, an
escape, a comment, a function, a FROM, a clause) returns None and goes through Spark as before.
tests/test_literal_results.py holds the answers to Spark's own, through PyHive.
"""

from __future__ import annotations

import re

import pyarrow as pa
from sqlglot.dialects.spark import Spark

from sluicegate.engine.results import ResultColumn, arrow_schema
from sluicegate.engine.sql import ListBatchSource, StatementResult

_INT_MAX = 2**31 - 1
_BIGINT_MAX = 2**63 - 1
_KEYWORDS = frozenset(Spark.Tokenizer.KEYWORDS)  # an alias that might be a keyword goes to Spark, which knows

_LITERAL = r"(?P<int>[0-9]+)|(?P<bool>TRUE|FALSE)|'(?P<str>[^'\\]*)'"
_ALIAS = r"(?:\s+AS\s+(?:(?P<plain>[A-Za-z_][A-Za-z0-9_]*)|`(?P<quoted>[^`]+)`))?"
_ITEM = re.compile(rf"\s*(?:{_LITERAL}){_ALIAS}\s*(?P<end>,|$)", re.IGNORECASE)
_SELECT = re.compile(r"\s*SELECT\s", re.IGNORECASE)

Value = int | bool | str


def _item(match: re.Match[str]) -> tuple[ResultColumn, Value] | None:
    """One projected literal: its column (as Spark names and types it) and its value; None where not exact."""
    name: str
    value: Value
    if match["int"] is not None:
        value = int(match["int"])
        if value > _BIGINT_MAX:
            return None  # a DECIMAL in Spark
        type_name, name = ("int" if value <= _INT_MAX else "bigint"), str(value)
    elif match["bool"] is not None:
        value = match["bool"].lower() == "true"
        type_name, name = "boolean", match["bool"].lower()
    else:
        value = match["str"]
        type_name, name = "string", match["str"]
    if match["plain"] is not None:
        if match["plain"].upper() in _KEYWORDS:
            return None
        name = match["plain"]
    elif match["quoted"] is not None:
        name = match["quoted"]
    return ResultColumn(name=name, type=type_name, nullable=False), value


def literal_result(sql: str) -> StatementResult | None:
    """The result of `sql` if it is a projection of plain literals (see above), computed here; else None."""
    start = _SELECT.match(sql)
    if start is None:
        return None
    items: list[tuple[ResultColumn, Value]] = []
    position = start.end()
    while True:
        match = _ITEM.match(sql, position)
        if match is None:
            return None
        item = _item(match)
        if item is None:
            return None
        items.append(item)
        position = match.end()
        if match["end"] != ",":
            break
    columns = [column for column, _ in items]
    schema = arrow_schema(columns)
    batch = pa.RecordBatch.from_arrays([pa.array([value], type=field.type) for (_, value), field in
                                        zip(items, schema, strict=True)], schema=schema)
    return StatementResult(columns, lambda: ListBatchSource([batch]))
