"""The StreamingSpark dialect: Databricks SQL as sqlglot reads it (which already knows `CREATE STREAMING TABLE`,
`STREAM t`, `VERSION AS OF`, `GRANT` and `REVOKE`), plus Databricks' `WATERMARK col DELAY OF INTERVAL ...` clause in
FROM, `window(...)` as a GROUP BY key, and the statements sqlglot keeps as an opaque `exp.Command` (SHOW ..., VACUUM,
DROP/DESCRIBE STREAMING TABLE, EXPLAIN CREATE STREAMING TABLE, SHOW GRANTS): the base every statement of the gateway
is parsed with, so that the classifier decides by the tree, never by the text."""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.dialects.databricks import Databricks
from sqlglot.generators.databricks import DatabricksGenerator
from sqlglot.parsers.databricks import DatabricksParser
from sqlglot.tokens import Token, TokenType
from sqlglot.trie import new_trie

from sluicegate.dialect.expressions import (
    AlterScheduleCommand,
    AutoCdc,
    CallProcedure,
    CreateAutoCdcCommand,
    CreateFlowCommand,
    Expectation,
    ExplainQuery,
    ExplainStreaming,
    OptimizeCommand,
    RefreshPolicy,
    RefreshSchedule,
    RefreshTable,
    ShowGrantsCommand,
    UnsetProperties,
    VacuumCommand,
    Watermark,
    alter_schedule_sql,
    auto_cdc_sql,
    call_procedure_sql,
    create_auto_cdc_sql,
    create_flow_sql,
    expectation_sql,
    explain_streaming_sql,
    optimize_sql,
    refresh_policy_sql,
    refresh_schedule_sql,
    refresh_table_sql,
    show_grants_sql,
    show_sql,
    unset_properties_sql,
    vacuum_sql,
    watermark_sql,
)

# The meta keys of an INSERT's query node: the offset of its first character, and (REPLACE ON's parenthesized query)
# the offset just past its last.
QUERY_START, QUERY_END = "query_start", "query_end"
# The meta key of a MERGE written `MERGE WITH SCHEMA EVOLUTION INTO ...` (Databricks; sqlglot has no such clause).
SCHEMA_EVOLUTION = "schema_evolution"


