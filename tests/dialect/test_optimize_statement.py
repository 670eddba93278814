"""OPTIMIZE as Databricks writes it (and dbt-databricks sends it): the table, the partition predicate as a
conjunction of terms, the z-order columns, each with its position; what is not a partition predicate is refused at
the token the user typed."""

from __future__ import annotations

import pytest

from sluicegate.dialect.classify import classify
from sluicegate.dialect.errors import DialectError, StatementSyntaxError
from sluicegate.dialect.partition_predicates import UnsupportedPartitionPredicateError
from sluicegate.dialect.statements import ColumnName, Optimize, PartitionTerm, TableName


@pytest.mark.parametrize("sql, expected", [
    ("OPTIMIZE t", Optimize(TableName(None, "t"))),
    ("optimize `db`.`t`", Optimize(TableName("db", "t"))),
    ("OPTIMIZE main.db.t", Optimize(TableName("db", "t"))),
    ("OPTIMIZE hive_metastore.db.t ZORDER BY (a, `b c`)",
     Optimize(TableName("db", "t"), zorder=(ColumnName("a"), ColumnName("b c")))),
    # dbt-databricks after an incremental model, and the form without parentheses
    ("optimize `db`.`t` zorder by (a)", Optimize(TableName("db", "t"), zorder=(ColumnName("a"),))),
    ("OPTIMIZE t ZORDER BY a, b", Optimize(TableName(None, "t"), zorder=(ColumnName("a"), ColumnName("b")))),
    ("OPTIMIZE t WHERE day = '2024-01-01'",
     Optimize(TableName(None, "t"), (PartitionTerm(ColumnName("day"), "=", ("2024-01-01",)),), "day = '2024-01-01'")),
    ("OPTIMIZE t WHERE day >= DATE '2024-01-01' AND 3 < n AND r IN ('eu', 'us') AND ok != true AND k = -2 "
     "ZORDER BY (x)",
     Optimize(TableName(None, "t"), (
         PartitionTerm(ColumnName("day"), ">=", ("2024-01-01",)), PartitionTerm(ColumnName("n"), ">", ("3",)),
         PartitionTerm(ColumnName("r"), "in", ("eu", "us")), PartitionTerm(ColumnName("ok"), "!=", ("true",)),
         PartitionTerm(ColumnName("k"), "=", ("-2",))),
         "day >= CAST('2024-01-01' AS DATE) AND 3 < n AND r IN ('eu', 'us') AND ok <> TRUE AND k = -2",
         (ColumnName("x"),))),
])
def test_optimize_is_classified(sql: str, expected: Optimize) -> None:
    assert classify(sql) == expected


def test_the_columns_keep_their_positions() -> None:
    sql = "OPTIMIZE db.t\nWHERE (day = '2024-01-01')\nZORDER BY (user_id, `ts`)"
    statement = classify(sql)
    assert isinstance(statement, Optimize)
    assert [sql[c.offset:].split(")")[0].split(",")[0] for c in statement.zorder] == ["user_id", "`ts`"]
    assert [sql[t.column.offset:t.column.offset + 3] for t in statement.where] == ["day"]
    assert statement.table.offset == sql.index("db.t")


@pytest.mark.parametrize("sql, at", [
    ("OPTIMIZE t WHERE d = 1 OR d = 2", "d = 1"),
    ("OPTIMIZE t WHERE d = e", "d = e"),
    ("OPTIMIZE t WHERE upper(d) = 'x'", "upper"),
    ("OPTIMIZE t WHERE d = upper('x')", "upper('x')"),
    ("OPTIMIZE t WHERE d IN (SELECT 1)", "d IN"),
    ("OPTIMIZE t WHERE x.d = 1", "x.d"),
])
def test_what_is_no_partition_predicate_is_refused_where_it_is_written(sql: str, at: str) -> None:
    with pytest.raises(UnsupportedPartitionPredicateError) as raised:
        classify(sql)
    error = raised.value
    assert (error.error_class, error.sqlstate) == ("DELTA_UNSUPPORTED_PARTITION_PREDICATE", "0AKDC")
    assert (error.line, error.column) == (1, sql.index(at) + 1)
    assert "partition columns compared with literals" in (error.hint or "")


@pytest.mark.parametrize("sql, at", [
    ("OPTIMIZE t WHERE", "WHERE"),
    ("OPTIMIZE t ZORDER BY", "BY"),
    ("OPTIMIZE t ZORDER BY (a", "a"),
    ("OPTIMIZE t ZORDER BY (a + 1)", "+"),
    ("OPTIMIZE t FULL", "FULL"),
    ("OPTIMIZE t ZORDER BY (a) WHERE d = 1", "WHERE"),
])
def test_syntax_errors_are_the_gateways_not_sparks(sql: str, at: str) -> None:
    with pytest.raises(StatementSyntaxError) as raised:
        classify(sql)
    assert raised.value.line == 1  # sqlglot reports the column of the offending token's last character
    assert raised.value.column == sql.index(at) + len(at)


def test_a_qualified_zorder_column_is_refused_at_its_position() -> None:
    sql = "OPTIMIZE t ZORDER BY (t.a)"
    with pytest.raises(DialectError) as raised:
        classify(sql)
    assert (raised.value.line, raised.value.column) == (1, sql.index("t.a") + 1)
    assert raised.value.hint


def test_optimize_round_trips_through_the_generator() -> None:
    from sqlglot import parse_one

    from sluicegate.dialect.dialect import StreamingSpark

    sql = "OPTIMIZE db.t WHERE d = 1 ZORDER BY (a, b)"
    assert parse_one(sql, read=StreamingSpark).sql(StreamingSpark) == sql
