"""Table references and their text spans: what the snapshot binder replaces, and nothing else."""

from __future__ import annotations

import pytest

from sluicegate.dialect.errors import StatementSyntaxError
from sluicegate.dialect.parse import parse
from sluicegate.dialect.references import TimeTravelSpecError, splice, table_references

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


def test_spliced_text_keeps_everything_but_the_names_and_maps_back_into_the_original():
    refs = table_references(QUERY, parse(QUERY))
    spliced = splice(QUERY, [(ref, f"__v{i}") for i, ref in enumerate(refs)])
    expected = QUERY
    for i, ref in sorted(enumerate(refs), key=lambda item: -item[1].start):
        text = f"__v{i}" if ref.node.alias else f"__v{i} AS `{ref.name}`"
        expected = expected[:ref.start] + text + expected[ref.end:]
    assert spliced.sql == expected
    assert spliced.to_original(spliced.sql.index("__v1")) == QUERY.index("`default`")
    for fragment in ("SELECT o.id", "WHERE", "o.id", "u.name", "uid", "ON o", "IN (SELECT"):
        assert spliced.to_original(spliced.sql.index(fragment)) == QUERY.index(fragment), fragment
    assert spliced.to_original(0) == 0


def test_splicing_never_reprints_functions():
    """sqlglot prints to_timestamp(to_unix_timestamp(x)) as a CAST: the text Spark runs is the user's own."""
    sql = "SELECT to_timestamp(to_unix_timestamp(add_months(date(x), 3))), 'it''s' FROM db.t VERSION AS OF 2"
    (ref,) = table_references(sql, parse(sql))
    assert splice(sql, [(ref, "__v")]).sql == (
        "SELECT to_timestamp(to_unix_timestamp(add_months(date(x), 3))), 'it''s' FROM __v AS `t`")


@pytest.mark.parametrize("sql", [
    "SELECT x FROM t VERSION AS OF 'three'",
    "SELECT x FROM t TIMESTAMP AS OF current_timestamp() - INTERVAL 1 HOUR",
])
def test_time_travel_takes_literals(sql):
    with pytest.raises(TimeTravelSpecError) as raised:
        table_references(sql)
    assert raised.value.column == sql.index("AS OF") + len("AS OF ") + 1


def test_syntax_error_has_a_position():
    with pytest.raises(StatementSyntaxError) as raised:
        table_references("SELECT * FROM (((")
    assert raised.value.sqlstate == "42601"
    assert raised.value.line == 1 and raised.value.column is not None
