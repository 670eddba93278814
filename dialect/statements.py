"""What a statement is, decided before anything runs: one frozen dataclass per kind the warehouse handles itself,
`Passthrough` for what Spark runs as it is (SET, SHOW FUNCTIONS, EXPLAIN ...).

Queries embedded in a statement (CREATE TABLE AS, INSERT, CREATE VIEW) keep their offset in the statement, so that
errors found in them point into the text the user typed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp
from sqlglot.tokens import TokenType

from dialect.dialect import StreamingSpark
from dialect.errors import DialectError
from dialect.references import parse

if TYPE_CHECKING:
    from dialect.streaming.plan import StreamingPlan


@dataclass(frozen=True)
class TableName:
    database: str | None
    name: str

    def qualified(self, current_database: str) -> tuple[str, str]:
        return (self.database or current_database).lower(), self.name.lower()


@dataclass(frozen=True)
class Query:
    """A query's text and where it starts in its statement."""

    sql: str
    offset: int = 0


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    type: str                      # Spark SQL type string
    nullable: bool = True
    comment: str | None = None


@dataclass(frozen=True)
class CreateDatabase:
    name: str
    if_not_exists: bool
    comment: str | None


@dataclass(frozen=True)
class DropDatabase:
    name: str
    if_exists: bool
    cascade: bool


@dataclass(frozen=True)
class UseDatabase:
    name: str


@dataclass(frozen=True)
class ShowDatabases:
    pattern: str | None


@dataclass(frozen=True)
class CreateTable:
    table: TableName
    columns: tuple[ColumnSpec, ...]
    partition_by: tuple[str, ...]
    comment: str | None
    properties: dict[str, str] = field(hash=False)
    using: str | None
    if_not_exists: bool
    replace: bool
    query: Query | None


@dataclass(frozen=True)
class CreateView:
    table: TableName
    query: Query
    replace: bool
    if_not_exists: bool
    comment: str | None


@dataclass(frozen=True)
class DropTable:
    table: TableName
    if_exists: bool
    view: bool                     # DROP VIEW (True) or DROP TABLE


@dataclass(frozen=True)
class AddColumns:
    table: TableName
    columns: tuple[ColumnSpec, ...]


@dataclass(frozen=True)
class RenameTable:
    table: TableName
    new_name: TableName


@dataclass(frozen=True)
class ShowTables:
    database: str | None
    pattern: str | None


@dataclass(frozen=True)
class DescribeTable:
    table: TableName
    extended: bool


@dataclass(frozen=True)
class DescribeHistory:
    table: TableName


@dataclass(frozen=True)
class ShowCreateTable:
    table: TableName


@dataclass(frozen=True)
class Insert:
    table: TableName
    columns: tuple[str, ...]
    query: Query
    overwrite: bool


@dataclass(frozen=True)
class Delete:
    table: TableName
    tree: exp.Delete = field(compare=False, hash=False)


@dataclass(frozen=True)
class Update:
    table: TableName
    tree: exp.Update = field(compare=False, hash=False)


@dataclass(frozen=True)
class Merge:
    table: TableName
    tree: exp.Merge = field(compare=False, hash=False)


@dataclass(frozen=True)
class Vacuum:
    table: TableName
    retain_hours: float | None


@dataclass(frozen=True)
class SelectQuery:
    query: Query


@dataclass(frozen=True)
class Passthrough:
    sql: str


@dataclass(frozen=True)
class CreateStreamingTable:
    plan: StreamingPlan
    sql: str


@dataclass(frozen=True)
class DropStreamingTable:
    table: TableName
    if_exists: bool


@dataclass(frozen=True)
class ShowStreamingTables:
    database: str | None
    pattern: str | None


@dataclass(frozen=True)
class DescribeStreamingTable:
    table: TableName


@dataclass(frozen=True)
class ExplainStreamingTable:
    plan: StreamingPlan
    sql: str                       # the CREATE statement (EXPLAIN blanked out, so positions still match)


Statement = (
    CreateDatabase | DropDatabase | UseDatabase | ShowDatabases | CreateTable | CreateView | DropTable | AddColumns
    | RenameTable | ShowTables | DescribeTable | DescribeHistory | ShowCreateTable | Insert | Delete | Update | Merge
    | Vacuum | SelectQuery | Passthrough | CreateStreamingTable | DropStreamingTable | ShowStreamingTables
    | DescribeStreamingTable | ExplainStreamingTable
)

