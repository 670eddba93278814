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
    sql = getattr(generator, "sql")
    name = sql(node, "name")
    column = f"{sql(node, 'column')} AS {name}" if name else sql(node, "column")
    text = f"{sql(node, 'this')} WATERMARK {column} DELAY OF {sql(node, 'delay')}"
    alias = sql(node, "alias")
    return f"{text} AS {alias}" if alias else text
