"""Data skipping: the files of a snapshot whose Delta statistics say they may hold a row a query's predicates keep.

A streaming table collects a file per micro-batch (170,000 in a day), and a point query that reads them all spends
seconds listing and opening files that cannot match. Each add action's statistics (numRecords, and per column
nullCount, minValues, maxValues; the partition values) bound what a file holds, so a file whose bounds exclude the
predicate is left out. The rule is to keep a file unless its statistics PROVE it holds no matching row:

- a file or column without statistics is kept; NULL never satisfies a comparison, so a file whose rows are all NULL
  in the column cannot match one; IS NULL needs a NULL (nullCount > 0), IS NOT NULL a value;
- only types whose min/max are exact and ordered as Spark orders them are compared: integers, strings (UTF-8 byte
  order; a max of 32 characters or more may be a writer's truncation, so it bounds nothing), booleans, dates. Not
  floating point (Spark orders NaN above every number, Parquet statistics leave it out), decimals or timestamps;
- a literal is compared only when Spark would compare it unchanged: an integer with an integer column, a string with
  a string column, a date (or a `YYYY-MM-DD` string, which Spark casts to that date) with a date column.

The work is vectorised with pyarrow.compute over delta-rs' flattened add actions (`min.<col>`, `max.<col>`,
`null_count.<col>`, `num_records`, `partition.<col>`), in the order of `Snapshot.files` (delta-rs lists both from
one replay of the log; a snapshot whose actions do not line up is read whole).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypeAlias
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc

from sluicegate.dialect.filters import (
    EQ,
    GE,
    GT,
    IN,
    IS_NOT_NULL,
    IS_NULL,
    LE,
    LT,
    AllOf,
    AnyOf,
    Comparison,
    Predicate,
    Value,
)
from sluicegate.storage.delta.snapshots import Snapshot

__all__ = ["Pruned", "may_match", "prune"]

STRING_PREFIX = 32          # writers (Delta's own) truncate string statistics to this many characters
_IN_LIST_LIMIT = 64         # a longer IN list is bounded by its smallest and largest value
_INT64 = (-(2 ** 63), 2 ** 63 - 1)
_DATE_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_BELOW = {LT: pc.less, LE: pc.less_equal}            # answered by a file's min
_ABOVE = {GT: pc.greater, GE: pc.greater_equal}      # answered by a file's max

Mask: TypeAlias = "pa.Array | pa.ChunkedArray"  # one boolean per add action


@dataclass(frozen=True)
class Pruned:
    """A snapshot cut down to the files that may match, and how many it had."""

    snapshot: Snapshot
    total: int

    @property
    def skipped(self) -> int:
        return self.total - len(self.snapshot.files)


@dataclass(frozen=True)
class _Bounds:
    """What the statistics say of one column in each file: nulls in an array mean 'unknown'."""

    low: pa.ChunkedArray
    high: pa.ChunkedArray
    has_null: Mask      # the file holds a NULL in the column
    all_null: Mask      # every row of the file is NULL in the column


def prune(snapshot: Snapshot, predicates: Sequence[Predicate]) -> Pruned:
    """`snapshot` with only the files that may hold a row satisfying every predicate (its statistics dropped: they
    describe the files it had)."""
    total = len(snapshot.files)
    if not predicates or not total or snapshot.add_actions is None:
        return Pruned(snapshot, total)
    actions = snapshot.add_actions()
    if not _lines_up(actions, snapshot.files):
        return Pruned(snapshot, total)
    mask = may_match(actions, snapshot, predicates)
    if mask is None:
        return Pruned(snapshot, total)
    kept = pc.indices_nonzero(mask).to_pylist()
    files = snapshot.files
    return Pruned(replace(snapshot, files=tuple(files[i] for i in kept), add_actions=None), total)


def _lines_up(actions: pa.Table, files: Sequence[str]) -> bool:
    """Whether the add actions are the snapshot's files in the same order (checked at the ends and the middle:
    delta-rs lists both from one replay, so a mismatch means something else entirely). An action's path is
    percent-encoded once more than the URI (`a%2520b` for `a%20b`, a partition value `a b`)."""
    if actions.num_rows != len(files) or "path" not in actions.column_names:
        return False
    paths = actions.column("path")
    return all(unquote(files[i]).endswith(unquote(unquote(str(paths[i].as_py()))))
               for i in {0, len(files) // 2, len(files) - 1})


def may_match(actions: pa.Table, snapshot: Snapshot, predicates: Sequence[Predicate]) -> Mask | None:
    """One boolean per add action: False when the file cannot hold a row satisfying every predicate; None when no
    predicate can be answered from the statistics (every file may match)."""
    masks = [mask for mask in (_evaluate(p, actions, snapshot) for p in predicates) if mask is not None]
    if not masks:
        return None
    result = masks[0]
    for mask in masks[1:]:
        result = pc.and_(result, mask)
    return result


def _evaluate(predicate: Predicate, actions: pa.Table, snapshot: Snapshot) -> Mask | None:
    if isinstance(predicate, AllOf):
        return may_match(actions, snapshot, predicate.parts)
    if isinstance(predicate, AnyOf):
        masks = [_evaluate(branch, actions, snapshot) for branch in predicate.branches]
        if any(mask is None for mask in masks):
            return None  # a branch the statistics cannot answer may match in every file
        result = masks[0]
        for mask in masks[1:]:
            result = pc.or_(result, mask)
        return result
    return _comparison(predicate, actions, snapshot)


def _column(snapshot: Snapshot, name: str) -> pa.Field | None:
    """The visible top-level column `name` resolves to as Spark resolves it (case-insensitively), if exactly one."""
    found = [f for f in snapshot.schema if f.name.lower() == name.lower() and f.name not in snapshot.hidden]
    if len(found) != 1 or "." in found[0].name:
        return None  # none (an outer query's column, say), ambiguous, or a name the flattened statistics split
    return found[0]


def _bounds(actions: pa.Table, snapshot: Snapshot, name: str) -> _Bounds | None:
    names = set(actions.column_names)
    rows = actions.num_rows
    if name in snapshot.partition_columns:
        if f"partition.{name}" not in names:
            return None
        value = actions.column(f"partition.{name}")
        missing = pc.is_null(value)
        return _Bounds(value, value, missing, missing)
    if "num_records" not in names or f"null_count.{name}" not in names:
        return None
    nulls, records = actions.column(f"null_count.{name}"), actions.column("num_records")
    unknown = pa.chunked_array([pa.nulls(rows, pa.int64())])
    low = actions.column(f"min.{name}") if f"min.{name}" in names else unknown
    high = actions.column(f"max.{name}") if f"max.{name}" in names else unknown
    return _Bounds(low, high, pc.greater(nulls, 0), pc.equal(nulls, records))


def _comparison(predicate: Comparison, actions: pa.Table, snapshot: Snapshot) -> Mask | None:
    field = _column(snapshot, predicate.column)
    if field is None or pa.types.is_nested(field.type):
        return None
    bounds = _bounds(actions, snapshot, field.name)
    if bounds is None:
        return None
    if predicate.op == IS_NULL:
        return pc.fill_null(bounds.has_null, True)
    if predicate.op == IS_NOT_NULL:
        return pc.invert(pc.fill_null(bounds.all_null, False))
    kind = _kind(field.type)
    found = [_comparable(value, kind) for value in predicate.values]
    if kind is None or not found or any(value is None for value in found):
        return None
    values = [pa.scalar(value, _FAMILY_TYPES[kind]) for value in found]
    low, high = _typed(bounds.low, kind), _typed(bounds.high, kind)
    if low is None or high is None:
        return None
    if kind == "string":  # a long max may be a truncated prefix: no upper bound
        high = pc.if_else(pc.less(pc.utf8_length(high), STRING_PREFIX), high, pa.scalar(None, high.type))
    some_value = pc.invert(pc.fill_null(bounds.all_null, False))
    if predicate.op == IN:
        if len(values) > _IN_LIST_LIMIT:
            ordered = sorted(found)  # type: ignore[type-var]
            within = _between(low, high, values[found.index(ordered[0])], values[found.index(ordered[-1])])
        else:
            within = _equal(low, high, values[0])
            for value in values[1:]:
                within = pc.or_(within, _equal(low, high, value))
    elif predicate.op == EQ:
        within = _equal(low, high, values[0])
    elif predicate.op in _BELOW:
        within = pc.fill_null(_BELOW[predicate.op](low, values[0]), True)
    elif predicate.op in _ABOVE:
        within = pc.fill_null(_ABOVE[predicate.op](high, values[0]), True)
    else:
        return None
    return pc.and_(some_value, within)


def _equal(low: Mask, high: Mask, value: object) -> Mask:
    return pc.and_(pc.fill_null(pc.less_equal(low, value), True), pc.fill_null(pc.greater_equal(high, value), True))


def _between(low: Mask, high: Mask, smallest: object, largest: object) -> Mask:
    return pc.and_(pc.fill_null(pc.less_equal(low, largest), True),
                   pc.fill_null(pc.greater_equal(high, smallest), True))


def _kind(column: pa.DataType) -> str | None:
    """The comparison family of a column type whose statistics are exact and ordered as Spark orders it."""
    if pa.types.is_signed_integer(column):
        return "integer"
    if pa.types.is_string(column) or pa.types.is_large_string(column) or pa.types.is_string_view(column):
        return "string"
    if pa.types.is_boolean(column):
        return "boolean"
    if pa.types.is_date32(column):
        return "date"
    return None


_FAMILY_TYPES = {"integer": pa.int64(), "string": pa.large_string(), "boolean": pa.bool_(), "date": pa.date32()}


def _typed(bounds: pa.ChunkedArray, kind: str) -> pa.ChunkedArray | None:
    """The statistics as the one type of their family (None when they are of another family than the column, as
    after a type change: they bound nothing then)."""
    if pa.types.is_null(bounds.type):
        return pc.cast(bounds, _FAMILY_TYPES[kind])
    if _kind(bounds.type) != kind:
        return None
    return pc.cast(bounds, _FAMILY_TYPES[kind])


def _comparable(value: Value, kind: str | None) -> object | None:
    """The literal as a value of the column's family, when Spark compares it unchanged; else None."""
    if kind == "integer" and value.kind == "integer" and isinstance(value.value, int):
        return value.value if _INT64[0] <= value.value <= _INT64[1] else None
    if kind == "string" and value.kind == "string":
        return value.value
    if kind == "boolean" and value.kind == "boolean":
        return value.value
    if kind == "date" and value.kind == "date":
        return value.value
    if kind == "date" and value.kind == "string" and _DATE_TEXT.match(str(value.value)):
        try:
            return dt.date.fromisoformat(str(value.value))   # what Spark's cast of the text to the date gives
        except ValueError:
            return None
    return None
