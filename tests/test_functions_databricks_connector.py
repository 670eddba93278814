"""SQL functions through databricks-sql-connector, as dbt-databricks' function resource sends them: CREATE OR REPLACE
FUNCTION with the catalog-qualified, quoted name, a call by that name (dbt's `{{ function('f') }}`), a replace that
changes the next call's answer, and DROP FUNCTION."""

from __future__ import annotations

from typing import Any

from test_databricks_connector import dbx_cursor, dbx_gateway, schema, token, token_file  # noqa: F401 - fixtures


def test_dbt_function_statements_through_the_connector(dbx_gateway: Any, token: str, schema: str) -> None:  # noqa: F811
    name = f"`main`.`{schema}`.`price_for_xlarge`"
    with dbx_cursor(dbx_gateway, token, catalog="main", schema=schema) as cursor:
        for factor in (2, 3):
            cursor.execute(f"\n    CREATE OR REPLACE FUNCTION {name} (price float)\n    RETURNS float\n"
                           f"    LANGUAGE SQL\n    RETURN\n    price * {factor}\n")
            cursor.execute(f"SELECT {name}(100)")
            assert cursor.fetchall()[0][0] == 100.0 * factor
        cursor.execute("SELECT price_for_xlarge(price) AS p FROM VALUES (1.5), (2.0) AS t(price) ORDER BY p")
        assert [row[0] for row in cursor.fetchall()] == [4.5, 6.0]
        cursor.execute(f"DESCRIBE FUNCTION {name}")
        assert cursor.fetchall()[0][0] == f"Function: main.{schema}.price_for_xlarge"
        cursor.execute(f"DROP FUNCTION {name}")
        cursor.execute(f"SHOW USER FUNCTIONS IN {schema}")
        assert cursor.fetchall() == []
