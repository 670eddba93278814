"""A batch `SELECT ... FROM read_files(...)`, as Databricks users and dbt-databricks write it: the files under an
allowed folder are read as a table, with the streaming source's path policy, formats and reader options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import error_status, sorted_rows


@pytest.fixture()
def landed(landing_root: Path) -> Path:
    folder = landing_root / "batch_read_files"
    folder.mkdir(exist_ok=True)
    (folder / "a.json").write_text("".join(json.dumps({"k": k, "v": v}) + "\n" for k, v in (("x", 1), ("y", 2))))
    csv = landing_root / "batch_read_files_csv"
    csv.mkdir(exist_ok=True)
    (csv / "a.csv").write_text("k,v\nz,3\n")
    return folder


def test_read_files_in_a_batch_query(connect: Any, landed: Path) -> None:
    cursor = connect().cursor()
    rows = sorted_rows(cursor,
                       f"SELECT k, v FROM read_files('{landed}', format => 'json', schema => 'k STRING, v INT')")
    assert rows == [("x", 1), ("y", 2)]
    rows = sorted_rows(cursor, f"SELECT f.k FROM read_files('{landed}', format => 'json') AS f WHERE f.v > 1")
    assert rows == [("y",)]  # schema inferred, as Spark's reader does
    csv = landed.parent / "batch_read_files_csv"
    rows = sorted_rows(cursor, f"WITH c AS (SELECT * FROM read_files('{csv}', format => 'csv', header => 'true')) "
                               "SELECT k, CAST(v AS INT) FROM c")
    assert rows == [("z", 3)]
    cursor.execute(f"CREATE OR REPLACE TEMPORARY VIEW landed_v AS SELECT * FROM read_files('{landed}', "
                   "format => 'json', schema => 'k STRING, v INT')")
    assert sorted_rows(cursor, "SELECT count(*) FROM landed_v") == [(2,)]


def test_read_files_obeys_the_path_policy(connect: Any, landed: Path, warehouse: Path) -> None:
    cursor = connect().cursor()
    status = error_status(cursor, "SELECT *\nFROM read_files('/etc', format => 'json')")
    assert "PATH_NOT_ALLOWED" in status.errorMessage and "at line 2, column 6" in status.errorMessage
    assert "PATH_NOT_ALLOWED" in error_status(cursor, f"SELECT * FROM read_files('{warehouse}', format => "
                                                      "'parquet')").errorMessage
    assert error_status(cursor, f"SELECT * FROM read_files('{landed}/*.json', format => 'json')").sqlState == "42501"
    status = error_status(cursor, f"SELECT * FROM read_files('{landed}', format => 'json', "
                                  "`fs.file.impl` => 'x')")
    assert status.sqlState == "42501"
    status = error_status(cursor, f"SELECT * FROM read_files('{landed}', format => 'jdbc')")
    assert "INVALID_READ_FILES_ARGUMENTS" in status.errorMessage
    status = error_status(cursor, f"SELECT * FROM read_files('{landed}')")
    assert "INVALID_READ_FILES_ARGUMENTS" in status.errorMessage and "format" in status.errorMessage
    assert "STATEMENT_NOT_ALLOWED" in error_status(cursor, "SELECT * FROM range_of_nothing(3)").errorMessage \
        or "UNRESOLVABLE_TABLE_VALUED_FUNCTION" in error_status(cursor, "SELECT * FROM range_of_nothing(3)") \
        .errorMessage
