"""The predicates a reader may apply to one table's rows before anything else (dialect/filters.py): each safe form
is read, each unsafe place or form gives nothing, since a wrong predicate would silently drop rows."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlglot import exp

from sluicegate.dialect.filters import AllOf, AnyOf, Comparison, Value, rewrite_predicates, table_predicates
from sluicegate.dialect.parse import parse


def predicates(sql: str, table: str = "t", occurrence: int = 0) -> tuple:
    """The predicates of the `occurrence`-th reference to `table` in `sql`."""
    found = [node for node in parse(sql).find_all(exp.Table) if node.name == table]
    found.sort(key=lambda node: node.this.meta["start"])
    return table_predicates(found[occurrence])


def one(column: str, op: str, *values: object, kind: str = "integer") -> Comparison:
    return Comparison(column, op, tuple(Value(v, kind) for v in values))  # type: ignore[arg-type]


@pytest.mark.parametrize(("where", "expected"), [
    ("id = 5", one("id", "=", 5)),
    ("5 = id", one("id", "=", 5)),
    ("id < 5", one("id", "<", 5)),
    ("5 < id", one("id", ">", 5)),
    ("id <= 5", one("id", "<=", 5)),
    ("id >= -5", one("id", ">=", -5)),
    ("5 >= id", one("id", "<=", 5)),
    ("id > 5", one("id", ">", 5)),
    ("id IN (1, 2, 3)", one("id", "in", 1, 2, 3)),
    ("id BETWEEN 1 AND 9", AllOf((one("id", ">=", 1), one("id", "<=", 9)))),
    ("name IS NULL", one("name", "is null")),
    ("name IS NOT NULL", one("name", "is not null")),
    ("name = 'x'", one("name", "=", "x", kind="string")),
    ("day = DATE '2024-02-29'", one("day", "=", dt.date(2024, 2, 29), kind="date")),
    ("flag = true", one("flag", "=", True, kind="boolean")),
    ("id = 7L", one("id", "=", 7)),
    ("price = 1.50", one("price", "=", Decimal("1.50"), kind="decimal")),
    ("ratio < 1e3", one("ratio", "<", 1000.0, kind="double")),
    ("at > TIMESTAMP '2024-01-01 00:00:00'", one("at", ">", "2024-01-01 00:00:00", kind="timestamp")),
    ("(id = 1)", one("id", "=", 1)),
    ("id = 1 OR id = 9", AnyOf((one("id", "=", 1), one("id", "=", 9)))),
    ("(id = 1 AND name = 'a') OR name IS NULL",
     AnyOf((AllOf((one("id", "=", 1), one("name", "=", "a", kind="string"))), one("name", "is null")))),
    # inside an OR, an AND keeps what it can read (a weaker branch keeps more files, never fewer)
    ("(id = 1 AND upper(name) = 'A') OR id = 9", AnyOf((one("id", "=", 1), one("id", "=", 9)))),
])
def test_each_safe_form_is_read(where: str, expected: object) -> None:
    assert predicates(f"SELECT * FROM t WHERE {where}") == (expected,)


@pytest.mark.parametrize("where", [
    "upper(name) = 'A'",            # a function of the column
    "CAST(id AS STRING) = '1'",     # a cast of the column
    "id = other",                   # column against column
    "NOT (id = 1)",
    "id <=> 1",
    "id <> 1",
    "id = 1 + 1",                   # an expression, not a literal
    "id IN (SELECT id FROM u)",     # a subquery
    "EXISTS (SELECT 1 FROM u WHERE u.id = t.id)",
    "id = NULL",
    "id IN (1, NULL)",
    "id = 1 OR upper(name) = 'A'",  # an OR with a branch that says nothing
    "name LIKE 'a%'",
    "day = DATE '2024-2-9'",        # a date text Spark reads, but not in the one form taken
    "id = CAST('5' AS INT)",        # a string cast to a number: Spark's cast, not a literal
    "id BETWEEN SYMMETRIC 9 AND 1",
    "name = 'a\\tb'",               # escapes: Spark's reading of them decides the value, not sqlglot's
    "name = 'x\\u0041'",
    "name = 'it''s'",               # Spark joins adjacent literals
    "name = r'a'",
    "day = DATE '2024\\-01-01'",
])
def test_each_unsafe_form_is_left_out(where: str) -> None:
    assert predicates(f"SELECT * FROM t WHERE {where}") == ()


def test_conjuncts_are_read_one_by_one_and_unsafe_ones_dropped() -> None:
    assert predicates("SELECT * FROM t WHERE id > 1 AND upper(name) = 'A' AND (name IS NULL)") == (
        one("id", ">", 1), one("name", "is null"))


def test_a_non_deterministic_where_uses_nothing() -> None:
    assert predicates("SELECT * FROM t WHERE id = 1 AND rand() < 0.5") == ()
    assert predicates("SELECT * FROM t WHERE id = 1 AND spark_partition_id() = 0") == ()


def test_columns_qualified_by_the_alias_or_the_name() -> None:
    assert predicates("SELECT * FROM t AS x WHERE x.id = 1 AND t.id = 2") == (one("id", "=", 1),)
    # with an alias, `t.id` is not this table's (in a subquery it would be the outer t)
    assert predicates("SELECT * FROM db.t WHERE t.id = 1 AND db.t.id = 2 AND T.id = 3") == (
        one("id", "=", 1), one("id", "=", 3))


def test_inner_joins_keep_each_sides_qualified_predicates() -> None:
    sql = "SELECT * FROM t JOIN u ON t.k = u.k WHERE t.id = 1 AND u.v = 2 AND id = 3 AND t.k = u.k"
    assert predicates(sql) == (one("id", "=", 1),)
    assert predicates(sql, "u") == (one("v", "=", 2),)
    cross = "SELECT * FROM t, u WHERE t.id = 1 AND u.v = 2"
    assert predicates(cross) == (one("id", "=", 1),)
    assert predicates(cross, "u") == (one("v", "=", 2),)
    assert predicates("SELECT * FROM t CROSS JOIN u WHERE u.v = 2", "u") == (one("v", "=", 2),)


def test_outer_joins_never_prune_the_null_supplying_side() -> None:
    left = "SELECT * FROM t LEFT JOIN u ON t.k = u.k WHERE t.id = 1 AND u.v IS NULL"
    assert predicates(left) == (one("id", "=", 1),)
    assert predicates(left, "u") == ()
    right = "SELECT * FROM t RIGHT JOIN u ON t.k = u.k WHERE t.id = 1 AND u.v = 2"
    assert predicates(right) == ()
    assert predicates(right, "u") == (one("v", "=", 2),)
    full = "SELECT * FROM t FULL JOIN u ON t.k = u.k WHERE t.id = 1 AND u.v = 2"
    assert predicates(full) == ()
    assert predicates(full, "u") == ()
    # a right join later in the chain makes every source before it null-supplying
    chain = "SELECT * FROM t JOIN u ON t.k = u.k RIGHT JOIN w ON u.k = w.k WHERE t.id = 1 AND u.v = 2 AND w.z = 3"
    assert predicates(chain) == ()
    assert predicates(chain, "u") == ()
    assert predicates(chain, "w") == (one("z", "=", 3),)


def test_semi_and_anti_join_sides_are_not_pruned() -> None:
    for kind in ("LEFT SEMI", "LEFT ANTI"):
        sql = f"SELECT * FROM t {kind} JOIN u ON t.k = u.k AND u.v = 2 WHERE t.id = 1"
        assert predicates(sql) == (one("id", "=", 1),)
        assert predicates(sql, "u") == ()


def test_a_joins_on_clause_is_never_used() -> None:
    assert predicates("SELECT * FROM t JOIN u ON t.k = u.k AND t.id = 1 AND u.v = 2", "u") == ()
    assert predicates("SELECT * FROM t JOIN u ON t.k = u.k AND t.id = 1") == ()


def test_correlated_subquery_uses_its_own_where_only_for_its_own_table() -> None:
    sql = ("SELECT * FROM t WHERE t.id = 1 AND EXISTS "
           "(SELECT 1 FROM u WHERE u.k = t.k AND u.v = 2 AND t.id = 5 AND w = 3)")
    assert predicates(sql) == (one("id", "=", 1),)
    # `t.id = 5` is the outer table's; `w` is unqualified in a single-source SELECT: u's, or an outer column if u has
    # none (the reader finds no such column in u's schema and keeps every file)
    assert predicates(sql, "u") == (one("v", "=", 2), one("w", "=", 3))
    scalar = "SELECT (SELECT max(v) FROM u WHERE u.k = t.k) FROM t WHERE id > 4"
    assert predicates(scalar) == (one("id", ">", 4),)
    assert predicates(scalar, "u") == ()


def test_union_branches_have_their_own_where() -> None:
    sql = "SELECT id FROM t WHERE id = 1 UNION ALL SELECT id FROM t WHERE id = 2 UNION SELECT id FROM t"
    assert [predicates(sql, occurrence=i) for i in range(3)] == [(one("id", "=", 1),), (one("id", "=", 2),), ()]


def test_a_cte_reading_the_table_uses_its_own_where() -> None:
    sql = "WITH c AS (SELECT * FROM t WHERE id = 1) SELECT * FROM c WHERE id = 2"
    assert predicates(sql) == (one("id", "=", 1),)
    outer_only = "WITH c AS (SELECT * FROM t) SELECT * FROM c WHERE id = 2"
    assert predicates(outer_only) == ()


def test_a_filter_above_a_subquery_is_not_pushed_into_it() -> None:
    assert predicates("SELECT * FROM (SELECT * FROM t) s WHERE s.id = 1") == ()


def test_having_is_not_where_but_grouping_windows_distinct_and_limit_keep_it() -> None:
    assert predicates("SELECT id, count(*) FROM t GROUP BY id HAVING id = 1") == ()
    assert predicates("SELECT id, count(*) FROM t WHERE id = 2 GROUP BY id HAVING count(*) > 1") == (
        one("id", "=", 2),)
    assert predicates("SELECT id, row_number() OVER (ORDER BY id) FROM t WHERE id < 3") == (one("id", "<", 3),)
    assert predicates("SELECT DISTINCT id FROM t WHERE id = 4 LIMIT 1") == (one("id", "=", 4),)
    assert predicates("SELECT * FROM t WHERE id = 4 QUALIFY row_number() OVER (ORDER BY id) = 1") == (
        one("id", "=", 4),)


def test_sampled_and_lateral_view_reads() -> None:
    assert predicates("SELECT * FROM t TABLESAMPLE (10 PERCENT) WHERE id = 1") == ()
    # a lateral view adds columns: an unqualified one may be the view's
    lateral = "SELECT * FROM t LATERAL VIEW explode(xs) e AS x WHERE x = 1 AND t.id = 2"
    assert predicates(lateral) == (one("id", "=", 2),)


def test_time_travel_references_read_their_where() -> None:
    assert predicates("SELECT * FROM t VERSION AS OF 3 WHERE id = 1") == (one("id", "=", 1),)


def test_a_query_without_where_has_none() -> None:
    assert predicates("SELECT * FROM t") == ()
    assert predicates("INSERT INTO u SELECT * FROM t WHERE id = 1") == (one("id", "=", 1),)


def _rewrite(sql: str) -> tuple:
    tree = parse(sql)
    return rewrite_predicates(tree.this, tree.args.get("where"))


def test_a_delete_or_update_target_is_pruned_by_its_where() -> None:
    assert _rewrite("DELETE FROM t WHERE id BETWEEN 1 AND 3 AND upper(name) = 'A'") == (
        AllOf((one("id", ">=", 1), one("id", "<=", 3))),)
    assert _rewrite("DELETE FROM db.t AS x WHERE x.id = 1 OR id = 2") == (
        AnyOf((one("id", "=", 1), one("id", "=", 2))),)
    assert _rewrite("UPDATE t SET v = 1 WHERE t.id IN (4, 5) AND EXISTS (SELECT 1 FROM u WHERE u.k = t.k)") == (
        one("id", "in", 4, 5),)
    assert _rewrite("DELETE FROM t") == ()
    assert _rewrite("DELETE FROM t WHERE id = 1 AND rand() < 0.5") == ()
    assert _rewrite("UPDATE t SET v = 1 WHERE id IN (SELECT id FROM u)") == ()
