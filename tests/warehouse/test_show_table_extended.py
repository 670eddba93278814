"""SHOW TABLE EXTENDED lists every catalog object with Spark's `information` text: dbt-spark builds its relation
cache from it (Type, Provider, Owner, Statistics and the ` |-- col: type (nullable = ...)` lines)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pyhive_helpers import cursor_in, error_status

DB = "wh_show_extended"
# dbt-spark's own expressions (dbt/adapters/spark/impl.py)
COLUMNS = re.compile(r"^ \|-- (.*): (.*) \(nullable = (.*)\b", re.MULTILINE)
STATISTICS = re.compile(r"^Statistics: (.*)$", re.MULTILINE)


@pytest.fixture()
def cursor(connect: Any) -> Any:
    cur = cursor_in(connect, DB)
    cur.execute("CREATE OR REPLACE TABLE d (id INT NOT NULL, s STRING, n DECIMAL(10, 2)) USING delta "
                "PARTITIONED BY (s) COMMENT 'facts' TBLPROPERTIES ('k' = 'v')")
    cur.execute("INSERT INTO d VALUES (1, 'a', 1.5), (2, 'b', 2.5)")
    cur.execute("CREATE OR REPLACE VIEW v AS SELECT id FROM d")
    cur.execute("DROP TABLE IF EXISTS p")
    cur.execute("CREATE TABLE p (x BIGINT) USING parquet")
    return cur


def _listed(cursor: Any, sql: str) -> dict[str, tuple[Any, ...]]:
    cursor.execute(sql)
    assert [d[0] for d in cursor.description] == ["namespace", "tableName", "isTemporary", "information"]
    return {row[1]: row for row in cursor.fetchall()}


def test_delta_tables_views_and_sparks_own_tables_are_all_listed(cursor: Any) -> None:
    listed = _listed(cursor, f"/* {{\"app\": \"dbt\"}} */ show table extended in {DB} like '*'")
    assert {"d", "v", "p"} <= set(listed)
    info = listed["d"][3]
    assert info.startswith(f"Catalog: main\nDatabase: {DB}\nTable: d\nOwner: tester\n")
    for line in ("Type: MANAGED", "Provider: delta", "Comment: facts", "Table Properties: [k=v]",
                 "Partition Columns: [`s`]", "Last Access: UNKNOWN"):
        assert f"\n{line}\n" in info, line
    assert COLUMNS.findall(info) == [("id", "integer", "false"), ("s", "string", "true"),
                                     ("n", "decimal(10,2)", "true")]
    size, rows = STATISTICS.findall(info)[0].split(", ")
    assert int(size.split()[0]) > 0 and rows == "2 rows"
    assert "\nType: VIEW\n" in listed["v"][3] and "\nView Text: SELECT id FROM d\n" in listed["v"][3]
    assert [c[:2] for c in COLUMNS.findall(listed["v"][3])] == [("id", "integer")]
    assert "\nProvider: parquet\n" in listed["p"][3]


def test_patterns_and_temporary_views(cursor: Any) -> None:
    assert set(_listed(cursor, f"SHOW TABLE EXTENDED IN {DB} LIKE 'd|v'")) == {"d", "v"}
    assert set(_listed(cursor, f"SHOW TABLE EXTENDED FROM {DB} LIKE 'D*'")) == {"d"}
    assert _listed(cursor, f"SHOW TABLE EXTENDED IN {DB} LIKE 'nothing*'") == {}
    cursor.execute("CREATE OR REPLACE TEMPORARY VIEW mine AS SELECT * FROM d")
    mine = _listed(cursor, "SHOW TABLE EXTENDED LIKE 'mine'")["mine"]
    assert mine[2] is True and next(c[:2] for c in COLUMNS.findall(mine[3])) == ("id", "integer")


def test_a_missing_schema_is_sparks_error(cursor: Any) -> None:
    status = error_status(cursor, "SHOW TABLE EXTENDED IN no_such_schema LIKE '*'")
    assert "SCHEMA_NOT_FOUND" in status.errorMessage  # dbt-spark reads this as "no relations"


def test_another_user_sees_names_but_not_columns(cursor: Any, connect: Any) -> None:
    other = connect(username="mallory").cursor()
    listed = _listed(other, f"SHOW TABLE EXTENDED IN {DB} LIKE 'd|v'")
    assert set(listed) == {"d", "v"}
    assert COLUMNS.findall(listed["d"][3]) == [] and "Statistics" not in listed["d"][3]
    assert "View Text" not in listed["v"][3]
