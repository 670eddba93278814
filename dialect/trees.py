"""Reading a statement's parts off sqlglot's tree: names, declared columns, properties, where an embedded query
starts in the text, and errors positioned at a node. The classifier and the checks of particular statements
(`materialized_views.py`, the streaming analysis) share them; they decide nothing about what a statement is."""

from __future__ import annotations

import json

from sqlglot import exp
from sqlglot.tokens import TokenType

from sluicegate.dialect.columns import ColumnSpec
from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.parse import parse
from sluicegate.dialect.positions import line_column, start_of
from sluicegate.dialect.statements import CLUSTER_BY_AUTO_PROPERTY, CLUSTERING_PROPERTY, TableName

# The tokens an embedded query may start with.
_QUERY_STARTS = {TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.FROM, TokenType.L_PAREN, TokenType.TABLE}


def table_name(table: exp.Expression) -> TableName:
    """The table a node names (a CREATE's exp.Schema: its table), or a DialectError when it names none; with the
    offset where the statement writes it: its database part when written (after a dropped catalog), else its name."""
    if isinstance(table, exp.Schema):
        table = table.this
    if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier) or not table.name:
        raise DialectError(f"expected a table name, found {table.sql(StreamingSpark)!r}")
    db = table.args.get("db")
    return TableName(table.db or None, table.name, offset_of(db if table.db else table.this))


def offset_of(node: exp.Expression | None) -> int | None:
    """Where `node` (an identifier, quotes included, or a node holding one) starts in the statement's text."""
    if node is None:
        return None
    if isinstance(node, exp.Identifier):
        return node.meta.get("start")
    return min((i.meta["start"] for i in node.find_all(exp.Identifier) if i.meta.get("start") is not None),
               default=None)


def column_specs(schema: exp.Schema) -> tuple[ColumnSpec, ...]:
    """The declared columns of a CREATE's column list, each type as Spark spells it (constraints other than NOT NULL
    and COMMENT left to the caller)."""
    columns = []
    for column in schema.expressions:
        if not isinstance(column, exp.ColumnDef):
            continue
        nullable, comment = True, None
        for constraint in column.args.get("constraints") or []:
            kind = constraint.args.get("kind")
            if isinstance(kind, exp.NotNullColumnConstraint) and not kind.args.get("allow_null"):
                nullable = False
            elif isinstance(kind, exp.CommentColumnConstraint):
                comment = kind.this.name
        kind = column.args.get("kind")
        type_name = kind.sql(StreamingSpark).lower().replace(", ", ",") if kind is not None else "string"
        columns.append(ColumnSpec(column.name, type_name, nullable, comment))
    return tuple(columns)


def is_key_constraint(node: exp.Expression) -> bool:
    """`PRIMARY KEY (...)` or `FOREIGN KEY (...) REFERENCES ...` in a column list, named (`CONSTRAINT pk ...`) or not:
    informational in Databricks (never enforced), so a list that holds one still declares only its columns."""
    if isinstance(node, (exp.PrimaryKey, exp.ForeignKey)):
        return True
    return isinstance(node, exp.Constraint) and bool(node.expressions) and all(
        isinstance(part, (exp.PrimaryKey, exp.ForeignKey)) for part in node.expressions)


def view_columns(target: exp.Expression) -> tuple[tuple[str, str | None], ...]:
    """A view's `(name [COMMENT 'text'], ...)` list: names and comments, () when none is written (its key
    constraints are not columns)."""
    if not isinstance(target, exp.Schema):
        return ()
    comments = {spec.name: spec.comment for spec in column_specs(target)}
    return tuple((column.name, comments.get(column.name)) for column in target.expressions
                 if not is_key_constraint(column))


def defining_query(create_sql: str) -> str:
    """The query of a stored `CREATE ... AS query` as it was typed (DESCRIBE's `View Text`)."""
    tree = parse(create_sql)
    target = tree.this if isinstance(tree, exp.Create) else None
    return create_sql[query_offset(create_sql, end_of(target) if target is not None else 0, require_as=True):]