_NAME = r"(`[^`]+`|[A-Za-z_][\w]*)"
_QUALIFIED = rf"{_NAME}(?:\s*\.\s*{_NAME})?"
_SHOW_DATABASES = re.compile(r"^\s*SHOW\s+(?:DATABASES|SCHEMAS)(?:\s+(?:LIKE\s+)?'([^']*)')?\s*;?\s*$", re.I)
_SHOW_TABLES = re.compile(rf"^\s*SHOW\s+TABLES(?:\s+(?:IN|FROM)\s+{_NAME})?(?:\s+(?:LIKE\s+)?'([^']*)')?\s*;?\s*$",
                          re.I)
_SHOW_CREATE = re.compile(rf"^\s*SHOW\s+CREATE\s+TABLE\s+{_QUALIFIED}\s*;?\s*$", re.I)
_VACUUM = re.compile(rf"^\s*VACUUM\s+{_QUALIFIED}(?:\s+RETAIN\s+(\d+(?:\.\d+)?)\s+HOURS)?\s*;?\s*$", re.I)
_DROP_STREAMING = re.compile(rf"^\s*DROP\s+STREAMING\s+TABLE(\s+IF\s+EXISTS)?\s+{_QUALIFIED}\s*;?\s*$", re.I)
_SHOW_STREAMING = re.compile(
    rf"^\s*SHOW\s+STREAMING\s+TABLES(?:\s+(?:IN|FROM)\s+{_NAME})?(?:\s+(?:LIKE\s+)?'([^']*)')?\s*;?\s*$", re.I)
_DESCRIBE_STREAMING = re.compile(rf"^\s*(?:DESCRIBE|DESC)\s+STREAMING\s+TABLE\s+{_QUALIFIED}\s*;?\s*$", re.I)
_EXPLAIN_STREAMING = re.compile(r"^\s*EXPLAIN(?=\s+CREATE\s+(?:OR\s+REFRESH\s+)?STREAMING\s+TABLE\b)", re.I)
_QUERY_STARTS = {TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.FROM, TokenType.L_PAREN, TokenType.TABLE}


def _unquote(name: str | None) -> str | None:
    return name[1:-1] if name and name.startswith("`") else name


def _table_name(table: exp.Expression) -> TableName:
    if isinstance(table, exp.Schema):
        table = table.this
    if not isinstance(table, exp.Table) or not table.name:
        raise DialectError(f"expected a table name, found {table.sql(StreamingSpark)!r}")
    return TableName(table.db or None, table.name)


def _database_name(node: exp.Expression | None) -> str:
    if isinstance(node, exp.Table) and (node.name or node.db):
        return node.name or node.db
    raise DialectError("expected a database name")


def _dropped(tree: exp.Drop) -> exp.Expression | None:
    tables = tree.args.get("tables") or []
    return tables[0] if tables else tree.this


def _column_specs(schema: exp.Schema) -> tuple[ColumnSpec, ...]:
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


def _query_offset(sql: str, after: int = 0, require_as: bool = False) -> int:
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


def _end_of(node: exp.Expression) -> int:
    ends = [i.meta["end"] + 1 for i in node.find_all(exp.Identifier) if i.meta.get("end") is not None]
    return max(ends) if ends else 0


def _properties(create: exp.Create) -> tuple[tuple[str, ...], str | None, dict[str, str], str | None]:
    partition_by: tuple[str, ...] = ()
    comment = using = None
    properties: dict[str, str] = {}
    container = create.args.get("properties")
    for prop in container.expressions if container else []:
        if isinstance(prop, exp.PartitionedByProperty):
            target = prop.this
            names = target.expressions if isinstance(target, (exp.Schema, exp.Tuple)) else [target]
            partition_by = tuple(n.name for n in names)
        elif isinstance(prop, exp.SchemaCommentProperty):
            comment = prop.this.name
        elif isinstance(prop, exp.FileFormatProperty):
            using = prop.this.name if isinstance(prop.this, exp.Expression) else str(prop.this)
        elif isinstance(prop, exp.Property):
            key = prop.this.name if isinstance(prop.this, exp.Expression) else str(prop.this)
            properties[key] = prop.args["value"].name
    return partition_by, comment, properties, using


def classify(sql: str) -> Statement:
    """Decide what `sql` is. Raises StatementSyntaxError (with a position) when it does not parse."""
    for pattern, build in (
        (_SHOW_DATABASES, lambda m: ShowDatabases(m.group(1))),
        (_SHOW_TABLES, lambda m: ShowTables(_unquote(m.group(1)), m.group(2))),
        (_SHOW_CREATE, lambda m: ShowCreateTable(_two_part(m.group(1), m.group(2)))),
        (_VACUUM, lambda m: Vacuum(_two_part(m.group(1), m.group(2)), float(m.group(3)) if m.group(3) else None)),
        (_DROP_STREAMING, lambda m: DropStreamingTable(_two_part(m.group(2), m.group(3)), bool(m.group(1)))),
        (_SHOW_STREAMING, lambda m: ShowStreamingTables(_unquote(m.group(1)), m.group(2))),
        (_DESCRIBE_STREAMING, lambda m: DescribeStreamingTable(_two_part(m.group(1), m.group(2)))),
        (_EXPLAIN_STREAMING, _explain_streaming),
    ):
        found = pattern.match(sql)
        if found:
            return build(found)
    tree = parse(sql)
    return _classify_tree(sql, tree)


