"""`CALL system.runtime.kill_query(...)`: Trino's procedure call, its arguments by name or position, refused with a
position for any other procedure or a malformed argument (no JVM)."""

from __future__ import annotations

import pytest

from sluicegate.dialect.catalogs import NoSuchCatalogError
from sluicegate.dialect.classify import ProcedureNotFoundError, classify
from sluicegate.dialect.errors import DialectError, StatementSyntaxError
from sluicegate.dialect.statements import KillQuery


@pytest.mark.parametrize("sql", [
    "CALL system.runtime.kill_query(query_id => 'abc', message => 'too slow')",
    "CALL system.runtime.kill_query(message => 'too slow', query_id => 'abc')",
    "CALL system.runtime.kill_query('abc', 'too slow')",
    "call SYSTEM.Runtime.KILL_QUERY('abc', message => 'too slow')",
    "CALL `system`.`runtime`.`kill_query`('abc', 'too slow')",
])
def test_kill_query_by_name_or_position(sql: str) -> None:
    assert classify(sql) == KillQuery("abc", "too slow")


def test_the_message_is_optional() -> None:
    assert classify("CALL system.runtime.kill_query('abc')") == KillQuery("abc", None)
    assert classify("CALL system.runtime.kill_query('abc', NULL)") == KillQuery("abc", None)


@pytest.mark.parametrize(("sql", "error", "text", "column"), [
    ("CALL system.runtime.kill('x')", ProcedureNotFoundError, "`system.runtime.kill` cannot be found", 6),
    ("CALL runtime.kill_query('x')", ProcedureNotFoundError, "`runtime.kill_query` cannot be found", 6),
    ("CALL system.runtime.kill_query(42)", DialectError, "query_id must be a string literal", 32),
    ("CALL system.runtime.kill_query('a', 'b', 'c')", DialectError, "takes query_id and message", 42),
    ("CALL system.runtime.kill_query(query_id => 'a', query_id => 'b')", DialectError, "given twice", 61),
    ("CALL system.runtime.kill_query(message => 'm')", DialectError, "needs the query_id", 6),
    ("CALL system.runtime.kill_query('a'", StatementSyntaxError, r"Expected \)", None),
    ("CALL system.runtime.kill_query", StatementSyntaxError, r"Expected \(", None),
])
def test_malformed_calls_are_refused_with_a_position(sql: str, error: type, text: str, column: int | None) -> None:
    with pytest.raises(error, match=text) as raised:
        classify(sql)
    if column is not None:
        assert (raised.value.line, raised.value.column) == (1, column)


def test_the_system_catalog_holds_its_three_schemas_and_nothing_else() -> None:
    assert type(classify("SELECT * FROM system.runtime.queries")).__name__ == "SelectQuery"
    with pytest.raises(NoSuchCatalogError, match="holds information_schema, query, runtime"):
        classify("SELECT * FROM system.secrets.keys")
