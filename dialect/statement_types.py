"""A statement's type as the query history names it (Databricks' `statement_type`: SELECT, INSERT, MERGE, CREATE ...,
here finer where the gateway knows more: CREATE_STREAMING_TABLE, REFRESH, GRANT), and the tables it reads and writes
as its text names them. One mapping from the `Statement` dataclasses, so a new kind gets its name in one place (a kind
not listed is named after its class: `ShowFlows` -> SHOW_FLOWS). Pure: classify and sqlglot only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from sluicegate.dialect import statements as s
from sluicegate.dialect.classify import classify
from sluicegate.dialect.parse import parse

# the dataclasses whose name is not simply their class's in upper snake case
_NAMES: dict[type, str] = {
    s.SelectQuery: "SELECT",
    s.Insert: "INSERT",
    s.Delete: "DELETE",
    s.Update: "UPDATE",
    s.Merge: "MERGE",
    s.CreateTable: "CREATE_TABLE",
    s.CreateView: "CREATE_VIEW",
    s.CreateTemporaryView: "CREATE_VIEW",
    s.CreateStreamingTableSchema: "CREATE_STREAMING_TABLE",
    s.DropTable: "DROP_TABLE",
    s.UseDatabase: "USE",
    s.UseCatalog: "USE",
    s.AddColumns: "ALTER_TABLE",
    s.SetColumnComment: "ALTER_TABLE",
    s.SetTableComment: "COMMENT",
    s.SetTableProperties: "ALTER_TABLE",
    s.UnsetTableProperties: "ALTER_TABLE",
    s.RenameTable: "ALTER_TABLE",
    s.AddConstraint: "ALTER_TABLE",
    s.DropConstraint: "ALTER_TABLE",
    s.SetColumnNullability: "ALTER_TABLE",
    s.SetColumnType: "ALTER_TABLE",
    s.DropColumns: "ALTER_TABLE",
    s.SetClustering: "ALTER_TABLE",
    s.AlterSchedule: "ALTER_SCHEDULE",
    s.ShowTblProperties: "SHOW_TBLPROPERTIES",
    s.ShowTableExtended: "SHOW_TABLES",
    s.ExplainStreamingTable: "EXPLAIN",
    s.ExplainMaterializedView: "EXPLAIN",
    s.DescribeHistory: "DESCRIBE_HISTORY",
    s.DescribeDetail: "DESCRIBE_DETAIL",
}
_FIRST_WORDS = re.compile(r"[A-Za-z]+")
_PASSTHROUGH_TWO_WORDS = frozenset({"SHOW", "DESCRIBE", "DESC", "CREATE", "DROP", "ALTER", "CACHE", "UNCACHE",
                                    "ADD", "LIST"})


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def statement_type(statement: s.Statement) -> str:
    """The type name of a classified statement."""
    if isinstance(statement, s.Passthrough):
        return first_words_type(statement.sql)
    found = _NAMES.get(type(statement))
    return found if found is not None else _snake(type(statement).__name__)


def first_words_type(sql: str) -> str:
    """The type of a statement the gateway does not classify (Spark's own: SET, EXPLAIN, SHOW FUNCTIONS, ...), or
    that does not parse: its first keyword, two for SHOW, CREATE and the like; OTHER when it has none."""
    words = [w.upper() for w in _FIRST_WORDS.findall(_strip_comments(sql)[:200])[:2]]
    if not words:
        return "OTHER"
    if words[0] == "DESC":
        words[0] = "DESCRIBE"
    if words[0] in _PASSTHROUGH_TWO_WORDS and len(words) > 1 and words[1] not in ("OR", "IF", "EXTENDED"):
        return f"{words[0]}_{words[1]}"
    return words[0]


def _strip_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql, flags=re.DOTALL)


@dataclass(frozen=True)
class StatementFacts:
    """What the history keeps of a statement's meaning: its type, the tables it reads and the one it writes
    (`database.table` as written, the current database filled in by the reader when unqualified)."""

    statement_type: str
    read_tables: tuple[str, ...] = ()
    written_table: str | None = None


def _written(statement: s.Statement) -> s.TableName | None:
    if isinstance(statement, (s.Insert, s.Delete, s.Update, s.Merge, s.CreateTable, s.CreateView,
                              s.CreateMaterializedView, s.CreateStreamingTableSchema, s.Refresh, s.Optimize,
                              s.Vacuum)):
        return statement.table
    if isinstance(statement, s.CreateStreamingTable):
        return statement.table
    if isinstance(statement, (s.CreateFlow, s.CreateAutoCdc)):
        return statement.table
    return None


def _name(table: s.TableName, current_database: str | None) -> str:
    database = table.database or current_database
    return f"{database}.{table.name}".lower() if database else table.name.lower()


def _reads(tree: exp.Expr, written_name: str | None, current_database: str | None) -> tuple[str, ...]:
    """The tables a tree names, but the one it writes, its CTEs' names and a function's name (CREATE FUNCTION),
    catalog-qualified where written so."""
    reads: list[str] = []
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if not table.name or (table.name.lower() in ctes and not table.db) \
                or isinstance(table.parent, exp.UserDefinedFunction):
            continue
        name = _name(s.TableName(table.db or None, table.name), current_database)
        if table.meta.get("catalog"):
            name = f"{str(table.meta['catalog']).lower()}.{name}"
        if name != written_name and name not in reads:
            reads.append(name)
    return tuple(reads)


def statement_facts(sql: str, current_database: str | None = None) -> StatementFacts:
    """Type, read tables and written table of `sql` (the type alone from its first words when it does not classify:
    a syntax error, or a statement the classifier refuses). A query is read off one parse; other statements are
    classified, then parsed for their tables."""
    try:
        tree: exp.Expr | None = parse(sql)
    except Exception:  # noqa: BLE001 - not parsed: the classifier says what it is (Spark's, or an error)
        tree = None
    if isinstance(tree, exp.Query):
        return StatementFacts("SELECT", _reads(tree, None, current_database))
    try:
        statement = classify(sql)
    except Exception:  # noqa: BLE001 - a statement that fails to classify failed the same way when it ran
        return StatementFacts(first_words_type(sql))
    return facts_of(statement, tree, current_database)


def parsed(statement: s.Statement, tree: exp.Expr | None) -> bool:
    """Whether sqlglot read the statement's text as a statement (not a syntax error, not an opaque command)."""
    return tree is not None and not (isinstance(statement, s.Passthrough) and not statement.parsed)


def facts_of(statement: s.Statement, tree: exp.Expr | None, current_database: str | None = None) -> StatementFacts:
    """`statement_facts` of a statement already classified from `tree` (dialect/classify.py `classified`): no parse."""
    written = _written(statement)
    written_name = _name(written, current_database) if written is not None else None
    reads = _reads(tree, written_name, current_database) if tree is not None and parsed(statement, tree) else ()
    return StatementFacts(statement_type(statement), reads, written_name)
