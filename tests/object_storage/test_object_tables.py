"""Warehouse tables on a real S3 store (weed mini) through PyHive: every statement of the warehouse, the data checked
by reading back through the gateway and with delta-rs straight from the store (a real Delta table another reader can
open), and nothing written to the local state folder but the catalog."""

from __future__ import annotations

from typing import Any

import pytest
from deltalake import DeltaTable
from object_store import WAREHOUSE_PREFIX, S3Store
from pyhive_helpers import cursor_in, error_status

from sluicegate.gateway.app import RunningGateway


def table_uri(store: S3Store, database: str, name: str) -> str:
    return f"s3://{store.bucket}/{WAREHOUSE_PREFIX}/{database}.db/{name}"


def from_store(store: S3Store, database: str, name: str, version: int | None = None) -> DeltaTable:
    return DeltaTable(table_uri(store, database, name), version=version, storage_options=store.storage_options())


def keys_under(store: S3Store, prefix: str) -> list[str]:
    from pyarrow.fs import FileSelector

    infos = store.filesystem().get_file_info(FileSelector(f"{store.bucket}/{prefix}", recursive=True,
                                                          allow_not_found=True))
    return sorted(info.path for info in infos if info.size is not None and info.type.name == "File")


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    """The statement's rows sorted, NULLs first."""
    cursor.execute(sql)
    return sorted(cursor.fetchall(), key=lambda row: tuple((value is not None, value) for value in row))


def info(cursor: Any, name: str) -> dict[str, str]:
    cursor.execute(f"DESCRIBE EXTENDED {name}")
    return {row[0]: row[1] for row in cursor.fetchall()}


@pytest.fixture()
def cursor(s3_connect: Any) -> Any:
    return cursor_in(s3_connect, "obj")


def test_create_insert_select_and_time_travel(cursor: Any, s3: S3Store, s3_gateway: RunningGateway) -> None:
    cursor.execute("CREATE TABLE t (id BIGINT, name STRING) USING DELTA")
    cursor.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    cursor.execute("INSERT INTO t SELECT id + 10, concat('x', name) FROM t")
    assert rows(cursor, "SELECT * FROM t") == [(1, "a"), (2, "b"), (11, "xa"), (12, "xb")]
    assert rows(cursor, "SELECT count(*), sum(id) FROM t") == [(4, 26)]
    assert rows(cursor, "SELECT * FROM t VERSION AS OF 1") == [(1, "a"), (2, "b")]
    assert rows(cursor, "SELECT count(*) FROM t VERSION AS OF 0") == [(0,)]
    table = from_store(s3, "obj", "t")
    assert table.version() == 2
    assert sorted(table.to_pyarrow_table().column("id").to_pylist()) == [1, 2, 11, 12]
    cursor.execute("INSERT OVERWRITE t VALUES (7, 'z')")
    assert rows(cursor, "SELECT * FROM t") == [(7, "z")]
    assert from_store(s3, "obj", "t").to_pyarrow_table().to_pylist() == [{"id": 7, "name": "z"}]
    details = info(cursor, "t")
    assert details["Location"] == table_uri(s3, "obj", "t")
    assert details["Statistics"].endswith("1 rows")
    state = s3_gateway.config.local_state
    assert not (state / "obj.db").exists()          # the table's files are on the store, not in the state folder
    cursor.execute("DESCRIBE HISTORY t")
    assert [row[0] for row in cursor.fetchall()] == [3, 2, 1, 0]


def test_partitioned_ctas_and_insert(cursor: Any, s3: S3Store) -> None:
    cursor.execute("CREATE TABLE p USING DELTA PARTITIONED BY (k) AS "
                   "SELECT id, CAST(id % 3 AS INT) AS k, concat('v', CAST(id AS STRING)) AS v FROM range(9)")
    cursor.execute("INSERT INTO p VALUES (100, NULL, 'none'), (101, 1, 'a:b')")
    assert rows(cursor, "SELECT k, count(*) FROM p GROUP BY k") == [(None, 1), (0, 3), (1, 4), (2, 3)]
    assert rows(cursor, "SELECT id FROM p WHERE k = 1") == [(1,), (4,), (7,), (101,)]
    keys = keys_under(s3, f"{WAREHOUSE_PREFIX}/obj.db/p")
    assert any("/k=1/" in key for key in keys) and any("/k=__HIVE_DEFAULT_PARTITION__/" in key for key in keys)
    table = from_store(s3, "obj", "p")
    assert table.metadata().partition_columns == ["k"]
    read = table.to_pyarrow_table().to_pylist()
    assert len(read) == 11 and {"id": 101, "k": 1, "v": "a:b"} in read and {"id": 100, "k": None, "v": "none"} in read
    # every file carries Delta statistics
    assert sum(table.get_add_actions(flatten=True).column("num_records").to_pylist()) == 11


