"""beeline, the Hive JDBC 2.3 driver (protocol V10) shipped in pyspark's jars, against a real gateway.

A JVM costs 5-10 s, so beeline runs twice for the whole module: one script that succeeds throughout and one that
fails part-way. Marker queries (`SELECT 'tables' AS section`) cut the first script's output into the parts that
each test reads.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.beeline

TABLE = "beeline_t"
VIEW = "beeline_v"
TEMP_VIEW = "beeline_tmp"

SUCCESS_SCRIPT = f"""\
SELECT 'query' AS section;
SELECT 1 AS i, 9000000000 AS big, 'ab' AS s, 2.5D AS dbl, CAST(2.50 AS DECIMAL(5,2)) AS dec, DATE'2024-01-02' AS dt,
  TIMESTAMP'2024-01-02 03:04:05' AS ts, true AS b, CAST(NULL AS STRING) AS n;
SELECT 'ddl' AS section;
CREATE TABLE {TABLE} (id INT COMMENT 'the id', name STRING, amount DECIMAL(10,2)) USING parquet
  COMMENT 'made by beeline';
INSERT INTO {TABLE} VALUES (1, 'x', 1.25), (2, 'y', NULL);
CREATE VIEW {VIEW} AS SELECT id FROM {TABLE};
CREATE TEMPORARY VIEW {TEMP_VIEW} AS SELECT 1 AS one;
SELECT 'tables' AS section;
!tables
SELECT 'columns' AS section;
!columns {TABLE}
SELECT 'describe' AS section;
!describe {VIEW}
SELECT 'schemas' AS section;
!metadata getSchemas
SELECT 'catalogs' AS section;
!metadata getCatalogs
SELECT 'functions' AS section;
!metadata getFunctions "" "" "upper"
SELECT 'empty' AS section;
SELECT id, name FROM {TABLE} WHERE id < 0;
SELECT 'rows' AS section;
SELECT id, name, amount FROM {TABLE} ORDER BY id;
SELECT 'drop' AS section;
DROP VIEW {VIEW};
DROP TABLE {TABLE};
SELECT 'end' AS section;
"""

FAILING_SCRIPT = """\
SELECT 'before' AS section;
SELECT * FROM beeline_no_such_table;
SELECT 'after' AS section;
"""


def clean(stdout: str) -> list[str]:
    """beeline's output lines without what jline draws when it reads a script line without a terminal:
    `\\rnull<padding>\\rnull` (a masked prompt), which text mode turns into `\\nnull<padding>\\nnull`."""
    return re.sub(r"\nnull *\nnull", "", stdout).split("\n")


def sections(lines: list[str]) -> dict[str, list[str]]:
    """Output lines by the marker query that precedes them: `section` followed by the marker's name."""
    found: dict[str, list[str]] = {}
    current = None
    i = 0
    while i < len(lines):
        if lines[i] == "section" and i + 1 < len(lines):
            current = lines[i + 1]
            found[current] = []
            i += 2
            continue
        if current is not None:
            found[current].append(lines[i])
        i += 1
    return found


def csv_rows(lines: list[str]) -> list[list[str]]:
    """csv2 with beeline's default of no quoting: a value holding the delimiter is wrapped in NUL characters."""
    return list(csv.reader([line for line in lines if line], quotechar="\0"))


def script_sections(run: Any, expected: list[str]) -> dict[str, list[str]]:
    """A beeline script's output by section, blank lines dropped; the sections must be `expected`, in order."""
    found = sections(clean(run.stdout))
    assert list(found) == expected, run.stdout + run.stderr
    return {name: [line for line in lines if line] for name, lines in found.items()}


def describe_rows(lines: list[str]) -> dict[str, str]:
    """DESCRIBE [EXTENDED]'s csv2 output as {col_name: data_type}."""
    header, *rows = csv_rows(lines)
    assert header == ["col_name", "data_type", "comment"]
    return {row[0]: row[1] for row in rows}


