"""What a statement is, as pure data: one frozen dataclass per kind the gateway handles itself, `Passthrough` for
what Spark runs as it is (SET, SHOW FUNCTIONS, EXPLAIN SELECT ...), marked `parsed=False` when sqlglot did not
understand the text, so that the policy can judge it on Spark's own plan. `classify.py` decides which one a text is,
by sqlglot's tree of it; this module holds only the values, so that everything above can import them.

Queries embedded in a statement (CREATE TABLE AS, INSERT, CREATE VIEW) keep their offset in the statement, so that
errors found in them point into the text the user typed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from sluicegate.dialect.columns import ColumnSpec
from sluicegate.dialect.constraints import CheckConstraint, Constraint, KeyConstraint
from sluicegate.dialect.schedule import Schedule
from sluicegate.dialect.streaming.plan import StreamingPlan


@dataclass(frozen=True)
class TableName:
    """A table's name as a statement writes it; `offset`: where in the statement's text (the text `classify` read) it
    starts (its database part's first character when written, else its name's), None for a name no statement wrote.
    Not compared: two statements naming the same table at different places are equal."""

    database: str | None
    name: str
    offset: int | None = field(default=None, compare=False, repr=False)

    def qualified(self, current_database: str) -> tuple[str, str]:
        return (self.database or current_database).lower(), self.name.lower()


@dataclass(frozen=True)
class Query:
    """A query's text and where it starts in its statement."""

    sql: str
    offset: int = 0


@dataclass(frozen=True)
class CreateDatabase:
    name: str
    if_not_exists: bool
    comment: str | None
    offset: int | None = field(default=None, compare=False, repr=False)  # where the name starts in the text


@dataclass(frozen=True)
class DropDatabase:
    name: str
    if_exists: bool
    cascade: bool
    offset: int | None = field(default=None, compare=False, repr=False)  # where the name starts in the text


@dataclass(frozen=True)
class UseDatabase:
    name: str


@dataclass(frozen=True)
class ShowDatabases:
    pattern: str | None


@dataclass(frozen=True)
class DescribeDatabase:
    """`DESCRIBE {SCHEMA | DATABASE} [EXTENDED] [catalog.]name`."""

    name: str
    extended: bool
    offset: int | None = field(default=None, compare=False, repr=False)  # where the name starts in the text


@dataclass(frozen=True)
class UseCatalog:
    """`USE CATALOG c` / `SET CATALOG c`: the gateway has one catalog, so this checks the name and changes nothing."""

    name: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class ShowCatalogs:
    pattern: str | None


@dataclass(frozen=True)
class KillQuery:
    """`CALL system.runtime.kill_query(query_id => '...', message => '...')` (Trino's procedure; positional arguments
    too): cancel a running statement by its id, the first column of `system.runtime.queries`."""

    query_id: str
    message: str | None = None


# The table property keeping a table's CLUSTER BY columns (a JSON list): OPTIMIZE z-orders by them.
CLUSTERING_PROPERTY = "clusteringColumns"
# The table property `ALTER TABLE t CLUSTER BY AUTO` sets to "true" (Databricks' name for it).
CLUSTER_BY_AUTO_PROPERTY = "clusterByAuto"


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
    location: str | None = None    # LOCATION '...' or OPTIONS (path '...'): only Spark's own tables may have one
    partition_offsets: tuple[int | None, ...] = field(default=(), compare=False, repr=False)  # of `partition_by`
    constraints: tuple[Constraint, ...] = ()  # its column list's CHECK (enforced) and key constraints (informational)

    @property
    def checks(self) -> tuple[CheckConstraint, ...]:
        return tuple(c for c in self.constraints if isinstance(c, CheckConstraint))


@dataclass(frozen=True)
class CloneTable:
    """`CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t {SHALLOW | DEEP} CLONE s [VERSION AS OF n | TIMESTAMP AS OF 'ts']
    [TBLPROPERTIES (...)]`: a new Delta table with the source's schema, properties and data as of that version."""

    table: TableName
    source: TableName
    shallow: bool
    replace: bool
    if_not_exists: bool
    version: int | None = None
    timestamp: str | None = None
    properties: dict[str, str] = field(default_factory=dict, hash=False)
    location: str | None = None    # LOCATION '...': refused, a warehouse table's folder comes from its name