def test_update_delete_merge(cursor: Any, s3: S3Store) -> None:
    cursor.execute("CREATE TABLE stock (sku INT, qty INT) USING DELTA")
    cursor.execute("INSERT INTO stock VALUES (1, 10), (3, 30)")
    first = set(from_store(s3, "obj", "stock").get_add_actions(flatten=True).column("path").to_pylist())
    cursor.execute("INSERT INTO stock VALUES (2, 20)")
    cursor.execute("UPDATE stock SET qty = qty + 1 WHERE sku = 2")
    assert rows(cursor, "SELECT * FROM stock") == [(1, 10), (2, 21), (3, 30)]
    # only the file holding sku 2 was rewritten: the first insert's files are still the table's
    assert first <= set(from_store(s3, "obj", "stock").get_add_actions(flatten=True).column("path").to_pylist())
    cursor.execute("DELETE FROM stock WHERE sku = 3")
    assert rows(cursor, "SELECT * FROM stock") == [(1, 10), (2, 21)]
    cursor.execute("MERGE INTO stock AS s USING (SELECT * FROM VALUES (1, 5), (2, 0), (4, 40) AS c(sku, qty)) AS c "
                   "ON s.sku = c.sku WHEN MATCHED AND c.qty = 0 THEN DELETE "
                   "WHEN MATCHED THEN UPDATE SET qty = s.qty + c.qty "
                   "WHEN NOT MATCHED THEN INSERT (sku, qty) VALUES (c.sku, c.qty)")
    assert rows(cursor, "SELECT * FROM stock") == [(1, 15), (4, 40)]
    assert sorted(map(tuple, (r.values() for r in from_store(s3, "obj", "stock").to_pyarrow_table().to_pylist()))) \
        == [(1, 15), (4, 40)]
    assert rows(cursor, "SELECT * FROM stock VERSION AS OF 2") == [(1, 10), (2, 20), (3, 30)]
    cursor.execute("DELETE FROM stock WHERE sku = 99")   # nothing matches: no commit
    assert from_store(s3, "obj", "stock").version() == 5


def test_drop_rename_and_vacuum(cursor: Any, s3: S3Store) -> None:
    cursor.execute("CREATE TABLE gone (id INT) USING DELTA")
    cursor.execute("INSERT INTO gone VALUES (1)")
    assert keys_under(s3, f"{WAREHOUSE_PREFIX}/obj.db/gone")
    cursor.execute("DROP TABLE gone")
    assert keys_under(s3, f"{WAREHOUSE_PREFIX}/obj.db/gone") == []
    cursor.execute("CREATE TABLE gone (id INT) USING DELTA")     # the same name again: a fresh table
    assert rows(cursor, "SELECT count(*) FROM gone") == [(0,)]

    cursor.execute("CREATE TABLE old_name (id INT) USING DELTA")
    cursor.execute("INSERT INTO old_name VALUES (1), (2)")
    cursor.execute("ALTER TABLE old_name RENAME TO new_name")
    assert rows(cursor, "SELECT * FROM new_name") == [(1,), (2,)]
    assert keys_under(s3, f"{WAREHOUSE_PREFIX}/obj.db/old_name") == []
    assert from_store(s3, "obj", "new_name").version() == 1

    cursor.execute("CREATE TABLE v (id INT) USING DELTA")
    cursor.execute("INSERT INTO v VALUES (1), (2)")
    cursor.execute("INSERT OVERWRITE v VALUES (3)")
    before = keys_under(s3, f"{WAREHOUSE_PREFIX}/obj.db/v")
    cursor.execute("SET spark.databricks.delta.retentionDurationCheck.enabled = false")
    cursor.execute("VACUUM v RETAIN 0 HOURS")
    after = keys_under(s3, f"{WAREHOUSE_PREFIX}/obj.db/v")
    data = [key for key in after if "_delta_log" not in key]
    assert len(data) == 1 and len(after) < len(before)
    assert rows(cursor, "SELECT * FROM v") == [(3,)]


