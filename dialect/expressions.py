"""Every tree node the dialect adds to sqlglot's, built as sqlglot's own nodes are (`arg_types`), with their
generators: one module, as in sqlglot itself (`sqlglot.expressions`).

Most are statements sqlglot's Databricks dialect keeps as an opaque `exp.Command` (VACUUM, REFRESH, EXPLAIN CREATE
STREAMING TABLE, SHOW GRANTS, ...). Parsing them into nodes, rather than matching the text, is what lets one
classifier decide what a statement is: comments, case, newlines and backticked names are the tokenizer's business,
and positions come from the tokens. `SHOW` statements use sqlglot's own `exp.Show` (as its MySQL, Snowflake and
DuckDB dialects do): `this` names the kind ("TABLES", "DATABASES", "VIEWS", "STREAMING TABLES", "CREATE TABLE"), `db`
the database of IN/FROM, `like` the pattern, `target` the table of SHOW CREATE TABLE. The others are clauses of
Databricks' streaming SQL that sqlglot lacks: WATERMARK in FROM, EXPECT constraints, refresh schedules and policies.

A node whose statement has a dataclass of the same name in `statements.py` is called `...Command` here (VACUUM,
OPTIMIZE, CREATE FLOW, ALTER ... SCHEDULE, SHOW GRANTS), so that both can be imported side by side.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.generator import Generator


class VacuumCommand(exp.Expression):
    """`VACUUM table [RETAIN n HOURS] [DRY RUN]`: `this` is the exp.Table, `retain` the number literal, `dry_run`
    True when written."""

    arg_types = {"this": True, "retain": False, "dry_run": False}


class OptimizeCommand(exp.Expression):
    """`OPTIMIZE table [WHERE predicate] [ZORDER BY (col, ...)]` (Delta): `this` the exp.Table, `where` the
    predicate's tree, `expressions` the z-order columns (exp.Column, positions in their identifiers' meta)."""

    arg_types = {"this": True, "where": False, "expressions": False}


class RefreshTable(exp.Expression):
    """`REFRESH {STREAMING TABLE | TABLE | MATERIALIZED VIEW} name [FULL] [SYNC | ASYNC]` (Databricks): `kind` as
    written, `full` a bool, `mode` "SYNC" or "ASYNC" (None: SYNC)."""

    arg_types = {"this": True, "kind": True, "full": False, "mode": False}


class CallProcedure(exp.Expression):
    """`CALL catalog.schema.procedure(arg, ..., name => arg, ...)` (Trino's form): `this` the procedure's name as a
    table-shaped node, `expressions` its arguments (an `exp.Kwarg` for a named one)."""

    arg_types = {"this": True, "expressions": False}


class ExplainQuery(exp.Expression):
    """`EXPLAIN [EXTENDED | CODEGEN | COST | FORMATTED] <query>`: Spark's, with `this` the query's tree, so that the
    tables it reads are found (and bound) as in any query."""

    arg_types = {"this": True, "mode": False}


class UnsetProperties(exp.Expression):
    """`ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)`: `expressions` the key literals."""

    arg_types = {"expressions": True, "exists": False}


class ShowGrantsCommand(exp.Expression):
    """`SHOW GRANT[S] [principal] [ON [kind] name]`: `principal` an identifier, `kind` the securable's kind as
    written (TABLE, VIEW, SCHEMA, DATABASE ...), `this` the securable's exp.Table."""

    arg_types = {"principal": False, "kind": False, "this": False}


class ExplainStreaming(exp.Expression):
    """`EXPLAIN CREATE [OR REFRESH] STREAMING TABLE ...` (or `... MATERIALIZED VIEW ...`): `this` is the exp.Create.
    The node's meta `keyword_end` is the offset just past EXPLAIN, so the statement can be analysed with EXPLAIN
    blanked out and positions kept."""

    arg_types = {"this": True}


class RefreshSchedule(exp.Expression):
    """A refresh schedule clause of CREATE STREAMING TABLE / MATERIALIZED VIEW (Databricks):
    `SCHEDULE [REFRESH] EVERY n unit` (`kind` "EVERY", `every` the number literal, `unit` HOUR | DAY | WEEK as
    written, plural or not), `SCHEDULE [REFRESH] CRON 'c' [AT TIME ZONE 'tz']` (`kind` "CRON", `cron` and
    `time_zone` string literals) or `TRIGGER ON UPDATE [AT MOST EVERY INTERVAL ...]` (`kind` "ON UPDATE",
    `at_most_every` the exp.Interval). Sits among the CREATE's properties; meta `start` is its first keyword."""

    arg_types = {"kind": True, "every": False, "unit": False, "cron": False, "time_zone": False,
                 "at_most_every": False}


class RefreshPolicy(exp.Expression):
    """`REFRESH POLICY {AUTO | INCREMENTAL [STRICT] | FULL}` of CREATE MATERIALIZED VIEW (Databricks): `this` the
    policy as written, upper case, `INCREMENTAL STRICT` in one string. Sits among the CREATE's properties."""

    arg_types = {"this": True}


class AlterScheduleCommand(exp.Expression):
    """`ALTER {STREAMING TABLE | MATERIALIZED VIEW} t {ADD | ALTER} <schedule>` or `... DROP SCHEDULE`: `this` the
    exp.Table, `kind` as written, `action` ADD | ALTER | DROP, `schedule` the RefreshSchedule (None for DROP)."""

    arg_types = {"this": True, "kind": True, "action": True, "schedule": False}


class CreateFlowCommand(exp.Expression):
    """`CREATE FLOW f [COMMENT '...'] AS INSERT INTO t [BY NAME] <query>` (Spark 4.1's pipeline SQL): `this` the flow's
    exp.Table name, `table` the target exp.Table, `expression` the query, `by_name` whether BY NAME was written."""

    arg_types = {"this": True, "table": True, "expression": True, "comment": False, "by_name": False}


def create_flow_sql(generator: Generator, node: CreateFlowCommand) -> str:
    sql = generator.sql
    comment = f" COMMENT {sql(node, 'comment')}" if node.args.get("comment") else ""
    by_name = " BY NAME" if node.args.get("by_name") else ""
    return f"CREATE FLOW {sql(node, 'this')}{comment} AS INSERT INTO {sql(node, 'table')}{by_name} " \
           f"{sql(node, 'expression')}"


class AutoCdc(exp.Expression):
    """The `AUTO CDC FROM source KEYS (k, ...) ... SEQUENCE BY col ...` clause (Databricks' change data capture, both
    after `CREATE STREAMING TABLE t FLOW` and after `CREATE FLOW f AS AUTO CDC INTO t`): `this` the source (an
    exp.Stream, or a table), `keys` its key columns, `sequence` the SEQUENCE BY expression, `delete` / `truncate` the
    APPLY AS ... WHEN conditions, `columns` / `except_columns` the COLUMNS list or `* EXCEPT (...)`, `scd_type` 1 or 2
    as written (None: not written), `track` / `track_except` TRACK HISTORY ON's lists, `track_all` when it was
    `TRACK HISTORY ON *`."""

    arg_types = {"this": True, "keys": True, "sequence": True, "ignore_null_updates": False, "delete": False,
                 "truncate": False, "columns": False, "except_columns": False, "scd_type": False, "track": False,
                 "track_except": False, "track_all": False}


class CreateAutoCdcCommand(exp.Expression):
    """`CREATE [OR REFRESH] STREAMING TABLE [IF NOT EXISTS] t [(columns)] [COMMENT ...] [TBLPROPERTIES (...)] FLOW
    AUTO CDC ...` (`flow` None) or `CREATE FLOW f [COMMENT ...] AS AUTO CDC INTO t ...` (`flow` the flow's exp.Table):
    `this` the target (an exp.Table, or an exp.Schema with its column list), `cdc` the AutoCdc clause."""

    arg_types = {"this": True, "cdc": True, "flow": False, "refresh": False, "exists": False, "properties": False,
                 "comment": False}


def _column_list(generator: Generator, node: exp.Expression, listed: str, excepted: str) -> str:
    if node.args.get(excepted):
        return f"* EXCEPT ({generator.expressions(node, excepted, flat=True)})"
    return generator.expressions(node, listed, flat=True) or "*"


def auto_cdc_sql(generator: Generator, node: AutoCdc) -> str:
    sql = generator.sql
    parts = [f"AUTO CDC FROM {sql(node, 'this')} KEYS ({generator.expressions(node, 'keys', flat=True)})"]
    if node.args.get("ignore_null_updates"):
        parts.append("IGNORE NULL UPDATES")
    if node.args.get("delete") is not None:
        parts.append(f"APPLY AS DELETE WHEN {sql(node, 'delete')}")
    if node.args.get("truncate") is not None:
        parts.append(f"APPLY AS TRUNCATE WHEN {sql(node, 'truncate')}")
    parts.append(f"SEQUENCE BY {sql(node, 'sequence')}")
    if node.args.get("columns") or node.args.get("except_columns"):
        parts.append(f"COLUMNS {_column_list(generator, node, 'columns', 'except_columns')}")
    if node.args.get("scd_type") is not None:
        parts.append(f"STORED AS SCD TYPE {node.args['scd_type']}")
    if node.args.get("track") or node.args.get("track_except") or node.args.get("track_all"):
        parts.append(f"TRACK HISTORY ON {_column_list(generator, node, 'track', 'track_except')}")
    return " ".join(parts)


def create_auto_cdc_sql(generator: Generator, node: CreateAutoCdcCommand) -> str:
    sql = generator.sql
    cdc = sql(node, "cdc")
    comment = f" COMMENT {sql(node, 'comment')}" if node.args.get("comment") else ""
    if node.args.get("flow") is not None:
        into = cdc.replace("AUTO CDC", f"AUTO CDC INTO {sql(node, 'this')}", 1)
        return f"CREATE FLOW {sql(node, 'flow')}{comment} AS {into}"
    refresh = " OR REFRESH" if node.args.get("refresh") else ""
    exists = " IF NOT EXISTS" if node.args.get("exists") else ""
    properties = f" {sql(node, 'properties')}" if node.args.get("properties") else ""
    return f"CREATE{refresh} STREAMING TABLE{exists} {sql(node, 'this')}{comment}{properties} FLOW {cdc}"


def refresh_schedule_sql(generator: Generator, node: RefreshSchedule) -> str:
    sql = generator.sql
    kind = node.args["kind"]
    if kind == "EVERY":
        return f"SCHEDULE EVERY {sql(node, 'every')} {node.args['unit']}"
    if kind == "CRON":
        zone = sql(node, "time_zone")
        return f"SCHEDULE CRON {sql(node, 'cron')}" + (f" AT TIME ZONE {zone}" if zone else "")
    interval = sql(node, "at_most_every")
    return "TRIGGER ON UPDATE" + (f" AT MOST EVERY {interval}" if interval else "")


def refresh_policy_sql(_generator: Generator, node: RefreshPolicy) -> str:
    return f"REFRESH POLICY {node.this}"


def alter_schedule_sql(generator: Generator, node: AlterScheduleCommand) -> str:
    sql = generator.sql
    action = node.args["action"]
    what = "SCHEDULE" if action == "DROP" else sql(node, "schedule")
    return f"ALTER {node.args['kind']} {sql(node, 'this')} {action} {what}"


def vacuum_sql(generator: Generator, node: VacuumCommand) -> str:
    sql = generator.sql
    retain = sql(node, "retain")
    return (f"VACUUM {sql(node, 'this')}" + (f" RETAIN {retain} HOURS" if retain else "")
            + (" DRY RUN" if node.args.get("dry_run") else ""))


def optimize_sql(generator: Generator, node: OptimizeCommand) -> str:
    sql = generator.sql
    where = node.args.get("where")
    text = f"OPTIMIZE {sql(node, 'this')}" + (f" WHERE {generator.sql(where)}" if where is not None else "")
    columns = node.expressions
    return text + (f" ZORDER BY ({', '.join(generator.sql(c) for c in columns)})" if columns else "")


def refresh_table_sql(generator: Generator, node: RefreshTable) -> str:
    sql = generator.sql
    text = f"REFRESH {node.args['kind']} {sql(node, 'this')}"
    if node.args.get("full"):
        text += " FULL"
    return text + (f" {node.args['mode']}" if node.args.get("mode") else "")


def call_procedure_sql(generator: Generator, node: CallProcedure) -> str:
    return f"CALL {generator.sql(node, 'this')}({generator.expressions(node, flat=True)})"


def unset_properties_sql(generator: Generator, node: UnsetProperties) -> str:
    keys = ", ".join(generator.sql(key) for key in node.expressions)
    return "UNSET TBLPROPERTIES " + ("IF EXISTS " if node.args.get("exists") else "") + f"({keys})"


def show_grants_sql(generator: Generator, node: ShowGrantsCommand) -> str:
    sql = generator.sql
    principal = sql(node, "principal")
    kind = node.args.get("kind")
    target = sql(node, "this")
    on = f" ON {kind + ' ' if kind else ''}{target}" if target else ""
    return f"SHOW GRANTS{' ' + principal if principal else ''}{on}"


def explain_streaming_sql(generator: Generator, node: ExplainStreaming) -> str:
    return f"EXPLAIN {generator.sql(node, 'this')}"


def show_sql(generator: Generator, node: exp.Show) -> str:
    """Spark's spelling of the SHOW statements the dialect parses."""
    sql = generator.sql
    target = sql(node, "target")
    db = sql(node, "db")
    like = sql(node, "like")
    return (f"SHOW {node.name}" + (f" {target}" if target else "") + (f" IN {db}" if db else "")
            + (f" LIKE {like}" if like else ""))


# --- clauses of Databricks' streaming SQL -----------------------------------------------------------------------------


class Watermark(exp.Expression):
    """`<relation> WATERMARK col DELAY OF INTERVAL ... [AS alias]`: the event-time column of a FROM item.

    `this` is the relation (usually an exp.Stream), `column` the event-time expression, `name` the column name
    given to it (`WATERMARK to_timestamp(s) AS ts ...`), `delay` an exp.Interval.
    """

    arg_types = {"this": True, "column": True, "name": False, "delay": True, "alias": False}


def watermark_sql(generator: Generator, node: Watermark) -> str:
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


def expectation_sql(generator: Generator, node: Expectation) -> str:
    return f"EXPECT ({generator.sql(node, 'this')}){EXPECTATION_ACTIONS[node.args['action']]}"