def query_offset(sql: str, after: int = 0, require_as: bool = False) -> int:
    """Offset of the embedded query: the first top-level SELECT/WITH/VALUES/FROM/( (after `AS` if required)."""
    depth = 0
    seen_as = not require_as
    for token in StreamingSpark().tokenize(sql):
        if token.start < after:
            continue
        if token.token_type == TokenType.ALIAS and depth == 0:
            seen_as = True
            continue
        if seen_as and depth == 0 and token.token_type in _QUERY_STARTS:
            return token.start
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth = max(depth - 1, 0)  # the closing parenthesis of a column list ends before `after`
    raise DialectError("could not find the query of the statement", hint="write it as ... AS SELECT ...")


def end_of(node: exp.Expression) -> int:
    """The offset just past the last identifier in `node`: where the text after a CREATE's name and columns starts."""
    ends = [i.meta["end"] + 1 for i in node.find_all(exp.Identifier) if i.meta.get("end") is not None]
    return max(ends) if ends else 0


def location(create: exp.Create) -> str | None:
    """The folder a CREATE TABLE names, by LOCATION or by OPTIONS (path ...), as Spark reads either."""
    container = create.args.get("properties")
    for prop in container.expressions if container else []:
        if isinstance(prop, exp.LocationProperty):
            return prop.this.name
        if isinstance(prop, exp.OptionsProperty):
            for option in prop.expressions:
                if isinstance(option, exp.Property) and option.name.lower() == "path":
                    value = option.args.get("value")
                    return value.name if value is not None else ""
    return None


def create_properties(create: exp.Create) -> tuple[tuple[str, ...], str | None, dict[str, str], str | None]:
    """A CREATE's PARTITIONED BY names, COMMENT, TBLPROPERTIES and USING format; LOCATION and OPTIONS are
    `location()`'s."""
    partition_by: tuple[str, ...] = ()
    comment = using = None
    properties: dict[str, str] = {}
    container = create.args.get("properties")
    for prop in container.expressions if container else []:
        if isinstance(prop, (exp.LocationProperty, exp.OptionsProperty)):
            continue  # see location()
        if isinstance(prop, exp.PartitionedByProperty):
            target = prop.this
            names = target.expressions if isinstance(target, (exp.Schema, exp.Tuple)) else [target]
            partition_by = tuple(n.name for n in names)
        elif isinstance(prop, exp.ClusterProperty):  # kept for OPTIMIZE (executor/tables/optimize.py)
            properties[CLUSTERING_PROPERTY] = json.dumps([column.name for column in prop.expressions])
            if str(prop.args.get("this") or "").upper() == "AUTO":  # CLUSTER BY AUTO: as ALTER ... CLUSTER BY AUTO
                properties[CLUSTER_BY_AUTO_PROPERTY] = "true"
        elif isinstance(prop, exp.SchemaCommentProperty):
            comment = prop.this.name
        elif isinstance(prop, exp.FileFormatProperty):
            using = prop.this.name if isinstance(prop.this, exp.Expression) else str(prop.this)
        elif isinstance(prop, exp.Property):
            key = prop.this.name if isinstance(prop.this, exp.Expression) else str(prop.this)
            value = prop.args.get("value")
            properties[key] = value.name if value is not None else ""
    return partition_by, comment, properties, using


def string_literal_positions(query: exp.Expression | None) -> frozenset[int]:
    """The positions of an INSERT's `VALUES` (or `SELECT` without FROM) where every row holds a string literal or
    NULL, at least one a string: Databricks casts such literals to the target column's type (a seed's dates,
    timestamps and decimals arrive as quoted text), where store assignment would refuse a string column."""
    if isinstance(query, exp.Values):
        rows = [row.expressions if isinstance(row, exp.Tuple) else [row] for row in query.expressions]
    elif isinstance(query, exp.Select) and not query.args.get("from_") and not query.args.get("from"):
        rows = [query.expressions]
    else:
        return frozenset()
    if not rows or len({len(row) for row in rows}) != 1:
        return frozenset()
    positions = []
    for index in range(len(rows[0])):
        values = [row[index] for row in rows]
        quoted = [isinstance(value, exp.Literal) and value.is_string for value in values]
        if any(quoted) and all(is_quoted or isinstance(value, exp.Null)
                               for is_quoted, value in zip(quoted, values, strict=True)):
            positions.append(index)
    return frozenset(positions)


def error_at(sql: str, node: exp.Expression, message: str, hint: str) -> DialectError:
    """A DialectError positioned at `node`'s first character in `sql`."""
    start = start_of(node)
    line, column = line_column(sql, start) if start is not None else (None, None)
    return DialectError(message, hint=hint, line=line, column=column)
