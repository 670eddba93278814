"""Table references and their text spans: what the snapshot binder replaces, and nothing else."""

from __future__ import annotations

import pytest

from dialect.errors import StatementSyntaxError
from dialect.references import PositionMap, table_references

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


def test_position_map_points_back_into_the_original():
    refs = table_references(QUERY)
    rewritten = PositionMap(QUERY, [(r.start, r.end, f"__v{i}") for i, r in enumerate(refs)])
    assert "__v0" in rewritten.rewritten and "VERSION AS OF" not in rewritten.rewritten
    where = rewritten.rewritten.index("WHERE")
    assert rewritten.to_original(where) == QUERY.index("WHERE")
    select_at = rewritten.rewritten.index("SELECT o.id")
    assert rewritten.to_original(select_at) == QUERY.index("SELECT o.id")
    assert rewritten.to_original(0) == 0


def test_syntax_error_has_a_position():
    with pytest.raises(StatementSyntaxError) as raised:
        table_references("SELECT * FROM (((")
    assert raised.value.sqlstate == "42601"
    assert raised.value.line == 1 and raised.value.column is not None
