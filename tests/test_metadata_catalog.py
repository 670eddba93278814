"""The metadata RPCs answered from the catalog and Spark's session catalog read in place (issue 28, part 2).

Two things are shown, through real clients (PyHive's Thrift client, beeline's `!tables`/`!columns`, the Databricks
connector's `cursor.schemas()/tables()/columns()`), on several databases with Delta tables, catalog views, a table
only Spark knows (parquet), streaming tables, a materialized view, temporary views of both kinds and two users with
different grants:

- every RPC answers exactly what it answered before this change: `SparkApiView` below is the listing as it was
  (executor/listings/catalog_view.py at 08b3b12, Spark's `spark.catalog.list*()` APIs), put in the gateway's place
  for the "before" call, and the rows of both calls must be equal;
- no Spark job ran and no query plan was made while they answered: the gateway's JVM counts every job submitted
  (`DAGScheduler.numTotalJobs`) and every `QueryExecution` made (every Dataset and `spark.sql` has one), read
  before and after. The same window around the old listing must count jobs, so a counter that cannot see the work
  would fail the test, not pass it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from py4j.java_gateway import JavaClass
from pyhive import hive
from round_trips import RoundTrips
from spark_work import work_during
from TCLIService import ttypes as T
from test_beeline import clean, csv_rows, sections
from test_metadata import records

from sluicegate.executor.listings import catalog_view, information_schema
from sluicegate.executor.listings.catalog_view import ColumnInfo, FunctionInfo, TableInfo
from sluicegate.executor.spark_databases import spark_has_database
from sluicegate.gateway.auth.tokens import create_token

A, B, C = "mcat_a", "mcat_b", "mcat_c"          # alice's two schemas, bob's one
TEMP = "mcat_tmp"                                # a temporary view each session makes from a query
FILES = "mcat_files"                             # a temporary view over files (Spark's own: the USING form)


# -- the listing as it was: Spark's catalog API (its Datasets run Spark jobs) ------------------------------------


CurrentView = catalog_view.CatalogView   # the listing as it is, before as_before() puts the oracle in its place


def ours(database: str) -> bool:
    """This module's schemas: the oracle lists them the old way. Every other test's schemas of the session's shared
    Spark catalog (dozens by the time this module runs, each a Spark job per table the old way: minutes) are listed
    the same way on both sides, so the equality is over what this module made."""
    return database.lower().startswith("mcat")


class SparkApiView:
    """executor/listings/catalog_view.py before this change, with the new class's method names: the oracle."""

    _KIND_NAMES = {"TABLE": "TABLE", "VIEW": "VIEW", "STREAMING_TABLE": "STREAMING TABLE",
                   "MATERIALIZED_VIEW": "MATERIALIZED VIEW"}

    def __init__(self, spark: Any, store: Any = None) -> None:
        self.spark, self.store = spark, store
        self.current = CurrentView(spark, store)

    def databases(self) -> list[str]:
        names = {db.name for db in self.spark.catalog.listDatabases()}
        if self.store is not None:
            names.update(db.name for db in self.store.list_databases())
        return sorted(names)

    def tables(self, database: str) -> list[TableInfo]:
        if not ours(database):
            return self.current.tables(database)
        tables: dict[str, TableInfo] = {}
        if self.store is not None and self.store.get_database(database) is not None:
            for entry in self.store.list_tables(database):
                tables[entry.name] = TableInfo(database, entry.name, self._KIND_NAMES.get(entry.kind, entry.kind),
                                               entry.comment, entry)   # what information_schema read by itself
        if spark_has_database(self.spark, database):
            for table in self.spark.catalog.listTables(database):
                if table.isTemporary or table.name in tables:
                    continue
                kind = "VIEW" if (table.tableType or "").upper() == "VIEW" else "TABLE"
                tables[table.name] = TableInfo(database, table.name, kind, table.description)
        return sorted(tables.values(), key=lambda t: t.name)

    def tables_in(self, databases: list[str]) -> list[TableInfo]:
        return [table for database in databases for table in self.tables(database)]

    def temporary_views(self) -> list[TableInfo]:
        views = [t for t in self.spark.catalog.listTables() if t.isTemporary and not t.namespace]
        return sorted((TableInfo("", t.name, "VIEW", t.description) for t in views), key=lambda t: t.name)

    def columns(self, table: TableInfo) -> list[ColumnInfo]:
        from pyspark.sql.types import StructType

        from sluicegate.catalog.names import quote_identifier, quote_qualified

        if table.database and not ours(table.database):
            return self.current.columns(table)
        entry = self.store.get_table(table.database, table.name) if self.store is not None and table.database \
            else None
        if entry is not None and entry.schema_json:
            schema = StructType.fromJson(json.loads(entry.schema_json))
            return [ColumnInfo(f.name, f.dataType.simpleString(), f.nullable, (f.metadata or {}).get("comment"), i)
                    for i, f in enumerate(schema.fields, start=1)]
        qualified = quote_qualified(table.database, table.name) if table.database else quote_identifier(table.name)
        return [ColumnInfo(c.name, c.dataType, c.nullable, c.description, i)
                for i, c in enumerate(self.spark.catalog.listColumns(qualified), start=1)]

    _functions: list[FunctionInfo] | None = None

    def catalog_databases(self) -> list[str]:
        return self.current.catalog_databases()

    def functions(self, databases: Sequence[str] = ()) -> list[FunctionInfo]:
        """Spark's listed once for the module (seconds each time, the same for every session); the catalog's SQL
        functions (which this listing predates) as the current listing reads them."""
        if SparkApiView._functions is None:
            SparkApiView._functions = [FunctionInfo(f.name, f.namespace[0] if f.namespace else None, f.description)
                                       for f in self.spark.catalog.listFunctions()]
        return SparkApiView._functions + [f for f in self.current.functions(databases) if f.database]


