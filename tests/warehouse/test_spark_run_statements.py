"""Statements Spark runs itself see the whole warehouse: temporary views, CTAS into other formats and INSERT into
Spark's own tables read Delta tables and catalog views at a pinned version, as any SELECT does (dbt-spark's
incremental, microbatch and insert_overwrite materializations are made of these)."""

from __future__ import annotations

from typing import Any

import pytest
from pyhive_helpers import cursor_in, error_status, sorted_rows

DB = "wh_spark_run"


@pytest.fixture()
def cursor(connect: Any) -> Any:
    cur = cursor_in(connect, DB)
    cur.execute("CREATE OR REPLACE TABLE events (id INT, kind STRING) USING delta")
    cur.execute("INSERT INTO events VALUES (1, 'a'), (2, 'b')")
    cur.execute("CREATE OR REPLACE VIEW kinds AS SELECT DISTINCT kind FROM events")
    return cur


def test_a_temporary_view_reads_delta_tables_afresh_in_every_statement(cursor: Any) -> None:
    cursor.execute("/* {\"app\": \"dbt\"} */ CREATE OR REPLACE TEMPORARY VIEW recent AS SELECT * FROM events")
    assert sorted_rows(cursor, "SELECT * FROM recent") == [(1, "a"), (2, "b")]
    cursor.execute("INSERT INTO events VALUES (3, 'c')")
    assert sorted_rows(cursor, "SELECT * FROM recent") == [(1, "a"), (2, "b"), (3, "c")]
    # the view is the session's, listed as temporary (as Spark does), not a catalog view
    assert sorted_rows(cursor, f"SHOW VIEWS IN {DB}") == [("", "recent", True), (DB, "kinds", False)]


def test_a_temporary_view_over_a_catalog_view_with_a_column_list(cursor: Any) -> None:
    cursor.execute("CREATE OR REPLACE TEMPORARY VIEW k (label) AS SELECT * FROM kinds")
    assert sorted_rows(cursor, "SELECT label FROM k") == [("a",), ("b",)]
    cursor.execute("DESCRIBE k")
    assert [row[:2] for row in cursor.fetchall()] == [("label", "string")]


def test_temporary_views_chain_and_existing_names_are_refused(cursor: Any) -> None:
    cursor.execute("CREATE OR REPLACE TEMPORARY VIEW first_view AS SELECT id FROM events")
    cursor.execute("CREATE OR REPLACE TEMPORARY VIEW second_view AS SELECT id * 10 AS id FROM first_view")
    assert sorted_rows(cursor, "SELECT * FROM second_view") == [(10,), (20,)]
    status = error_status(cursor, "CREATE TEMPORARY VIEW first_view AS SELECT 1")
    assert "TEMP_TABLE_OR_VIEW_ALREADY_EXISTS" in status.errorMessage
    status = error_status(cursor, "CREATE OR REPLACE TEMPORARY VIEW v (a, b) AS SELECT id FROM events")
    assert "CREATE_VIEW_COLUMN_ARITY_MISMATCH" in status.errorMessage


def test_a_temporary_view_that_reads_itself_is_refused(cursor: Any) -> None:
    cursor.execute("CREATE OR REPLACE TEMPORARY VIEW loop_v AS SELECT id FROM events")
    status = error_status(cursor, "CREATE OR REPLACE TEMPORARY VIEW loop_v AS SELECT * FROM loop_v")
    assert "RECURSIVE_VIEW" in status.errorMessage and "at line 1, column 58" in status.errorMessage
    assert sorted_rows(cursor, "SELECT * FROM loop_v") == [(1,), (2,)]  # the old view is untouched


def test_a_dropped_or_replaced_view_is_sparks_again(cursor: Any) -> None:
    cursor.execute("CREATE OR REPLACE TEMPORARY VIEW gone AS SELECT * FROM events")
    cursor.execute("DROP VIEW gone")
    assert "TABLE_OR_VIEW_NOT_FOUND" in error_status(cursor, "SELECT * FROM gone").errorMessage
    cursor.execute("CREATE OR REPLACE TEMPORARY VIEW gone AS SELECT * FROM events")
    cursor.execute("CREATE OR REPLACE TEMPORARY VIEW gone AS SELECT 7 AS seven")
    assert sorted_rows(cursor, "SELECT * FROM gone") == [(7,)]


def test_ctas_into_parquet_reads_a_delta_table_and_a_view(cursor: Any) -> None:
    cursor.execute("DROP TABLE IF EXISTS copy_p")
    cursor.execute("CREATE TABLE copy_p USING parquet PARTITIONED BY (kind) AS "
                   "SELECT e.id, e.kind FROM events e JOIN kinds k ON e.kind = k.kind")
    assert sorted_rows(cursor, "SELECT id, kind FROM copy_p") == [(1, "a"), (2, "b")]


def test_insert_into_a_spark_table_reads_delta(cursor: Any) -> None:
    cursor.execute("DROP TABLE IF EXISTS sink_p")
    cursor.execute("CREATE TABLE sink_p (id INT, kind STRING) USING parquet")
    cursor.execute("INSERT INTO sink_p SELECT * FROM events WHERE id > 1")
    cursor.execute("INSERT OVERWRITE TABLE sink_p SELECT id + 100, kind FROM events")
    assert sorted_rows(cursor, "SELECT * FROM sink_p") == [(101, "a"), (102, "b")]


def test_errors_in_a_spark_run_statement_point_at_what_was_typed(cursor: Any) -> None:
    cursor.execute("DROP TABLE IF EXISTS sink_q")
    cursor.execute("CREATE TABLE sink_q (id INT) USING parquet")
    status = error_status(cursor, "INSERT INTO sink_q SELECT nope FROM events")
    assert "UNRESOLVED_COLUMN" in status.errorMessage
    assert "line 1, column 27" in status.errorMessage


def test_reading_another_users_table_from_a_spark_run_statement_is_refused(connect: Any, cursor: Any) -> None:
    other = connect(username="mallory").cursor()
    status = error_status(other, f"CREATE TEMPORARY VIEW stolen AS SELECT * FROM {DB}.events")
    assert status.sqlState == "42501"
    status = error_status(other, f"CREATE TABLE default.stolen_p USING parquet AS SELECT * FROM {DB}.events")
    assert status.sqlState == "42501"


def test_explain_of_a_query_over_the_warehouse(cursor: Any) -> None:
    cursor.execute("EXPLAIN SELECT kind, count(*) FROM events GROUP BY kind")
    plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "TABLE_OR_VIEW_NOT_FOUND" not in plan and "HashAggregate" in plan
    cursor.execute("EXPLAIN EXTENDED SELECT * FROM kinds")
    plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Analyzed Logical Plan" in plan and "TABLE_OR_VIEW_NOT_FOUND" not in plan
