"""The dialect's parse entry point: a statement's text as sqlglot's tree in the StreamingSpark dialect, every catalog
part of a name checked and dropped, sqlglot's parse and token errors turned into a positioned StatementSyntaxError.
Everything that reads a statement's tree gets it here, so the catalog rule and the error shape hold everywhere."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from sluicegate.dialect.catalogs import drop_catalogs
from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import StatementSyntaxError


def parse(sql: str) -> exp.Expr:
    """`sql`'s tree, every catalog part of a name checked and dropped (dialect/catalogs.py)."""
    try:
        tree = sqlglot.parse_one(sql, read=StreamingSpark)
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        raise StatementSyntaxError(
            str(first.get("description") or exc).split(". Line")[0],
            line=first.get("line"), column=first.get("col"),
        ) from exc
    except TokenError as exc:  # an unterminated quote or comment: sqlglot gives no position
        raise StatementSyntaxError(str(exc), hint="check the quotes and comments") from exc
    if tree is None:
        raise StatementSyntaxError("the statement is empty")
    return drop_catalogs(sql, tree)