@contextlib.contextmanager
def as_before() -> Iterator[None]:
    """The gateway's metadata operations and information_schema list through the old listing meanwhile."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(catalog_view, "CatalogView", SparkApiView)
        patch.setattr(information_schema, "CatalogView", SparkApiView)
        yield


def before_and_now(call: Callable[[], Any]) -> tuple[Any, Any]:
    with as_before():
        before = call()
    return before, call()


# -- the catalog ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(landing_root: Path) -> Path:
    folder = landing_root / "mcat_files"
    folder.mkdir(exist_ok=True)
    pq.write_table(pa.table({"f_id": pa.array([1, 2], pa.int64()), "f_label": ["a", "b"]}), folder / "part.parquet")
    return folder


@pytest.fixture(scope="module")
def objects(gateway: Any) -> Iterator[None]:
    """alice: schemas A and B with Delta tables, a catalog view, a parquet table only Spark knows, a streaming table
    with a stream (running in the background meanwhile), one with a schema only, a materialized view; bob: schema C
    with a table. alice grants bob SELECT on A.t1 only."""
    alice = hive.connect(gateway.host, gateway.port, username="alice").cursor()
    bob = hive.connect(gateway.host, gateway.port, username="bob").cursor()
    for sql in (
        f"CREATE DATABASE {A} COMMENT 'alice first'",
        f"CREATE DATABASE {B}",
        f"CREATE TABLE {A}.t1 (id INT COMMENT 'the id', name STRING, amount DECIMAL(10,2), ts TIMESTAMP, "
        f"tags ARRAY<STRING>, m MAP<STRING, INT>, st STRUCT<a: INT, b: STRING>) USING delta COMMENT 'first table'",
        f"INSERT INTO {A}.t1 SELECT 1, 'x', 1.50, TIMESTAMP'2024-01-02 03:04:05', array('a'), map('k', 1), "
        f"named_struct('a', 1, 'b', 'y')",
        f"CREATE TABLE {A}.t2 (x DOUBLE NOT NULL, y_z STRING) USING delta",
        f"CREATE VIEW {A}.v1 COMMENT 'a view' AS SELECT id, name FROM {A}.t1",
        f"CREATE TABLE {A}.p1 (c VARCHAR(10) COMMENT 'chars', n BIGINT, codes ARRAY<CHAR(2)>) USING parquet "
        "COMMENT 'spark own'",
        f"CREATE STREAMING TABLE {A}.st_live AS SELECT id, name FROM STREAM({A}.t1)",
        f"CREATE STREAMING TABLE {A}.st_schema (id INT, label STRING)",
        f"CREATE MATERIALIZED VIEW {A}.mv COMMENT 'counted' AS SELECT count(*) AS n FROM {A}.t1",
        f"CREATE TABLE {B}.t3 (k STRING) USING delta",
        f"GRANT SELECT ON TABLE {A}.t1 TO bob",
    ):
        alice.execute(sql)
    bob.execute(f"CREATE DATABASE {C}")
    bob.execute(f"CREATE TABLE {C}.t4 (v INT COMMENT 'his') USING delta")
    try:
        yield
    finally:
        alice.execute(f"DROP DATABASE IF EXISTS {A} CASCADE")
        alice.execute(f"DROP DATABASE IF EXISTS {B} CASCADE")
        bob.execute(f"DROP DATABASE IF EXISTS {C} CASCADE")


def session_of(gateway: Any, user: str, files: Path) -> Any:
    """A PyHive connection of `user` with the session's temporary views: one from a query (TEMP), one named as
    alice's table t1, one over parquet files (Spark's own)."""
    conn = hive.connect(gateway.host, gateway.port, username=user)
    cursor = conn.cursor()
    cursor.execute(f"CREATE TEMPORARY VIEW {TEMP} AS SELECT 1 AS one, 'x' AS label, CAST(NULL AS DATE) AS d")
    cursor.execute("CREATE TEMPORARY VIEW t1 AS SELECT 2.5D AS shadow")
    cursor.execute(f"CREATE TEMPORARY VIEW {FILES} USING parquet OPTIONS (path '{files}')")
    return conn


@pytest.fixture(scope="module")
def sessions(gateway: Any, objects: None, files: Path) -> Iterator[dict[str, Any]]:
    opened = {user: session_of(gateway, user, files) for user in ("alice", "bob")}
    yield opened
    for conn in opened.values():
        conn.close()


# -- every RPC, as a BI tool's schema browser sends them -------------------------------------------------------

SCHEMA_PATTERNS = [None, "mcat%", "MCAT\\_A", "mcat_", "%"]
TABLE_REQUESTS = [
    {}, {"schemaName": "mcat%"}, {"schemaName": "mcat%", "tableName": "%"},
    {"schemaName": "mcat\\_a", "tableName": "t_", "tableTypes": ["TABLE"]},
    {"schemaName": "mcat%", "tableTypes": ["VIEW"]}, {"tableName": TEMP}, {"tableName": "T1"},
    {"schemaName": A, "tableTypes": ["STREAMING TABLE", "MATERIALIZED VIEW"]}, {"schemaName": "no_such%"},
]
COLUMN_REQUESTS = [
    {"schemaName": "mcat%"}, {"schemaName": "mcat%", "tableName": "%", "columnName": "%"}, {"tableName": "t1"},
    {"schemaName": A, "tableName": "p1"}, {"schemaName": A, "columnName": "%a%"}, {"tableName": TEMP},
    {"tableName": FILES}, {"schemaName": "mcat_", "tableName": "%"}, {"schemaName": C, "tableName": "t4"},
]
FUNCTION_REQUESTS = [
    {"functionName": "upper"}, {"functionName": "to\\_%"}, {"functionName": "%"}, {"schemaName": "mcat%",
                                                                                     "functionName": "%pper"},
    {"functionName": "+"}, {"functionName": "java%"},
]


def every_rpc(conn: Any) -> dict[str, Any]:
    """Every metadata RPC's rows (with their column names), keyed by what was asked."""
    client, session = conn._client, conn._sessionHandle
    answers: dict[str, Any] = {}

    def ask(key: str, resp: Any) -> None:
        answers[key] = records(client, resp)

    ask("catalogs", client.GetCatalogs(T.TGetCatalogsReq(sessionHandle=session)))
    for pattern in SCHEMA_PATTERNS:
        ask(f"schemas {pattern}", client.GetSchemas(T.TGetSchemasReq(sessionHandle=session, schemaName=pattern)))
    for request in TABLE_REQUESTS:
        ask(f"tables {request}", client.GetTables(T.TGetTablesReq(sessionHandle=session, **request)))
    ask("table types", client.GetTableTypes(T.TGetTableTypesReq(sessionHandle=session)))
    for request in COLUMN_REQUESTS:
        ask(f"columns {request}", client.GetColumns(T.TGetColumnsReq(sessionHandle=session, **request)))
    for request in FUNCTION_REQUESTS:
        ask(f"functions {request}", client.GetFunctions(T.TGetFunctionsReq(sessionHandle=session, **request)))
    ask("primary keys", client.GetPrimaryKeys(T.TGetPrimaryKeysReq(sessionHandle=session, schemaName=A,
                                                                    tableName="t1")))
    ask("type info", client.GetTypeInfo(T.TGetTypeInfoReq(sessionHandle=session)))
    return answers