@dataclass(frozen=True)
class CreateView:
    table: TableName
    query: Query
    replace: bool
    if_not_exists: bool
    comment: str | None
    columns: tuple[tuple[str, str | None], ...] = ()  # the `(name [COMMENT 'text'], ...)` list: names and comments
    properties: tuple[tuple[str, str], ...] = ()      # TBLPROPERTIES, kept with the view as Databricks keeps them


@dataclass(frozen=True)
class DropTable:
    table: TableName
    if_exists: bool
    view: bool                     # DROP VIEW (True) or DROP TABLE


@dataclass(frozen=True)
class AddColumns:
    table: TableName
    columns: tuple[ColumnSpec, ...]
    column_offsets: tuple[int | None, ...] = field(default=(), compare=False, repr=False)  # where each name starts


@dataclass(frozen=True)
class DropColumns:
    """`ALTER TABLE t DROP {COLUMN | COLUMNS} [IF EXISTS] (c, ...)` (or one column without parentheses)."""

    table: TableName
    columns: tuple[ColumnName, ...]
    if_exists: bool = False


@dataclass(frozen=True)
class SetClustering:
    """`ALTER {TABLE | MATERIALIZED VIEW | STREAMING TABLE} t CLUSTER BY (c, ...)` (liquid clustering's columns),
    `CLUSTER BY NONE` (none: `columns` empty, `auto` False) or `CLUSTER BY AUTO` (`auto`: the columns are left as
    they are). `kind` as written: each form alters only objects of its kind, as on Databricks."""

    table: TableName
    columns: tuple[ColumnName, ...]
    auto: bool = False
    kind: str = "TABLE"


@dataclass(frozen=True)
class AddConstraint:
    """`ALTER TABLE t ADD CONSTRAINT name CHECK (expr)` (Delta's, checked against the rows and enforced on every
    write) or `ADD [CONSTRAINT name] PRIMARY KEY (...) | FOREIGN KEY (...) REFERENCES ...` (informational)."""

    table: TableName
    constraint: Constraint


@dataclass(frozen=True)
class DropConstraint:
    """`ALTER TABLE t DROP CONSTRAINT [IF EXISTS] name [RESTRICT | CASCADE]`, `... DROP PRIMARY KEY [IF EXISTS]
    [RESTRICT | CASCADE]` or `... DROP FOREIGN KEY [IF EXISTS] (c, ...)`: CASCADE also drops the foreign keys that
    reference a dropped primary key, as Databricks does; RESTRICT (the default) refuses to drop it while any does.
    `key_kind` (PRIMARY KEY | FOREIGN KEY) names the key by its kind and, for a foreign key, its `key_columns` in
    order, instead of `name` (empty then): catalog/keys.py finds its name on the table."""

    table: TableName
    name: str
    if_exists: bool
    cascade: bool = False
    key_kind: str | None = None
    key_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class SetColumnNullability:
    """`ALTER TABLE t {ALTER | CHANGE} [COLUMN] c {SET | DROP} NOT NULL`: Delta's NOT NULL constraint on a column."""

    table: TableName
    column: str
    nullable: bool
    column_offset: int | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class SetColumnType:
    """`ALTER TABLE t {ALTER [COLUMN] c TYPE | CHANGE [COLUMN] c c} <type>`: Delta's type widening (dbt's
    `on_schema_change: sync_all_columns` sends it when a column's type grows). `type` as Spark spells it."""

    table: TableName
    column: ColumnName
    type: str


@dataclass(frozen=True)
class SetColumnComment:
    """`ALTER TABLE t {ALTER | CHANGE} [COLUMN] c COMMENT 'text'` (dbt's persist_docs), or
    `COMMENT ON COLUMN t.c IS 'text'` (dbt-databricks')."""

    table: TableName
    column: str
    comment: str
    column_offset: int | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class SetTableComment:
    """`COMMENT ON {TABLE | VIEW | MATERIALIZED VIEW | STREAMING TABLE} t IS 'text'` (NULL: no comment); `kind` as
    written (TABLE also comments a streaming table or materialized view, as before the kinds were read)."""

    table: TableName
    comment: str | None
    kind: str = "TABLE"


@dataclass(frozen=True)
class SetTableProperties:
    """`ALTER TABLE t SET TBLPROPERTIES ('k' = 'v', ...)`; the key `comment` sets the table's comment, as in Spark.
    `ALTER VIEW v SET TBLPROPERTIES (...)` (`view`: only a view may be named) sets a view's."""

    table: TableName
    properties: tuple[tuple[str, str], ...]
    view: bool = False