def _explain_streaming(found: re.Match[str]) -> ExplainStreamingTable:
    # EXPLAIN is blanked out rather than cut off, so that positions in errors still point into the text as typed.
    from dialect.streaming.analyze import analyze  # the analysis imports this module's dataclasses
    sql = " " * found.end() + found.string[found.end():]
    return ExplainStreamingTable(analyze(sql), sql)


def _streaming(sql: str, tree: exp.Create) -> CreateStreamingTable | None:
    container = tree.args.get("properties")
    if container is None or not any(isinstance(p, exp.StreamingTableProperty) for p in container.expressions):
        return None
    from dialect.streaming.analyze import analyze  # the analysis imports this module's dataclasses
    return CreateStreamingTable(analyze(sql), sql)


def _two_part(first: str, second: str | None) -> TableName:
    if second is None:
        return TableName(None, _unquote(first) or "")
    return TableName(_unquote(first), _unquote(second) or "")


def _classify_tree(sql: str, tree: exp.Expression) -> Statement:
    if isinstance(tree, exp.Query):
        return SelectQuery(Query(sql))
    if isinstance(tree, exp.Create):
        kind = (tree.args.get("kind") or "").upper()
        if kind in ("DATABASE", "SCHEMA"):
            comment = None
            container = tree.args.get("properties")
            for prop in container.expressions if container else []:
                if isinstance(prop, exp.SchemaCommentProperty):
                    comment = prop.this.name
            return CreateDatabase(_database_name(tree.this), bool(tree.args.get("exists")), comment)
        if kind == "VIEW":
            table = _table_name(tree.this)
            offset = _query_offset(sql, _end_of(tree.this), require_as=True)
            return CreateView(table, Query(sql[offset:], offset), bool(tree.args.get("replace")),
                              bool(tree.args.get("exists")), None)
        if kind == "TABLE" and (streaming := _streaming(sql, tree)) is not None:
            return streaming
        if kind == "TABLE":
            partition_by, comment, properties, using = _properties(tree)
            table = _table_name(tree.this)
            columns = _column_specs(tree.this) if isinstance(tree.this, exp.Schema) else ()
            query = None
            if tree.args.get("expression") is not None:
                offset = _query_offset(sql, _end_of(tree.this), require_as=True)
                query = Query(sql[offset:], offset)
            return CreateTable(table, columns, partition_by, comment, properties, using,
                               bool(tree.args.get("exists")), bool(tree.args.get("replace")), query)
    if isinstance(tree, exp.Drop):
        kind = (tree.args.get("kind") or "").upper()
        if kind in ("DATABASE", "SCHEMA"):
            return DropDatabase(_database_name(_dropped(tree)), bool(tree.args.get("exists")),
                                bool(tree.args.get("cascade")))
        if kind in ("TABLE", "VIEW"):
            return DropTable(_table_name(_dropped(tree)), bool(tree.args.get("exists")), kind == "VIEW")
    if isinstance(tree, exp.Use):
        return UseDatabase(_database_name(tree.this))
    if isinstance(tree, exp.Alter) and len(tree.args.get("actions") or []) == 1:
        action = tree.args["actions"][0]
        if isinstance(action, exp.AlterRename):
            return RenameTable(_table_name(tree.this), _table_name(action.this))
        if isinstance(action, exp.Schema):
            return AddColumns(_table_name(tree.this), _column_specs(action))
    if isinstance(tree, exp.Describe) and isinstance(tree.this, exp.Table):
        style = (tree.args.get("style") or "").upper()
        if style == "HISTORY":
            return DescribeHistory(_table_name(tree.this))
        return DescribeTable(_table_name(tree.this), style in ("EXTENDED", "FORMATTED"))
    if isinstance(tree, exp.Insert):
        target = tree.this
        columns = tuple(c.name for c in target.expressions) if isinstance(target, exp.Schema) else ()
        offset = _query_offset(sql, _end_of(target))
        return Insert(_table_name(target), columns, Query(sql[offset:], offset), bool(tree.args.get("overwrite")))
    if isinstance(tree, exp.Delete):
        return Delete(_table_name(tree.this), tree)
    if isinstance(tree, exp.Update):
        return Update(_table_name(tree.this), tree)
    if isinstance(tree, exp.Merge):
        return Merge(_table_name(tree.this), tree)
    return Passthrough(sql)
