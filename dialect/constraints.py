"""Table constraints as Delta and Databricks have them, read off a statement's tree: CHECK constraints (kept in the
Delta log's configuration as `delta.constraints.<name>` = the expression as typed, enforced on every write) and the
informational PRIMARY KEY / FOREIGN KEY (accepted, never enforced).

A CHECK expression is user SQL that the gateway evaluates later on other users' writes, so it is judged here, once,
before anything runs, and again each time a write reads it back (`checked_expression`): one expression over the
table's own columns, without a query, a table, an aggregate, a window, a non-deterministic function or reflection
(Delta refuses the same, with these error classes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import DialectError

PRIMARY_KEY = "PRIMARY KEY"
FOREIGN_KEY = "FOREIGN KEY"
PROPERTY_PREFIX = "delta.constraints."   # Delta's table property of a CHECK constraint: prefix + lower-cased name

# Function names a CHECK may not call (sqlglot knows most of them only as names): reflection reaches the JVM; the
# others give a different answer each time a row is written (Delta: a nondeterministic expression).
_REFLECTION = frozenset({"java_method", "reflect", "try_reflect"})
_NON_DETERMINISTIC = frozenset({
    "rand", "random", "randn", "uuid", "shuffle", "monotonically_increasing_id", "spark_partition_id",
    "input_file_name", "input_file_block_start", "input_file_block_length", "randstr", "uniform",
})
_QUERY_NODES = (exp.Query, exp.Subquery, exp.Table, exp.Lateral, exp.Placeholder, exp.Parameter)


class CheckConstraintError(DialectError):
    """A CHECK expression Delta would refuse; `error_class` and SQLSTATE are Delta's for the reason."""

    error_class = "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"
    sqlstate = "42621"


class ConstraintPropertyError(DialectError):
    """`delta.constraints.*` written as a table property: only ADD CONSTRAINT (which checks the rows) may set it."""

    error_class = "DELTA_ADD_CONSTRAINTS"
    sqlstate = "0A000"


@dataclass(frozen=True)
class CheckConstraint:
    """`CONSTRAINT name CHECK (expression)`: `expression` as typed between the parentheses (what Delta stores)."""

    name: str
    expression: str

    @property
    def key(self) -> str:
        return PROPERTY_PREFIX + self.name.lower()

    @property
    def shown(self) -> str:
        """The expression as Delta's messages print it: in parentheses (Spark's `sql` of a predicate)."""
        text = self.expression.strip()
        return text if _wrapped(text) else f"({text})"


@dataclass(frozen=True)
class KeyConstraint:
    """An informational PRIMARY KEY or FOREIGN KEY: its name (None when not written) and its text, as Databricks'
    DESCRIBE TABLE EXTENDED lists it (`PRIMARY KEY (`id`)`); its `kind` (PRIMARY KEY | FOREIGN KEY), its `columns`,
    and a foreign key's `references` (the parts of the table name as written) and `referenced_columns`, which
    information_schema's table_constraints, key_column_usage and referential_constraints list (as Unity Catalog)."""

    name: str | None
    text: str
    kind: str = PRIMARY_KEY
    columns: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    referenced_columns: tuple[str, ...] = ()

    def named(self, table: str, ordinal: int) -> KeyConstraint:
        """The key with a name: its own, else one made from the table's (`<table>_pk`, `<table>_fk_<n>`), since
        information_schema lists a constraint by name."""
        if self.name:
            return self
        made = f"{table}_pk" if self.kind == PRIMARY_KEY else f"{table}_fk_{ordinal}"
        return replace(self, name=made)

    def referenced_table(self, database: str) -> tuple[str, str]:
        """The (database, table) a foreign key references, lower-cased: the last two parts of the name it wrote,
        `database` (the key's own table's) when it wrote one part."""
        parts = self.references or ("",)
        return (parts[-2] if len(parts) > 1 else database).lower(), parts[-1].lower()

    def as_json(self) -> dict[str, object]:
        return {"name": self.name, "text": self.text, "kind": self.kind, "columns": list(self.columns),
                "references": list(self.references), "referenced_columns": list(self.referenced_columns)}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> KeyConstraint:
        def names(key: str) -> tuple[str, ...]:
            value = data.get(key) or []
            return tuple(str(v) for v in value) if isinstance(value, list) else ()
        name = data.get("name")
        return cls(str(name) if name else None, str(data.get("text") or ""), str(data.get("kind") or PRIMARY_KEY),
                   names("columns"), names("references"), names("referenced_columns"))


