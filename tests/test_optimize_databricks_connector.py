"""OPTIMIZE through databricks-sql-connector (Arrow results over HTTP, as Databricks users run it): the answer's
`metrics` arrives as a struct (a dict), as from Databricks, and as JSON text to a client that reads nested types as
text."""

from __future__ import annotations

from typing import Any

from test_databricks_connector import dbx_cursor, dbx_gateway, schema, token, token_file  # noqa: F401 - fixtures


def test_optimize_answers_path_and_metrics(dbx_gateway: Any, token: str, schema: str) -> None:  # noqa: F811
    with dbx_cursor(dbx_gateway, token, catalog="main", schema=schema) as cursor:
        cursor.execute("CREATE OR REPLACE TABLE dbx_optimized (id BIGINT) USING DELTA")
        for i in range(3):
            cursor.execute(f"INSERT INTO dbx_optimized VALUES ({i})")
        cursor.execute("OPTIMIZE dbx_optimized ZORDER BY (id)")
        assert [(d[0], d[1]) for d in cursor.description] == [("path", "string"), ("metrics", "struct")]
        (path, metrics), = (tuple(row) for row in cursor.fetchall())
        assert path.startswith("file:") and path.endswith(f"{schema}.db/dbx_optimized")
        assert isinstance(metrics, dict), metrics
        assert (metrics["numFilesAdded"], metrics["numFilesRemoved"]) == (1, 3)
        assert metrics["filesRemoved"]["totalFiles"] == 3 and metrics["filesAdded"]["avg"] > 0
        assert metrics["zOrderStats"]["strategyName"] == "all" and metrics["zOrderStats"]["mergedNumCubes"] is None
        assert metrics["preserveInsertionOrder"] is False
        cursor.execute("OPTIMIZE dbx_optimized")  # nothing left to compact: zeros, no z-order stats
        (_, again), = (tuple(row) for row in cursor.fetchall())
        assert again["numFilesAdded"] == 0 and again["zOrderStats"] is None and again["filesAdded"]["min"] is None