@pytest.mark.parametrize("user", ["alice", "bob"])
def test_every_rpc_answers_as_before(sessions: dict[str, Any], user: str) -> None:
    before, now = before_and_now(lambda: every_rpc(sessions[user]))
    assert list(now) == list(before)
    for key in before:
        assert now[key] == before[key], key


def _tables(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["TABLE_SCHEM"], r["TABLE_NAME"], r["TABLE_TYPE"], r["REMARKS"]) for r in rows]


def test_the_listings_show_every_kind_and_grants_apply(sessions: dict[str, Any]) -> None:
    """What the equality above is over: it would hold of two empty listings too."""
    alice, bob = every_rpc(sessions["alice"]), every_rpc(sessions["bob"])
    assert [r["TABLE_SCHEM"] for r in alice["schemas mcat%"]] == [A, B, C]
    everything = [
        (A, "mv", "MATERIALIZED VIEW", "counted"), (A, "p1", "TABLE", "spark own"),
        (A, "st_live", "STREAMING TABLE", ""), (A, "st_schema", "STREAMING TABLE", ""),
        (A, "t1", "TABLE", "first table"), (A, "t2", "TABLE", ""),
        (A, "v1", "VIEW", "a view"), (B, "t3", "TABLE", ""), (C, "t4", "TABLE", ""),
        (None, FILES, "VIEW", ""), (None, TEMP, "VIEW", ""), (None, "t1", "VIEW", ""),
    ]
    # GetTables lists names whatever the grants (as before); temporary views are the session's, in every schema
    assert _tables(alice["tables {'schemaName': 'mcat%'}"]) == everything
    assert _tables(bob["tables {'schemaName': 'mcat%'}"]) == everything
    assert _tables(alice["tables {'tableName': 'T1'}"]) == [(A, "t1", "TABLE", "first table"), (None, "t1", "VIEW", "")]

    def columns(rows: list[dict[str, Any]]) -> set[str]:
        return {f"{r['TABLE_SCHEM']}.{r['TABLE_NAME']}.{r['COLUMN_NAME']}" for r in rows}

    # GetColumns shows only what the user may read: bob, alice's t1 (granted), his own t4 and his temporary views
    seen_by_bob = columns(bob["columns {'schemaName': 'mcat%'}"])
    assert {c.rsplit(".", 1)[0] for c in seen_by_bob} == {f"{A}.t1", f"{C}.t4", f"None.{TEMP}", "None.t1",
                                                          f"None.{FILES}"}
    seen_by_alice = columns(alice["columns {'schemaName': 'mcat%'}"])
    assert {c.rsplit(".", 1)[0] for c in seen_by_alice} == {
        f"{A}.{t}" for t in ("mv", "p1", "st_live", "st_schema", "t1", "t2", "v1")} | {
        f"{B}.t3", f"None.{TEMP}", "None.t1", f"None.{FILES}"}   # not bob's t4
    spark_own = alice["columns {'schemaName': 'mcat_a', 'tableName': 'p1'}"]
    assert [(c["COLUMN_NAME"], c["TYPE_NAME"], c["REMARKS"], c["NULLABLE"]) for c in spark_own] == [
        ("c", "STRING", "chars", 1), ("n", "BIGINT", "", 1), ("codes", "ARRAY<STRING>", "", 1)]  # as Spark lists them
    temporary = alice[f"columns {{'tableName': '{TEMP}'}}"]
    assert [(c["COLUMN_NAME"], c["TYPE_NAME"], c["NULLABLE"]) for c in temporary] == [
        ("one", "INT", 0), ("label", "STRING", 0), ("d", "DATE", 1)]
    assert [c["COLUMN_NAME"] for c in alice[f"columns {{'tableName': '{FILES}'}}"]] == ["f_id", "f_label"]
    upper = alice["functions {'functionName': 'upper'}"]
    assert [(f["FUNCTION_SCHEM"], f["FUNCTION_NAME"]) for f in upper] == [(None, "upper")]
    assert "uppercase" in upper[0]["REMARKS"]
    assert alice["functions {'functionName': 'java%'}"] == []   # the reflection functions are gone from sessions


