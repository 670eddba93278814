"""Expectations in the column list: `CONSTRAINT name EXPECT (cond) [ON VIOLATION DROP ROW | FAIL UPDATE]` parses
(alone or with columns), prints back, lands in the plan as typed, survives JSON (and plans stored before it load),
and the CREATE-time rules refuse what cannot be judged row by row, at the offending text, with a hint."""

from __future__ import annotations

import json

import pytest

from sluicegate.dialect.classify import classify
from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import DialectError, StatementSyntaxError
from sluicegate.dialect.parse import parse
from sluicegate.dialect.statements import CreateStreamingTable
from sluicegate.dialect.streaming import errors
from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.dialect.streaming.expectations import needs_quarantine, quarantine_name
from sluicegate.dialect.streaming.plan import ExpectationSpec, StreamingPlan

SOURCE = "FROM STREAM read_files('/in', format => 'json', schema => 'id INT, name STRING, ts TIMESTAMP')"


def create(columns: str, properties: str = "") -> str:
    return f"CREATE OR REFRESH STREAMING TABLE t ({columns}) {properties} AS SELECT id, name, ts {SOURCE}"


def at(sql: str, needle: str) -> tuple[int, int]:
    offset = sql.index(needle)
    return sql.count("\n", 0, offset) + 1, offset - (sql.rfind("\n", 0, offset) + 1) + 1


def test_constraints_alone_parse_into_the_plan_as_typed() -> None:
    sql = create("CONSTRAINT valid_id EXPECT (id > 0), "
                 "CONSTRAINT has_name EXPECT (name IS NOT NULL AND length(name) < 10) ON VIOLATION DROP ROW, "
                 "CONSTRAINT recent EXPECT (to_date(ts) >= DATE'2020-01-01') ON VIOLATION FAIL UPDATE")
    plan = analyze(sql)
    assert plan.columns == ()
    assert plan.expectations == (
        ExpectationSpec("valid_id", "id > 0", "warn"),
        ExpectationSpec("has_name", "name IS NOT NULL AND length(name) < 10", "drop"),
        ExpectationSpec("recent", "to_date(ts) >= DATE'2020-01-01'", "fail"),  # the text, not sqlglot's CAST
    )
    assert isinstance(classify(sql), CreateStreamingTable)


def test_columns_and_constraints_together() -> None:
    plan = analyze(create("id INT NOT NULL, name STRING, ts TIMESTAMP, CONSTRAINT c EXPECT (id <> 7)"))
    assert [c.name for c in plan.columns] == ["id", "name", "ts"]
    assert plan.expectations == (ExpectationSpec("c", "id <> 7", "warn"),)


def test_the_tree_prints_back_in_databricks_spelling() -> None:
    sql = "CREATE STREAMING TABLE t (a INT, CONSTRAINT c EXPECT (a > 0) ON VIOLATION DROP ROW) AS SELECT 1 AS a"
    printed = parse(sql).sql(dialect=StreamingSpark)
    assert "CONSTRAINT c EXPECT (a > 0) ON VIOLATION DROP ROW" in printed
    assert parse(printed).sql(dialect=StreamingSpark) == printed


def test_plan_round_trips_and_an_old_plan_without_expectations_loads() -> None:
    plan = analyze(create("CONSTRAINT c EXPECT (id > 0) ON VIOLATION FAIL UPDATE"))
    assert StreamingPlan.from_json(plan.to_json()) == plan
    old = json.loads(plan.to_json())
    del old["expectations"]
    assert StreamingPlan.from_json(json.dumps(old)).expectations == ()


@pytest.mark.parametrize("columns, message, needle", [
    ("CONSTRAINT c EXPECT (id > 0) ON VIOLATION DROP", "DROP ROW or FAIL UPDATE", ")"),
    ("CONSTRAINT c EXPECT id > 0", "Expected (condition) after EXPECT", "id > 0"),
])
def test_malformed_expectations_are_syntax_errors_with_a_position(columns: str, message: str, needle: str) -> None:
    sql = create(columns)
    with pytest.raises(StatementSyntaxError) as raised:
        analyze(sql)
    assert message in raised.value.message and raised.value.sqlstate == "42601"
    assert raised.value.line == 1 and raised.value.column is not None