@pytest.fixture(scope="module")
def success_run(beeline: Any, gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    script = tmp_path_factory.mktemp("beeline") / "success.sql"
    script.write_text(SUCCESS_SCRIPT)
    try:
        yield beeline(gateway.port, "-f", str(script))
    finally:
        _drop_leftovers(gateway)


@pytest.fixture(scope="module")
def failing_run(beeline: Any, gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    script: Path = tmp_path_factory.mktemp("beeline") / "failing.sql"
    script.write_text(FAILING_SCRIPT)
    return beeline(gateway.port, "-f", str(script))


def _drop_leftovers(gateway: Any) -> None:
    """If the script stopped early, its objects must not leak into other tests' listings."""
    from pyhive import hive

    conn = hive.connect(gateway.host, gateway.port, username="tester")
    try:
        cursor = conn.cursor()
        cursor.execute(f"DROP VIEW IF EXISTS {VIEW}")
        cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
    finally:
        conn.close()


@pytest.fixture(scope="module")
def output(success_run: Any) -> dict[str, list[str]]:
    assert success_run.returncode == 0, success_run.stderr
    found = sections(clean(success_run.stdout))
    assert list(found) == ["query", "ddl", "tables", "columns", "describe", "schemas", "catalogs", "functions", "empty",
                           "rows", "drop", "end"], success_run.stdout
    return found


def test_query_with_several_types_prints_exact_csv2(output):
    assert [line for line in output["query"] if line] == [
        "i,big,s,dbl,dec,dt,ts,b,n",
        "1,9000000000,ab,2.5,2.50,2024-01-02,2024-01-02 03:04:05.0,true,NULL",
    ]


def test_inserted_rows_read_back(output):
    assert [line for line in output["rows"] if line] == ["id,name,amount", "1,x,1.25", "2,y,NULL"]


def test_ddl_and_dml_print_no_error(success_run, output):
    assert success_run.returncode == 0
    assert "Error" not in success_run.stderr, success_run.stderr
    # DDL has no result: whatever beeline prints for it is blank, never a row or a message
    assert [line for line in output["ddl"] + output["drop"] if line.strip()] == []


def test_tables_lists_the_table_and_the_view_with_their_type(output):
    header, *rows = csv_rows(output["tables"])
    assert header[:5] == ["TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS"]
    mine = {row[2]: row[:5] for row in rows if row[2] in (TABLE, VIEW, TEMP_VIEW)}
    assert mine == {
        TABLE: ["main", "default", TABLE, "TABLE", "made by beeline"],
        VIEW: ["main", "default", VIEW, "VIEW", ""],
        TEMP_VIEW: ["NULL", "NULL", TEMP_VIEW, "VIEW", ""],  # the session's temporary view: no catalog, no schema
    }


def test_columns_shows_jdbc_types_sizes_and_comments(output):
    header, *rows = csv_rows(output["columns"])
    assert header[:7] == ["TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME",
                          "COLUMN_SIZE"]
    column = {name: i for i, name in enumerate(header)}
    described = [
        (row[column["COLUMN_NAME"]], row[column["DATA_TYPE"]], row[column["TYPE_NAME"]], row[column["COLUMN_SIZE"]],
         row[column["DECIMAL_DIGITS"]], row[column["REMARKS"]], row[column["ORDINAL_POSITION"]],
         row[column["IS_NULLABLE"]])
        for row in rows
    ]
    assert described == [
        ("id", "4", "INT", "10", "0", "the id", "1", "YES"),
        ("name", "12", "STRING", "2147483647", "NULL", "", "2", "YES"),
        ("amount", "3", "DECIMAL(10,2)", "10", "2", "", "3", "YES"),
    ]


def test_describe_goes_through_database_metadata(output):
    header, *rows = csv_rows(output["describe"])
    column = {name: i for i, name in enumerate(header)}
    assert [(row[column["TABLE_NAME"]], row[column["COLUMN_NAME"]], row[column["TYPE_NAME"]]) for row in rows] == [
        (VIEW, "id", "INT")]


def test_schemas_and_functions_through_database_metadata(output):
    header, *rows = csv_rows(output["schemas"])
    assert header == ["TABLE_SCHEM", "TABLE_CATALOG"]
    assert ["default", "main"] in rows
    header, *rows = csv_rows(output["catalogs"])
    assert (header, rows) == (["TABLE_CAT"], [["main"]])  # the one catalog (dialect/catalogs.py)
    header, *rows = csv_rows(output["functions"])
    assert header == ["FUNCTION_CAT", "FUNCTION_SCHEM", "FUNCTION_NAME", "REMARKS", "FUNCTION_TYPE", "SPECIFIC_NAME"]
    assert [(row[2], row[4], row[5]) for row in rows] == [("upper", "1", "upper")]
    assert rows[0][3].startswith("upper(str) - Returns `str` with all characters changed to uppercase")


def test_query_with_no_rows_prints_only_its_header(output):
    assert [line for line in output["empty"] if line] == ["id,name"]


def test_failing_statement_shows_sqlstate_and_exits_non_zero(failing_run):
    assert failing_run.returncode != 0
    errors = [line for line in failing_run.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, failing_run.stderr
    assert errors[0].startswith("Error: [TABLE_OR_VIEW_NOT_FOUND]")
    assert "(state=42P01,code=0)" in failing_run.stderr
    assert "beeline_no_such_table" in failing_run.stderr
    found = sections(clean(failing_run.stdout))
    assert list(found) == ["before"]  # beeline stops a script at its first failure