def test_no_spark_job_or_plan_while_they_answer(sessions: dict[str, Any], spark: Any) -> None:
    """Every RPC, as alice and bob, in one window: no job submitted and no QueryExecution made. A stream of the
    catalog (st_live) runs in the same JVM, so a window it disturbed is measured again; the old listing, measured
    the same way (one user's RPCs, one window), must show its jobs."""
    for conn in sessions.values():
        every_rpc(conn)   # Spark's functions are read once per process (no job either, but not measured here)
    with as_before():   # one user's RPCs through the old listing: minutes of Spark work on a loaded machine
        jobs, plans, answers = work_during(spark, lambda: [every_rpc(sessions["alice"])])
    assert jobs > 0 and plans > 0, "the counters saw no work of the listing that runs Spark jobs"
    windows = []
    for _ in range(10):
        jobs, plans, answers = work_during(spark, lambda: [every_rpc(conn) for conn in sessions.values()])
        windows.append((jobs, plans))
        if (jobs, plans) == (0, 0):
            break
    assert windows[-1] == (0, 0), f"Spark work while the metadata RPCs answered, per window: {windows}"
    alice = answers[0]
    # the window covered the Spark side of the listing too: Spark's own table and the temporary views
    assert (A, "p1", "TABLE", "spark own") in _tables(alice["tables {'schemaName': 'mcat%'}"])
    assert len(alice[f"columns {{'tableName': '{FILES}'}}"]) == 2
    assert len(alice["functions {'functionName': '%'}"]) > 400


