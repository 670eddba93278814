"""The query history's statement type and tables (no JVM): one mapping from the classified statement, Spark's own
statements by their first words, tables read and written as the text names them."""

from __future__ import annotations

import re
import typing

import pytest

from sluicegate.dialect import statements
from sluicegate.dialect.statement_types import first_words_type, statement_facts, statement_type


@pytest.mark.parametrize(("sql", "kind"), [
    ("SELECT 1", "SELECT"),
    ("WITH a AS (SELECT 1) SELECT * FROM a", "SELECT"),
    ("INSERT INTO t VALUES (1)", "INSERT"),
    ("DELETE FROM t WHERE x = 1", "DELETE"),
    ("UPDATE t SET x = 1", "UPDATE"),
    ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", "MERGE"),
    ("CREATE TABLE t (x INT)", "CREATE_TABLE"),
    ("CREATE STREAMING TABLE s AS SELECT * FROM STREAM read_files('/x', format => 'json')", "CREATE_STREAMING_TABLE"),
    ("CREATE MATERIALIZED VIEW mv AS SELECT 1 AS x", "CREATE_MATERIALIZED_VIEW"),
    ("REFRESH STREAMING TABLE s", "REFRESH"),
    ("DROP TABLE t", "DROP_TABLE"),
    ("SHOW TABLES", "SHOW_TABLES"),
    ("GRANT SELECT ON TABLE t TO bob", "GRANT"),
    ("USE db", "USE"),
    ("SET spark.sql.shuffle.partitions=2", "SET"),
    ("EXPLAIN SELECT 1", "EXPLAIN"),
    ("SHOW FUNCTIONS", "SHOW_FUNCTIONS"),
    ("SELEC 1", "SELEC"),
    ("", "OTHER"),
])
def test_types(sql: str, kind: str) -> None:
    assert statement_facts(sql).statement_type == kind


def test_every_statement_kind_has_an_upper_snake_type_name() -> None:
    kinds = [kind for kind in typing.get_args(statements.Statement) if kind is not statements.Passthrough]
    assert len(kinds) > 40
    names = {kind: statement_type(object.__new__(kind)) for kind in kinds}
    assert all(re.fullmatch(r"[A-Z]+(?:_[A-Z]+)*", name) for name in names.values()), names
    assert names[statements.ShowFlows] == "SHOW_FLOWS" and names[statements.CreateFlow] == "CREATE_FLOW"
    assert first_words_type("  -- note\n desc extended t") == "DESCRIBE"


def test_tables_read_and_written() -> None:
    facts = statement_facts("INSERT INTO db.t SELECT * FROM a JOIN other.b ON a.k = b.k", "sales")
    assert facts.written_table == "db.t" and facts.read_tables == ("sales.a", "other.b")
    assert statement_facts("WITH c AS (SELECT * FROM a) SELECT * FROM c").read_tables == ("a",)
    assert statement_facts("SELECT * FROM system.query.history").read_tables == ("system.query.history",)
    assert statement_facts("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE").written_table == "t"
    # a function's name is no table it reads; its body's tables are
    facts = statement_facts("CREATE FUNCTION s.f (x INT) RETURNS INT RETURN (SELECT max(a) FROM s.t)", "sales")
    assert (facts.statement_type, facts.read_tables) == ("CREATE_FUNCTION", ("s.t",))
