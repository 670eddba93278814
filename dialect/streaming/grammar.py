"""Tree nodes sqlglot lacks for Databricks' streaming SQL, built as sqlglot's own nodes are (arg_types)."""

from __future__ import annotations

from sqlglot import exp


class Watermark(exp.Expression):
    """`<relation> WATERMARK col DELAY OF INTERVAL ... [AS alias]`: the event-time column of a FROM item.

    `this` is the relation (usually an exp.Stream), `column` the event-time expression, `name` the column name
    given to it (`WATERMARK to_timestamp(s) AS ts ...`), `delay` an exp.Interval.
    """

    arg_types = {"this": True, "column": True, "name": False, "delay": True, "alias": False}


def watermark_sql(generator: object, node: Watermark) -> str:
    """Databricks' spelling, so a tree prints back as the user could have written it."""
    sql = generator.sql
    name = sql(node, "name")
    column = f"{sql(node, 'column')} AS {name}" if name else sql(node, "column")
    text = f"{sql(node, 'this')} WATERMARK {column} DELAY OF {sql(node, 'delay')}"
    alias = sql(node, "alias")
    return f"{text} AS {alias}" if alias else text


class Expectation(exp.Expression):
    """`EXPECT (bool_expr) [ON VIOLATION DROP ROW | FAIL UPDATE]`, the kind of a named `exp.Constraint` in the column
    list of CREATE STREAMING TABLE (and materialized views): `this` is the condition, `action` "warn" (no ON
    VIOLATION), "drop" or "fail". The node's meta `text_start`/`text_end` span the condition as typed, which is what
    Spark evaluates (sqlglot's printing normalises functions)."""

    arg_types = {"this": True, "action": True}


EXPECTATION_ACTIONS = {"warn": "", "drop": " ON VIOLATION DROP ROW", "fail": " ON VIOLATION FAIL UPDATE"}


def expectation_sql(generator: object, node: Expectation) -> str:
    return f"EXPECT ({generator.sql(node, 'this')}){EXPECTATION_ACTIONS[node.args['action']]}"
