"""The one place a statement's kind is decided: `classify(sql)` parses the text once and reads sqlglot's tree into
one of the `statements.py` dataclasses (no pattern is matched on the text). Statements with more to check hand the
same tree on: CREATE STREAMING TABLE and CREATE FLOW to the streaming analysis, CREATE MATERIALIZED VIEW to
`materialized_views.py`, schedule clauses to `schedule.py`. The module sits above all of them, so none needs to
import it back.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from sluicegate.dialect import catalogs
from sluicegate.dialect.constraints import (
    FOREIGN_KEY,
    PRIMARY_KEY,
    Constraint,
    check_constraint,
    constraints_in_properties,
    key_constraint,
    raise_if_reserved,
    refuse_constraint_properties,
)
from sluicegate.dialect.dialect import QUERY_END, QUERY_START, SCHEMA_EVOLUTION, StreamingSpark
from sluicegate.dialect.errors import DialectError, StatementSyntaxError
from sluicegate.dialect.expressions import (
    AlterScheduleCommand,
    CallProcedure,
    CreateAutoCdcCommand,
    CreateFlowCommand,
    ExplainStreaming,
    OptimizeCommand,
    RefreshTable,
    ShowGrantsCommand,
    UnsetProperties,
    VacuumCommand,
)
from sluicegate.dialect.materialized_views import create_materialized_view
from sluicegate.dialect.parse import parse
from sluicegate.dialect.partition_predicates import partition_terms
from sluicegate.dialect.positions import line_column, start_of
from sluicegate.dialect.qualified_columns import resolve_qualified_columns
from sluicegate.dialect.references import time_travel
from sluicegate.dialect.schedule import Schedule, create_schedule, schedule_clause
from sluicegate.dialect.statements import (
    CLUSTERING_PROPERTY,
    AddColumns,
    AddConstraint,
    AlterSchedule,
    CloneTable,
    ColumnName,
    CreateAutoCdc,
    CreateDatabase,
    CreateFlow,
    CreateFunction,
    CreateStreamingTable,
    CreateStreamingTableSchema,
    CreateTable,
    CreateTemporaryView,
    CreateView,
    Delete,
    DescribeDatabase,
    DescribeDetail,
    DescribeFunction,
    DescribeHistory,
    DescribeStreamingTable,
    DescribeTable,
    DropColumns,
    DropConstraint,
    DropDatabase,
    DropFlow,
    DropFunction,
    DropMaterializedView,
    DropStreamingTable,
    DropTable,
    ExplainMaterializedView,
    ExplainStreamingTable,
    Grant,
    Insert,
    KillQuery,
    Merge,
    Optimize,
    Passthrough,
    Query,
    Refresh,
    RenameTable,
    ReplaceOn,
    ReplaceWhere,
    Revoke,
    SecurableObject,
    SelectQuery,
    SetClustering,
    SetColumnComment,
    SetColumnNullability,
    SetColumnType,
    SetTableComment,
    SetTableProperties,
    ShowCatalogs,
    ShowColumns,
    ShowCreateTable,
    ShowDatabases,
    ShowFlows,
    ShowFunctions,
    ShowGrants,
    ShowMaterializedViews,
    ShowStreamingTables,
    ShowTableExtended,
    ShowTables,
    ShowTblProperties,
    ShowViews,
    Statement,
    TableName,
    UnsetTableProperties,
    Update,
    UseCatalog,
    UseDatabase,
    Vacuum,
)
from sluicegate.dialect.streaming.analyze import analyze, analyze_flow
from sluicegate.dialect.streaming.cdc import analyze_cdc
from sluicegate.dialect.streaming.expectations import found_expectations
from sluicegate.dialect.trees import (
    column_specs,
    create_properties,
    end_of,
    error_at,
    location,
    offset_of,
    query_offset,
    string_literal_positions,
    table_name,
    view_columns,
)

PRIVILEGES = ("SELECT", "MODIFY", "CREATE", "REFRESH", "EXECUTE", "ALL PRIVILEGES")
_PRIVILEGE_ALIASES = {"ALL": "ALL PRIVILEGES"}
_SECURABLE_KINDS = {None: "TABLE", "TABLE": "TABLE", "VIEW": "VIEW", "MATERIALIZED VIEW": "MATERIALIZED VIEW",
                    "SCHEMA": "SCHEMA", "DATABASE": "SCHEMA", "FUNCTION": "FUNCTION"}

# Statements the gateway runs itself: a syntax error in one is reported, never handed to Spark to guess at. Each is
# the sequence of its first keywords, each position a tuple of the words accepted there.
_OWNED: tuple[tuple[tuple[str, ...], ...], ...] = (
    (("GRANT", "REVOKE", "VACUUM", "OPTIMIZE"),), (("SHOW",), ("GRANT", "GRANTS", "STREAMING")),
    (("DESCRIBE", "DESC", "DROP", "CREATE"), ("STREAMING",)), (("CREATE",), ("OR",), ("REFRESH",)),
    (("EXPLAIN",), ("CREATE",), ("STREAMING", "MATERIALIZED")), (("EXPLAIN",), ("CREATE",), ("OR",), ("REFRESH",)),
    (("REFRESH",), ("STREAMING", "MATERIALIZED")), (("ALTER",), ("STREAMING", "MATERIALIZED")),
    (("CREATE", "DROP"), ("FLOW",)), (("SHOW",), ("FLOWS",)),
    (("CREATE", "DROP"), ("MATERIALIZED",)), (("CREATE",), ("OR",), ("REPLACE",), ("MATERIALIZED",)),
    (("SHOW",), ("MATERIALIZED",)), (("USE", "SET"), ("CATALOG",)), (("SHOW",), ("CATALOGS",)),
    (("CALL",),),
)


# the kinds `COMMENT ON <kind> name IS ...` names (COLUMN apart)
COMMENTED_KINDS = ("TABLE", "VIEW", "MATERIALIZED VIEW", "STREAMING TABLE")

def classify(sql: str) -> Statement:
    """Decide what `sql` is, by sqlglot's tree of it. What sqlglot cannot parse becomes `Passthrough(parsed=False)`
    (Spark's grammar is wider: the policy decides on Spark's plan), except in the statements the gateway runs itself,
    where the StatementSyntaxError (with its position) is raised."""
    return classified(sql)[0]


def classified(sql: str) -> tuple[Statement, exp.Expr | None]:
    """`classify(sql)` and the tree it was read from (None when sqlglot could not parse the text), which the
    classifier does not change: what the query history learns of a statement that ran without parsing it again."""
    try:
        tree = parse(sql)
    except StatementSyntaxError:
        if _owned(sql):
            raise
        return Passthrough(sql, parsed=False), None
    return _classify_tree(sql, tree), tree


def _owned(sql: str) -> bool:
    try:
        words = [token.text.upper() for token in StreamingSpark().tokenize(sql)[:4]]
    except Exception:  # noqa: BLE001 - sqlglot's TokenError: text it cannot even tokenize is not ours
        return False
    return any(len(words) >= len(prefix) and all(w in accepted for w, accepted in zip(words, prefix, strict=False))
               for prefix in _OWNED)


def _classify_tree(sql: str, tree: exp.Expr) -> Statement:
    """The statement `tree` is; Passthrough (Spark's, judged on its plan) for every form the gateway does not run."""
    found = _gateway_statement(sql, tree)
    return found if found is not None else Passthrough(sql, parsed=not isinstance(tree, exp.Command))


def _gateway_statement(sql: str, tree: exp.Expr) -> Statement | None:
    if isinstance(tree, exp.Query):
        return SelectQuery(Query(sql))
    if isinstance(tree, exp.Show):
        return _show(tree)
    if isinstance(tree, VacuumCommand):
        retain = tree.args.get("retain")
        return Vacuum(table_name(tree.this), float(retain.name) if retain is not None else None,
                      bool(tree.args.get("dry_run")))
    if isinstance(tree, OptimizeCommand):
        return _optimize(sql, tree)
    if isinstance(tree, ExplainStreaming):
        return _explain_streaming(sql, tree)
    if isinstance(tree, AlterScheduleCommand):
        return _alter_schedule(sql, tree)
    if isinstance(tree, CreateFlowCommand):
        return _create_flow(sql, tree)
    if isinstance(tree, CreateAutoCdcCommand):
        return _create_auto_cdc(sql, tree)
    if isinstance(tree, CallProcedure):
        return _call(sql, tree)
    if isinstance(tree, RefreshTable):
        return Refresh(table_name(tree.this), tree.args["kind"], bool(tree.args.get("full")),
                       tree.args.get("mode") == "ASYNC")
    if isinstance(tree, (exp.Grant, exp.Revoke)):
        return _grant(sql, tree)
    if isinstance(tree, ShowGrantsCommand):
        return _show_grants(sql, tree)
    if isinstance(tree, exp.Create):
        return _create(sql, tree)
    if isinstance(tree, exp.Drop):
        return _drop(tree)
    if isinstance(tree, exp.Use) and tree.text("kind").upper() == "CATALOG":
        return _use_catalog(sql, tree.this)
    if isinstance(tree, exp.Set) and len(tree.expressions) == 1 and tree.expressions[0].text("kind") == "CATALOG":
        return _use_catalog(sql, tree.expressions[0].this)
    if isinstance(tree, exp.Use):
        kind = tree.text("kind").upper()
        if kind not in ("", "DATABASE", "SCHEMA", "NAMESPACE"):
            raise StatementSyntaxError(f"USE {kind} is not supported",
                                       hint="write USE [DATABASE | SCHEMA | NAMESPACE] name, or USE CATALOG name")
        return UseDatabase(_database_name(tree.this))
    if isinstance(tree, exp.Alter) and (tree.args.get("kind") or "").upper() == "TABLE":
        return _altered_table(sql, tree)
    if isinstance(tree, exp.Alter) and (tree.args.get("kind") or "").upper() == "VIEW":
        return _altered_view(tree)
    if isinstance(tree, exp.Alter) and tree.args.get("kind") in ("MATERIALIZED VIEW", "STREAMING TABLE"):
        (action,) = tree.args["actions"]  # the dialect reads only CLUSTER BY into an exp.Alter of these kinds
        return _clustering(sql, table_name(tree.this), action, tree.args["kind"])
    if isinstance(tree, exp.Comment) and str(tree.args.get("kind") or "").upper() == "COLUMN":
        return _column_comment(sql, tree)
    if isinstance(tree, exp.Comment) and str(tree.args.get("kind") or "").upper() in COMMENTED_KINDS:
        comment = tree.expression
        return SetTableComment(table_name(tree.this), None if isinstance(comment, exp.Null) else comment.name,
                               str(tree.args["kind"]).upper())
    if isinstance(tree, exp.Describe):
        return _describe(tree)
    if isinstance(tree, exp.Insert):
        return _insert(sql, tree)
    if isinstance(tree, (exp.Delete, exp.Update, exp.Merge)):
        resolve_qualified_columns(tree)
    if isinstance(tree, exp.Delete):
        return Delete(table_name(tree.this), tree)
    if isinstance(tree, exp.Update):
        return Update(table_name(tree.this), tree)
    if isinstance(tree, exp.Merge):
        return Merge(table_name(tree.this), tree, bool(tree.meta.get(SCHEMA_EVOLUTION)))
    return None


def _optimize(sql: str, tree: OptimizeCommand) -> Optimize:
    where = tree.args.get("where")
    zorder = []
    for column in tree.expressions:
        if column.table:
            raise error_at(sql, column, f"ZORDER BY names columns of the table, not `{column.sql(StreamingSpark)}`",
                           "name the column alone, e.g. ZORDER BY (event_time)")
        zorder.append(ColumnName(column.name, offset_of(column)))
    return Optimize(table_name(tree.this), partition_terms(sql, where) if where is not None else (),
                    where.sql(StreamingSpark) if where is not None else None, tuple(zorder))


def _create(sql: str, tree: exp.Create) -> Statement | None:
    kind = (tree.args.get("kind") or "").upper()
    if (kind == "FUNCTION" and isinstance(tree.this, exp.UserDefinedFunction)
            and not _has_property(tree, exp.TemporaryProperty)):  # a TEMPORARY one is Spark's: refused on its plan
        return _create_function(sql, tree, tree.this)
    if kind == "VIEW" and (temporary := _temporary_view(sql, tree)) is not None:
        return temporary
    if kind == "VIEW" and _has_property(tree, exp.MaterializedProperty):
        return create_materialized_view(sql, tree)
    if kind in ("DATABASE", "SCHEMA"):
        comment = None
        container = tree.args.get("properties")
        for prop in container.expressions if container else []:
            if isinstance(prop, exp.SchemaCommentProperty):
                comment = prop.this.name
        return CreateDatabase(_database_name(tree.this), bool(tree.args.get("exists")), comment,
                              offset_of(tree.this))
    if kind == "VIEW":
        table = table_name(tree.this)
        offset = query_offset(sql, end_of(tree.this), require_as=True)
        _, comment, properties, _ = create_properties(tree)
        return CreateView(table, Query(sql[offset:], offset), bool(tree.args.get("replace")),
                          bool(tree.args.get("exists")), comment, view_columns(tree.this), tuple(properties.items()))
    if kind == "TABLE" and (streaming := _streaming(sql, tree)) is not None:
        return streaming
    if kind == "TABLE" and tree.args.get("clone") is not None:
        return _clone(sql, tree)
    if kind == "TABLE":
        _refuse_expectations(sql, tree)
        partition_by, comment, properties, using = create_properties(tree)
        properties, stored = constraints_in_properties(properties)
        table = table_name(tree.this)
        columns = column_specs(tree.this) if isinstance(tree.this, exp.Schema) else ()
        query = None
        if tree.args.get("expression") is not None:
            offset = query_offset(sql, end_of(tree.this), require_as=True)
            query = Query(sql[offset:], offset)
        return CreateTable(table, columns, partition_by, comment, properties, using,
                           bool(tree.args.get("exists")), bool(tree.args.get("replace")), query, location(tree),
                           _partition_offsets(tree), _table_constraints(sql, tree.this, stored))
    return None


def _table_constraints(sql: str, target: exp.Expression, stored: tuple[Constraint, ...]) -> tuple[Constraint, ...]:
    """The CHECK and key constraints of a CREATE TABLE's column list, in the order written: `CONSTRAINT name CHECK
    (...)` beside the columns or `CHECK (...)` on one (unnamed ones named `chk_<n>`), PRIMARY KEY / FOREIGN KEY
    either way (a column's own PRIMARY KEY is kept as `PRIMARY KEY (column)`); then those its TBLPROPERTIES hold as
    `delta.constraints.*` (`stored`)."""
    found: list[Constraint] = list(stored)
    if not isinstance(target, exp.Schema):
        return _named_once(found)
    checks = 0
    for item in target.expressions:
        kinds: list[tuple[exp.Expression, exp.Expression]] = []
        if isinstance(item, exp.Constraint):
            kinds = [(item, kind) for kind in item.expressions]
        elif isinstance(item, (exp.PrimaryKey, exp.ForeignKey)):
            kinds = [(item, item)]
        elif isinstance(item, exp.ColumnDef):
            kinds = [(constraint, constraint.args.get("kind")) for constraint in item.args.get("constraints") or []]
        for node, kind in kinds:
            if isinstance(kind, exp.CheckColumnConstraint):
                found.append(check_constraint(sql, node, checks, f"chk_{checks + 1}"))
                checks += 1
            elif isinstance(kind, (exp.PrimaryKey, exp.ForeignKey)):
                found.append(key_constraint(node))
            elif isinstance(kind, exp.PrimaryKeyColumnConstraint) and isinstance(item, exp.ColumnDef):
                found.append(key_constraint(exp.PrimaryKey(expressions=[item.this.copy()])))
    return _named_once(found)


def _named_once(found: list[Constraint]) -> tuple[Constraint, ...]:
    names = [c.name.lower() for c in found if c.name]
    for name in names:
        raise_if_reserved(name)
        if names.count(name) > 1:
            raise DialectError(f"Constraint '{name}' already exists. Please delete the old constraint first.",
                               error_class="DELTA_CONSTRAINT_ALREADY_EXISTS", sqlstate="42710",
                               hint="give each constraint its own name")
    return tuple(found)


def _drop(tree: exp.Drop) -> Statement | None:
    kind = (tree.args.get("kind") or "").upper()
    exists = bool(tree.args.get("exists"))
    if kind == "FUNCTION" and not tree.args.get("temporary"):
        return DropFunction(_dropped_table(tree), exists)
    if kind == "STREAMING TABLE":
        return DropStreamingTable(_dropped_table(tree), exists)
    if kind == "FLOW":
        return DropFlow(_dropped_table(tree), exists)
    if kind in ("DATABASE", "SCHEMA"):
        return DropDatabase(_database_name(_dropped(tree)), exists, bool(tree.args.get("cascade")),
                            offset_of(_dropped(tree)))
    if kind == "VIEW" and tree.args.get("materialized"):
        return DropMaterializedView(_dropped_table(tree), exists)
    if kind in ("TABLE", "VIEW"):
        return DropTable(_dropped_table(tree), exists, kind == "VIEW")
    return None


def _describe(tree: exp.Describe) -> Statement | None:
    kind = (tree.args.get("kind") or "").upper()
    style = (tree.args.get("style") or "").upper()
    if kind == "FUNCTION" and isinstance(tree.this, exp.Table):
        return DescribeFunction(table_name(tree.this), style == "EXTENDED")
    if kind in ("SCHEMA", "DATABASE"):
        return DescribeDatabase(_database_name(tree.this), style == "EXTENDED", offset_of(tree.this))
    if not isinstance(tree.this, exp.Table):
        return None
    if kind == "STREAMING TABLE":
        return DescribeStreamingTable(table_name(tree.this))
    if style == "HISTORY":
        return DescribeHistory(table_name(tree.this))
    if style == "DETAIL":
        return DescribeDetail(table_name(tree.this))
    return DescribeTable(table_name(tree.this), style in ("EXTENDED", "FORMATTED"), bool(tree.args.get("as_json")))


def _insert(sql: str, tree: exp.Insert) -> Insert | None:
    target = tree.this
    if isinstance(target, exp.Directory):
        return None  # INSERT ... DIRECTORY: Spark's grammar, refused on Spark's plan by the policy
    if tree.args.get("using"):
        raise error_at(sql, tree.args["using"][0], "INSERT ... REPLACE USING is not supported",
                       "write REPLACE WHERE <predicate> or REPLACE ON (<condition>) (<query>)")
    columns = tuple(c.name for c in target.expressions) if isinstance(target, exp.Schema) else ()
    overwrite, by_name = bool(tree.args.get("overwrite")), bool(tree.args.get("by_name"))
    replace = _replace(sql, tree)
    if replace is None:
        offset = query_offset(sql, end_of(target))
        return Insert(table_name(target), columns, Query(sql[offset:], offset), overwrite,
                      string_literal_positions(tree.expression), by_name)
    if overwrite:
        raise error_at(sql, target, "INSERT OVERWRITE cannot REPLACE: it replaces every row already",
                       "write INSERT INTO ... REPLACE WHERE, or INSERT OVERWRITE without it")
    query = tree.expression.this if isinstance(tree.expression, exp.Subquery) else tree.expression
    return Insert(table_name(target), columns, _replacing_query(sql, tree), overwrite,
                  string_literal_positions(query), by_name, replace)


def _replace(sql: str, tree: exp.Insert) -> ReplaceWhere | ReplaceOn | None:
    """What an INSERT's REPLACE WHERE or REPLACE ON (dialect.py) replaces; None for a plain INSERT."""
    predicate, condition = tree.args.get("where"), tree.args.get("replace_on")
    for clause in (predicate, condition):
        if clause is not None and clause.find(exp.Query) is not None:
            raise error_at(sql, clause.find(exp.Query), "a subquery cannot decide which rows an INSERT replaces",
                           "compute the rows first, or write the condition over the two sides' columns")
    if predicate is not None:
        return ReplaceWhere(predicate.sql(dialect=StreamingSpark))
    if condition is None:
        return None
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    return ReplaceOn(condition.sql(dialect=StreamingSpark), target.alias or None, tree.expression.alias or None)


def _replacing_query(sql: str, tree: exp.Insert) -> Query:
    """The query of an INSERT with REPLACE: `TABLE t` (as `SELECT * FROM t`, positioned on the name), the query
    after REPLACE WHERE, or REPLACE ON's parenthesized one; the parser keeps where each starts and ends."""
    source = tree.args.get("source")  # False when not written
    if isinstance(source, exp.Expression):
        start = start_of(source) or 0
        prefix = "SELECT * FROM "
        return Query(prefix + sql[start:], max(start - len(prefix), 0))
    query = tree.expression  # REPLACE ON's: an exp.Subquery made by dialect.py, the offsets on the query inside
    meta = query.this.meta if tree.args.get("replace_on") is not None else query.meta if query else {}
    if meta.get(QUERY_START) is None:
        raise error_at(sql, tree.this, "expected the query whose rows replace the table's",
                       "write INSERT INTO t REPLACE WHERE <predicate> SELECT ... (or TABLE source)")
    start = meta[QUERY_START]
    return Query(sql[start:meta.get(QUERY_END, len(sql))], start)


def _partition_offsets(tree: exp.Create) -> tuple[int | None, ...]:
    """Where each PARTITIONED BY name starts, in the order of `create_properties`' names."""
    container = tree.args.get("properties")
    for prop in container.expressions if container else []:
        if isinstance(prop, exp.PartitionedByProperty):
            target = prop.this
            names = target.expressions if isinstance(target, (exp.Schema, exp.Tuple)) else [target]
            return tuple(offset_of(name) for name in names)
    return ()


def _column_offsets(columns: list[exp.Expression]) -> tuple[int | None, ...]:
    """Where each declared column's name starts, in the order of `column_specs`' columns."""
    return tuple(offset_of(column.this) for column in columns if isinstance(column, exp.ColumnDef))


def _database_name(node: exp.Expr | None) -> str:
    if isinstance(node, exp.Table) and (node.name or node.db):
        return node.name or node.db
    raise DialectError("expected a database name")


def _dropped(tree: exp.Drop) -> exp.Expression | None:
    tables = tree.args.get("tables") or []
    return tables[0] if tables else tree.this


def _dropped_table(tree: exp.Drop) -> TableName:
    node = _dropped(tree)
    if node is None:  # the parser always gives a DROP of a table kind its name; for the type checker
        raise DialectError("expected a table name")
    return table_name(node)


class ProcedureNotFoundError(DialectError):
    error_class = "PROCEDURE_NOT_FOUND"
    sqlstate = "42883"


_KILL_QUERY = ("query_id", "message")


def _call(sql: str, tree: CallProcedure) -> KillQuery:
    """`CALL system.runtime.kill_query(...)`, the one procedure there is: its arguments by position or by name
    (Trino's `=>`), each a string literal."""
    name = tree.this
    if not (name.meta.get("catalog", "").lower() == catalogs.SYSTEM and name.db.lower() == catalogs.RUNTIME
            and name.name.lower() == "kill_query"):
        start = start_of(name)
        line, column = line_column(sql, start) if start is not None else (None, None)
        written = ".".join(part for part in (name.meta.get("catalog"), name.db, name.name) if part)
        raise ProcedureNotFoundError(
            f"The procedure `{written}` cannot be found", line=line, column=column,
            hint=f"the procedure there is: CALL {catalogs.SYSTEM}.{catalogs.RUNTIME}.kill_query(query_id => '...', "
                 "message => '...')")
    values: dict[str, str | None] = {}
    for position, arg in enumerate(tree.expressions):
        key = arg.this.name.lower() if isinstance(arg, exp.Kwarg) else None
        if key is None and values.keys() - _KILL_QUERY[:position]:
            raise error_at(sql, arg, "a positional argument follows a named one",
                           "name every argument after the first named one")
        key = key or (_KILL_QUERY[position] if position < len(_KILL_QUERY) else None)
        if key not in _KILL_QUERY:
            raise error_at(sql, arg, "kill_query takes query_id and message",
                           "CALL system.runtime.kill_query(query_id => '...', message => '...')")
        if key in values:
            raise error_at(sql, arg, f"the argument {key} is given twice", "give each argument once")
        value = arg.expression if isinstance(arg, exp.Kwarg) else arg
        if isinstance(value, exp.Null):
            values[key] = None
        elif isinstance(value, exp.Literal) and value.is_string:
            values[key] = value.name
        else:
            raise error_at(sql, value, f"{key} must be a string literal", f"write {key} => '...'")
    if not values.get("query_id"):
        raise error_at(sql, tree, "kill_query needs the query_id of the statement to cancel",
                       "the id is the first column of system.runtime.queries")
    return KillQuery(str(values["query_id"]), values.get("message"))


def _use_catalog(sql: str, node: exp.Expr | None) -> UseCatalog:
    if node is None or not node.name:
        raise StatementSyntaxError("expected a catalog name", hint="write USE CATALOG main")
    if isinstance(node, exp.Table) and node.db:
        raise error_at(sql, node, f"a catalog's name has one part, not `{node.db}`.`{node.name}`",
                       f"write USE CATALOG {node.db}, then USE {node.name} for the schema")
    start = start_of(node)
    line, column = line_column(sql, start) if start is not None else (None, None)
    return UseCatalog(node.name, line, column)


def _show(tree: exp.Show) -> Statement | None:
    db = tree.args.get("db")
    database = db.name if db is not None else None
    like = tree.args.get("like")
    pattern = like.name if like is not None else None
    kind = tree.name
    if kind == "DATABASES":
        return ShowDatabases(pattern)
    if kind == "CATALOGS":
        return ShowCatalogs(pattern)
    if kind == "TABLES":
        return ShowTables(database, pattern)
    if kind == "TABLE EXTENDED":
        return ShowTableExtended(database, pattern)
    if kind == "VIEWS":
        return ShowViews(database, pattern)
    if kind == "STREAMING TABLES":
        return ShowStreamingTables(database, pattern)
    if kind == "FLOWS":
        return ShowFlows(database, pattern)
    if kind == "MATERIALIZED VIEWS":
        return ShowMaterializedViews(database, pattern)
    if kind == "SYSTEM FUNCTIONS":
        return None  # Spark's built-ins: Spark lists them
    if kind in ("FUNCTIONS", "USER FUNCTIONS"):
        return ShowFunctions("USER" if kind == "USER FUNCTIONS" else "ALL", database, pattern)
    if kind == "TBLPROPERTIES":
        return ShowTblProperties(table_name(tree.args["target"]), pattern)
    if kind == "COLUMNS":
        table = table_name(tree.args["target"])
        return ShowColumns(TableName(database or table.database, table.name, table.offset))
    return ShowCreateTable(table_name(tree.args["target"]))


def _altered_table(sql: str, tree: exp.Alter) -> Statement | None:
    """The ALTER TABLE forms the warehouse runs; None for the rest (Spark's, judged on its plan)."""
    actions = tree.args.get("actions") or []
    table = table_name(tree.this)
    if actions and all(isinstance(action, exp.ColumnDef) for action in actions):  # ADD COLUMNS c t, d u
        return AddColumns(table, column_specs(exp.Schema(expressions=list(actions))), _column_offsets(actions))
    if len(actions) != 1:
        return None
    action = actions[0]
    if isinstance(action, exp.AlterRename):
        return RenameTable(table, table_name(action.this))
    if isinstance(action, exp.Schema):
        return AddColumns(table, column_specs(action), _column_offsets(action.expressions))
    if isinstance(action, exp.AlterColumn) and {k for k, v in action.args.items() if v} == {"this", "comment"}:
        return SetColumnComment(table, action.this.name, action.args["comment"].name, offset_of(action.this))
    if isinstance(action, exp.AlterColumn) and action.args.get("allow_null") is not None and not (
            {k for k, v in action.args.items() if v} - {"this", "drop", "allow_null"}):  # {SET | DROP} NOT NULL
        return SetColumnNullability(table, action.this.name, bool(action.args["allow_null"]), offset_of(action.this))
    if isinstance(action, exp.AlterColumn) and {k for k, v in action.args.items() if v} == {"this", "dtype"}:
        type_name = action.args["dtype"].sql(StreamingSpark).lower().replace(", ", ",")
        return SetColumnType(table, ColumnName(action.this.name, offset_of(action.this)), type_name)
    if (properties := _properties_action(table, action)) is not None:
        return properties
    if isinstance(action, exp.AddConstraint):
        return _added_constraint(sql, table, action)
    if isinstance(action, exp.Drop) and str(action.args.get("kind") or "").upper() == "CONSTRAINT":
        dropped = (action.args.get("tables") or [action.this])[0]
        return DropConstraint(table, dropped.name, bool(action.args.get("exists")), bool(action.args.get("cascade")))
    if isinstance(action, exp.Drop) and str(action.args.get("kind") or "") in (PRIMARY_KEY, FOREIGN_KEY):
        return DropConstraint(table, "", bool(action.args.get("exists")), bool(action.args.get("cascade")),
                              key_kind=str(action.args["kind"]), key_columns=tuple(c.name for c in action.expressions))
    if isinstance(action, exp.Drop) and str(action.args.get("kind") or "").upper() in ("COLUMN", "COLUMNS"):
        return _dropped_columns(sql, table, action)
    if isinstance(action, exp.ClusterProperty):
        return _clustering(sql, table, action)
    return None


def _column_names(sql: str, nodes: list[exp.Expression], what: str) -> tuple[ColumnName, ...]:
    """The top-level columns `nodes` name, each with where it starts; a nested field (`a.b`) is an error at it."""
    names = []
    for written in nodes:
        node = written.this if isinstance(written, exp.Paren) else written
        if not isinstance(node, (exp.Column, exp.Identifier)) or (isinstance(node, exp.Column) and node.table):
            raise error_at(sql, node, f"{what} names top-level columns, not `{node.sql(StreamingSpark)}`",
                           f"name each column alone, e.g. {what} (id)")
        names.append(ColumnName(node.name, offset_of(node)))
    return tuple(names)


def _dropped_columns(sql: str, table: TableName, action: exp.Drop) -> DropColumns:
    """`DROP COLUMN c`, `DROP COLUMN (c)`, `DROP COLUMNS (c, d)`, each with IF EXISTS."""
    nodes: list[exp.Expression] = []
    for node in action.args.get("tables") or []:
        nodes.extend(node.expressions if isinstance(node, exp.Schema) else [node])
    return DropColumns(table, _column_names(sql, nodes, "DROP COLUMNS"), bool(action.args.get("exists")))


def _clustering(sql: str, table: TableName, action: exp.ClusterProperty, kind: str = "TABLE") -> SetClustering:
    """`ALTER <kind> t CLUSTER BY (c, ...)`, `CLUSTER BY NONE` or `CLUSTER BY AUTO`."""
    word = action.this.name.upper() if isinstance(action.this, exp.Expression) else str(action.this or "").upper()
    if not action.expressions and word not in ("NONE", "AUTO"):
        raise error_at(sql, action, "CLUSTER BY needs its columns, NONE or AUTO",
                       f"write ALTER {kind} t CLUSTER BY (column, ...), CLUSTER BY NONE or CLUSTER BY AUTO")
    return SetClustering(table, _column_names(sql, list(action.expressions), "CLUSTER BY"), word == "AUTO", kind)


def _added_constraint(sql: str, table: TableName, action: exp.AddConstraint) -> AddConstraint | None:
    """`ADD CONSTRAINT name CHECK (...)` or an informational key; None for what Delta has not (UNIQUE...)."""
    if len(action.expressions) != 1 or not isinstance(action.expressions[0], exp.Constraint):
        return None
    node = action.expressions[0]
    kinds = node.expressions
    if len(kinds) == 1 and isinstance(kinds[0], exp.CheckColumnConstraint):
        raise_if_reserved(node.name)
        return AddConstraint(table, check_constraint(sql, node, 0, node.name))
    if kinds and all(isinstance(kind, (exp.PrimaryKey, exp.ForeignKey)) for kind in kinds):
        return AddConstraint(table, key_constraint(node))
    return None


def _properties_action(table: TableName, action: exp.Expr, view: bool = False) -> Statement | None:
    """`SET TBLPROPERTIES (...)` or `UNSET TBLPROPERTIES [IF EXISTS] (...)` of an ALTER TABLE or ALTER VIEW."""
    if isinstance(action, exp.AlterSet) and len(action.expressions) == 1 and isinstance(
            action.expressions[0], exp.Properties):
        pairs = [(p.this.name, p.args["value"].name) for p in action.expressions[0].expressions
                 if isinstance(p, exp.Property)]
        if len(pairs) == len(action.expressions[0].expressions):
            refuse_constraint_properties(key for key, _ in pairs)
            return SetTableProperties(table, tuple(pairs), view)
    if isinstance(action, UnsetProperties):
        keys = tuple(k.name for k in action.expressions)
        refuse_constraint_properties(keys)
        return UnsetTableProperties(table, keys, bool(action.args.get("exists")), view)
    return None


def _altered_view(tree: exp.Alter) -> Statement | None:
    """`ALTER VIEW v RENAME TO w` and `ALTER VIEW v [UN]SET TBLPROPERTIES (...)`; None for the other ALTER VIEW forms
    (Spark's, judged on its plan)."""
    actions = tree.args.get("actions") or []
    if len(actions) == 1 and isinstance(actions[0], exp.AlterRename):
        return RenameTable(table_name(tree.this), table_name(actions[0].this), view=True)
    if len(actions) == 1:
        return _properties_action(table_name(tree.this), actions[0], view=True)
    return None


def _column_comment(sql: str, tree: exp.Comment) -> SetColumnComment:
    """`COMMENT ON COLUMN [[catalog.]schema.]table.column IS 'text' | NULL` (its catalog already dropped)."""
    column = tree.this
    if not isinstance(column, exp.Column) or not column.table:
        raise error_at(sql, column, "COMMENT ON COLUMN names the column with its table",
                       "write COMMENT ON COLUMN table.column IS 'text'")
    comment = tree.expression
    table = exp.Table(this=column.args["table"], db=column.args.get("db"))
    return SetColumnComment(table_name(table), column.name, "" if isinstance(comment, exp.Null) else comment.name,
                            offset_of(column.this))


def _temporary_view(sql: str, tree: exp.Create) -> CreateTemporaryView | None:
    container = tree.args.get("properties")
    props = container.expressions if container else []
    if not any(isinstance(p, exp.TemporaryProperty) for p in props):
        return None
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if not isinstance(target, exp.Table) or target.db or not target.name:
        raise error_at(sql, target, "a temporary view's name has one part",
                       "write CREATE TEMPORARY VIEW name AS ... (it lives in the session, not in a database)")
    is_global = any(isinstance(p, exp.GlobalProperty) for p in props)
    replace = bool(tree.args.get("replace"))
    if tree.args.get("expression") is not None:
        offset = query_offset(sql, end_of(tree.this), require_as=True)
        columns = tuple(c.name for c in tree.this.expressions) if isinstance(tree.this, exp.Schema) else ()
        return CreateTemporaryView(target.name, Query(sql[offset:], offset), replace, is_global, sql,
                                   columns=columns)
    using = options = None
    for prop in props:
        if isinstance(prop, exp.FileFormatProperty):
            using = prop.this.name if isinstance(prop.this, exp.Expression) else str(prop.this)
        elif isinstance(prop, exp.OptionsProperty):
            options = {p.this.name: p.args["value"].name for p in prop.expressions if isinstance(p, exp.Property)}
    if using is None:
        raise error_at(sql, target, "a temporary view needs a query or USING a data source",
                       "write CREATE TEMPORARY VIEW name AS SELECT ...")
    return CreateTemporaryView(target.name, None, replace, is_global, sql, using, options or {})


def _has_property(tree: exp.Create, kind: type[exp.Expr]) -> bool:
    container = tree.args.get("properties")
    return container is not None and any(isinstance(p, kind) for p in container.expressions)


def _streaming(sql: str, tree: exp.Create) -> CreateStreamingTable | CreateStreamingTableSchema | None:
    if not _has_property(tree, exp.StreamingTableProperty):
        return None
    schedule = create_schedule(sql, tree)
    if tree.args.get("expression") is None and not tree.args.get("refresh"):
        return _streaming_schema(sql, tree, schedule)
    return CreateStreamingTable(analyze(sql, create=tree), sql, schedule, table_name(tree.this))


def _streaming_schema(sql: str, tree: exp.Create, schedule: Schedule | None) -> CreateStreamingTableSchema:
    """A streaming table without a query: its columns are all it has until a flow writes into it."""
    table = table_name(tree.this)
    columns = column_specs(tree.this) if isinstance(tree.this, exp.Schema) else ()
    if not columns:
        raise error_at(sql, tree.this, f"the streaming table `{table.name}` has neither a query nor columns",
                       "declare its columns, CREATE STREAMING TABLE t (c TYPE, ...), for flows to insert into, or "
                       "give it a query: CREATE STREAMING TABLE t AS SELECT ... FROM STREAM(source)")
    if schedule is not None:
        raise error_at(sql, tree.this, "a streaming table without a query has no refresh schedule: its flows run "
                       "continuously", "leave the SCHEDULE clause out")
    partition_by, comment, layout, _ = create_properties(tree)
    container = tree.args.get("properties")
    properties = {p.name: p.args["value"].name for p in (container.expressions if container else [])
                  if isinstance(p, exp.Property) and p.args.get("value") is not None}
    properties.update({key: value for key, value in layout.items() if key == CLUSTERING_PROPERTY})
    declared = {column.name.lower() for column in columns}
    for name in partition_by:
        if name.lower() not in declared:
            raise error_at(sql, tree.this, f"the partition column `{name}` is not one of the table's columns",
                           "partition by columns the table declares")
    return CreateStreamingTableSchema(table, columns, comment, properties, bool(tree.args.get("exists")), sql,
                                      partition_by)


def _create_flow(sql: str, tree: CreateFlowCommand) -> CreateFlow:
    flow = tree.this
    if not isinstance(flow, exp.Table) or flow.args.get("catalog") is not None or not flow.name:
        raise error_at(sql, flow, "a flow's name has one or two parts: [database.]flow",
                       "write CREATE FLOW name AS INSERT INTO table BY NAME ...")
    comment = tree.args.get("comment")
    return CreateFlow(table_name(flow), table_name(tree.args["table"]),
                      comment.name if comment is not None else None, analyze_flow(sql, flow=tree), sql)


def _create_auto_cdc(sql: str, tree: CreateAutoCdcCommand) -> CreateAutoCdc:
    flow = tree.args.get("flow")
    if flow is not None and (not isinstance(flow, exp.Table) or flow.args.get("catalog") is not None or not flow.name):
        raise error_at(sql, flow, "a flow's name has one or two parts: [database.]flow",
                       "write CREATE FLOW name AS AUTO CDC INTO table ...")
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    comment = tree.args.get("comment") if flow is not None else None
    return CreateAutoCdc(table_name(target), analyze_cdc(sql, tree), sql,
                         table_name(flow) if flow is not None else None, comment.name if comment is not None else None)


def _alter_schedule(sql: str, tree: AlterScheduleCommand) -> AlterSchedule:
    node = tree.args.get("schedule")
    return AlterSchedule(table_name(tree.this), tree.args["kind"], tree.args["action"],
                         schedule_clause(sql, node) if node is not None else None)


def _explain_streaming(sql: str, tree: ExplainStreaming) -> ExplainStreamingTable | ExplainMaterializedView:
    # EXPLAIN is blanked out rather than cut off, so that positions in errors still point into the text as typed.
    end = tree.meta["keyword_end"]
    blanked = "".join(c if c == "\n" else " " for c in sql[:end]) + sql[end:]
    create = tree.this
    if isinstance(create, exp.Create) and _has_property(create, exp.MaterializedProperty):
        return ExplainMaterializedView(create_materialized_view(blanked, create))
    if isinstance(create, CreateAutoCdcCommand):
        return ExplainStreamingTable(analyze_cdc(blanked, create), blanked)
    create_schedule(blanked, create)  # checked as CREATE checks it
    if not isinstance(create, exp.Create) or not _has_property(create, exp.StreamingTableProperty):
        raise DialectError("expected CREATE [OR REFRESH] STREAMING TABLE ... AS SELECT ...")
    return ExplainStreamingTable(analyze(blanked, create=create), blanked)


def _create_function(sql: str, tree: exp.Create, function: exp.UserDefinedFunction) -> CreateFunction:
    """`CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS] f (p T, ...) RETURNS R [LANGUAGE SQL] [COMMENT '...'] RETURN
    body`: a scalar SQL function. A table function (RETURNS TABLE), another language or a class name is refused."""
    returns, comment = None, None
    container = tree.args.get("properties")
    for prop in container.expressions if container else []:
        if isinstance(prop, exp.ReturnsProperty):
            if prop.args.get("is_table") or not isinstance(prop.this, exp.DataType):
                raise error_at(sql, function.this, "only scalar SQL functions are supported, not RETURNS TABLE",
                               "return one value: RETURNS <type> RETURN <expression>")
            returns = prop.this.sql(StreamingSpark)
        elif isinstance(prop, exp.LanguageProperty) and prop.name.upper() != "SQL":
            raise error_at(sql, function.this, f"LANGUAGE {prop.name} functions are not supported: the gateway "
                           "runs SQL functions only", "write the function in SQL: LANGUAGE SQL RETURN <expression>")
        elif isinstance(prop, exp.SchemaCommentProperty):
            comment = prop.this.name
    body = tree.expression
    if returns is None or not isinstance(body, exp.Return):
        raise error_at(sql, function.this, "a function needs RETURNS <type> and a body after RETURN",
                       "write CREATE FUNCTION f (x INT) RETURNS INT RETURN x + 1")
    parameters = []
    for column in function.expressions:
        if not isinstance(column, exp.ColumnDef) or column.args.get("kind") is None or column.constraints:
            raise error_at(sql, column, "each parameter is a name and a type",
                           "write (name TYPE, ...), with no DEFAULT or COMMENT")
        parameters.append((column.name.lower(), column.args["kind"].sql(StreamingSpark)))
    start = _body_start(sql)
    return CreateFunction(table_name(function.this), tuple(parameters), returns, sql[start:].rstrip().rstrip(";"),
                          start, comment, bool(tree.args.get("replace")), bool(tree.args.get("exists")))


def _body_start(sql: str) -> int:
    """Where the body of a CREATE FUNCTION starts: after its last RETURN outside parentheses."""
    depth, start = 0, None
    for token in StreamingSpark().tokenize(sql):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and token.text.upper() == "RETURN" and start is None:
            start = token.end + 1
    if start is None:
        raise DialectError("a function's body follows RETURN", hint="write ... RETURN <expression>")
    return start + len(sql[start:]) - len(sql[start:].lstrip())


def _refuse_expectations(sql: str, tree: exp.Create) -> None:
    """EXPECT guards a streaming table's (or materialized view's) result; on a plain table it would be ignored."""
    found = found_expectations(tree)
    if found:
        error = error_at(sql, found[0].constraint, f"The expectation `{found[0].name}` is on a plain table: "
                         "expectations guard the rows a streaming table's query produces.",
                         "write CREATE STREAMING TABLE ... (CONSTRAINT ... EXPECT (...)) AS SELECT ..., or leave "
                         "the constraint out")
        error.error_class, error.sqlstate = "EXPECTATION_NOT_SUPPORTED", "0A000"
        raise error


def _clone(sql: str, tree: exp.Create) -> CloneTable:
    """`CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t {SHALLOW | DEEP} CLONE s [VERSION AS OF n | TIMESTAMP AS OF
    'ts'] [TBLPROPERTIES (...)]`; a column list, COMMENT or PARTITIONED BY has no place in it (the clone's are the
    source's)."""
    clone = tree.args["clone"]
    source = clone.this
    _, comment, properties, using = create_properties(tree)
    if isinstance(tree.this, exp.Schema) or comment is not None or using not in (None, "DELTA", "delta"):
        raise error_at(sql, tree.this, "a clone takes its columns, comment and format from its source",
                       "write CREATE TABLE t SHALLOW CLONE source [TBLPROPERTIES (...)]")
    version, timestamp = time_travel(sql, source)
    return CloneTable(table_name(tree.this), table_name(source), bool(clone.args.get("shallow")),
                      bool(tree.args.get("replace")), bool(tree.args.get("exists")), version, timestamp,
                      properties, location(tree))


def _securable(sql: str, kind: str | None, table: exp.Expression) -> SecurableObject:
    if kind not in _SECURABLE_KINDS:
        raise error_at(sql, table, f"privileges on a {kind} are not supported",
                       "grant on TABLE name, VIEW name, MATERIALIZED VIEW name, FUNCTION name or SCHEMA name")
    normalised = _SECURABLE_KINDS[kind]
    if normalised != "SCHEMA":
        return SecurableObject(normalised, table_name(table))
    if not isinstance(table, exp.Table) or table.db or not table.name:
        raise error_at(sql, table, "a schema's name has one part", "write ON SCHEMA name")
    return SecurableObject("SCHEMA", TableName(None, table.name, offset_of(table.this)))


def _privileges(sql: str, nodes: list[exp.GrantPrivilege]) -> tuple[str, ...]:
    privileges = []
    for node in nodes:
        name = " ".join(node.name.upper().split())
        name = _PRIVILEGE_ALIASES.get(name, name)
        if name not in PRIVILEGES or node.expressions:
            raise error_at(sql, node, f"unknown privilege {node.sql(StreamingSpark)!r}",
                           f"the supported privileges are {', '.join(PRIVILEGES)} (ALL means ALL PRIVILEGES)")
        privileges.append(name)
    return tuple(privileges)


def _principals(sql: str, nodes: list[exp.GrantPrincipal]) -> tuple[str, ...]:
    for node in nodes:
        if node.args.get("kind"):
            raise error_at(sql, node, f"{node.args['kind']} principals are not supported", "name the user")
    return tuple(node.name for node in nodes)


def _grant(sql: str, tree: exp.Grant | exp.Revoke) -> Grant | Revoke:
    kind = Grant if isinstance(tree, exp.Grant) else Revoke
    privileges = _privileges(sql, tree.args.get("privileges") or [])
    securable = _securable(sql, tree.args.get("kind"), tree.args["securable"])
    misplaced = (set(privileges) - {"EXECUTE", "ALL PRIVILEGES"} if securable.kind == "FUNCTION"
                 else {"EXECUTE"} & set(privileges) if securable.kind != "SCHEMA" else set())
    if misplaced:
        raise error_at(sql, tree.args["securable"], "EXECUTE is a function's privilege, and a function has no other",
                       "GRANT EXECUTE ON FUNCTION f TO user (or ON SCHEMA s, for every function in it)")
    return kind(privileges, securable, _principals(sql, tree.args.get("principals") or []))


def _show_grants(sql: str, tree: ShowGrantsCommand) -> ShowGrants:
    principal = tree.args.get("principal")
    table = tree.args.get("this")
    securable = _securable(sql, tree.args.get("kind"), table) if table is not None else None
    return ShowGrants(principal.name if principal is not None else None, securable)
