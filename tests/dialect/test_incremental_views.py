"""The SQL an incremental refresh of a materialized view runs, built without a JVM (dialect/incremental_views.py):
the change's terms as one UNION ALL, and the merge of a change into an aggregation's groups as one query. The
results are compared with Spark's recompute through a real gateway in tests/warehouse/test_materialized_view*.py."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.incremental_views import (
    EXTREME_LOST,
    ROWS,
    SIGN,
    analyse,
    change_query,
    key_column,
    merge_query,
)

GOLD = ("SELECT c.region, count(*) AS orders, sum(s.units) AS units, avg(s.amount) AS mean_amount, "
        "max(s.id) AS last_id FROM sales s JOIN customers c ON s.customer = c.customer GROUP BY c.region")
COLUMNS = ["region", "orders", "units", "mean_amount", "last_id"]


def _merge(query: str, columns: list[str], one_task: bool = False) -> tuple[str, exp.Expression]:
    found = analyse(query)
    hidden = [ROWS] + [c for a in found.aggregates for c in (a.state, a.count) if c is not None]
    types = dict.fromkeys([*columns, *hidden], "bigint")
    avg_types = {a.index: "decimal(16,6)" for a in found.aggregates if a.function == "AVG"}
    sql = merge_query(found, "(\nSELECT 1\n)", "old_rows", columns, hidden, types, avg_types, one_task)
    return sql, sqlglot.parse_one(sql, dialect=StreamingSpark)


def test_change_terms_are_one_union_with_their_signs() -> None:
    sql = change_query([(1, "SELECT a FROM t -- added"), (-1, "SELECT a FROM u")])
    tree = sqlglot.parse_one(sql, dialect=StreamingSpark)
    assert isinstance(tree, exp.Union)
    signs = [select.selects[-1] for select in (tree.left, tree.right)]
    assert [(s.alias, s.this.sql()) for s in signs] == [(SIGN, "1"), (SIGN, "-1")]
    assert "-- added\n)" in sql               # a comment at a term's end never hides its closing parenthesis


def test_merge_is_one_aggregation_over_the_view_and_the_change() -> None:
    sql, tree = _merge(GOLD, COLUMNS)
    assert [select.alias_or_name for select in tree.selects][:len(COLUMNS)] == COLUMNS
    groups = [select for select in tree.find_all(exp.Select) if select.args.get("group")]
    assert len(groups) == 1 and groups[0].args["group"].expressions[0].name == key_column(0)
    union = tree.find(exp.Union)
    assert union is not None and union.left.find(exp.Table).name == "old_rows"
    assert "COALESCE(1)" not in sql
    # max(s.id): a group whose max a removed row may have been is marked, and the refresh falls back to a recompute
    assert tree.selects[-1].alias_or_name == EXTREME_LOST and "raise_error" not in sql
    assert "__sg_mv_d_n3 IS NOT NULL" in sql.split(f" AS {EXTREME_LOST}")[0].rsplit("coalesce(((", 1)[1]
    # avg from its state, in avg's own type
    assert "AS DECIMAL(16, 6)" in sql


def test_a_small_change_is_merged_in_one_task() -> None:
    sql, _ = _merge(GOLD, COLUMNS, one_task=True)
    assert "/*+ COALESCE(1) */" in sql


def test_a_global_aggregation_has_no_group_by_and_keeps_its_row() -> None:
    sql, tree = _merge("SELECT count(*) AS n, sum(v) AS total FROM a", ["n", "total"])
    assert not any(select.args.get("group") for select in tree.find_all(exp.Select))
    assert "WHERE" not in sql and "raise_error" not in sql
    assert f"FALSE AS {EXTREME_LOST}" in sql           # no min or max: no group can lose its extreme