def test_a_listing_asks_spark_once(sessions: dict[str, Any]) -> None:
    """Under load each py4j round trip waits behind Spark's tasks: GetTables over every schema and GetSchemas ask
    Spark's catalog once each, for its databases, the session's temporary views and its tables together (about nine
    round trips before engine/CatalogListing.java); counted through py4j's real client."""
    client, session = sessions["alice"]._client, sessions["alice"]._sessionHandle
    with RoundTrips().installed() as counter:
        for _ in range(2):   # the first compiles the helper and reads what is read once per process
            records(client, client.GetTables(T.TGetTablesReq(sessionHandle=session, schemaName="mcat%")))
        counter.take()
        tables = records(client, client.GetTables(T.TGetTablesReq(sessionHandle=session, schemaName="mcat%")))
        listing_trips, _ = counter.take()
        records(client, client.GetSchemas(T.TGetSchemasReq(sessionHandle=session, schemaName="mcat%")))
        schema_trips, _ = counter.take()
    assert (A, "p1", "TABLE", "spark own") in _tables(tables)   # Spark's own table was listed: Spark was asked
    assert listing_trips == 1
    assert schema_trips == 1


def test_information_schema_lists_as_before(sessions: dict[str, Any]) -> None:
    """information_schema reads the same listing (its query runs in Spark; its listing no longer does)."""
    cursor = sessions["bob"].cursor()

    def listed() -> list[tuple[Any, ...]]:
        cursor.execute("SELECT table_schema, table_name, table_type, comment FROM system.information_schema.tables "
                       f"WHERE table_schema IN ('{A}', '{B}', '{C}') ORDER BY 1, 2")
        tables = cursor.fetchall()
        cursor.execute("SELECT table_schema, table_name, column_name, full_data_type, is_nullable "
                       "FROM system.information_schema.columns "
                       f"WHERE table_schema IN ('{A}', '{B}', '{C}') ORDER BY 1, 2, ordinal_position")
        return tables + cursor.fetchall()

    before, now = before_and_now(listed)
    assert now == before
    assert [row[:2] for row in now if len(row) == 4] == [(A, "t1"), (C, "t4")]   # bob's rights


# -- beeline (the Hive JDBC driver's DatabaseMetaData) ---------------------------------------------------------

BEELINE_SCRIPT = f"""\
CREATE TEMPORARY VIEW {TEMP} AS SELECT 1 AS one, 'x' AS label;
SELECT 'tables' AS section;
!tables
SELECT 'columns' AS section;
!columns t1
SELECT 'schemas' AS section;
!metadata getSchemas
SELECT 'functions' AS section;
!metadata getFunctions "" "" "to\\_%"
SELECT 'end' AS section;
"""


