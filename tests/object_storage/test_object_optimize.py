"""OPTIMIZE on a table whose warehouse is on a real S3 store (weed mini): delta-rs rewrites the objects with the
store's options, the answer names the table's URI, and the rows read back through the gateway and straight from the
store are the same."""

from __future__ import annotations

import json
from typing import Any

from object_store import S3Store
from pyhive_helpers import cursor_in
from test_object_tables import from_store, rows, table_uri


def test_optimize_compacts_a_table_on_the_store(s3_connect: Any, s3: S3Store) -> None:
    cursor = cursor_in(s3_connect, "obj_optimize")
    cursor.execute("CREATE TABLE t (id BIGINT, name STRING) USING DELTA")
    for i in range(4):
        cursor.execute(f"INSERT INTO t VALUES ({i}, 'n{i}')")
    before = rows(cursor, "SELECT * FROM t")
    files_before = len(from_store(s3, "obj_optimize", "t").file_uris())
    cursor.execute("OPTIMIZE t")
    (path, metrics), = cursor.fetchall()
    assert path == table_uri(s3, "obj_optimize", "t")
    assert json.loads(metrics)["numFilesRemoved"] == files_before >= 4
    table = from_store(s3, "obj_optimize", "t")
    assert len(table.file_uris()) == 1 and table.history(1)[0]["operation"] == "OPTIMIZE"
    assert rows(cursor, "SELECT * FROM t") == before
    assert sorted(table.to_pyarrow_table().column("id").to_pylist()) == [0, 1, 2, 3]
    cursor.execute("DROP DATABASE obj_optimize CASCADE")