@dataclass(frozen=True)
class UnsetTableProperties:
    """`ALTER {TABLE | VIEW} t UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)` (`view`: ALTER VIEW)."""

    table: TableName
    keys: tuple[str, ...]
    if_exists: bool
    view: bool = False


@dataclass(frozen=True)
class ShowTblProperties:
    """`SHOW TBLPROPERTIES t [('key')]`."""

    table: TableName
    key: str | None = None


@dataclass(frozen=True)
class ShowColumns:
    """`SHOW COLUMNS {IN | FROM} t [{IN | FROM} db]`."""

    table: TableName


@dataclass(frozen=True)
class RenameTable:
    """`ALTER TABLE t RENAME TO u`, or `ALTER VIEW v RENAME TO w` (`view`: only a view may be named)."""

    table: TableName
    new_name: TableName
    view: bool = False


@dataclass(frozen=True)
class ShowTables:
    database: str | None
    pattern: str | None


@dataclass(frozen=True)
class ShowTableExtended:
    """`SHOW TABLE EXTENDED [IN db] LIKE 'pattern'`: how dbt-spark lists a schema's relations and their columns."""

    database: str | None
    pattern: str | None


@dataclass(frozen=True)
class DescribeTable:
    table: TableName
    extended: bool
    as_json: bool = False  # DESCRIBE ... AS JSON: one row, `json_metadata` (Spark 4 / Databricks)


@dataclass(frozen=True)
class DescribeHistory:
    table: TableName


@dataclass(frozen=True)
class DescribeDetail:
    """Delta's DESCRIBE DETAIL: one row about the table's current version (files, size, properties)."""

    table: TableName


@dataclass(frozen=True)
class ShowCreateTable:
    table: TableName


@dataclass(frozen=True)
class ReplaceWhere:
    """`INSERT INTO t REPLACE WHERE <predicate> <query>` (Delta's replaceWhere): the rows the predicate holds for are
    replaced by the query's, each of which must satisfy it."""
    predicate: str                  # Spark SQL over the table's columns


@dataclass(frozen=True)
class ReplaceOn:
    """`INSERT INTO t [AS a] REPLACE ON (<condition>) (<query>) [AS s]` (Databricks): the rows that match a row of the
    query by the condition are replaced by the query's rows."""
    condition: str                  # Spark SQL over the target's alias and the query's
    target_alias: str | None
    source_alias: str | None


@dataclass(frozen=True)
class Insert:
    table: TableName
    columns: tuple[str, ...]
    query: Query
    overwrite: bool
    # the source positions that are quoted literals only (trees.string_literal_positions): cast to the column's type
    string_literals: frozenset[int] = frozenset()
    by_name: bool = False           # BY NAME: each query column goes to the table's column of its name
    replace: ReplaceWhere | ReplaceOn | None = None


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
    """`MERGE [WITH SCHEMA EVOLUTION] INTO t USING s ON ... WHEN ...`: `schema_evolution` adds the source's columns
    that `*` or an explicit assignment names and the target lacks (executor/tables/merge.py)."""

    table: TableName
    tree: exp.Merge = field(compare=False, hash=False)
    schema_evolution: bool = False


@dataclass(frozen=True)
class Vacuum:
    table: TableName
    retain_hours: float | None
    dry_run: bool = False        # list the files it would delete instead


@dataclass(frozen=True)
class ColumnName:
    """A column a statement names, with where its name starts in the statement's text (not compared)."""

    name: str
    offset: int | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class PartitionTerm:
    """One conjunct of OPTIMIZE's WHERE: `column op values`, op one of = != < <= > >= in (values as text, as the
    Delta log keeps partition values)."""

    column: ColumnName
    op: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Optimize:
    """`OPTIMIZE table [WHERE partition predicate] [ZORDER BY (cols)]`: `where` the predicate as a conjunction of
    terms (its text in `where_sql`), `zorder` the columns as written."""

    table: TableName
    where: tuple[PartitionTerm, ...] = ()
    where_sql: str | None = None
    zorder: tuple[ColumnName, ...] = ()


@dataclass(frozen=True)
class SelectQuery:
    query: Query


