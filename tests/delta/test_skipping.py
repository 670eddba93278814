"""Data skipping over real Delta tables written by delta-rs (storage/delta/skipping.py): a file is left out only when
its statistics prove it holds no matching row, checked against the rows of every file, and the files that do say so
are left out."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from delta_writes import write_arrow

from sluicegate.dialect.filters import AllOf, AnyOf, Comparison, Predicate, Value
from sluicegate.storage.delta.skipping import STRING_PREFIX, prune
from sluicegate.storage.delta.snapshots import hide, load_snapshot

D = dt.date
SCHEMA = pa.schema([("id", pa.int64()), ("small", pa.int16()), ("name", pa.string()), ("flag", pa.bool_()),
                    ("day", pa.date32()), ("ratio", pa.float64()), ("at", pa.timestamp("us", "UTC")),
                    ("price", pa.decimal128(10, 2))])


def _rows(ids: list[int | None], names: list[str | None] | None = None, flags: list[bool | None] | None = None,
          days: list[D | None] | None = None) -> pa.Table:
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "small": pa.array([None if i is None else i % 100 for i in ids], pa.int16()),
        "name": pa.array(names if names is not None else [None if i is None else f"n{i:04d}" for i in ids]),
        "flag": pa.array(flags if flags is not None else [None if i is None else i % 2 == 0 for i in ids]),
        "day": pa.array(days if days is not None else [None if i is None else D(2024, 1, 1) + dt.timedelta(i)
                                                       for i in ids], pa.date32()),
        "ratio": pa.array([None if i is None else i / 2 for i in ids], pa.float64()),
        "at": pa.array([None if i is None else dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(hours=i)
                        for i in ids], pa.timestamp("us", "UTC")),
        "price": pa.array([None if i is None else Decimal(i) / 4 for i in ids], pa.decimal128(10, 2)),
    }, schema=SCHEMA)


@pytest.fixture()
def table(tmp_path: Path) -> str:
    """Six files: ids 0-9, 10-19, 20-29, all NULL, a long name, mixed with NULLs."""
    path = str(tmp_path / "t")
    for start in (0, 10, 20):
        write_arrow(path, _rows(list(range(start, start + 10))), mode="append")
    write_arrow(path, _rows([None, None]), mode="append")
    write_arrow(path, _rows([100, 101], names=["a" * STRING_PREFIX + "b", "a"]), mode="append")
    write_arrow(path, _rows([50, None, 55], flags=[True, True, None]), mode="append")
    return path


def cmp(column: str, op: str, *values: object, kind: str = "integer") -> Comparison:
    return Comparison(column, op, tuple(Value(v, kind) for v in values))  # type: ignore[arg-type]


def _kept_ids(path: str, *predicates: Predicate) -> list[list[int | None]]:
    """The ids of each file kept, sorted, so that a test reads which files were left."""
    pruned = prune(load_snapshot(path), predicates)
    return sorted((pq.read_table(uri.removeprefix("file://")).column("id").to_pylist()
                   for uri in pruned.snapshot.files), key=lambda ids: (ids[0] is None, ids[0] or 0))


def test_point_range_and_in_leave_out_the_files_outside_their_bounds(table: str) -> None:
    assert [ids[0] for ids in _kept_ids(table, cmp("id", "=", 15))] == [10]
    assert [ids[0] for ids in _kept_ids(table, cmp("id", "<", 10))] == [0]
    assert [ids[0] for ids in _kept_ids(table, cmp("id", "<=", 10))] == [0, 10]
    assert [ids[0] for ids in _kept_ids(table, cmp("id", ">", 29))] == [50, 100]
    assert [ids[0] for ids in _kept_ids(table, cmp("id", ">=", 29))] == [20, 50, 100]
    assert [ids[0] for ids in _kept_ids(table, cmp("id", "in", 3, 101))] == [0, 100]
    between = AllOf((cmp("id", ">=", 12), cmp("id", "<=", 21)))
    assert [ids[0] for ids in _kept_ids(table, between)] == [10, 20]
    # a narrower integer column compares the same way
    assert len(_kept_ids(table, cmp("small", "=", 55))) == 1


def test_a_long_in_list_is_bounded_by_its_smallest_and_largest_value(table: str) -> None:
    assert [ids[0] for ids in _kept_ids(table, cmp("id", "in", *range(100, 200)))] == [100]
    # coarser than value by value (ids 3 and 27 and 70 values far above keep everything between), never narrower
    spread = cmp("id", "in", 3, 27, *range(1000, 1070))
    assert [ids[0] for ids in _kept_ids(table, spread)] == [0, 10, 20, 50, 100]


def test_null_never_satisfies_a_comparison_and_is_null_needs_a_null(table: str) -> None:
    assert [ids[0] for ids in _kept_ids(table, cmp("id", "is null"))] == [50, None]
    assert None not in [ids[0] for ids in _kept_ids(table, cmp("id", "is not null"))]
    assert len(_kept_ids(table, cmp("id", "is not null"))) == 5
    # every row NULL: no comparison matches, whatever the value
    assert [ids[0] for ids in _kept_ids(table, cmp("id", ">", -1000))] == [0, 10, 20, 50, 100]


def test_or_keeps_a_file_when_any_branch_may_match(table: str) -> None:
    either = AnyOf((cmp("id", "=", 5), cmp("id", "=", 25)))
    assert [ids[0] for ids in _kept_ids(table, either)] == [0, 20]
    with_null = AnyOf((cmp("id", "=", 5), cmp("id", "is null")))
    assert [ids[0] for ids in _kept_ids(table, with_null)] == [0, 50, None]


def test_strings_dates_and_booleans(table: str) -> None:
    # (the file of ids 100, 101 is kept too: its max name is too long to bound anything)
    assert [ids[0] for ids in _kept_ids(table, cmp("name", "=", "n0012", kind="string"))] == [10, 100]
    assert [ids[0] for ids in _kept_ids(table, cmp("day", "=", D(2024, 1, 3), kind="date"))] == [0]
    # a `YYYY-MM-DD` string is the date Spark casts it to
    assert [ids[0] for ids in _kept_ids(table, cmp("day", ">=", "2024-01-30", kind="string"))] == [20, 50, 100]
    # every flag of the mixed file is true
    assert 50 not in [ids[0] for ids in _kept_ids(table, cmp("flag", "=", False, kind="boolean"))]


def test_a_max_string_of_the_prefix_length_bounds_nothing(table: str) -> None:
    # the file with ids 100, 101 has max name 'aaa...ab' (33 characters): it may be a truncation, so kept for any
    # value above its min; below its min it is still left out
    kept = [ids[0] for ids in _kept_ids(table, cmp("name", "=", "zzz", kind="string"))]
    assert kept == [100]
    assert 100 not in [ids[0] for ids in _kept_ids(table, cmp("name", "=", "A", kind="string"))]


@pytest.mark.parametrize("predicate", [
    cmp("ratio", "=", 2.5, kind="double"),           # floating point: NaN orders above every number in Spark
    cmp("price", "=", Decimal("2.50"), kind="decimal"),
    cmp("at", "<", "2024-01-01 00:00:00", kind="timestamp"),
    cmp("id", "=", "15", kind="string"),             # Spark casts: not compared
    cmp("id", "=", Decimal(15), kind="decimal"),
    cmp("id", "=", 2 ** 64),                          # outside bigint: Spark makes it a decimal
    cmp("name", "=", 12),
    cmp("flag", "=", 1),
    cmp("day", "=", "2024-1-3", kind="string"),      # a date text Spark reads, not in the one form taken
    cmp("missing", "=", 1),                          # not a column of the table (an outer query's, say)
    AnyOf((cmp("id", "=", 1), cmp("ratio", "=", 1.0, kind="double"))),
])
def test_what_the_statistics_cannot_answer_keeps_every_file(table: str, predicate: Predicate) -> None:
    assert len(_kept_ids(table, predicate)) == 6
    assert prune(load_snapshot(table), [predicate]).skipped == 0


def test_is_null_on_any_type_uses_null_counts(table: str) -> None:
    assert [ids[0] for ids in _kept_ids(table, cmp("ratio", "is null"))] == [50, None]


def test_a_column_without_statistics_keeps_its_files(tmp_path: Path) -> None:
    path = str(tmp_path / "one_indexed")
    for start in (0, 10):
        write_arrow(path, _rows(list(range(start, start + 10))), mode="append",
                    configuration={"delta.dataSkippingNumIndexedCols": "1"})
    assert len(_kept_ids(path, cmp("id", "=", 3))) == 1
    assert len(_kept_ids(path, cmp("name", "=", "n0003", kind="string"))) == 2
    assert len(_kept_ids(path, cmp("name", "is null"))) == 2


def test_hidden_columns_and_case_insensitive_names(table: str) -> None:
    snapshot = load_snapshot(table)
    assert prune(snapshot, [cmp("ID", "=", 15)]).skipped == 5
    hidden = replace(snapshot, schema=hide(snapshot.schema, {"id"}), hidden=("id",))
    assert prune(hidden, [cmp("id", "=", 15)]).skipped == 0


def test_partition_values_bound_their_files(tmp_path: Path) -> None:
    path = str(tmp_path / "parted")
    data = pa.table({"id": pa.array(range(6), pa.int64()),
                     "region": ["eu", "eu", "us", "us", None, "a b"],
                     "day": pa.array([D(2024, 1, 1), D(2024, 1, 2), None, D(2024, 1, 1), D(2024, 1, 2), None]),
                     "bucket": pa.array([1, 2, 1, None, 2, 1], pa.int32())})
    write_arrow(path, data, partition_by=["region", "day", "bucket"])
    snapshot = load_snapshot(path)
    assert len(snapshot.files) == 6

    def ids(*predicates: Predicate) -> list[int]:
        kept = prune(snapshot, predicates).snapshot.files
        return sorted(i for uri in kept for i in pq.read_table(uri.removeprefix("file://"), columns=["id"])
                      .column("id").to_pylist())

    assert ids(cmp("region", "=", "us", kind="string")) == [2, 3]
    assert ids(cmp("region", "=", "a b", kind="string")) == [5]
    assert ids(cmp("region", "is null")) == [4]
    assert ids(cmp("region", "is not null")) == [0, 1, 2, 3, 5]
    assert ids(cmp("day", "=", D(2024, 1, 2), kind="date")) == [1, 4]
    assert ids(cmp("bucket", "in", 2)) == [1, 4]
    assert ids(cmp("bucket", ">", 1), cmp("region", "=", "eu", kind="string")) == [1]


def test_a_pruned_snapshot_is_not_pruned_again_by_stale_statistics(table: str) -> None:
    once = prune(load_snapshot(table), [cmp("id", "<", 20)]).snapshot
    assert len(once.files) == 2 and once.add_actions is None
    assert prune(once, [cmp("id", "=", 5)]).snapshot == once


def _matches(value: object, predicate: Predicate, row: dict) -> bool:
    """SQL's answer for one row: NULL compares to nothing."""
    if isinstance(predicate, AllOf):
        return all(_matches(value, p, row) for p in predicate.parts)
    if isinstance(predicate, AnyOf):
        return any(_matches(value, p, row) for p in predicate.branches)
    cell = row[predicate.column]
    if predicate.op == "is null":
        return cell is None
    if predicate.op == "is not null":
        return cell is not None
    if cell is None:
        return False
    values = [v.value for v in predicate.values]
    return {"=": cell == values[0], "<": cell < values[0], "<=": cell <= values[0], ">": cell > values[0],
            ">=": cell >= values[0], "in": cell in values}[predicate.op]


