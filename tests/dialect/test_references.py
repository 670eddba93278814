"""Table references and their text spans: what the snapshot binder replaces, and nothing else."""

from __future__ import annotations

import pytest

from sluicegate.dialect.errors import StatementSyntaxError
from sluicegate.dialect.parse import parse
from sluicegate.dialect.references import (
    TimeTravelSpecError,
    column_qualifiers,
    function_calls,
    parameter_qualifiers,
    splice,
    table_references,
)

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


@pytest.mark.parametrize(("sql", "bound"), [
    ("SELECT main.s.t.id, `s`.`t`.name, t.v FROM main.s.t WHERE main.s.t.id > 1",
     "SELECT t.id, `t`.name, t.v FROM v1 AS `t` WHERE t.id > 1"),
    ("SELECT s.t.id FROM s.t JOIN s.u ON s.t.id = s.u.id", "SELECT t.id FROM v1 AS `t` JOIN v2 AS `u` ON t.id = u.id"),
    # an alias replaces the name; another catalog, or the same name in two schemas: left for Spark to judge
    ("SELECT s.t.id FROM s.t AS x", "SELECT s.t.id FROM v1 AS x"),
    ("SELECT other.s.t.id FROM s.t", "SELECT other.s.t.id FROM v1 AS `t`"),
    ("SELECT s.t.id FROM s.t JOIN o.t ON true", "SELECT s.t.id FROM v1 AS `t` JOIN v2 AS `t` ON true"),
])
def test_a_column_named_by_its_tables_full_name_is_bound_as_table_dot_column(sql: str, bound: str) -> None:
    """The binder reads each table as `<view> AS <name>`, where Spark resolves `name.column` only: the qualifier
    before the table part is cut out of the text (and nothing else), positions still mapping into the original."""
    tree = parse(sql)
    views = [(ref, f"v{index}") for index, ref in enumerate(table_references(sql, tree), 1)]
    spliced = splice(sql, views + [(ref, "") for ref in column_qualifiers(tree)])
    assert spliced.sql == bound
    if "main.s.t.id" in sql:
        assert spliced.to_original(bound.index("t.id")) == sql.index("t.id")


def test_function_calls_and_parameter_qualifiers():
    """The calls a query makes of functions sqlglot does not know, with the name parts written before them, and in a
    function's body the `f.` of `f.p` naming its parameter `p`."""
    sql = "SELECT main.s.f(1), `s`.g(2) AS a, h(3), upper(h(4)), a.b.c.d(5), abs(-1)"
    found = [(c.catalog, c.database, c.name, sql[c.start:c.name_end], sql[c.start:c.end], c.is_column)
             for c in function_calls(sql, parse(sql))]
    assert found == [("main", "s", "f", "main.s.f", "main.s.f(1)", True), (None, "s", "g", "`s`.g", "`s`.g(2)", False),
                     (None, None, "h", "h", "h(3)", True), (None, None, "h", "h", "h(4)", False)]
    body = "f.x + x + (SELECT max(x) FROM t WHERE t.x < F.x AND f.y = 1)"
    assert splice(body, [(r, "g") for r in parameter_qualifiers(body, "f", ("x",))]).sql == \
        "g.x + x + (SELECT max(x) FROM t WHERE t.x < g.x AND f.y = 1)"