def test_materialized_view_full_and_incremental(cursor: Any, s3: S3Store) -> None:
    cursor.execute("CREATE TABLE orders (id INT, customer STRING, amount DOUBLE) USING DELTA")
    cursor.execute("INSERT INTO orders VALUES (1, 'ann', 10.0), (2, 'bob', 5.0), (3, 'ann', 2.5)")
    cursor.execute("CREATE MATERIALIZED VIEW per_customer AS SELECT customer, count(*) AS n FROM orders "
                   "GROUP BY customer")
    assert rows(cursor, "SELECT * FROM per_customer") == [("ann", 2), ("bob", 1)]
    cursor.execute("INSERT INTO orders VALUES (4, 'bob', 7.0)")
    cursor.execute("REFRESH MATERIALIZED VIEW per_customer")
    assert info(cursor, "per_customer")["Last Refresh Type"] == "INCREMENTAL"
    assert rows(cursor, "SELECT * FROM per_customer") == [("ann", 2), ("bob", 2)]
    cursor.execute("CREATE MATERIALIZED VIEW big REFRESH POLICY INCREMENTAL AS "
                   "SELECT id, amount * 2 AS doubled FROM orders WHERE amount > 3")
    cursor.execute("INSERT INTO orders VALUES (5, 'cy', 9.0)")
    cursor.execute("DELETE FROM orders WHERE id = 1")
    cursor.execute("REFRESH MATERIALIZED VIEW big")
    assert rows(cursor, "SELECT * FROM big") == [(2, 10.0), (4, 14.0), (5, 18.0)]
    cursor.execute("REFRESH MATERIALIZED VIEW per_customer FULL")
    assert rows(cursor, "SELECT * FROM per_customer") == [("ann", 1), ("bob", 2), ("cy", 1)]
    visible = from_store(s3, "obj", "per_customer").to_pyarrow_table()
    assert sorted(zip(visible.column("customer").to_pylist(), visible.column("n").to_pylist(), strict=True)) \
        == [("ann", 1), ("bob", 2), ("cy", 1)]
    cursor.execute("DROP MATERIALIZED VIEW big")
    assert keys_under(s3, f"{WAREHOUSE_PREFIX}/obj.db/big") == []


def test_two_concurrent_inserts_both_land(s3_connect: Any, s3: S3Store) -> None:
    """Conditional put: two commits racing for one version, one retries on the next; no row is lost."""
    from concurrent.futures import ThreadPoolExecutor

    setup = cursor_in(s3_connect, "obj")
    setup.execute("CREATE TABLE race (writer INT, id BIGINT) USING DELTA")
    cursors = [cursor_in(s3_connect, "obj") for _ in range(2)]

    def insert(writer: int) -> None:
        for _ in range(3):
            cursors[writer].execute(f"INSERT INTO race SELECT {writer}, id FROM range(100)")

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(insert, range(2)))
    assert rows(setup, "SELECT writer, count(*) FROM race GROUP BY writer") == [(0, 300), (1, 300)]
    assert from_store(s3, "obj", "race").version() == 6


def test_a_name_cannot_leave_the_prefix(cursor: Any, s3: S3Store) -> None:
    for name in ("`..`", "`a/b`", "`%2e%2e`", "`x..y`"):
        status = error_status(cursor, f"CREATE TABLE {name} (id INT) USING DELTA")
        assert status.sqlState == "42602", status.errorMessage
    status = error_status(cursor, "CREATE TABLE `..`.t (id INT) USING DELTA")
    assert status.sqlState == "42602"
    inside = f"{s3.bucket}/{WAREHOUSE_PREFIX}/"
    assert keys_under(s3, "") == sorted(k for k in keys_under(s3, "") if k.startswith(inside))