Constraint = CheckConstraint | KeyConstraint


def named_keys(constraints: Iterable[Constraint], table: str) -> tuple[KeyConstraint, ...]:
    """The key constraints among `constraints`, each named (`KeyConstraint.named`), as a table keeps them."""
    keys = [c for c in constraints if isinstance(c, KeyConstraint)]
    return tuple(key.named(table, at) for at, key in enumerate(keys, start=1))


def _wrapped(text: str) -> bool:
    """Whether the whole of `text` is one parenthesised expression (`(a > 0)`, not `(a) > (0)`)."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for at, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if depth == 0 and at < len(text) - 1:
            return False
    return True


def checks_of(properties: dict[str, str] | None) -> tuple[CheckConstraint, ...]:
    """The CHECK constraints a table's properties hold, in name order."""
    found = [CheckConstraint(key[len(PROPERTY_PREFIX):], value) for key, value in (properties or {}).items()
             if key.lower().startswith(PROPERTY_PREFIX)]
    return tuple(sorted(found, key=lambda check: check.name))


def constraints_in_properties(properties: dict[str, str]) -> tuple[dict[str, str], tuple[CheckConstraint, ...]]:
    """A CREATE TABLE's TBLPROPERTIES without `delta.constraints.*`, and those as CHECK constraints, each judged as
    one written in the column list (what SHOW CREATE TABLE prints comes back as the same table)."""
    checks = checks_of(properties)
    for check in checks:
        checked_expression(check.name, check.expression)
    return {k: v for k, v in properties.items() if not k.lower().startswith(PROPERTY_PREFIX)}, checks


def refuse_constraint_properties(keys: Iterable[str]) -> None:
    """SET / UNSET TBLPROPERTIES may not write `delta.constraints.*` (Delta refuses it too): a constraint set that way
    would skip the check of the existing rows, one unset that way the Delta log's commit of its removal."""
    for key in keys:
        if key.lower().startswith(PROPERTY_PREFIX):
            raise ConstraintPropertyError(
                "Please use ALTER TABLE ADD CONSTRAINT to add CHECK constraints.",
                hint=f"ALTER TABLE t ADD CONSTRAINT name CHECK (...) instead of the property {key}; "
                     "ALTER TABLE t DROP CONSTRAINT name removes one")


def check_text(sql: str, ordinal: int) -> str:
    """The text between the parentheses of the `ordinal`-th (0-based) CHECK of `sql`, as typed."""
    tokens = StreamingSpark().tokenize(sql)
    seen = -1
    for at, token in enumerate(tokens):
        if token.token_type == TokenType.VAR and token.text.upper() == "CHECK":
            seen += 1
            if seen == ordinal and at + 1 < len(tokens) and tokens[at + 1].token_type == TokenType.L_PAREN:
                return _parenthesised(sql, tokens, at + 1)
    raise DialectError("could not find the CHECK constraint's expression", hint="write CHECK (expression)")


def _parenthesised(sql: str, tokens: list[Token], start: int) -> str:
    depth = 0
    for token in tokens[start:]:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return sql[tokens[start].end + 1:token.start].strip()
    raise DialectError("the CHECK constraint's parenthesis is not closed", hint="write CHECK (expression)")


def parse_expression(text: str) -> exp.Expr:
    """One expression, or a CheckConstraintError: text that holds more (a `;`, a second clause) is refused."""
    try:
        found = sqlglot.parse(text, dialect=StreamingSpark)
    except (ParseError, TokenError) as exc:
        raise CheckConstraintError(f"The CHECK constraint's expression cannot be parsed: {text}",
                                   error_class="PARSE_SYNTAX_ERROR", sqlstate="42601",
                                   hint="write one boolean expression over the table's columns") from exc
    if len(found) != 1 or found[0] is None:
        raise CheckConstraintError(f"A CHECK constraint is one expression, not `{text}`.",
                                   hint="write one boolean expression over the table's columns")
    return found[0]


