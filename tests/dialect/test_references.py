"""Table references and their text spans: what the snapshot binder replaces, and nothing else."""

from __future__ import annotations

import pytest

from dialect.errors import StatementSyntaxError
from dialect.references import RewriteError, TimeTravelSpecError, generate, parse, point_at, table_references

QUERY = """WITH c AS (SELECT * FROM sales.orders VERSION AS OF 3)
SELECT o.id, u.name FROM c o JOIN `default`.`users` TIMESTAMP AS OF '2024-01-01' u ON o.uid = u.id
WHERE o.id IN (SELECT id FROM refunds)"""


def test_references_with_spans_and_time_travel():
    refs = table_references(QUERY)
    assert [(r.database, r.name, r.version, r.timestamp) for r in refs] == [
        ("sales", "orders", 3, None),
        ("default", "users", None, "2024-01-01"),
        (None, "refunds", None, None),
    ]
    assert [QUERY[r.start:r.end] for r in refs] == [
        "sales.orders VERSION AS OF 3",
        "`default`.`users` TIMESTAMP AS OF '2024-01-01'",
        "refunds",
    ]


def test_cte_names_are_not_tables():
    assert [r.name for r in table_references("WITH x AS (SELECT 1) SELECT * FROM x")] == []


def test_generated_text_maps_back_into_the_original():
    tree = parse(QUERY)
    for i, ref in enumerate(table_references(QUERY, tree)):
        point_at(ref, f"__v{i}")
    generated = generate(tree, QUERY)
    assert generated.sql == (
        "WITH c AS (SELECT * FROM __v0 AS `orders`) SELECT o.id, u.name FROM c AS o JOIN __v1 AS u ON o.uid = u.id "
        "WHERE o.id IN (SELECT id FROM __v2 AS `refunds`)")
    assert generated.to_original(generated.sql.index("__v1")) == QUERY.index("`default`")
    for fragment in ("SELECT o.id", "WHERE", "o.id", "u.name", "uid", "ON o", "IN (SELECT"):
        assert generated.to_original(generated.sql.index(fragment)) == QUERY.index(fragment), fragment
    assert generated.to_original(0) == 0


@pytest.mark.parametrize("sql", [
    "SELECT x FROM t VERSION AS OF 'three'",
    "SELECT x FROM t TIMESTAMP AS OF current_timestamp() - INTERVAL 1 HOUR",
])
def test_time_travel_takes_literals(sql):
    with pytest.raises(TimeTravelSpecError) as raised:
        table_references(sql)
    assert raised.value.column == sql.index("AS OF") + len("AS OF ") + 1


def test_a_tree_that_does_not_print_back_is_refused():
    sql = "SELECT 'it''s' FROM t"
    with pytest.raises(RewriteError):
        generate(parse(sql), sql)


def test_syntax_error_has_a_position():
    with pytest.raises(StatementSyntaxError) as raised:
        table_references("SELECT * FROM (((")
    assert raised.value.sqlstate == "42601"
    assert raised.value.line == 1 and raised.value.column is not None