def test_credentials_are_never_shown(cursor: Any, s3: S3Store, s3_gateway: RunningGateway, spark: Any,
                                     caplog: pytest.LogCaptureFixture) -> None:
    """The secret key is in no output a user or the log can see: DESCRIBE, SET, SET -v, SHOW CREATE TABLE, the
    event log, an error from a failed read, Spark's conf; the access key does not reach Spark's conf either."""
    caplog.set_level("DEBUG")
    cursor.execute("CREATE TABLE secretive (id INT) USING DELTA")
    cursor.execute("INSERT INTO secretive VALUES (1)")
    cursor.execute("CREATE MATERIALIZED VIEW secretive_mv AS SELECT count(*) AS n FROM secretive")
    shown: list[str] = []
    for sql in ("DESCRIBE EXTENDED secretive", "SHOW CREATE TABLE secretive", "SET", "SET -v",
                "DESCRIBE HISTORY secretive", "SELECT * FROM event_log(TABLE(secretive_mv))",
                "DESCRIBE EXTENDED secretive_mv"):
        cursor.execute(sql)
        shown.extend(repr(row) for row in cursor.fetchall())
    # a read that fails on an executor: its data file removed behind the gateway's back
    fs = s3.filesystem()
    data = [key for key in keys_under(s3, f"{WAREHOUSE_PREFIX}/obj.db/secretive") if key.endswith(".parquet")]
    fs.delete_file(data[0])
    status = error_status(cursor, "SELECT * FROM secretive")
    shown.append(status.errorMessage)
    assert "FileNotFoundError: the data file s3://" in status.errorMessage and "is missing" in status.errorMessage
    shown.extend(f"{key}={value}" for key, value in spark.sparkContext.getConf().getAll())
    shown.append(caplog.text)
    shown.append(repr(s3_gateway.config))
    text = "\n".join(shown)
    assert s3.secret_key not in text
    assert all(s3.access_key not in f"{key}={value}" for key, value in spark.sparkContext.getConf().getAll())
    assert f"s3://{s3.bucket}/{WAREHOUSE_PREFIX}/obj.db/secretive" in text    # the location itself is shown


def test_partition_values_that_need_escaping_and_a_new_column(cursor: Any, s3: S3Store) -> None:
    """A string partition value with `/`, `:`, `%` and `=` lands in one escaped folder, reads back as itself (through
    the gateway and delta-rs), and a DELETE removes exactly its file; files written before ADD COLUMNS read the new
    column as NULL."""
    cursor.execute("CREATE TABLE esc (id INT, part STRING) USING DELTA PARTITIONED BY (part)")
    cursor.execute("INSERT INTO esc VALUES (1, 'a/b:c'), (2, '50%=half'), (3, 'plain')")
    assert rows(cursor, "SELECT * FROM esc") == [(1, "a/b:c"), (2, "50%=half"), (3, "plain")]
    assert rows(cursor, "SELECT id FROM esc WHERE part = 'a/b:c'") == [(1,)]
    assert any("part=a%2Fb%3Ac/" in key for key in keys_under(s3, f"{WAREHOUSE_PREFIX}/obj.db/esc"))
    cursor.execute("DELETE FROM esc WHERE part = '50%=half'")
    assert rows(cursor, "SELECT * FROM esc") == [(1, "a/b:c"), (3, "plain")]
    read = from_store(s3, "obj", "esc").to_pyarrow_table().to_pylist()
    assert sorted((r["id"], r["part"]) for r in read) == [(1, "a/b:c"), (3, "plain")]
    cursor.execute("ALTER TABLE esc ADD COLUMNS (note STRING)")
    cursor.execute("INSERT INTO esc VALUES (4, 'plain', 'new')")
    assert rows(cursor, "SELECT id, note FROM esc") == [(1, None), (3, None), (4, "new")]


def test_a_shallow_clone_on_the_store_copies_the_files_into_its_own_prefix(cursor: Any, s3: S3Store) -> None:
    """An object store has no links: a clone's files are copies under its own prefix, so the clone's log names
    only files of its own, and a write to either table leaves the other as it was."""
    cursor.execute("CREATE TABLE csrc (id BIGINT, k INT) USING DELTA PARTITIONED BY (k)")
    cursor.execute("INSERT INTO csrc VALUES (1, 0), (2, 1)")
    cursor.execute("CREATE TABLE ccl SHALLOW CLONE csrc")
    cursor.execute("INSERT INTO ccl VALUES (3, 1)")
    cursor.execute("DELETE FROM csrc WHERE id = 1")
    assert rows(cursor, "SELECT * FROM ccl") == [(1, 0), (2, 1), (3, 1)]
    assert rows(cursor, "SELECT * FROM csrc") == [(2, 1)]
    clone = from_store(s3, "obj", "ccl")
    assert all(uri.startswith(table_uri(s3, "obj", "ccl") + "/") for uri in clone.file_uris())
    assert clone.history()[-1]["sluicegate.operation"] == "CLONE"