def checked_expression(name: str, text: str) -> exp.Expr:
    """The tree of a CHECK constraint's expression, once it is one Delta accepts; raises a CheckConstraintError
    naming what it may not hold."""
    tree = parse_expression(text)
    for node in tree.walk():
        if isinstance(node, _QUERY_NODES) or (isinstance(node, exp.Column) and isinstance(node.this, exp.Star)):
            raise _unsupported(name, node, "a CHECK constraint reads the row being written only, not a query, a "
                                           "table or a parameter")
        if isinstance(node, exp.Star):
            raise _unsupported(name, node, "name the columns the constraint checks")
        if isinstance(node, exp.Window):
            raise _unsupported(name, node, "a window function needs other rows; a CHECK sees one row")
        if isinstance(node, exp.AggFunc):
            raise CheckConstraintError(
                f"Found {node.sql(StreamingSpark)} in a CHECK constraint. Aggregate expressions are not allowed in "
                "CHECK constraints.", error_class="DELTA_AGGREGATE_IN_CHECK_CONSTRAINT",
                hint="a CHECK sees one row; check each value instead")
        function = _function_name(node)
        if function in _REFLECTION:
            raise _unsupported(name, node, "reflection calls Java methods in the server")
        if function in _NON_DETERMINISTIC or isinstance(node, (exp.Rand, exp.Randn, exp.Uuid)):
            raise CheckConstraintError(
                f"Found {node.sql(StreamingSpark)} in a CHECK constraint. A CHECK constraint cannot use a "
                "nondeterministic expression.", error_class="DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT",
                hint="a constraint must give the same answer for the same row every time")
    return tree


def _function_name(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    return None


def _unsupported(name: str, node: exp.Expr, hint: str) -> CheckConstraintError:
    found = node.sql(StreamingSpark)
    return CheckConstraintError(f"Found {found} in a CHECK constraint. {found} cannot be used in a CHECK constraint.",
                                hint=f"constraint {name}: {hint}")


def referenced_columns(text: str) -> tuple[str, ...]:
    """The columns a CHECK expression reads, as written, sorted by name (the order Delta lists their values in)."""
    names = {column.name for column in parse_expression(text).find_all(exp.Column) if column.name}
    return tuple(sorted(names))


def check_constraint(sql: str, node: exp.Expression, ordinal: int,
                     default_name: str) -> CheckConstraint:
    """The CHECK constraint a tree node declares (`CONSTRAINT name CHECK (...)` or a column's `CHECK (...)`), its
    expression read off the text (the `ordinal`-th CHECK of `sql`) and judged."""
    name = node.name if isinstance(node, exp.Constraint) and node.name else default_name
    expression = check_text(sql, ordinal)
    checked_expression(name, expression)
    return CheckConstraint(name, expression)


def key_constraint(node: exp.Expression) -> KeyConstraint:
    """The informational key a `[CONSTRAINT name] PRIMARY KEY (...)` / `FOREIGN KEY (...) REFERENCES ...` declares."""
    name = node.name if isinstance(node, exp.Constraint) and node.name else None
    parts = node.expressions if isinstance(node, exp.Constraint) else [node]
    text = " ".join(part.sql(StreamingSpark) for part in parts)
    key = next((p for p in parts if isinstance(p, (exp.PrimaryKey, exp.ForeignKey))), None)
    if key is None:
        return KeyConstraint(name, text)
    columns = tuple(_column_name(c) for c in key.expressions)
    if isinstance(key, exp.PrimaryKey):
        return KeyConstraint(name, text, PRIMARY_KEY, columns)
    reference = key.args.get("reference")
    target = reference.this if reference is not None else None
    table = target.this if isinstance(target, exp.Schema) else target
    references = tuple(p.name for p in table.parts) if isinstance(table, exp.Table) else ()
    referenced = tuple(_column_name(c) for c in target.expressions) if isinstance(target, exp.Schema) else ()
    return KeyConstraint(name, text, FOREIGN_KEY, columns, references, referenced)


def _column_name(node: exp.Expression) -> str:
    return node.name if isinstance(node, (exp.Identifier, exp.Column)) else node.sql(StreamingSpark)


def raise_if_reserved(name: str) -> None:
    """Delta reserves the name of its CHAR/VARCHAR length checks."""
    if name.lower() == "__char_varchar_string_length_check":
        raise DialectError(f"Cannot use {name} as the name of a CHECK constraint. This name is reserved.",
                           error_class="DELTA_INVALID_CONSTRAINT_NAME", sqlstate="42939",
                           hint="choose another name")

