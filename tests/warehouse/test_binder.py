"""The snapshot binder against real Spark and real Delta tables."""

from __future__ import annotations

import pytest
from delta_writes import write_dataframe

from sluicegate.dialect.errors import SqlError
from sluicegate.dialect.statements import Query
from sluicegate.executor.binding.binder import Binder, ResolvedTable
from sluicegate.executor.binding.resolved import RememberingResolver
from sluicegate.storage.delta.holds import holds
from sluicegate.storage.spark_errors import RuntimeQueryError


class DictResolver:
    def __init__(self, objects: dict[tuple[str, str], ResolvedTable], acting_for: str | None = None) -> None:
        self.objects = objects
        self.acting_for = acting_for
        self.asked: list[tuple[str | None, str, str | None]] = []

    def resolve(self, database, name):
        self.asked.append((database, name, self.acting_for))
        if name == "forbidden":
            raise SqlError("no rights on forbidden", error_class="INSUFFICIENT_PERMISSIONS", sqlstate="42501")
        return self.objects.get(((database or "default").lower(), name.lower()))

    def for_view(self, view):
        inner = DictResolver(self.objects, acting_for=view.owner)
        inner.asked = self.asked
        return inner


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
                                                 view_sql="SELECT * FROM orders WHERE id >= 2", owner="ann"),
        ("default", "odd name`s"): ResolvedTable("default", "odd name`s", "TABLE", users),
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


def _bound_rows(spark, resolver, sql):
    binder = Binder(spark, resolver, sql)
    try:
        return _rows(binder.bind(Query(sql)))
    finally:
        binder.close()


@pytest.mark.parametrize("sql, expected", [
    ("SELECT orders.id FROM orders WHERE orders.id < 2", [(0,), (1,)]),                      # name.column
    ("SELECT o.id FROM default.orders o WHERE o.id < 1", [(0,)]),                            # alias kept
    ("SELECT count(*) FROM orders VERSION AS OF 0 AS o", [(4,)]),
    ("SELECT count(*) FROM orders TABLESAMPLE (100 PERCENT) o", [(6,)]),
    ("SELECT count(*) FROM orders TABLESAMPLE (100 PERCENT)", [(6,)]),
    ("SELECT o.id, e.v FROM orders o LATERAL VIEW explode(array(o.uid)) e AS v WHERE o.id = 3", [(3, 1)]),
    ("SELECT /*+ BROADCAST(u) */ count(*) FROM orders JOIN sales.users u ON orders.uid = u.id", [(6,)]),
    ("SELECT max(r) FROM (SELECT rank() OVER (PARTITION BY uid ORDER BY id) AS r FROM orders)", [(3,)]),
    ("WITH c AS (SELECT named_struct('a', id) AS s FROM orders) SELECT max(c.s.a) FROM c", [(5,)]),
    ("SELECT `odd name``s`.name FROM `odd name``s` WHERE id IN (SELECT uid FROM orders WHERE id = 1)", [("bob",)]),
    ("-- a comment\nSELECT count(*) /* and another */ FROM\n  orders", [(6,)]),
])
def test_constructs_round_trip_through_the_tree(spark, tables, sql, expected):
    assert _bound_rows(spark, tables, sql) == expected


def test_binder_lists_what_it_resolved_and_views_read_as_their_owner(spark, tables):
    sql = "SELECT count(*) FROM big_orders JOIN orders ON true JOIN tmp_not_in_catalog ON true"
    spark.range(1).createOrReplaceTempView("tmp_not_in_catalog")
    binder = Binder(spark, tables, sql)
    try:
        assert _rows(binder.bind(Query(sql))) == [(24,)]
        assert [(r.name, r.kind) for r in binder.resolved] == [("big_orders", "VIEW"), ("orders", "TABLE")]
        assert (None, "orders", "ann") in tables.asked  # the view's own table, resolved for its owner
        assert len({s.version for s in binder.snapshots.values()}) == 1
    finally:
        binder.close()
        spark.catalog.dropTempView("tmp_not_in_catalog")


def test_a_remembering_resolver_asks_each_name_once_and_never_remembers_a_refusal(spark, tables):
    """What the result cache's look-up and then the binder share within one statement: two binds of a statement
    that names `orders` twice and a view over it ask the catalog once per name (the view's own names once, as its
    owner); a refusal is asked again and raises again."""
    remembering = RememberingResolver(tables)
    sql = "SELECT count(*) FROM orders a JOIN orders b ON a.id = b.id JOIN big_orders c ON c.id = a.id"
    for _ in range(2):
        binder = Binder(spark, remembering, sql)
        try:
            assert _rows(binder.bind(Query(sql))) == [(4,)]
        finally:
            binder.close()
    assert sorted(tables.asked, key=str) == [(None, "big_orders", None), (None, "orders", "ann"),
                                             (None, "orders", None)]
    assert remembering.resolve(None, "nowhere") is None and remembering.resolve(None, "nowhere") is None
    assert tables.asked.count((None, "nowhere", None)) == 1     # a missing name is an answer too
    for _ in range(2):
        with pytest.raises(SqlError, match="no rights on forbidden"):
            remembering.resolve(None, "forbidden")
    assert tables.asked.count((None, "forbidden", None)) == 2


def test_a_resolver_error_gets_the_references_position(spark, tables):
    sql = "SELECT *\n  FROM orders JOIN forbidden ON true"
    binder = Binder(spark, tables, sql)
    with pytest.raises(SqlError) as raised:
        binder.bind(Query(sql))
    binder.close()
    assert raised.value.error_class == "INSUFFICIENT_PERMISSIONS"
    assert (raised.value.line, raised.value.column) == (2, 20)


def test_positions_after_the_rewrite_and_inside_an_embedded_query(spark, tables):
    statement = "CREATE VIEW v AS\nSELECT o.id FROM `default`.orders VERSION AS OF 0 o\nWHERE o.nope > 1"
    offset = statement.index("SELECT")
    binder = Binder(spark, tables, statement)
    with pytest.raises(RuntimeQueryError) as raised:
        binder.bind(Query(statement[offset:], offset))
    binder.close()
    assert (raised.value.line, raised.value.column) == (3, 7)


def test_the_query_runs_as_typed_but_for_the_names(spark, tables):
    """Spark reads the user's own text (only table names replaced): quoting and functions sqlglot would print
    differently are untouched."""
    sql = "SELECT 'it''s' AS s, to_timestamp(to_unix_timestamp(date('2024-01-31'))) AS t FROM orders LIMIT 1"
    binder = Binder(spark, tables, sql)
    try:
        row = binder.bind(Query(sql)).collect()[0]
    finally:
        binder.close()
    assert row["s"] == "it's"


def test_a_bound_statement_holds_each_pinned_version_until_close(spark, tables):
    """Retention keeps what a running statement reads (storage/delta/holds.py): the binder holds every version it
    pins, those of a view's tables too, and releases them all on close."""
    orders = tables.objects[("default", "orders")].location
    users = tables.objects[("sales", "users")].location
    sql = "SELECT * FROM big_orders JOIN orders VERSION AS OF 0 ON true JOIN sales.users ON true"
    binder = Binder(spark, tables, sql)
    try:
        binder.bind(Query(sql))
        assert sorted(h.version for h in holds(orders)) == [0, 1]    # time travel, and the view's latest
        assert [h.version for h in holds(users)] == [0]
    finally:
        binder.close()
    assert holds(orders) == [] and holds(users) == []