def test_beeline_lists_as_before(beeline: Any, gateway: Any, objects: None, tmp_path: Path) -> None:
    script = tmp_path / "metadata.sql"
    script.write_text(BEELINE_SCRIPT)

    def run() -> dict[str, list[list[str]]]:
        done = beeline(gateway.port, "-f", str(script), user="alice")
        assert done.returncode == 0, done.stdout + done.stderr
        found = sections(clean(done.stdout))
        assert list(found) == ["tables", "columns", "schemas", "functions", "end"], done.stdout
        return {name: csv_rows(lines) for name, lines in found.items()}

    before, now = before_and_now(run)
    assert now == before
    header, *tables = now["tables"]
    at = {name: header.index(name) for name in ("TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE")}
    listed = {(row[at["TABLE_SCHEM"]], row[at["TABLE_NAME"]], row[at["TABLE_TYPE"]]) for row in tables}
    assert {(A, "p1", "TABLE"), (A, "st_live", "STREAMING TABLE"), (A, "mv", "MATERIALIZED VIEW"),
            ("NULL", TEMP, "VIEW")} <= listed   # beeline's csv2 prints a NULL schema so
    header, *columns = now["columns"]
    of_a = [row[header.index("COLUMN_NAME")] for row in columns if row[header.index("TABLE_SCHEM")] == A]
    assert of_a == ["id", "name", "amount", "ts", "tags", "m", "st"]
    assert len(now["functions"]) > 5


# -- the Databricks connector over HTTP --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dbx(start_gateway: Any, tmp_path_factory: pytest.TempPathFactory, objects: None) -> Iterator[dict[str, Any]]:
    sql = pytest.importorskip("databricks.sql")
    token_file = tmp_path_factory.mktemp("mcat_tokens") / "tokens"
    running = start_gateway({"server": {"http_port": 0}, "auth": {"token_file": str(token_file)}})
    connections = {}
    for user in ("alice", "bob"):
        token = create_token(token_file, user, "metadata tests")[1]
        connections[user] = sql.connect(
            server_hostname="127.0.0.1", http_path="/cliservice", access_token=token,
            _connection_uri=f"http://127.0.0.1:{running.server.http_port}/cliservice", enable_telemetry=False)
    yield connections
    for connection in connections.values():
        connection.close()


def connector_listings(connection: Any) -> dict[str, list[tuple[Any, ...]]]:
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE OR REPLACE TEMPORARY VIEW {TEMP} AS SELECT 1 AS one")
        found = {}
        for key, call in (
            ("catalogs", cursor.catalogs),
            ("schemas", lambda: cursor.schemas(schema_name="mcat%")),
            ("schemas all", cursor.schemas),
            ("tables", lambda: cursor.tables(schema_name="mcat%")),
            ("tables by type", lambda: cursor.tables(schema_name=A, table_types=["VIEW", "TABLE"])),
            ("tables by name", lambda: cursor.tables(table_name=TEMP)),
            ("columns", lambda: cursor.columns(schema_name="mcat%")),
            ("columns of one", lambda: cursor.columns(schema_name=A, table_name="t1", column_name="%a%")),
        ):
            call()
            found[key] = [tuple(row) for row in cursor.fetchall()]
        return found


@pytest.mark.parametrize("user", ["alice", "bob"])
def test_databricks_connector_lists_as_before(dbx: dict[str, Any], user: str) -> None:
    before, now = before_and_now(lambda: connector_listings(dbx[user]))
    assert now == before
    assert {row[0] for row in now["schemas"]} == {A, B, C}
    assert {row[2] for row in now["tables"]} >= {"t1", "p1", "st_live", "mv", TEMP}
    assert now["columns of one"] and all(row[2] == "t1" for row in now["columns of one"])


# -- the pieces --------------------------------------------------------------------------------------------------


def test_a_scala_sequence_crosses_whole_even_with_a_nul_in_a_name(spark: Any) -> None:
    from sluicegate.engine.session_catalog import _strings

    to_seq = JavaClass("org.apache.spark.api.python.PythonUtils", spark.sparkContext._gateway._gateway_client).toSeq
    for names in ([], ["one"], ["a", "b", "c,d"], ["with\x00nul", "plain", ""]):
        assert _strings(to_seq(names)) == names