def test_randomized_predicates_never_leave_out_a_file_with_a_match(tmp_path: Path) -> None:
    """Soundness against the rows themselves: every file holding a row that satisfies the predicates is kept."""
    rng = random.Random(25)
    path = str(tmp_path / "random")
    names = ["", "a", "ab", "b", "é", "z" * 40, "Z", "a" * 31 + "z"]
    for _ in range(30):
        n = rng.randint(1, 6)
        ids = [rng.choice([None, rng.randint(-50, 50)]) for _ in range(n)]
        write_arrow(path, _rows(ids, names=[rng.choice([None, *names]) for _ in range(n)],
                                flags=[rng.choice([None, True, False]) for _ in range(n)],
                                days=[rng.choice([None, D(2024, 1, rng.randint(1, 9))]) for _ in range(n)]),
                    mode="append")
    snapshot = load_snapshot(path)
    files = {uri: pq.read_table(uri.removeprefix("file://")).to_pylist() for uri in snapshot.files}

    def leaf() -> Comparison:
        column = rng.choice(["id", "name", "flag", "day"])
        op = rng.choice(["=", "<", "<=", ">", ">=", "in", "is null", "is not null"])
        if op in ("is null", "is not null"):
            return cmp(column, op)
        pick = {"id": lambda: rng.randint(-60, 60), "name": lambda: rng.choice([*names, "aa", "y"]),
                "flag": lambda: rng.choice([True, False]), "day": lambda: D(2024, 1, rng.randint(1, 10))}[column]
        kind = {"id": "integer", "name": "string", "flag": "boolean", "day": "date"}[column]
        count = rng.randint(1, 4) if op == "in" else 1
        return cmp(column, op, *(pick() for _ in range(count)), kind=kind)

    skipped = 0
    for _ in range(300):
        shape = rng.random()
        predicate: Predicate = (leaf() if shape < 0.5 else AnyOf((leaf(), leaf())) if shape < 0.8
                                else AllOf((leaf(), AnyOf((leaf(), leaf())))))
        pruned = prune(snapshot, [predicate])
        kept = set(pruned.snapshot.files)
        for uri, rows in files.items():
            if any(_matches(None, predicate, row) for row in rows):
                assert uri in kept, (predicate, rows)
        skipped += pruned.skipped
    assert skipped > 300 * 30 // 4  # and it does leave files out: most predicates here are selective


def test_partition_values_that_need_percent_encoding(tmp_path: Path) -> None:
    """Every file's path is encoded (`a%2520b` in the log for the folder `a%20b`): the actions still line up with
    the snapshot's file URIs, and pruning works."""
    path = str(tmp_path / "encoded")
    write_arrow(path, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "region": ["a b", "c%d", "e/f"]}),
                partition_by=["region"])
    snapshot = load_snapshot(path)
    kept = prune(snapshot, [cmp("region", "=", "c%d", kind="string")]).snapshot.files
    assert [pq.read_table(uri.removeprefix("file://")).column("id").to_pylist() for uri in kept] == [[2]]