@dataclass(frozen=True)
class Passthrough:
    """What the gateway does not run itself; the policy checks Spark's own plan of it. `parsed` is False when
    sqlglot did not understand the text (a syntax error, or a statement it keeps as an opaque command)."""

    sql: str
    parsed: bool = True


@dataclass(frozen=True)
class CreateStreamingTable:
    plan: StreamingPlan
    sql: str
    schedule: Schedule | None = None   # beside the plan, not in it: a new schedule alone never restarts the stream
    table: TableName | None = field(default=None, compare=False)  # the plan's table as written, with its offset


@dataclass(frozen=True)
class CreateStreamingTableSchema:
    """`CREATE STREAMING TABLE [IF NOT EXISTS] t (columns) [COMMENT ...] [TBLPROPERTIES (...)]` without a query: an
    empty table that append flows (CREATE FLOW ... INSERT INTO t) fill."""

    table: TableName
    columns: tuple[ColumnSpec, ...]
    comment: str | None
    properties: dict[str, str] = field(hash=False)
    if_not_exists: bool = False
    sql: str = ""
    partition_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreateFlow:
    """`CREATE FLOW f [COMMENT '...'] AS INSERT INTO t [BY NAME] <streaming query>`: `plan` is the flow's query checked
    as a streaming table's is (append only), named after the target table."""

    flow: TableName
    table: TableName
    comment: str | None
    plan: StreamingPlan
    sql: str


@dataclass(frozen=True)
class CreateAutoCdc:
    """`CREATE [OR REFRESH] STREAMING TABLE t ... FLOW AUTO CDC FROM src KEYS ... SEQUENCE BY ...` (`flow` None) or
    `CREATE FLOW f AS AUTO CDC INTO t FROM src ...`: `plan` reads the source's change events (its `cdc` says how they
    are applied by key), named after the target table."""

    table: TableName
    plan: StreamingPlan
    sql: str
    flow: TableName | None = None
    comment: str | None = None     # CREATE FLOW f COMMENT '...'


@dataclass(frozen=True)
class DropFlow:
    flow: TableName
    if_exists: bool


@dataclass(frozen=True)
class ShowFlows:
    database: str | None
    pattern: str | None


@dataclass(frozen=True)
class AlterSchedule:
    """`ALTER {STREAMING TABLE | MATERIALIZED VIEW} t {ADD | ALTER} <schedule>` / `... DROP SCHEDULE`: `kind` as
    written, `action` ADD | ALTER | DROP, `schedule` None for DROP. A CRON without a zone has `time_zone` None
    here; the runtime stores the session's."""

    table: TableName
    kind: str
    action: str
    schedule: Schedule | None


@dataclass(frozen=True)
class Refresh:
    """`REFRESH {STREAMING TABLE | TABLE | MATERIALIZED VIEW} t [FULL] [SYNC | ASYNC]`: `kind` as written."""

    table: TableName
    kind: str
    full: bool = False
    asynchronous: bool = False


@dataclass(frozen=True)
class CreateMaterializedView:
    """`CREATE [OR REPLACE | OR REFRESH] MATERIALIZED VIEW [IF NOT EXISTS] mv [(cols)] ... AS query` (Databricks):
    `columns` the `(name [COMMENT 'text'], ...)` list, `not_null` the names it declares NOT NULL, `refresh_policy`
    AUTO | INCREMENTAL | INCREMENTAL STRICT | FULL (AUTO when not written), `schedule` None: refreshed by REFRESH
    only. Checked in dialect/materialized_views.py.
    """

    table: TableName
    query: Query
    replace: bool
    or_refresh: bool
    if_not_exists: bool
    columns: tuple[tuple[str, str | None], ...] = ()
    partition_by: tuple[str, ...] = ()
    comment: str | None = None
    properties: dict[str, str] = field(default_factory=dict, hash=False)
    refresh_policy: str = "AUTO"
    schedule: Schedule | None = None
    not_null: tuple[str, ...] = ()
    keys: tuple[KeyConstraint, ...] = ()     # informational PRIMARY KEY / FOREIGN KEY of the column list


@dataclass(frozen=True)
class ExplainMaterializedView:
    """`EXPLAIN CREATE ... MATERIALIZED VIEW ...`: how the view would be refreshed (incrementally or not, and why)."""

    create: CreateMaterializedView