@pytest.mark.parametrize("columns, kind, error_class, sqlstate, needle", [
    ("CONSTRAINT c EXPECT (id > 0), CONSTRAINT C EXPECT (id < 9)", errors.DuplicateExpectationNameError,
     "INVALID_EXPECTATION.DUPLICATE_NAME", "42710", "C EXPECT"),
    ("CONSTRAINT c EXPECT (id IN (SELECT 1))", errors.ExpectationWithSubqueryError, "INVALID_EXPECTATION.SUBQUERY",
     "0A000", "SELECT 1"),
    ("CONSTRAINT c EXPECT (EXISTS (SELECT 1))", errors.ExpectationWithSubqueryError, "INVALID_EXPECTATION.SUBQUERY",
     "0A000", "SELECT 1"),
    ("CONSTRAINT c EXPECT (sum(id) > 0)", errors.ExpectationWithAggregateError, "INVALID_EXPECTATION.AGGREGATE",
     "42903", "sum(id)"),
    ("CONSTRAINT c EXPECT (row_number() OVER (ORDER BY id) > 1)", errors.ExpectationWithAggregateError,
     "INVALID_EXPECTATION.AGGREGATE", "42903", "row_number()"),
    ("CONSTRAINT c EXPECT (id > rand())", errors.ExpectationNotDeterministicError,
     "INVALID_EXPECTATION.NON_DETERMINISTIC", "42K0E", "rand()"),
    ("CONSTRAINT c EXPECT (ts < current_timestamp())", errors.ExpectationNotDeterministicError,
     "INVALID_EXPECTATION.NON_DETERMINISTIC", "42K0E", "current_timestamp()"),
])
def test_rules_refuse_what_is_not_a_row_check(columns: str, kind: type, error_class: str, sqlstate: str,
                                              needle: str) -> None:
    sql = create(columns)
    with pytest.raises(kind) as raised:
        analyze(sql)
    error = raised.value
    assert (error.error_class, error.sqlstate) == (error_class, sqlstate)
    assert (error.line, error.column) == at(sql, needle)
    assert error.hint


def test_a_quarantine_name_too_long_is_refused_unless_the_quarantine_is_off() -> None:
    long_name = "t" * 120
    sql = create("CONSTRAINT c EXPECT (id > 0) ON VIOLATION DROP ROW").replace(" t (", f" {long_name} (")
    with pytest.raises(errors.QuarantineNameTooLongError) as raised:
        analyze(sql)
    assert raised.value.sqlstate == "42602" and "116 characters" in (raised.value.hint or "")
    off = sql.replace(" AS SELECT", " TBLPROPERTIES ('sluicegate.quarantine' = 'false') AS SELECT")
    assert not needs_quarantine(analyze(off).expectations, analyze(off).properties)


def test_quarantine_needed_only_for_drop_row_and_named_beside_the_table() -> None:
    warn = analyze(create("CONSTRAINT c EXPECT (id > 0)"))
    drop = analyze(create("CONSTRAINT c EXPECT (id > 0) ON VIOLATION DROP ROW"))
    assert not needs_quarantine(warn.expectations, warn.properties)
    assert needs_quarantine(drop.expectations, drop.properties)
    assert quarantine_name("orders") == "orders__quarantine"


def test_higher_order_functions_are_no_subqueries() -> None:
    plan = analyze(create("CONSTRAINT c EXPECT (exists(array(id), x -> x > 0))"))
    assert plan.expectations[0].expression_sql == "exists(array(id), x -> x > 0)"


def test_an_expectation_on_a_plain_table_is_refused_not_ignored() -> None:
    sql = "CREATE TABLE plain (a INT, CONSTRAINT c EXPECT (a > 0)) USING delta"
    with pytest.raises(DialectError) as raised:
        classify(sql)
    assert raised.value.error_class == "EXPECTATION_NOT_SUPPORTED" and raised.value.sqlstate == "0A000"
    assert (raised.value.line, raised.value.column) == at(sql, "c EXPECT")


def test_explain_lists_the_expectations_and_what_a_failing_row_does() -> None:
    from sluicegate.dialect.streaming.explain import explain

    text = explain(analyze(create("CONSTRAINT c EXPECT (id > 0) ON VIOLATION DROP ROW, CONSTRAINT d EXPECT (id < 9)")))
    assert "  c: EXPECT (id > 0) -> keep out of the table" in text
    assert "  d: EXPECT (id < 9) -> write and count" in text