class StreamingSpark(Databricks):
    """Registered with sqlglot as `streamingspark`."""

    class Tokenizer(Databricks.Tokenizer):
        # sqlglot swallows everything after SHOW or a COMMAND keyword (EXPLAIN, VACUUM, ADD JAR ...) as one string;
        # tokenized as the rest of the text is, the parser decides what they are (and falls back to exp.Command).
        COMMANDS = Databricks.Tokenizer.COMMANDS - {TokenType.SHOW, TokenType.COMMAND}

    class Parser(DatabricksParser):
        STATEMENT_PARSERS = {
            **Databricks.Parser.STATEMENT_PARSERS,
            TokenType.SHOW: lambda self: self._parse_show(),
            TokenType.COMMAND: lambda self: self._parse_keyword_command(),
        }

        SHOW_PARSERS = {
            "DATABASES": lambda self: self._parse_show_list("DATABASES", in_database=False),
            "SCHEMAS": lambda self: self._parse_show_list("DATABASES", in_database=False),
            "TABLES": lambda self: self._parse_show_list("TABLES"),
            "TABLE EXTENDED": lambda self: self._parse_show_list("TABLE EXTENDED"),
            "VIEWS": lambda self: self._parse_show_list("VIEWS"),
            "STREAMING TABLES": lambda self: self._parse_show_list("STREAMING TABLES"),
            "FLOWS": lambda self: self._parse_show_list("FLOWS"),
            "MATERIALIZED VIEWS": lambda self: self._parse_show_list("MATERIALIZED VIEWS"),
            "CREATE TABLE": lambda self: self.expression(
                exp.Show(this="CREATE TABLE", target=self._parse_table_parts())),
            "GRANTS": lambda self: self._parse_show_grants(),
            "TBLPROPERTIES": lambda self: self._parse_show_tblproperties(),
            "COLUMNS": lambda self: self._parse_show_columns(),
            "GRANT": lambda self: self._parse_show_grants(),
            "CATALOGS": lambda self: self._parse_show_list("CATALOGS", in_database=False),
            "FUNCTIONS": lambda self: self._parse_show_list("FUNCTIONS"),
            "USER FUNCTIONS": lambda self: self._parse_show_list("USER FUNCTIONS"),
            "ALL FUNCTIONS": lambda self: self._parse_show_list("FUNCTIONS"),
            "SYSTEM FUNCTIONS": lambda self: self._parse_show_list("SYSTEM FUNCTIONS"),
        }
        SHOW_TRIE = new_trie(key.split(" ") for key in SHOW_PARSERS)

        # Spark's `USE NAMESPACE db` (besides DATABASE and SCHEMA); without it NAMESPACE was read as the name
        USABLES = {**DatabricksParser.USABLES, "NAMESPACE": ()}

        PROPERTY_PARSERS = {
            **Databricks.Parser.PROPERTY_PARSERS,
            "SCHEDULE": lambda self: self._parse_refresh_schedule(),
            "TRIGGER": lambda self: self._parse_trigger_on_update(),
            "REFRESH": lambda self: self._parse_refresh_policy(),
        }

        SET_PARSERS = {
            **Databricks.Parser.SET_PARSERS,
            "CATALOG": lambda self: self._parse_set_catalog(),
        }
        SET_TRIE = new_trie(key.split(" ") for key in SET_PARSERS)

        CONSTRAINT_PARSERS = {
            **Databricks.Parser.CONSTRAINT_PARSERS,
            "EXPECT": lambda self: self._parse_expectation(),
        }

        ALTER_PARSERS = {
            **Databricks.Parser.ALTER_PARSERS,
            "CHANGE": lambda self: self._parse_change_column(),
            "UNSET": lambda self: self._parse_unset_properties(),
        }

        # Statements whose first token is a COMMAND keyword; any other stays an exp.Command.
        COMMAND_PARSERS: t.ClassVar[dict[str, t.Callable[[StreamingSpark.Parser, Token], exp.Expr | None]]] = {
            "VACUUM": lambda self, start: self._parse_vacuum(),
            "OPTIMIZE": lambda self, start: self._parse_optimize(),
            "EXPLAIN": lambda self, start: self._parse_explain_streaming(start),
            "CALL": lambda self, start: self._parse_call(),
        }

        def _match_set(self, types: t.Collection[TokenType], advance: bool = True) -> bool:
            # GROUP BY stops at query-modifier keywords, WINDOW among them; `window(` is the time-window function.
            if (types is self.QUERY_MODIFIER_TOKENS and self._curr is not None
                    and self._curr.token_type == TokenType.WINDOW
                    and self._next is not None and self._next.token_type == TokenType.L_PAREN):
                return False
            return super()._match_set(types, advance)

        def _parse_table_alias(self, alias_tokens: t.Collection[TokenType] | None = None) -> exp.TableAlias | None:
            # `STREAM t WATERMARK ts ...`: WATERMARK starts the clause, it is not the alias of t.
            if self._curr is not None and self._curr.text.upper() == "WATERMARK":
                return None
            # `AUTO CDC FROM STREAM(src) KEYS (k)`: KEYS starts the clause, it is not the alias of the source.
            if (self._curr is not None and self._curr.text.upper() == "KEYS" and self._next is not None
                    and self._next.token_type == TokenType.L_PAREN and self._after_auto_cdc()):
                return None
            return super()._parse_table_alias(alias_tokens=alias_tokens)

        # sqlglot declares `Stream | None`, but its only caller (_parse_table) takes any node: a WATERMARK clause
        # wraps the stream in a Watermark
        def _parse_stream(self) -> exp.Stream | Watermark | None:  # type: ignore[override]
            stream = super()._parse_stream()
            if stream is None or not self._match_text_seq("WATERMARK"):
                return stream
            column = self._parse_assignment()  # not _parse_expression: it would take DELAY as an alias
            name = self._parse_id_var(any_token=False) if self._match(TokenType.ALIAS) else None
            if not self._match_text_seq("DELAY", "OF"):
                self.raise_error("Expected DELAY OF INTERVAL ... after the WATERMARK column")
            delay = self._parse_interval()
            if delay is None:
                self.raise_error("Expected an INTERVAL after DELAY OF")
            alias = self._parse_table_alias()
            return self.expression(Watermark(this=stream, column=column, name=name, delay=delay, alias=alias))

        # --- refresh schedules (Databricks' streaming tables and materialized views) -----------------------------

        def _schedule_node(self, start: Token, **args: t.Any) -> RefreshSchedule:
            node = self.expression(RefreshSchedule(**args))
            node.meta.update(line=start.line, col=start.col, start=start.start, end=self._prev.end)
            return node

        def _parse_refresh_schedule(self) -> RefreshSchedule:
            """After SCHEDULE: `[REFRESH] EVERY n {HOUR[S] | DAY[S] | WEEK[S]}` or `[REFRESH] CRON 'c' [AT TIME ZONE
            'tz']`."""
            start = self._prev
            self._match_text_seq("REFRESH")
            if self._match_text_seq("EVERY"):
                every = self._parse_number()
                if every is None or not self._match_texts(("HOUR", "HOURS", "DAY", "DAYS", "WEEK", "WEEKS")):
                    self.raise_error("Expected SCHEDULE EVERY <number> HOURS | DAYS | WEEKS")
                return self._schedule_node(start, kind="EVERY", every=every, unit=self._prev.text.upper())
            if self._match_text_seq("CRON"):
                cron = self._parse_string()
                if cron is None:
                    self.raise_error("Expected a quoted Quartz cron expression after SCHEDULE CRON")
                zone = None
                if self._match_text_seq("AT", "TIME", "ZONE"):
                    zone = self._parse_string()
                    if zone is None:
                        self.raise_error("Expected a quoted time zone after AT TIME ZONE, e.g. 'UTC'")
                return self._schedule_node(start, kind="CRON", cron=cron, time_zone=zone)
            self.raise_error("Expected EVERY or CRON after SCHEDULE")
            raise AssertionError("raise_error raises")  # for the type checker

        def _parse_trigger_on_update(self) -> RefreshSchedule:
            """After TRIGGER: `ON UPDATE [AT MOST EVERY INTERVAL n {SECOND[S] | MINUTE[S] | HOUR[S]}]`."""
            start = self._prev
            if not self._match_text_seq("ON", "UPDATE"):
                self.raise_error("Expected TRIGGER ON UPDATE")
            interval = None
            if self._match_text_seq("AT", "MOST", "EVERY"):
                interval = self._parse_interval()
                if not isinstance(interval, exp.Interval):
                    self.raise_error("Expected AT MOST EVERY INTERVAL <number> SECONDS | MINUTES | HOURS")
            return self._schedule_node(start, kind="ON UPDATE", at_most_every=interval)

        def _parse_refresh_policy(self) -> RefreshPolicy:
            """After REFRESH (a materialized view's property): `POLICY {AUTO | INCREMENTAL [STRICT] | FULL}`."""
            if not self._match_text_seq("POLICY") or not self._match_texts(("AUTO", "INCREMENTAL", "FULL")):
                self.raise_error("Expected REFRESH POLICY AUTO | INCREMENTAL | INCREMENTAL STRICT | FULL")
            policy = self._prev.text.upper()
            if policy == "INCREMENTAL" and self._match_text_seq("STRICT"):
                policy = "INCREMENTAL STRICT"
            return self.expression(RefreshPolicy(this=policy))

        # sqlglot declares `Alter | Command`, but its only caller (STATEMENT_PARSERS) takes any statement node
        def _parse_alter(self) -> exp.Alter | exp.Command | AlterScheduleCommand:  # type: ignore[override]
            """`ALTER {STREAMING TABLE | MATERIALIZED VIEW} t {ADD | ALTER} <schedule> | DROP SCHEDULE`, or `... CLUSTER
            BY (c, ...) | NONE | AUTO` (an exp.Alter of that kind, as sqlglot reads ALTER TABLE's); any other ALTER
            is sqlglot's."""
            for words in (("STREAMING", "TABLE"), ("MATERIALIZED", "VIEW")):
                if self._match_text_seq(*words):
                    break
            else:
                return super()._parse_alter()
            kind = " ".join(words)
            table = self._parse_table_parts()
            if self._match(TokenType.CLUSTER_BY):
                return self.expression(exp.Alter(this=table, kind=kind, actions=[self._parse_cluster_property()]))
            if self._match_text_seq("DROP", "SCHEDULE"):
                return self.expression(AlterScheduleCommand(this=table, kind=kind, action="DROP"))
            if not self._match_texts(("ADD", "ALTER")):
                self.raise_error(f"Expected ADD, ALTER, DROP SCHEDULE or CLUSTER BY after ALTER {kind} name")
            action = self._prev.text.upper()
            if self._match_text_seq("SCHEDULE"):
                schedule = self._parse_refresh_schedule()
            elif self._match_text_seq("TRIGGER"):
                schedule = self._parse_trigger_on_update()
            else:
                self.raise_error(f"Expected SCHEDULE or TRIGGER ON UPDATE after {action}")
            return self.expression(AlterScheduleCommand(this=table, kind=kind, action=action, schedule=schedule))

        def _parse_comment(self, allow_exists: bool = True) -> exp.Expr:
            """`COMMENT ON {TABLE | VIEW | MATERIALIZED VIEW | STREAMING TABLE} t IS 'text' | NULL` (dbt-databricks'
            persist_docs names the relation's kind; NULL removes the comment); any other COMMENT ON is sqlglot's."""
            index = self._index
            if self._match(TokenType.ON):
                for words in (("STREAMING", "TABLE"), ("MATERIALIZED", "VIEW"), ("TABLE",), ("VIEW",)):
                    if self._match_text_seq(*words):
                        kind = " ".join(words)
                        table = self._parse_table_parts()
                        if not self._match(TokenType.IS):
                            self.raise_error(f"Expected IS 'comment' or IS NULL after COMMENT ON {kind} name")
                        text = self._parse_string() or self._parse_null()
                        if text is None:
                            self.raise_error("Expected a string or NULL after IS")
                        return self.expression(exp.Comment(this=table, kind=kind, expression=text))
            self._retreat(index)
            return super()._parse_comment(allow_exists)

        def _parse_expectation(self) -> Expectation:
            """`CONSTRAINT name EXPECT (bool_expr) [ON VIOLATION DROP ROW | FAIL UPDATE]` (Databricks' expectations)."""
            if not self._match(TokenType.L_PAREN):
                self.raise_error("Expected (condition) after EXPECT")
            first = self._curr
            condition = self._parse_assignment()
            if condition is None or first is None:
                self.raise_error("Expected a condition in EXPECT (...)")
            last = self._prev
            self._match_r_paren()
            action = "warn"
            if self._match_text_seq("ON", "VIOLATION"):
                if self._match_text_seq("DROP", "ROW"):
                    action = "drop"
                elif self._match_text_seq("FAIL", "UPDATE"):
                    action = "fail"
                else:
                    self.raise_error("Expected DROP ROW or FAIL UPDATE after ON VIOLATION")
            node = self.expression(Expectation(this=condition, action=action))
            node.meta.update(text_start=first.start, text_end=last.end + 1)
            return node

        # --- statements sqlglot leaves as exp.Command -------------------------------------------------------------

        def _parse_keyword_command(self) -> exp.Expr:
            start = self._prev
            parser = self.COMMAND_PARSERS.get(start.text.upper())
            node = parser(self, start) if parser is not None else None
            return node if node is not None else self._parse_as_command(start)

        def _parse_show_list(self, kind: str, in_database: bool = True) -> exp.Show:
            """`SHOW <kind> [{IN|FROM} db] [[LIKE] 'pattern']`, Spark's form for databases, tables and views."""
            db: exp.Expr | None = None
            if self._match_set((TokenType.IN, TokenType.FROM)):
                # SHOW SCHEMAS IN catalog; SHOW TABLES IN [catalog.]schema (the catalog: dialect/catalogs.py)
                parts = [self._parse_id_var()]
                while in_database and parts[-1] is not None and len(parts) < 2 and self._match(TokenType.DOT):
                    parts.append(self._parse_id_var())
                if any(part is None for part in parts):
                    self.raise_error(f"Expected a {'schema' if in_database else 'catalog'} name after SHOW {kind} IN")
                if len(parts) == 2:
                    db = exp.Table(this=parts[1], db=parts[0])
                else:
                    db = parts[0] if in_database else exp.Table(this=parts[0])
            like_keyword = self._match(TokenType.LIKE)
            like = self._parse_string()
            if like_keyword and like is None:
                self.raise_error("Expected a quoted pattern after LIKE")
            return self.expression(exp.Show(this=kind, db=db, like=like))

        def _parse_show_grants(self) -> ShowGrantsCommand:
            """`SHOW GRANT[S] [principal] [ON [TABLE|VIEW|MATERIALIZED VIEW|SCHEMA|DATABASE] name]` (Databricks)."""
            principal = None
            if self._curr and self._curr.token_type != TokenType.ON:
                principal = self._parse_id_var()
                if principal is None:
                    self.raise_error("Expected a user name or ON after SHOW GRANTS")
            kind = securable = None
            if self._match(TokenType.ON):
                kind = self._parse_securable_kind()
                securable = self._parse_table_parts()
            return self.expression(ShowGrantsCommand(principal=principal, kind=kind, this=securable))

        def _parse_show_columns(self) -> exp.Show:
            """`SHOW COLUMNS {IN | FROM} t [{IN | FROM} db]` (Spark's; `t` may be `catalog.schema.table`)."""
            if not self._match_set((TokenType.IN, TokenType.FROM)):
                self.raise_error("Expected IN or FROM after SHOW COLUMNS")
            table = self._parse_table_parts()
            db = self._parse_id_var(any_token=False) if self._match_set((TokenType.IN, TokenType.FROM)) else None
            return self.expression(exp.Show(this="COLUMNS", target=table, db=db))

        def _parse_show_tblproperties(self) -> exp.Show:
            """`SHOW TBLPROPERTIES t [('key')]` (the name read part by part: `t ('key')` is no table function)."""
            parts = [self._parse_id_var(any_token=False)]
            while parts[-1] is not None and self._match(TokenType.DOT):
                parts.append(self._parse_id_var(any_token=False))
            if any(part is None for part in parts) or len(parts) > 3:
                self.raise_error("Expected a table name after SHOW TBLPROPERTIES")
            table = exp.Table(this=parts[-1], db=parts[-2] if len(parts) > 1 else None,
                              catalog=parts[0] if len(parts) == 3 else None)
            key = None
            if self._match(TokenType.L_PAREN):
                key = self._parse_string()
                if key is None or not self._match(TokenType.R_PAREN):
                    self.raise_error("Expected ('key') after SHOW TBLPROPERTIES table")
            return self.expression(exp.Show(this="TBLPROPERTIES", target=table, like=key))

        def _parse_set_catalog(self) -> exp.Expr | None:
            """`SET CATALOG name` (Databricks; the JDBC driver sends it): a SetItem of kind CATALOG. `SET catalog =
            v` stays the setting of a key named `catalog`."""
            if self._curr is None or self._curr.token_type == TokenType.EQ:
                self._retreat(self._index - 1)
                return self._parse_set_item_assignment(kind=None)
            name = self._parse_string() or self._parse_id_var()
            if name is None:
                self.raise_error("Expected a catalog name after SET CATALOG")
            return self.expression(exp.SetItem(this=name, kind="CATALOG"))

        def _parse_change_column(self) -> exp.AlterColumn | None:
            """`ALTER TABLE t CHANGE [COLUMN] c COMMENT 'text'` (what dbt's persist_docs sends), `... c {SET | DROP}
            NOT NULL` (dbt-spark's column constraints) and `... c c <type>` (Spark's spelling of a type change), as
            ALTER COLUMN parses them; other CHANGE forms stay a command for Spark."""
            self._match(TokenType.COLUMN)
            column = self._parse_field(any_token=True)
            if column is None:
                return None
            if self._match_text_seq("SET", "NOT", "NULL"):
                return self.expression(exp.AlterColumn(this=column, allow_null=False))
            if self._match_text_seq("DROP", "NOT", "NULL"):
                return self.expression(exp.AlterColumn(this=column, drop=True, allow_null=True))
            index = self._index
            renamed = self._parse_field(any_token=True)
            if renamed is not None and renamed.name.lower() == column.name.lower():
                kind = self._parse_types(check_func=False, schema=True)
                ends = self._curr is None or self._curr.token_type in (TokenType.SEMICOLON, TokenType.SENTINEL)
                if kind is not None and ends:  # anything after it (a COMMENT, a position): Spark's command
                    return self.expression(exp.AlterColumn(this=column, dtype=kind))
            self._retreat(index)
            if not self._match(TokenType.COMMENT):
                return None
            comment = self._parse_string()
            return self.expression(exp.AlterColumn(this=column, comment=comment)) if comment is not None else None

        def _parse_alter_table_drop(self) -> list[exp.Expr]:
            """`ALTER TABLE t DROP PRIMARY KEY [IF EXISTS] [RESTRICT | CASCADE]` and `... DROP FOREIGN KEY [IF EXISTS]
            (c, ...)` (Databricks' forms naming a key by its kind and columns, not its name): an exp.Drop of kind
            PRIMARY KEY or FOREIGN KEY, the columns its expressions; any other DROP is sqlglot's."""
            if self._match(TokenType.PRIMARY_KEY):
                exists = bool(self._parse_exists())
                cascade = self._match_text_seq("CASCADE")
                restrict = not cascade and self._match_text_seq("RESTRICT")
                return [self.expression(exp.Drop(kind="PRIMARY KEY", exists=exists, cascade=cascade,
                                                 restrict=restrict))]
            if self._match(TokenType.FOREIGN_KEY):
                exists = bool(self._parse_exists())
                if not self._match(TokenType.L_PAREN, advance=False):
                    self.raise_error("Expected (column, ...) after DROP FOREIGN KEY: the key's columns, in order")
                columns = self._parse_wrapped_csv(self._parse_id_var)
                return [self.expression(exp.Drop(kind="FOREIGN KEY", exists=exists, expressions=columns))]
            return super()._parse_alter_table_drop()

        def _parse_unset_properties(self) -> UnsetProperties | None:
            if not self._match_text_seq("TBLPROPERTIES"):
                return None
            exists = self._match_text_seq("IF", "EXISTS")
            if not self._match(TokenType.L_PAREN):
                return None
            keys = self._parse_csv(self._parse_string)
            if not self._match(TokenType.R_PAREN) or not keys:
                return None
            return self.expression(UnsetProperties(expressions=keys, exists=exists))

        def _parse_call(self) -> CallProcedure:
            """`CALL name(arg, ..., name => arg, ...)` (Trino's procedures: system.runtime.kill_query)."""
            parts = [self._parse_id_var(any_token=False)]
            while parts[-1] is not None and self._match(TokenType.DOT):
                parts.append(self._parse_id_var(any_token=False))
            if any(part is None for part in parts) or len(parts) > 3:
                self.raise_error("Expected a procedure's name after CALL, e.g. CALL system.runtime.kill_query(...)")
            name = exp.Table(this=parts[-1], db=parts[-2] if len(parts) > 1 else None,
                             catalog=parts[-3] if len(parts) > 2 else None)
            if not self._match(TokenType.L_PAREN):
                self.raise_error("Expected ( after the procedure's name, e.g. CALL system.runtime.kill_query(...)")
            args = [] if self._match(TokenType.R_PAREN, advance=False) else self._parse_csv(self._parse_lambda)
            if not self._match(TokenType.R_PAREN):
                self.raise_error("Expected ) after the procedure's arguments")
            if self._index < len(self._tokens):
                self.raise_error("Expected nothing after CALL name(...)")
            return self.expression(CallProcedure(this=name, expressions=[a for a in args if a is not None]))

        def _parse_vacuum(self) -> VacuumCommand:
            """`VACUUM table [RETAIN n HOURS] [DRY RUN]` (Delta)."""
            table = self._parse_table_parts()
            retain = None
            if self._match_text_seq("RETAIN"):
                retain = self._parse_number()
                if retain is None or not self._match_text_seq("HOURS"):
                    self.raise_error("Expected RETAIN <number> HOURS")
            dry_run = self._match_text_seq("DRY")
            if dry_run and not self._match_text_seq("RUN"):
                self.raise_error("Expected DRY RUN")
            return self.expression(VacuumCommand(this=table, retain=retain, dry_run=dry_run or None))

        def _parse_optimize(self) -> OptimizeCommand:
            """`OPTIMIZE table [WHERE predicate] [ZORDER BY (col [, ...]) | ZORDER BY col [, ...]]` (Delta)."""
            table = self._parse_table_parts()
            where = None
            if self._match(TokenType.WHERE):
                where = self._parse_assignment()
                if where is None:
                    self.raise_error("Expected a predicate on partition columns after WHERE")
            columns: list[exp.Expr] = []
            if self._match_text_seq("ZORDER", "BY"):
                wrapped = self._match(TokenType.L_PAREN)
                columns = [c for c in self._parse_csv(self._parse_column) if c is not None]
                if wrapped and not self._match(TokenType.R_PAREN):
                    self.raise_error("Expected ) after the ZORDER BY columns")
                if not columns or not all(isinstance(c, exp.Column) for c in columns):
                    self.raise_error("Expected column names after ZORDER BY, e.g. ZORDER BY (a, b)")
            if self._index < len(self._tokens):
                self.raise_error("Expected WHERE <partition predicate> or ZORDER BY (columns) after the table name")
            return self.expression(OptimizeCommand(this=table, where=where, expressions=columns))

        def _parse_explain_streaming(self, start: Token) -> ExplainStreaming | ExplainQuery | None:
            """`EXPLAIN CREATE [OR REFRESH] STREAMING TABLE ...` and `EXPLAIN CREATE [OR REFRESH | OR REPLACE]
            MATERIALIZED VIEW ...`; any other EXPLAIN stays a command for Spark."""
            index = self._index
            streaming = self._match(TokenType.CREATE) and (
                self._match_text_seq("OR", "REFRESH") or self._match_text_seq("OR", "REPLACE") or True) and (
                self._match_text_seq("STREAMING", "TABLE") or self._match_text_seq("MATERIALIZED", "VIEW"))
            self._retreat(index)
            if not streaming:
                return self._parse_explain_query()
            node = self.expression(ExplainStreaming(this=self._parse_statement()))
            node.meta["keyword_end"] = start.end + 1
            return node

        # sqlglot declares `Refresh | Command`, but its only caller (STATEMENT_PARSERS) takes any statement node
        def _parse_refresh(self) -> exp.Refresh | exp.Command | RefreshTable:  # type: ignore[override]
            """`REFRESH {STREAMING TABLE | TABLE | MATERIALIZED VIEW} name [FULL] [SYNC | ASYNC]`; any other REFRESH
            (Spark's `REFRESH path`, `REFRESH FUNCTION f`) stays sqlglot's."""
            index = self._index
            for words in (("STREAMING", "TABLE"), ("TABLE",), ("MATERIALIZED", "VIEW")):
                if self._match_text_seq(*words):
                    kind = " ".join(words)
                    break
            else:
                return super()._parse_refresh()
            if self._curr is None or self._curr.token_type == TokenType.STRING:
                self._retreat(index)
                return super()._parse_refresh()
            table = self._parse_table_parts()
            full = self._match_text_seq("FULL")
            mode = self._prev.text.upper() if self._match_texts(("SYNC", "ASYNC")) else None
            return self.expression(RefreshTable(this=table, kind=kind, full=full, mode=mode))

        def _parse_explain_query(self) -> ExplainQuery | None:
            """`EXPLAIN [mode] <query>`; any other EXPLAIN stays a command for Spark."""
            index = self._index
            mode = self._prev.text.upper() if self._match_texts(("EXTENDED", "CODEGEN", "COST", "FORMATTED")) else None
            if not self._curr or self._curr.token_type not in (
                    TokenType.SELECT, TokenType.WITH, TokenType.FROM, TokenType.VALUES, TokenType.L_PAREN):
                self._retreat(index)
                return None
            query = self._parse_statement()
            if not isinstance(query, exp.Query) or self._curr:
                self._retreat(index)
                return None
            return self.expression(ExplainQuery(this=query, mode=mode))

        def _parse_describe(self) -> exp.Describe:
            if self._match_text_seq("STREAMING", "TABLE"):
                return self.expression(exp.Describe(this=self._parse_table_parts(), kind="STREAMING TABLE"))
            index = self._index
            # `DESCRIBE DETAIL t` (Delta's); `DESCRIBE detail` alone describes a table named detail
            if self._match_text_seq("DETAIL") and self._curr and self._curr.token_type != TokenType.SEMICOLON:
                return self.expression(exp.Describe(this=self._parse_table_parts(), style="DETAIL"))
            self._retreat(index)
            return super()._parse_describe()

        def _parse_ddl_select(self) -> exp.Expr | None:
            # Where the query of an INSERT or CREATE ... AS starts, kept in its meta: after REPLACE WHERE <predicate>
            # only the parser knows where the predicate ends (`x IN (1, 2)` and `(SELECT ...)` both open a paren).
            start = self._curr.start if self._curr is not None else None
            query = super()._parse_ddl_select()
            if query is not None and start is not None:
                query.meta[QUERY_START] = start
            return query

        def _parse_merge(self) -> exp.Merge:
            """sqlglot's MERGE, after Databricks' `WITH SCHEMA EVOLUTION` (kept in the node's meta)."""
            evolve = self._match_text_seq("WITH", "SCHEMA", "EVOLUTION")
            merge = super()._parse_merge()
            if evolve:
                merge.meta[SCHEMA_EVOLUTION] = True
            return merge

        def _parse_insert(self) -> exp.Insert | exp.MultitableInserts:
            """sqlglot's INSERT, plus Databricks' `INSERT INTO t [AS a] REPLACE ON (<condition>) (<query>) [AS s]`,
            where sqlglot stops after REPLACE: `replace_on` holds the condition, `expression` the query as an
            exp.Subquery with its alias; the query's first and past-last offsets are in its meta."""
            insert = super()._parse_insert()
            if (not isinstance(insert, exp.Insert) or insert.expression is not None or self._prev is None
                    or self._prev.token_type != TokenType.REPLACE or not self._match(TokenType.ON)):
                return insert
            insert.set("replace_on", self._parse_wrapped(self._parse_disjunction))
            self._match_l_paren()
            query = self._parse_ddl_select()
            if query is None or self._curr is None:
                self.raise_error("Expected (<query>) after REPLACE ON (<condition>)")
                return insert
            query.meta[QUERY_END] = self._curr.start
            self._match_r_paren()
            insert.set("expression", self.expression(exp.Subquery(this=query, alias=self._parse_table_alias())))
            return insert

        # sqlglot declares `Create | Command`, but its only caller (STATEMENT_PARSERS) takes any statement node
        def _parse_create(  # type: ignore[override]
                self) -> exp.Create | exp.Command | CreateFlowCommand | CreateAutoCdcCommand:
            """`CREATE FLOW f [COMMENT '...'] AS INSERT INTO t [BY NAME] <query>`, `CREATE FLOW f AS AUTO CDC INTO t
            ...` and `CREATE [OR REFRESH] STREAMING TABLE t ... FLOW AUTO CDC ...`; any other CREATE is sqlglot's."""
            if self._auto_cdc_table_ahead():
                return self._parse_auto_cdc_table()
            if self._clone_ahead():
                return self._parse_clone_table()
            if not self._match_text_seq("FLOW"):
                return super()._parse_create()
            flow = self._parse_table_parts()
            comment = self._parse_string() if self._match(TokenType.COMMENT) else None
            if self._match(TokenType.ALIAS) and self._match_text_seq("AUTO", "CDC"):
                if not self._match(TokenType.INTO):
                    self.raise_error("Expected INTO table after CREATE FLOW name AS AUTO CDC")
                target = self._parse_table_parts()
                return self.expression(CreateAutoCdcCommand(this=target, cdc=self._parse_auto_cdc(), flow=flow,
                                                            comment=comment))
            if self._prev.token_type != TokenType.ALIAS or not self._match_text_seq("INSERT", "INTO"):
                self.raise_error("Expected AS INSERT INTO table BY NAME <query> (or AS AUTO CDC INTO table ...) "
                                 "after CREATE FLOW name")
            table = self._parse_table_parts()
            by_name = self._match_text_seq("BY", "NAME")
            query = self._parse_select(nested=True)
            if query is None:
                self.raise_error("Expected the flow's query (SELECT ... FROM STREAM ...) after INSERT INTO table")
            return self.expression(CreateFlowCommand(this=flow, table=table, expression=query, comment=comment,
                                              by_name=by_name))

        # --- CREATE TABLE ... CLONE (Databricks' Delta clone) ---------------------------------------------------------

        def _clone_ahead(self) -> bool:
            """Whether the CREATE being parsed is `[OR REPLACE] TABLE [IF NOT EXISTS] t [SHALLOW | DEEP] CLONE`."""
            index = self._index
            try:
                self._match_pair(TokenType.OR, TokenType.REPLACE)
                if not self._match(TokenType.TABLE):
                    return False
                self._parse_exists(not_=True)
                self._parse_table_parts(schema=True)
                self._match_texts(("SHALLOW", "DEEP"))
                return self._match_text_seq("CLONE")
            finally:
                self._retreat(index)

        def _parse_clone_table(self) -> exp.Create:
            """`CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t [SHALLOW | DEEP] CLONE s [VERSION AS OF n | TIMESTAMP AS
            OF 'ts'] [TBLPROPERTIES (...)] [LOCATION '...']`: sqlglot's `exp.Create` with its `exp.Clone`, whose
            table carries the time-travel clause as a query's reference does (`copy` unused: DEEP is not shallow)."""
            replace = self._match_pair(TokenType.OR, TokenType.REPLACE)
            self._match(TokenType.TABLE)
            exists = self._parse_exists(not_=True)
            target = self._parse_table_parts(schema=True)
            shallow = self._match_text_seq("SHALLOW")
            self._match_text_seq("DEEP")
            self._match_text_seq("CLONE")
            source = self._parse_table_parts()
            if not isinstance(source, exp.Table):
                self.raise_error("Expected the source table's name after CLONE")
                source = exp.Table()
            version = self._parse_version()
            if version is not None:
                source.set("version", version)
            properties = self._parse_properties()
            if self._curr and not self._match(TokenType.SEMICOLON, advance=False):
                self.raise_error("Expected TBLPROPERTIES (...) or the end of the statement after CLONE source")
            return self.expression(exp.Create(
                this=target, kind="TABLE", replace=replace, exists=exists, properties=properties,
                clone=exp.Clone(this=source, shallow=shallow, copy=False)))

        # --- AUTO CDC (Databricks' change data capture into a streaming table) -------------------------------------

        def _after_auto_cdc(self) -> bool:
            texts = [token.text.upper() for token in self._tokens[:self._index]]
            return any(texts[i:i + 2] == ["AUTO", "CDC"] for i in range(len(texts)))

        def _auto_cdc_table_ahead(self) -> bool:
            """Whether the CREATE being parsed is `[OR REFRESH] STREAMING TABLE ... FLOW AUTO CDC`: the clause comes
            after the table's name, column list and properties, so it is looked for among the tokens ahead."""
            index = self._index
            ahead = (self._match_text_seq("OR", "REFRESH") or True) and self._match_text_seq("STREAMING", "TABLE")
            self._retreat(index)
            if not ahead:
                return False
            texts = [token.text.upper() if token.token_type != TokenType.STRING else "" for token in
                     self._tokens[index:]]
            return any(texts[i:i + 3] == ["FLOW", "AUTO", "CDC"] for i in range(len(texts)))

        def _parse_auto_cdc_table(self) -> CreateAutoCdcCommand:
            refresh = self._match_text_seq("OR", "REFRESH")
            self._match_text_seq("STREAMING", "TABLE")
            exists = self._parse_exists(not_=True)
            target = self._parse_schema(self._parse_table_parts(schema=True))
            properties = self._parse_properties()
            if not self._match_text_seq("FLOW", "AUTO", "CDC"):
                self.raise_error("Expected FLOW AUTO CDC FROM STREAM(source) KEYS (...) SEQUENCE BY ... after the "
                                 "streaming table's name, columns and properties")
            return self.expression(CreateAutoCdcCommand(this=target, cdc=self._parse_auto_cdc(), refresh=refresh,
                                                        exists=bool(exists), properties=properties))

        def _parse_cdc_columns(self) -> tuple[list[exp.Expr], list[exp.Expr], bool]:
            """`a, b` or `(a, b)`, or `* EXCEPT (a, b)`, or `*`: (listed, excepted, star)."""
            if self._match(TokenType.STAR):
                if self._match(TokenType.EXCEPT):
                    excepted = self._parse_wrapped_csv(self._parse_column)
                    if not excepted:
                        self.raise_error("Expected the columns in * EXCEPT (a, b)")
                    return [], excepted, True
                return [], [], True
            listed = (self._parse_wrapped_csv(self._parse_column) if self._curr is not None
                      and self._curr.token_type == TokenType.L_PAREN else self._parse_csv(self._parse_column))
            if not listed:
                self.raise_error("Expected a column list or * EXCEPT (columns)")
            return listed, [], False

        def _parse_auto_cdc(self) -> AutoCdc:
            """`FROM source KEYS (k, ...) [IGNORE NULL UPDATES] [APPLY AS DELETE WHEN c] [APPLY AS TRUNCATE WHEN c]
            SEQUENCE BY e [COLUMNS ...] [STORED AS SCD TYPE {1 | 2}] [TRACK HISTORY ON ...]`, in Databricks' order."""
            if not self._match(TokenType.FROM):
                self.raise_error("Expected FROM STREAM(source) after AUTO CDC")
            source = self._parse_table()
            if source is None:
                self.raise_error("Expected the CDC source after FROM: STREAM(table), STREAM read_files(...) ...")
            if not self._match_text_seq("KEYS"):
                self.raise_error("Expected KEYS (key columns) after the CDC source")
            keys = self._parse_wrapped_csv(self._parse_column)
            ignore_nulls = self._match_text_seq("IGNORE", "NULL", "UPDATES")
            delete = truncate = None
            while self._match_text_seq("APPLY", "AS"):
                if self._match(TokenType.DELETE) and self._match_text_seq("WHEN"):
                    delete = self._parse_disjunction()
                elif self._match(TokenType.TRUNCATE) and self._match_text_seq("WHEN"):
                    truncate = self._parse_disjunction()
                else:
                    self.raise_error("Expected APPLY AS DELETE WHEN <condition> or APPLY AS TRUNCATE WHEN <condition>")
            if not self._match_text_seq("SEQUENCE", "BY"):
                self.raise_error("Expected SEQUENCE BY <column> (what orders the changes of a key)")
            sequence = self._parse_disjunction()
            columns: list[exp.Expr] = []
            excepted: list[exp.Expr] = []
            if self._match_text_seq("COLUMNS"):
                columns, excepted, _ = self._parse_cdc_columns()
            scd_type = None
            if self._match_text_seq("STORED", "AS"):
                if not self._match_text_seq("SCD", "TYPE") or self._curr is None or self._curr.text not in ("1", "2"):
                    self.raise_error("Expected SCD TYPE 1 or SCD TYPE 2 after STORED AS")
                scd_type = int(self._curr.text)
                self._advance()
            track: list[exp.Expr] = []
            track_except: list[exp.Expr] = []
            track_all = False
            if self._match_text_seq("TRACK", "HISTORY", "ON"):
                track, track_except, track_all = self._parse_cdc_columns()
            return self.expression(AutoCdc(
                this=source, keys=keys, sequence=sequence, ignore_null_updates=ignore_nulls, delete=delete,
                truncate=truncate, columns=columns, except_columns=excepted, scd_type=scd_type, track=track,
                track_except=track_except, track_all=track_all))

        def _parse_drop(self, exists: bool = False, kind: str | None = None) -> exp.Drop | exp.Command:
            if kind is None and self._match_text_seq("FLOW"):
                exists = bool(self._parse_exists())
                return self.expression(exp.Drop(kind="FLOW", exists=exists, tables=[self._parse_table_parts()]))
            if kind is None and self._match_text_seq("STREAMING", "TABLE"):
                exists = bool(self._parse_exists())
                return self.expression(exp.Drop(kind="STREAMING TABLE", exists=exists,
                                                tables=[self._parse_table_parts()]))
            return super()._parse_drop(exists=exists, kind=kind)

        # --- GRANT / REVOKE: sqlglot's nodes, but a statement that does not fit is an error, not a command ---------

        def _parse_grant_privilege(self) -> exp.GrantPrivilege | None:
            first = self._curr
            node = super()._parse_grant_privilege()
            if node is not None and first:
                node.meta.update(line=first.line, col=first.col, start=first.start, end=self._prev.end)
            return node

        def _parse_grant_revoke_common(self) -> tuple[list | None, str | None, exp.Expr | None]:
            privileges = self._parse_csv(self._parse_grant_privilege)
            if not self._match(TokenType.ON):
                self.raise_error("Expected ON and the object: ON TABLE t, ON VIEW v or ON SCHEMA s")
            return privileges, self._parse_securable_kind(), self._parse_table_parts()

        def _parse_securable_kind(self) -> str | None:
            """The kind after ON: `MATERIALIZED VIEW` (two words, Databricks), TABLE, VIEW, SCHEMA, ... or none."""
            if self._match_text_seq("MATERIALIZED", "VIEW"):
                return "MATERIALIZED VIEW"
            return self._prev.text.upper() if self._match_set(self.CREATABLES) else None

        def _parse_grant(self) -> exp.Grant:
            privileges, kind, securable = self._parse_grant_revoke_common()
            if not self._match_text_seq("TO"):
                self.raise_error("Expected TO and the users to grant to")
            principals = self._parse_csv(self._parse_grant_principal)
            if not principals:
                self.raise_error("Expected the users to grant to")
            return self.expression(exp.Grant(privileges=privileges, kind=kind, securable=securable,
                                             principals=principals))

        def _parse_revoke(self) -> exp.Revoke:
            privileges, kind, securable = self._parse_grant_revoke_common()
            if not self._match_text_seq("FROM"):
                self.raise_error("Expected FROM and the users to revoke from")
            principals = self._parse_csv(self._parse_grant_principal)
            if not principals:
                self.raise_error("Expected the users to revoke from")
            return self.expression(exp.Revoke(privileges=privileges, kind=kind, securable=securable,
                                              principals=principals))

    class Generator(DatabricksGenerator):
        TRANSFORMS = {
            **Databricks.Generator.TRANSFORMS,
            Watermark: watermark_sql,
            Expectation: expectation_sql,
            VacuumCommand: vacuum_sql,
            OptimizeCommand: optimize_sql,
            RefreshTable: refresh_table_sql,
            CallProcedure: call_procedure_sql,
            UnsetProperties: unset_properties_sql,
            ShowGrantsCommand: show_grants_sql,
            ExplainStreaming: explain_streaming_sql,
            CreateFlowCommand: create_flow_sql,
            AutoCdc: auto_cdc_sql,
            CreateAutoCdcCommand: create_auto_cdc_sql,
            RefreshSchedule: refresh_schedule_sql,
            RefreshPolicy: refresh_policy_sql,
            AlterScheduleCommand: alter_schedule_sql,
            exp.Show: show_sql,
        }
        PROPERTIES_LOCATION = {
            **Databricks.Generator.PROPERTIES_LOCATION,
            RefreshSchedule: exp.Properties.Location.POST_SCHEMA,
            RefreshPolicy: exp.Properties.Location.POST_SCHEMA,
        }
