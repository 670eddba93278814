"""Expectations in a CREATE statement's column list, as the plan stores them and as the rules and the runtime's
column check find them again: `CONSTRAINT name EXPECT (condition) [ON VIOLATION DROP ROW | FAIL UPDATE]`.

Built on the CREATE tree only, so streaming tables and materialized views share it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from sluicegate.dialect.expressions import CreateAutoCdcCommand, Expectation
from sluicegate.dialect.positions import line_column, start_of
from sluicegate.dialect.streaming.plan import ExpectationSpec

QUARANTINE_SUFFIX = "__quarantine"
QUARANTINE_KEY = "sluicegate.quarantine"
MAX_NAME_LENGTH = 128        # catalog.names' rule for every name (dialect imports sqlglot only)


@dataclass(frozen=True)
class FoundExpectation:
    name: str
    node: Expectation
    constraint: exp.Constraint

    def spec(self, sql: str) -> ExpectationSpec:
        text = sql[self.node.meta["text_start"]:self.node.meta["text_end"]]
        return ExpectationSpec(self.name, text.strip(), self.node.args["action"])


def found_expectations(create: exp.Expr) -> list[FoundExpectation]:
    # an AUTO CDC table's column list holds its expectations as any streaming table's does
    schema = create.this if isinstance(create, (exp.Create, CreateAutoCdcCommand)) else None
    if not isinstance(schema, exp.Schema):
        return []
    found = []
    for item in schema.expressions:
        if isinstance(item, exp.Constraint):
            for kind in item.expressions:
                if isinstance(kind, Expectation):
                    found.append(FoundExpectation(item.name, kind, item))
    return found


def expectation_specs(sql: str, create: exp.Expr) -> tuple[ExpectationSpec, ...]:
    return tuple(found.spec(sql) for found in found_expectations(create))


def quarantine_name(table: str) -> str:
    """The quarantine table of a table with DROP ROW expectations: beside it, in its database."""
    return f"{table}{QUARANTINE_SUFFIX}"


def quarantine_enabled(properties: dict[str, str]) -> bool:
    """`'sluicegate.quarantine' = 'false'` keeps dropped rows out of a quarantine table (they are only counted)."""
    return properties.get(QUARANTINE_KEY, "true").strip().lower() != "false"


def needs_quarantine(specs: tuple[ExpectationSpec, ...], properties: dict[str, str]) -> bool:
    return any(spec.action == "drop" for spec in specs) and quarantine_enabled(properties)


def unknown_columns(found: FoundExpectation, columns: set[str]) -> list[exp.Column]:
    """The condition's column references that name no column of the result (`columns` lower-cased); a reference
    `w.start` is checked by its first part, the struct column `w`. Lambda variables are not columns."""
    lambda_vars = {v.name.lower() for lam in found.node.find_all(exp.Lambda) for v in lam.expressions}
    return [c for c in found.node.this.find_all(exp.Column)
            if c.parts[0].name.lower() not in columns and c.parts[0].name.lower() not in lambda_vars]


def position_in(sql: str, node: exp.Expr) -> tuple[int | None, int | None]:
    start = start_of(node)
    return line_column(sql, start) if start is not None else (None, None)
