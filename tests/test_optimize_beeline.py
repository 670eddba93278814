"""OPTIMIZE through beeline (the Hive JDBC driver): Databricks' answer printed as csv2 (the path and the metrics
struct as JSON), the rows unchanged, ZORDER BY and a WHERE on a partition, and a refused OPTIMIZE printing its
error class and SQLSTATE; with EXPLAIN's files skipped by statistics and VACUUM of what the OPTIMIZEs removed (issue
25 through the JDBC driver)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import drop_database
from test_beeline import clean, csv_rows, sections

DATABASE = "optimize_beeline"

SCRIPT = f"""
CREATE DATABASE {DATABASE};
USE {DATABASE};
CREATE TABLE t (id INT, day STRING) PARTITIONED BY (day);
INSERT INTO t VALUES (1, 'a');
INSERT INTO t VALUES (2, 'a');
INSERT INTO t VALUES (3, 'b');
INSERT INTO t VALUES (4, 'b');
SELECT 'skipping' AS section;
EXPLAIN SELECT * FROM t WHERE id = 3;
SELECT 'compact' AS section;
OPTIMIZE t WHERE day = 'a';
SELECT 'zorder' AS section;
optimize main.{DATABASE}.t zorder by (id);
SELECT 'rows' AS section;
SELECT * FROM t ORDER BY id;
SELECT 'history' AS section;
DESCRIBE HISTORY t;
SET spark.databricks.delta.retentionDurationCheck.enabled = false;
SELECT 'dry run' AS section;
VACUUM t RETAIN 0 HOURS DRY RUN;
SELECT 'vacuum' AS section;
VACUUM t RETAIN 0 HOURS;
SELECT 'dry run after' AS section;
VACUUM t RETAIN 0 HOURS DRY RUN;
SELECT 'rows after' AS section;
SELECT * FROM t ORDER BY id;
"""


@pytest.fixture(scope="module")
def run(beeline: Any, gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    script: Path = tmp_path_factory.mktemp("beeline") / "optimize.sql"
    script.write_text(SCRIPT)
    drop_database(gateway, DATABASE)
    try:
        yield beeline(gateway.port, "-f", str(script))
    finally:
        drop_database(gateway, DATABASE)


def _answer(lines: list[str]) -> tuple[str, dict[str, Any]]:
    header, *rows = csv_rows(lines)
    assert header == ["path", "metrics"] and len(rows) == 1
    return rows[0][0], json.loads(rows[0][1])


def test_optimize_answers_in_databricks_shape(run: Any) -> None:
    assert run.returncode == 0, run.stdout + run.stderr
    found = {name: [line for line in lines if line] for name, lines in sections(clean(run.stdout)).items()}
    path, compact = _answer(found["compact"])
    assert path.startswith("file:") and path.endswith(f"{DATABASE}.db/t")
    assert (compact["numFilesAdded"], compact["numFilesRemoved"], compact["partitionsOptimized"]) == (1, 2, 1)
    assert compact["zOrderStats"] is None and compact["filesRemoved"]["totalFiles"] == 2
    _, zorder = _answer(found["zorder"])
    assert zorder["zOrderStats"]["strategyName"] == "all" and zorder["numFilesRemoved"] == 3
    assert csv_rows(found["rows"]) == [["id", "day"], ["1", "a"], ["2", "a"], ["3", "b"], ["4", "b"]]
    header, *history = csv_rows(found["history"])
    assert [row[header.index("operation")] for row in history[:2]] == ["OPTIMIZE", "OPTIMIZE"]


def test_explain_says_which_files_a_point_query_skips(run: Any) -> None:
    """Each INSERT wrote one file; the statistics of three say they cannot hold id 3 (file skipping, issue 25)."""
    assert run.returncode == 0, run.stdout + run.stderr
    found = sections(clean(run.stdout))
    plan = "\n".join(found["skipping"])
    assert re.search(rf"Delta main\.{DATABASE}\.t version \d+: read 1 of 4 files \(3 skipped by statistics\)",
                     plan), plan


def test_vacuum_deletes_the_files_the_optimizes_removed_and_no_row(run: Any) -> None:
    """Retention through beeline: the five data files the two OPTIMIZEs took out are listed, then deleted; the rows
    stay."""
    assert run.returncode == 0, run.stdout + run.stderr
    found = {name: [line for line in lines if line] for name, lines in sections(clean(run.stdout)).items()}
    header, *listed = csv_rows(found["dry run"])
    names = [os.path.basename(row[0]) for row in listed]
    assert header == ["path"] and len([name for name in names if name.endswith(".parquet")]) == 5, names
    # the rest: what Spark's writer left beside the data files, which the log never knew (markers, checksums)
    assert all(name.endswith((".parquet", ".crc")) or name == "_SUCCESS" for name in names), names
    assert csv_rows(found["dry run after"]) == [["path"]]
    assert csv_rows(found["rows after"]) == [["id", "day"], ["1", "a"], ["2", "a"], ["3", "b"], ["4", "b"]]


def test_a_refused_optimize_prints_its_class_and_state(beeline: Any, gateway: Any, tmp_path: Path) -> None:
    script = tmp_path / "refused.sql"
    script.write_text("CREATE TABLE IF NOT EXISTS default.optimize_refused (id INT, day STRING) PARTITIONED BY (day);\n"
                      "OPTIMIZE default.optimize_refused ZORDER BY (day);\n")
    try:
        failed = beeline(gateway.port, "-f", str(script))
    finally:
        beeline(gateway.port, "-e", "DROP TABLE IF EXISTS default.optimize_refused")
    assert failed.returncode != 0
    errors = [line for line in failed.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and errors[0].startswith("Error: [DELTA_ZORDERING_ON_PARTITION_COLUMN]"), failed.stderr
    assert "(state=42P10,code=0)" in failed.stderr
