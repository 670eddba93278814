"""The one place a statement's kind is decided: `classify(sql)` parses the text once and reads sqlglot's tree into
one of the `statements.py` dataclasses (no pattern is matched on the text). Statements with more to check hand the
same tree on: CREATE STREAMING TABLE and CREATE FLOW to the streaming analysis, CREATE MATERIALIZED VIEW to
`materialized_views.py`, schedule clauses to `schedule.py`. The module sits above all of them, so none needs to
import it back.
"""

from __future__ import annotations

from sqlglot import exp

from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import DialectError, StatementSyntaxError
from sluicegate.dialect.expressions import (
    AlterScheduleCommand,
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
from sluicegate.dialect.schedule import Schedule, create_schedule, schedule_clause
from sluicegate.dialect.statements import (
    AddColumns,
    AlterSchedule,
    ColumnName,
    CreateDatabase,
    CreateFlow,
    CreateStreamingTable,
    CreateStreamingTableSchema,
    CreateTable,
    CreateTemporaryView,
    CreateView,
    Delete,
    DescribeDatabase,
    DescribeDetail,
    DescribeHistory,
    DescribeStreamingTable,
    DescribeTable,
    DropDatabase,
    DropFlow,
    DropMaterializedView,
    DropStreamingTable,
    DropTable,
    ExplainMaterializedView,
    ExplainStreamingTable,
    Grant,
    Insert,
    Merge,
    Optimize,
    Passthrough,
    Query,
    Refresh,
    RenameTable,
    Revoke,
    SecurableObject,
    SelectQuery,
    SetColumnComment,
    SetTableComment,
    SetTableProperties,
    ShowCatalogs,
    ShowColumns,
    ShowCreateTable,
    ShowDatabases,
    ShowFlows,
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
from sluicegate.dialect.streaming.expectations import found_expectations
from sluicegate.dialect.trees import (
    column_specs,
    create_properties,
    end_of,
    error_at,
    location,
    offset_of,
    query_offset,
    table_name,
    view_columns,
)

PRIVILEGES = ("SELECT", "MODIFY", "CREATE", "REFRESH", "ALL PRIVILEGES")
_PRIVILEGE_ALIASES = {"ALL": "ALL PRIVILEGES"}
_SECURABLE_KINDS = {None: "TABLE", "TABLE": "TABLE", "VIEW": "VIEW", "MATERIALIZED VIEW": "MATERIALIZED VIEW",
                    "SCHEMA": "SCHEMA", "DATABASE": "SCHEMA"}

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
)


def classify(sql: str) -> Statement:
    """Decide what `sql` is, by sqlglot's tree of it. What sqlglot cannot parse becomes `Passthrough(parsed=False)`
    (Spark's grammar is wider: the policy decides on Spark's plan), except in the statements the gateway runs itself,
    where the StatementSyntaxError (with its position) is raised."""
    try:
        tree = parse(sql)
    except StatementSyntaxError:
        if _owned(sql):
            raise
        return Passthrough(sql, parsed=False)
    return _classify_tree(sql, tree)


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
        return UseDatabase(_database_name(tree.this))
    if isinstance(tree, exp.Alter) and (tree.args.get("kind") or "").upper() == "TABLE":
        return _altered_table(tree)
    if isinstance(tree, exp.Comment) and str(tree.args.get("kind") or "").upper() == "TABLE":
        comment = tree.expression
        return SetTableComment(table_name(tree.this),
                               None if isinstance(comment, exp.Null) else comment.name)
    if isinstance(tree, exp.Describe):
        return _describe(tree)
    if isinstance(tree, exp.Insert):
        return _insert(sql, tree)
    if isinstance(tree, exp.Delete):
        return Delete(table_name(tree.this), tree)
    if isinstance(tree, exp.Update):
        return Update(table_name(tree.this), tree)
    if isinstance(tree, exp.Merge):
        return Merge(table_name(tree.this), tree)
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
        _, comment, _, _ = create_properties(tree)
        return CreateView(table, Query(sql[offset:], offset), bool(tree.args.get("replace")),
                          bool(tree.args.get("exists")), comment, view_columns(tree.this))
    if kind == "TABLE" and (streaming := _streaming(sql, tree)) is not None:
        return streaming
    if kind == "TABLE":
        _refuse_expectations(sql, tree)
        partition_by, comment, properties, using = create_properties(tree)
        table = table_name(tree.this)
        columns = column_specs(tree.this) if isinstance(tree.this, exp.Schema) else ()
        query = None
        if tree.args.get("expression") is not None:
            offset = query_offset(sql, end_of(tree.this), require_as=True)
            query = Query(sql[offset:], offset)
        return CreateTable(table, columns, partition_by, comment, properties, using,
                           bool(tree.args.get("exists")), bool(tree.args.get("replace")), query, location(tree),
                           _partition_offsets(tree))
    return None


def _drop(tree: exp.Drop) -> Statement | None:
    kind = (tree.args.get("kind") or "").upper()
    exists = bool(tree.args.get("exists"))
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
    if kind == "FUNCTION":
        return None  # DESCRIBE FUNCTION: Spark's, judged on its plan
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
    columns = tuple(c.name for c in target.expressions) if isinstance(target, exp.Schema) else ()
    offset = query_offset(sql, end_of(target))
    return Insert(table_name(target), columns, Query(sql[offset:], offset), bool(tree.args.get("overwrite")))


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


def _use_catalog(sql: str, node: exp.Expr | None) -> UseCatalog:
    if node is None or not node.name:
        raise StatementSyntaxError("expected a catalog name", hint="write USE CATALOG main")
    if isinstance(node, exp.Table) and node.db:
        raise error_at(sql, node, f"a catalog's name has one part, not `{node.db}`.`{node.name}`",
                       f"write USE CATALOG {node.db}, then USE {node.name} for the schema")
    start = start_of(node)
    line, column = line_column(sql, start) if start is not None else (None, None)
    return UseCatalog(node.name, line, column)


def _show(tree: exp.Show) -> Statement:
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
    if kind == "TBLPROPERTIES":
        return ShowTblProperties(table_name(tree.args["target"]), pattern)
    if kind == "COLUMNS":
        table = table_name(tree.args["target"])
        return ShowColumns(TableName(database or table.database, table.name, table.offset))
    return ShowCreateTable(table_name(tree.args["target"]))


def _altered_table(tree: exp.Alter) -> Statement | None:
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
    if isinstance(action, exp.AlterSet) and len(action.expressions) == 1 and isinstance(
            action.expressions[0], exp.Properties):
        pairs = [(p.this.name, p.args["value"].name) for p in action.expressions[0].expressions
                 if isinstance(p, exp.Property)]
        if len(pairs) == len(action.expressions[0].expressions):
            return SetTableProperties(table, tuple(pairs))
    if isinstance(action, UnsetProperties):
        return UnsetTableProperties(table, tuple(k.name for k in action.expressions), bool(action.args.get("exists")))
    return None


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
    _, comment, _, _ = create_properties(tree)
    container = tree.args.get("properties")
    properties = {p.name: p.args["value"].name for p in (container.expressions if container else [])
                  if isinstance(p, exp.Property) and p.args.get("value") is not None}
    return CreateStreamingTableSchema(table, columns, comment, properties, bool(tree.args.get("exists")), sql)


def _create_flow(sql: str, tree: CreateFlowCommand) -> CreateFlow:
    flow = tree.this
    if not isinstance(flow, exp.Table) or flow.args.get("catalog") is not None or not flow.name:
        raise error_at(sql, flow, "a flow's name has one or two parts: [database.]flow",
                       "write CREATE FLOW name AS INSERT INTO table BY NAME ...")
    comment = tree.args.get("comment")
    return CreateFlow(table_name(flow), table_name(tree.args["table"]),
                      comment.name if comment is not None else None, analyze_flow(sql, flow=tree), sql)


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
    create_schedule(blanked, create)  # checked as CREATE checks it
    if not isinstance(create, exp.Create) or not _has_property(create, exp.StreamingTableProperty):
        raise DialectError("expected CREATE [OR REFRESH] STREAMING TABLE ... AS SELECT ...")
    return ExplainStreamingTable(analyze(blanked, create=create), blanked)


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


def _securable(sql: str, kind: str | None, table: exp.Expression) -> SecurableObject:
    if kind not in _SECURABLE_KINDS:
        raise error_at(sql, table, f"privileges on a {kind} are not supported",
                       "grant on TABLE name, VIEW name, MATERIALIZED VIEW name or SCHEMA name")
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
    return kind(_privileges(sql, tree.args.get("privileges") or []),
                _securable(sql, tree.args.get("kind"), tree.args["securable"]),
                _principals(sql, tree.args.get("principals") or []))


def _show_grants(sql: str, tree: ShowGrantsCommand) -> ShowGrants:
    principal = tree.args.get("principal")
    table = tree.args.get("this")
    securable = _securable(sql, tree.args.get("kind"), table) if table is not None else None
    return ShowGrants(principal.name if principal is not None else None, securable)
