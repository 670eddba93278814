"""CREATE TABLE ... SHALLOW CLONE through databricks-sql-connector, as dbt-databricks' `dbt clone` sends it: the
clone answers with the source's rows, DESCRIBE HISTORY names the CLONE, and information_schema says
MANAGED_SHALLOW_CLONE until the table is rebuilt."""

from __future__ import annotations

from typing import Any

from test_databricks_connector import dbx_cursor, dbx_gateway, schema, token, token_file  # noqa: F401 - fixtures


def test_dbt_clone_statement_through_the_connector(dbx_gateway: Any, token: str, schema: str) -> None:  # noqa: F811
    with dbx_cursor(dbx_gateway, token, catalog="main", schema=schema) as cursor:
        cursor.execute("CREATE OR REPLACE TABLE dbx_clone_src (id BIGINT, name STRING) USING DELTA")
        cursor.execute("INSERT INTO dbx_clone_src VALUES (1, 'a'), (2, 'b')")
        cursor.execute(f"create or replace\n    table `main`.`{schema}`.`dbx_clone`\n"
                       f"    shallow clone `main`.`{schema}`.`dbx_clone_src`")
        cursor.execute("SELECT id, name FROM dbx_clone ORDER BY id")
        assert [tuple(row) for row in cursor.fetchall()] == [(1, "a"), (2, "b")]
        cursor.execute("DESCRIBE HISTORY dbx_clone")
        assert [(row[0], row[4]) for row in cursor.fetchall()] == [(0, "CLONE")]
        type_of = ("SELECT table_type FROM main.information_schema.tables "
                   f"WHERE table_schema = '{schema}' AND table_name = 'dbx_clone'")
        cursor.execute(type_of)
        assert cursor.fetchall()[0][0] == "MANAGED_SHALLOW_CLONE"
        cursor.execute("DROP TABLE dbx_clone")
        cursor.execute("CREATE TABLE dbx_clone AS SELECT * FROM dbx_clone_src")
        cursor.execute(type_of)
        assert cursor.fetchall()[0][0] == "MANAGED"
