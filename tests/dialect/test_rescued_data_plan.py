"""Which column read_files keeps what it cannot parse or cast in, decided by the analysis from the reader options
(pure: no JVM), and a plan stored before that column existed reading back without one."""

from __future__ import annotations

import json

import pytest

from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.dialect.streaming.plan import StreamingPlan
from sluicegate.dialect.streaming.sources import rescued_data_column


def _source(options: str, file_format: str = "json") -> str:
    return (f"CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_files('/in', format => '{file_format}', "
            f"schema => 'id INT, s STRING'{options})")


@pytest.mark.parametrize(("file_format", "options", "column"), [
    ("json", "", "_rescued_data"),
    ("csv", ", header => 'true'", "_rescued_data"),
    ("json", ", rescuedDataColumn => 'bad'", "bad"),
    ("json", ", RESCUEDDATACOLUMN => 'bad'", "bad"),
    ("csv", ", columnNameOfCorruptRecord => 'raw'", "raw"),
    ("json", ", mode => 'permissive'", "_rescued_data"),
    ("json", ", mode => 'FAILFAST'", None),
    ("csv", ", mode => 'dropMalformed'", None),
    ("parquet", "", None),
])
def test_the_rescued_data_column_follows_the_options(file_format: str, options: str, column: str | None) -> None:
    source = analyze(_source(options, file_format)).sources[0]
    assert source.rescued_data == column
    assert source.schema == "id INT, s STRING"  # the column is added when files are read, not stored here


def test_the_decision_is_a_pure_function_of_format_and_options() -> None:
    assert rescued_data_column("json", {}) == "_rescued_data"
    assert rescued_data_column("json", {"Mode": "FailFast"}) is None
    assert rescued_data_column("parquet", {"rescuedDataColumn": "x"}) is None


def test_a_plan_stored_before_the_column_reads_back_without_it() -> None:
    plan = analyze(_source(""))
    stored = json.loads(plan.to_json())
    for source in stored["sources"]:
        del source["rescued_data"]  # what a plan stored by an earlier release holds
    old = StreamingPlan.from_json(json.dumps(stored))
    assert old.sources[0].rescued_data is None
    assert StreamingPlan.from_json(plan.to_json()) == plan
