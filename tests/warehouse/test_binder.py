"""The snapshot binder against real Spark and real Delta tables."""

from __future__ import annotations

import pytest

from dialect.statements import Query
from runtime.delta.write import write_dataframe
from runtime.errors import RuntimeQueryError
from runtime.warehouse.binder import Binder, ResolvedTable


class DictResolver:
    def __init__(self, objects: dict[tuple[str, str], ResolvedTable]) -> None:
        self.objects = objects

    def resolve(self, database, name):
        return self.objects.get(((database or "default").lower(), name.lower()))

    def for_view(self, view):
        return self


@pytest.fixture()
def tables(spark, tmp_path):
    orders = str(tmp_path / "orders")
    write_dataframe(spark.sql("SELECT id, id % 2 AS uid FROM range(4)"), orders)          # version 0
    write_dataframe(spark.sql("SELECT id, id % 2 AS uid FROM range(4, 6)"), orders)       # version 1
    users = str(tmp_path / "users")
    write_dataframe(spark.sql("SELECT * FROM VALUES (0, 'ann'), (1, 'bob') AS u(id, name)"), users)
    return DictResolver({
        ("default", "orders"): ResolvedTable("default", "orders", "TABLE", orders),
        ("sales", "users"): ResolvedTable("sales", "users", "TABLE", users),
        ("default", "big_orders"): ResolvedTable("default", "big_orders", "VIEW",
                                                 view_sql="SELECT * FROM orders WHERE id >= 2"),
    })


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_join_time_travel_and_views(spark, tables):
    sql = ("SELECT u.name, count(*) AS n FROM orders o JOIN sales.users u ON o.uid = u.id "
           "GROUP BY u.name")
    binder = Binder(spark, tables, sql)
    try:
        assert _rows(binder.bind(Query(sql))) == [("ann", 3), ("bob", 3)]
    finally:
        binder.close()
    old = "SELECT count(*) FROM orders VERSION AS OF 0"
    binder = Binder(spark, tables, old)
    assert _rows(binder.bind(Query(old))) == [(4,)]
    binder.close()
    view = "SELECT min(id), max(id) FROM big_orders"
    binder = Binder(spark, tables, view)
    assert _rows(binder.bind(Query(view))) == [(2, 5)]
    binder.close()
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("__sg_snapshot")]


def test_an_error_points_into_the_original_text(spark, tables):
    sql = "SELECT nope\nFROM orders VERSION AS OF 1 JOIN sales.users ON true"
    binder = Binder(spark, tables, sql)
    with pytest.raises(RuntimeQueryError) as raised:
        binder.bind(Query(sql))
    binder.close()
    assert raised.value.error_class.startswith("UNRESOLVED_COLUMN")
    assert (raised.value.line, raised.value.column) == (1, 8)


def test_missing_version_is_reported_at_the_reference(spark, tables):
    sql = "SELECT *\n  FROM orders VERSION AS OF 9"
    binder = Binder(spark, tables, sql)
    with pytest.raises(RuntimeQueryError) as raised:
        binder.bind(Query(sql))
    binder.close()
    assert raised.value.sqlstate == "22023"
    assert (raised.value.line, raised.value.column) == (2, 8)


def test_one_statement_reads_one_version_per_table(spark, tables, tmp_path):
    sql = "SELECT (SELECT count(*) FROM orders) AS a, (SELECT count(*) FROM orders) AS b"
    binder = Binder(spark, tables, sql)
    df = binder.bind(Query(sql))
    binder.close()
    write_dataframe(spark.range(100).selectExpr("id", "0L AS uid"), tables.objects[("default", "orders")].location)
    assert df.collect()[0] == (6, 6)  # bound before the append: the new commit stays invisible