@dataclass(frozen=True)
class DropMaterializedView:
    table: TableName
    if_exists: bool


@dataclass(frozen=True)
class ShowMaterializedViews:
    database: str | None
    pattern: str | None


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


@dataclass(frozen=True)
class ShowViews:
    database: str | None
    pattern: str | None


@dataclass(frozen=True)
class CreateTemporaryView:
    """`CREATE [OR REPLACE] [GLOBAL] TEMP[ORARY] VIEW name [(cols)] AS query` (the gateway binds the query and
    defines the view), or the `USING fmt OPTIONS (...)` form (`query` None; Spark runs `sql` as typed) that reads
    files, which the policy must see to refuse paths."""

    name: str
    query: Query | None
    replace: bool
    is_global: bool
    sql: str
    using: str | None = None
    options: dict[str, str] = field(default_factory=dict, hash=False)
    columns: tuple[str, ...] = ()  # the `(cols)` list: names given to the query's columns in order


@dataclass(frozen=True)
class CreateFunction:
    """`CREATE [OR REPLACE] FUNCTION [IF NOT EXISTS] s.f (p T, ...) RETURNS R [LANGUAGE SQL] [COMMENT '...'] RETURN
    body`: a SQL function kept in the catalog; `body` is the text after RETURN (an expression or a query), at
    `body_offset` in the statement."""

    table: TableName               # the function's name (`table`: the field every named statement's rule reads)
    parameters: tuple[tuple[str, str], ...]
    returns: str
    body: str
    body_offset: int
    comment: str | None = None
    replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropFunction:
    table: TableName               # the function's name
    if_exists: bool


@dataclass(frozen=True)
class DescribeFunction:
    """`DESCRIBE FUNCTION [EXTENDED] f`: a catalog function's signature (and body, EXTENDED); any other name is
    Spark's built-in, described by Spark."""

    table: TableName
    extended: bool


@dataclass(frozen=True)
class ShowFunctions:
    """`SHOW [USER | SYSTEM | ALL] FUNCTIONS [{FROM | IN} schema] [[LIKE] 'pattern']`."""

    scope: str                     # "USER", "SYSTEM" or "ALL"
    database: str | None
    pattern: str | None


@dataclass(frozen=True)
class SecurableObject:
    kind: str                      # "TABLE" | "VIEW" | "MATERIALIZED VIEW" | "SCHEMA" (ON t = TABLE; DATABASE = SCHEMA)
    #                                | "FUNCTION"
    name: TableName                # for a SCHEMA: TableName(None, schema_name)


@dataclass(frozen=True)
class Grant:
    privileges: tuple[str, ...]    # upper case: "SELECT", "MODIFY", "CREATE", "REFRESH", "ALL PRIVILEGES"
    securable: SecurableObject
    principals: tuple[str, ...]    # user names as written, unquoted


@dataclass(frozen=True)
class Revoke:
    privileges: tuple[str, ...]
    securable: SecurableObject
    principals: tuple[str, ...]


@dataclass(frozen=True)
class ShowGrants:
    principal: str | None
    securable: SecurableObject | None


Statement = (
    CreateDatabase | DropDatabase | UseDatabase | ShowDatabases | DescribeDatabase | CreateTable | CloneTable
    | CreateView | CreateFunction | DropFunction | DescribeFunction | ShowFunctions
    | DropTable | AddColumns | ShowColumns | RenameTable | ShowTables | DescribeTable | DescribeHistory | DescribeDetail
    | ShowCreateTable | Insert | Delete | Update | Merge
    | Vacuum | Optimize | SelectQuery | Passthrough | CreateStreamingTable | DropStreamingTable | ShowStreamingTables
    | DescribeStreamingTable | ExplainStreamingTable | ShowViews | CreateTemporaryView | Grant | Revoke | ShowGrants
    | Refresh | ShowTableExtended | SetColumnComment | SetTableComment | SetTableProperties | UnsetTableProperties
    | ShowTblProperties | AlterSchedule | CreateStreamingTableSchema | CreateFlow | CreateAutoCdc | DropFlow | ShowFlows
    | CreateMaterializedView | DropMaterializedView | ShowMaterializedViews | ExplainMaterializedView
    | UseCatalog | ShowCatalogs | KillQuery | AddConstraint | DropConstraint | SetColumnNullability | DropColumns
    | SetClustering | SetColumnType
)
