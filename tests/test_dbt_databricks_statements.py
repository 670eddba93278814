"""Every statement dbt-databricks 1.12 sends (traced against a stand-in server: the Unity Catalog path with catalog
`main`, the streaming-table lifecycle, and the cluster path with `hive_metastore`), replayed in order through
databricks-sql-connector on a real gateway's HTTP port. Each works, with the rows dbt reads from it; none needs the
fallback dbt has for `DESCRIBE ... AS JSON` (an error naming PARSE_SYNTAX_ERROR or UNSUPPORTED_FEATURE). Also the
statements Spark answered only for two-part names (SHOW COLUMNS, DESCRIBE SCHEMA). The schema is `dbx_trace` instead
of `analytics`, the landing folder a test folder instead of `/data/clicks`.
dbt-databricks itself runs in tests_dbt/databricks (./run test-dbt)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import fresh_database, land_named
from test_catalogs import LIST_RELATIONS

from sluicegate.gateway.auth.tokens import create_token

sql = pytest.importorskip("databricks.sql")

SCHEMA = "dbx_trace"
Rows = list[tuple[Any, ...]]


@dataclass(frozen=True)
class Step:
    sql: str
    check: Callable[[Rows], bool] | None = None   # on the rows the statement returned, as dbt reads them
    error: str | None = None                      # the error class it must fail with instead


@pytest.fixture(scope="module")
def trace_gateway(start_gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    tokens = tmp_path_factory.mktemp("dbx_trace_tokens") / "tokens"
    gateway = start_gateway({"server": {"http_port": 0}, "auth": {"token_file": str(tokens)}})
    with fresh_database(gateway, SCHEMA):
        token = create_token(tokens, "tester", "statement replay")[1]
        # the sessions' own schema, so an unqualified name and `main`.`dbx_trace`.x are one table (a session whose
        # schema is missing starts in `default`: gateway/session.py)
        connection = trace_connection(gateway, token)
        try:
            with connection.cursor() as cursor:
                cursor.execute(f"CREATE SCHEMA `main`.`{SCHEMA}`")
        finally:
            connection.close()
        yield gateway, token


@pytest.fixture(scope="module")
def landing(landing_root: Path) -> str:
    folder = landing_root / "dbx_trace_clicks"
    land_named(folder, "part-1.json", [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
    return str(folder)


def trace_connection(gateway: Any, token: str, catalog: str = "main",
                     http_path: str = "/sql/1.0/warehouses/trace", **options: Any) -> Any:
    """A Databricks connector session on the trace gateway, in `catalog` and the trace schema, as dbt opens one."""
    return sql.connect(server_hostname="127.0.0.1", http_path=http_path, access_token=token, catalog=catalog,
                       schema=SCHEMA, enable_telemetry=False,
                       _connection_uri=f"http://127.0.0.1:{gateway.server.http_port}/cliservice", **options)


def replay(gateway: Any, token: str, catalog: str, steps: list[Step], landing: str) -> None:
    """Run `steps` in one session opened as dbt opens it (its catalog and schema); every failure or unexpected
    answer is collected, so one run names all of them."""
    problems = []
    connection = trace_connection(gateway, token, catalog,
                                  session_configuration={"QUERY_TAGS": "@@dbt_databricks_version:1.12.8"})
    try:
        with connection.cursor() as cursor:
            for step in steps:
                text = step.sql.replace("analytics", SCHEMA).replace("/data/clicks", landing)
                try:
                    cursor.execute(text)
                    rows = [tuple(row) for row in cursor.fetchall()] if cursor.description else []
                except Exception as exc:  # noqa: BLE001 - each failing statement is reported with its error
                    if step.error is None or f"[{step.error}]" not in str(exc):
                        problems.append(f"{text.strip()[:90]!r}: {exc}")
                    continue
                if step.error is not None:
                    problems.append(f"{text.strip()[:90]!r}: ran, but should fail with {step.error}")
                if step.check is not None and not step.check(rows):
                    problems.append(f"{text.strip()[:90]!r}: unexpected rows {rows[:40]}")
    finally:
        connection.close()
    assert not problems, "\n".join(problems)


def _json_columns(rows: Rows) -> list[str]:
    return [column["name"] for column in json.loads(rows[0][0])["columns"]]


def _described(rows: Rows) -> dict[str, str]:
    return {row[0]: row[1] for row in rows}


RELATIONS = LIST_RELATIONS.format(schema="analytics")   # dbt-databricks' relation listing, as traced


def row_filters(table: str) -> Step:
    return Step(f"""SELECT table_catalog, table_schema, table_name, filter_name, target_columns
        FROM `main`.`information_schema`.`row_filters`
        WHERE table_catalog = 'main' AND table_schema = 'analytics' AND table_name = '{table}'""", lambda r: r == [])


ST_QUERY = ("select id, name from stream read_files('/data/clicks', format => 'json', "
            "schema => 'id BIGINT, name STRING')")
ST_TMP = ("create or replace temporary view `m_st__dbt_tmp` as\n"
          "    select id, name from read_files('/data/clicks', format => 'json', schema => 'id BIGINT, name STRING')")
INCREMENTAL_CONSTRAINTS = [
    Step("""SELECT column_name FROM `main`.`information_schema`.`columns`
        WHERE table_catalog = 'main' AND table_schema = 'analytics' AND table_name = 'm_incr' AND is_nullable = 'NO'""",
         lambda r: r == []),
    Step("""SELECT kcu.constraint_name, kcu.column_name
        FROM `main`.information_schema.key_column_usage kcu
        WHERE kcu.table_catalog = 'main' AND kcu.table_schema = 'analytics' AND kcu.table_name = 'm_incr'
          AND kcu.constraint_name = (
            SELECT constraint_name FROM `main`.information_schema.table_constraints
            WHERE table_catalog = 'main' AND table_schema = 'analytics' AND table_name = 'm_incr'
              AND constraint_type = 'PRIMARY KEY')
        ORDER BY kcu.ordinal_position""", lambda r: r == []),
    Step("""SELECT kcu.constraint_name, kcu.column_name AS from_column, ukcu.table_catalog AS to_catalog,
          ukcu.table_schema AS to_schema, ukcu.table_name AS to_table, ukcu.column_name AS to_column
        FROM `main`.information_schema.key_column_usage kcu
        JOIN `main`.information_schema.referential_constraints rc
          ON kcu.constraint_catalog = rc.constraint_catalog AND kcu.constraint_schema = rc.constraint_schema
          AND kcu.constraint_name = rc.constraint_name
        JOIN `main`.information_schema.key_column_usage ukcu
          ON rc.unique_constraint_catalog = ukcu.constraint_catalog
          AND rc.unique_constraint_schema = ukcu.constraint_schema
          AND rc.unique_constraint_name = ukcu.constraint_name AND kcu.ordinal_position = ukcu.ordinal_position
        WHERE kcu.table_catalog = 'main' AND kcu.table_schema = 'analytics' AND kcu.table_name = 'm_incr'
          AND kcu.constraint_name IN (
            SELECT constraint_name FROM `main`.information_schema.table_constraints
            WHERE table_catalog = 'main' AND table_schema = 'analytics' AND table_name = 'm_incr'
              AND constraint_type = 'FOREIGN KEY')
        ORDER BY kcu.ordinal_position""", lambda r: r == []),
    Step("""SELECT column_name, mask_name, using_columns FROM `system`.`information_schema`.`column_masks`
        WHERE table_catalog = 'main' AND table_schema = 'analytics' AND table_name = 'm_incr'""", lambda r: r == []),
]
MERGE = """-- back compat for old kwarg name
  merge
  into
      `{catalog}`.`analytics`.`m_incr` as DBT_INTERNAL_DEST
  using
      `m_incr__dbt_tmp` as DBT_INTERNAL_SOURCE
  on
            DBT_INTERNAL_SOURCE.`id` <=> DBT_INTERNAL_DEST.`id`
  when matched
      then update set
          *
  when not matched
      then insert
          *"""
INCR_TMP = """create or replace temporary view `m_incr__dbt_tmp` as
    select id, name from `{catalog}`.`analytics`.`m_table`
 where id > (select coalesce(max(id), 0) from `{catalog}`.`analytics`.`m_incr`)"""


def test_unity_catalog_path_runs_1_and_2_and_the_streaming_table_lifecycle(trace_gateway: tuple[Any, str],
                                                                           landing: str) -> None:
    gateway, token = trace_gateway
    run_1 = [
        Step("SHOW SCHEMAS IN `main`"),
        Step("create schema if not exists `main`.`analytics`"),
        Step(RELATIONS, lambda r: r == []),
        Step(ST_TMP),
        Step("DESCRIBE TABLE EXTENDED `m_st__dbt_tmp` AS JSON", lambda r: _json_columns(r) == ["id", "name"]),
        row_filters("m_st"),
        Step(f"CREATE STREAMING TABLE `main`.`analytics`.`m_st`\n(\n    `id` bigint,\n    `name` string\n)\n  AS "
             f"{ST_QUERY}"),
        row_filters("m_table"),
        Step("create or replace table `main`.`analytics`.`m_table`\n  using delta\n    as\n"
             "    select * from values (1, 'a'), (2, 'b'), (3, 'c') as t(id, name)"),
        row_filters("m_incr"),
        Step("create or replace table `main`.`analytics`.`m_incr`\n  using delta\n    as\n"
             "    select id, name from `main`.`analytics`.`m_table` where id < 3"),
        Step("create or replace view `main`.`analytics`.`m_view`\nas (\n  select id, name from "
             "`main`.`analytics`.`m_table`\n)"),
    ]
    run_2 = [
        Step("SHOW SCHEMAS IN `main`", lambda r: (SCHEMA,) in r),
        Step(RELATIONS, lambda r: sorted(row[:2] for row in r) == [
            ("m_incr", "table"), ("m_st", "streaming_table"), ("m_table", "table"), ("m_view", "view")]),
        Step("describe extended `main`.`analytics`.`m_st`",
             lambda r: _described(r)["Refresh Schedule"] == "MANUAL"
             and _described(r)["View Text"] == ST_QUERY.replace("/data/clicks", landing)),
        Step("SHOW TBLPROPERTIES `main`.`analytics`.`m_st`"),
        row_filters("m_st"),
        Step("refresh streaming table `main`.`analytics`.`m_st`"),
        Step("SELECT id, name FROM `main`.`analytics`.`m_st` ORDER BY id", lambda r: r == [(1, "a"), (2, "b")]),
        *INCREMENTAL_CONSTRAINTS,
        row_filters("m_incr"),
        Step("SHOW TBLPROPERTIES `main`.`analytics`.`m_incr`", lambda r: ("delta.minReaderVersion", "1") in r),
        Step("describe extended `main`.`analytics`.`m_incr`", lambda r: _described(r)["Type"] == "MANAGED"),
        Step(INCR_TMP.format(catalog="main")),
        Step("DESCRIBE TABLE EXTENDED `main`.`analytics`.`m_incr` AS JSON",
             lambda r: _json_columns(r) == ["id", "name"]),
        Step("DESCRIBE TABLE EXTENDED `m_incr__dbt_tmp` AS JSON", lambda r: _json_columns(r) == ["id", "name"]),
        Step(MERGE.format(catalog="main")),
        Step("SELECT id, name FROM `main`.`analytics`.`m_incr` ORDER BY id",
             lambda r: r == [(1, "a"), (2, "b"), (3, "c")]),
        Step("SHOW COLUMNS IN `main`.`analytics`.`m_incr`", lambda r: r == [("id",), ("name",)]),
        Step("DESCRIBE SCHEMA `main`.`analytics`", lambda r: ("Namespace Name", SCHEMA) in r),
        Step("describe extended `main`.`analytics`.`m_view`", lambda r: _described(r)["Type"] == "VIEW"),
        Step("create or replace view `main`.`analytics`.`m_view`\nas (\n  select id, name from "
             "`main`.`analytics`.`m_table`\n)"),
    ]
    lifecycle = [  # st_trace: a table property, then a schedule, then a partitioning that needs a full refresh
        Step(f"CREATE OR REFRESH STREAMING TABLE `main`.`analytics`.`m_st`\n  tblproperties "
             f"('pipelines.trigger.interval' = '1 second' \n  )\n  AS {ST_QUERY}"),
        Step("SHOW TBLPROPERTIES `main`.`analytics`.`m_st`",
             lambda r: ("pipelines.trigger.interval", "1 second") in r),
        Step("ALTER STREAMING TABLE `main`.`analytics`.`m_st`\n    ADD SCHEDULE CRON '0 0 * * * ? *' AT TIME ZONE "
             "'UTC'"),
        Step("describe extended `main`.`analytics`.`m_st`",
             lambda r: _described(r)["Refresh Schedule"] == "CRON '0 0 * * * ? *' AT TIME ZONE 'UTC'"),
        Step(ST_TMP),
        Step("DESCRIBE TABLE EXTENDED `m_st__dbt_tmp` AS JSON", lambda r: _json_columns(r) == ["id", "name"]),
        Step("drop table if exists `main`.`analytics`.`m_st`"),
        # A partitioned streaming table, as dbt-databricks writes `partition_by` (Delta's partition columns)
        Step(f"CREATE STREAMING TABLE `main`.`analytics`.`m_st`\n(\n    `id` bigint,\n    `name` string\n)\n"
             f"  PARTITIONED BY (name)\n  AS {ST_QUERY}"),
        Step("refresh streaming table `main`.`analytics`.`m_st`"),
        Step("SELECT id, name FROM `main`.`analytics`.`m_st` ORDER BY id", lambda r: r == [(1, "a"), (2, "b")]),
        Step("DESCRIBE DETAIL `main`.`analytics`.`m_st`", lambda r: "name" in str(r[0][7])),
    ]
    replay(gateway, token, "main", run_1 + run_2 + lifecycle, landing)


def test_cluster_path_with_hive_metastore(trace_gateway: tuple[Any, str], landing: str) -> None:
    """hms_trace: a cluster http_path makes dbt ask the runtime version first (an unknown answer turns its newer
    syntax off), then legacy DESCRIBE instead of AS JSON, and GetTables instead of information_schema."""
    gateway, token = trace_gateway
    steps = [
        Step("SET spark.databricks.clusterUsageTags.sparkVersion", lambda r: len(r) == 1),
        Step("SHOW SCHEMAS IN `hive_metastore`", lambda r: (SCHEMA,) in r),
        Step("create schema if not exists `hive_metastore`.`analytics`"),
        Step(ST_TMP),
        Step("DESCRIBE TABLE `m_st__dbt_tmp`", lambda r: [row[:2] for row in r] == [("id", "bigint"),
                                                                                    ("name", "string")]),
        Step("create or replace table `hive_metastore`.`analytics`.`m_table_hms`\n  using delta\n    as\n"
             "    select 1 as id, 'a' as name"),
        Step("create or replace table `hive_metastore`.`analytics`.`m_incr`\n  using delta\n    as\n"
             "    select id, name from `hive_metastore`.`analytics`.`m_table_hms` where id < 0"),
        Step("describe extended `hive_metastore`.`analytics`.`m_incr`", lambda r: _described(r)["Type"] == "MANAGED"),
        Step("SHOW TBLPROPERTIES `hive_metastore`.`analytics`.`m_incr`"),
        Step(INCR_TMP.format(catalog="hive_metastore").replace("m_table", "m_table_hms")),
        Step("DESCRIBE TABLE `hive_metastore`.`analytics`.`m_incr`",
             lambda r: [row[0] for row in r] == ["id", "name"]),
        Step("DESCRIBE TABLE `m_incr__dbt_tmp`", lambda r: [row[0] for row in r] == ["id", "name"]),
        Step(MERGE.format(catalog="hive_metastore")),
        Step("SELECT id, name FROM `hive_metastore`.`analytics`.`m_incr`", lambda r: r == [(1, "a")]),
        Step("create or replace view `hive_metastore`.`analytics`.`m_view_hms`\nas (\n  select id, name from "
             "`hive_metastore`.`analytics`.`m_table_hms`\n)"),
    ]
    replay(gateway, token, "hive_metastore", steps, landing)
    connection = trace_connection(gateway, token, "hive_metastore", http_path="/sql/protocolv1/o/0/trace")
    try:
        with connection.cursor() as cursor:  # how dbt lists relations on this path
            cursor.tables(catalog_name="hive_metastore", schema_name=SCHEMA)
            listed = {row.TABLE_NAME: row.TABLE_TYPE for row in cursor.fetchall()}
    finally:
        connection.close()
    assert listed["m_table_hms"] == "TABLE" and listed["m_view_hms"] == "VIEW"


def test_rowcount_after_dml_is_the_rows_modified(trace_gateway: tuple[Any, str]) -> None:
    """numModifiedRows, the connector's cursor.rowcount: rows inserted, updated, deleted, or all three of a MERGE;
    -1 for statements that modify no rows (a query, DDL)."""
    gateway, token = trace_gateway
    connection = trace_connection(gateway, token)
    try:
        with connection.cursor() as cursor:
            def rowcount(statement: str) -> int:
                cursor.execute(statement)
                return cursor.rowcount

            assert rowcount("CREATE OR REPLACE TABLE counted (id INT, name STRING)") == -1
            assert rowcount("INSERT INTO counted VALUES (1, 'a'), (2, 'b'), (3, 'c')") == 3
            assert rowcount("INSERT INTO counted SELECT id + 10, name FROM counted WHERE id > 1") == 2
            assert rowcount("UPDATE counted SET name = 'x' WHERE id >= 3") == 3
            assert rowcount("UPDATE counted SET name = 'y' WHERE id > 100") == 0
            assert rowcount("DELETE FROM counted WHERE id = 12") == 1
            merge = ("MERGE INTO counted t USING (SELECT * FROM VALUES (1, 'm'), (2, 'gone'), (7, 'new') "
                     "AS s(id, name)) s "
                     "ON t.id = s.id WHEN MATCHED AND s.name = 'gone' THEN DELETE WHEN MATCHED THEN UPDATE SET * "
                     "WHEN NOT MATCHED THEN INSERT *")
            assert rowcount(merge) == 3  # one updated, one deleted, one inserted
            assert rowcount("INSERT OVERWRITE counted SELECT 1, 'only'") == 1
            assert rowcount("SELECT * FROM counted") == -1
            assert [tuple(row) for row in cursor.fetchall()] == [(1, "only")]
    finally:
        connection.close()


def test_a_snapshot_merge_inserts_the_source_columns_named_unqualified(trace_gateway: tuple[Any, str]) -> None:
    """dbt-databricks 1.12.4's snapshot MERGE inserts `values (id, name, ...)` unqualified, though target and source
    both have those columns (its suite's basic snapshot tests failed with AMBIGUOUS_REFERENCE): as Databricks
    documents, a WHEN NOT MATCHED clause's values and condition read only the source; a lambda's variable stays its
    own; WHEN MATCHED still needs a qualified name where both sides have one."""
    gateway, token = trace_gateway
    connection = trace_connection(gateway, token)
    try:
        with connection.cursor() as cursor:
            cursor.execute("CREATE OR REPLACE TABLE snap (id INT, name STRING, dbt_scd_id STRING, "
                           "dbt_valid_to TIMESTAMP, tags ARRAY<INT>)")
            cursor.execute("INSERT INTO snap VALUES (1, 'a', 'k1', NULL, array(1)), (2, 'b', 'k2', NULL, array(2))")
            cursor.execute("CREATE OR REPLACE VIEW snap_staging AS SELECT * FROM VALUES "
                           "(1, 'a', 'k1', TIMESTAMP'2026-01-01 00:00:00', array(1), 'update'), "
                           "(3, 'c', 'k3', CAST(NULL AS TIMESTAMP), array(3, 4), 'insert'), "
                           "(4, 'd', 'k4', CAST(NULL AS TIMESTAMP), array(5), 'update') "
                           "AS s(id, name, dbt_scd_id, dbt_valid_to, tags, dbt_change_type)")
            cursor.execute(
                "merge into `snap` as DBT_INTERNAL_DEST\n"
                "using `snap_staging` as DBT_INTERNAL_SOURCE\n"
                "on DBT_INTERNAL_SOURCE.`dbt_scd_id` = DBT_INTERNAL_DEST.`dbt_scd_id`\n"
                "when matched and DBT_INTERNAL_DEST.`dbt_valid_to` is null\n"
                "  and DBT_INTERNAL_SOURCE.`dbt_change_type` in ('update', 'delete')\n"
                "  then update set `dbt_valid_to` = DBT_INTERNAL_SOURCE.`dbt_valid_to`\n"
                "when not matched and dbt_change_type = 'insert'\n"
                "  then insert (`id`, `name`, `dbt_scd_id`, `dbt_valid_to`, `tags`)\n"
                "  values (`id`, upper(name), `dbt_scd_id`, `dbt_valid_to`, transform(tags, id -> id * 10))")
            cursor.execute("SELECT id, name, dbt_valid_to IS NULL, tags FROM snap ORDER BY id")
            assert [(r[0], r[1], r[2], list(r[3])) for r in cursor.fetchall()] == [
                (1, "a", False, [1]), (2, "b", True, [2]), (3, "C", True, [30, 40])]
            with pytest.raises(Exception, match="AMBIGUOUS_REFERENCE"):
                cursor.execute("MERGE INTO snap t USING snap_staging s ON t.id = s.id "
                               "WHEN MATCHED THEN UPDATE SET name = name")
            # as the suite's snapshot run sends it (captured from the gateway's query history): the source a
            # temporary view that reads the snapshot table itself, the target by its three-part name
            cursor.execute("CREATE OR REPLACE TEMPORARY VIEW `snap__dbt_tmp` AS WITH snapshotted_data AS ("
                           "SELECT *, id AS dbt_unique_key FROM `main`.`dbx_trace`.`snap` WHERE dbt_valid_to IS NULL) "
                           "SELECT 'insert' AS dbt_change_type, id + 10 AS id, name, dbt_scd_id || 'n' AS dbt_scd_id, "
                           "dbt_valid_to, tags FROM snapshotted_data")
            cursor.execute(
                "merge into `main`.`dbx_trace`.`snap` as DBT_INTERNAL_DEST using `snap__dbt_tmp` as "
                "DBT_INTERNAL_SOURCE on DBT_INTERNAL_SOURCE.`dbt_scd_id` = DBT_INTERNAL_DEST.`dbt_scd_id` "
                "when matched and DBT_INTERNAL_DEST.`dbt_valid_to` is null "
                "and DBT_INTERNAL_SOURCE.`dbt_change_type` in ('update', 'delete') "
                "then update set `dbt_valid_to` = DBT_INTERNAL_SOURCE.`dbt_valid_to` "
                "when not matched and DBT_INTERNAL_SOURCE.`dbt_change_type` = 'insert' "
                "then insert (`id`, `name`, `dbt_scd_id`, `dbt_valid_to`, `tags`) "
                "values (`id`, `name`, `dbt_scd_id`, `dbt_valid_to`, `tags`)")
            cursor.execute("DROP VIEW IF EXISTS `snap__dbt_tmp`")
            cursor.execute("SELECT id, dbt_scd_id FROM snap WHERE id > 10 ORDER BY id")
            assert [tuple(r) for r in cursor.fetchall()] == [(12, "k2n"), (13, "k3n")]
    finally:
        connection.close()


def test_a_three_part_name_right_after_create_table(trace_gateway: tuple[Any, str]) -> None:
    """A table created by an unqualified name in the session's schema is the table its three-part name reads, in
    the same session and the next (the MERGE test above once created `snap` while the trace schema did not exist,
    so it landed in `default` and `main`.`dbx_trace`.`snap` was TABLE_OR_VIEW_NOT_FOUND); and one created by its
    three-part name is the unqualified name's."""
    gateway, token = trace_gateway
    for attempt in range(2):   # the second session: what the catalog kept, not the first session's state
        connection = trace_connection(gateway, token)
        try:
            with connection.cursor() as cursor:
                if attempt == 0:
                    cursor.execute("CREATE TABLE tp_plain (id INT)")
                    cursor.execute(f"INSERT INTO `main`.`{SCHEMA}`.`tp_plain` VALUES (1)")
                    cursor.execute(f"CREATE TABLE main.{SCHEMA}.tp_full AS SELECT 2 AS id")
                cursor.execute("SELECT current_catalog(), current_schema()")
                assert tuple(cursor.fetchall()[0]) == ("main", SCHEMA)
                cursor.execute(f"SELECT id FROM `main`.`{SCHEMA}`.`tp_plain` UNION ALL SELECT id FROM tp_full "
                               "ORDER BY id")
                assert [row[0] for row in cursor.fetchall()] == [1, 2]
        finally:
            connection.close()


def test_incremental_strategies_by_name_replace_where_and_replace_on(trace_gateway: tuple[Any, str],
                                                                    landing: str) -> None:
    """What dbt-databricks 1.12.4 sends on a SQL warehouse (it assumes the newest runtime) for insert_overwrite
    (`insert overwrite ... by name`; REPLACE ON once partitioned or clustered), replace_where and microbatch
    (`INSERT INTO t BY NAME REPLACE WHERE <predicate> TABLE <temp>`) and delete+insert (REPLACE ON the unique key):
    BY NAME matches columns by name, whatever the query's order; REPLACE deletes and adds in one commit."""
    gateway, token = trace_gateway
    t = "`main`.`analytics`.`strat`"
    rows = f"SELECT id, day, msg FROM {t} ORDER BY id"
    replay(gateway, token, "main", [
        Step("create schema if not exists `main`.`analytics`"),
        Step(f"create or replace table {t} (id int, day int, msg string) using delta"),
        Step(f"insert into {t} values (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c')"),
        Step("create or replace table `main`.`analytics`.`strat__tmp` using delta as "
             "select 'x' as msg, 2 as day, 4 as id union all select 'y', 2, 3"),
        # replace_where: the rows of day 2 are the temp table's
        Step(f"INSERT INTO {t} BY NAME\n REPLACE WHERE day = 2\n TABLE `main`.`analytics`.`strat__tmp`"),
        Step(rows, lambda r: r == [(1, 1, "a"), (2, 1, "b"), (3, 2, "y"), (4, 2, "x")]),
        Step(f"INSERT INTO {t} BY NAME REPLACE WHERE day = 1 TABLE `main`.`analytics`.`strat__tmp`",
             error="DELTA_REPLACE_WHERE_MISMATCH"),
        Step(f"INSERT INTO {t} REPLACE WHERE day IN (1, 2) SELECT 9, 1, 'z'"),
        Step(rows, lambda r: r == [(9, 1, "z")]),
        # delete+insert: the rows whose key the query has are replaced, the others stay
        Step(f"insert into {t} values (1, 1, 'a'), (3, 2, 'c')"),
        Step(f" insert into table {t} as target\nreplace on (target.`id` <=> temp.`id`)\n"
             "(select `id`, `day`, `msg`\n   from `main`.`analytics`.`strat__tmp` ) as temp"),
        Step(rows, lambda r: r == [(1, 1, "a"), (3, 2, "y"), (4, 2, "x"), (9, 1, "z")]),
        # insert_overwrite of a partitioned model: whole partitions replaced
        Step(f"insert into table {t} AS t\n replace on (t.`day` <=> s.`day`)\n"
             "(select `id`, `day`, `msg` from `main`.`analytics`.`strat__tmp`) AS s"),
        Step(rows, lambda r: r == [(1, 1, "a"), (3, 2, "y"), (4, 2, "x"), (9, 1, "z")]),
        # insert_overwrite without partitions: everything, matched by name
        Step(f"insert overwrite table {t} by name select * from `main`.`analytics`.`strat__tmp`"),
        Step(rows, lambda r: r == [(3, 2, "y"), (4, 2, "x")]),
        # a CTAS of literals makes nullable columns (as Delta does): the insert_overwrite of a model that drops
        # a column sends `NULL as msg`
        Step("create or replace table `main`.`analytics`.`strat_ctas` using delta as select 1 as id, 'hello' as msg"),
        Step("insert into table `main`.`analytics`.`strat_ctas` AS t replace on (t.`id` <=> s.`id`) "
             "(select `id`, NULL as `msg` from `main`.`analytics`.`strat__tmp`) AS s"),
        Step("SELECT id, msg FROM `main`.`analytics`.`strat_ctas` ORDER BY id",
             lambda r: r == [(1, "hello"), (3, None), (4, None)]),
        Step(f"INSERT INTO {t} REPLACE USING (id) SELECT 1, 1, 'a'", error="INVALID_STATEMENT"),
        Step(f"INSERT INTO {t} REPLACE WHERE id IN (SELECT id FROM {t}) SELECT 1, 1, 'a'",
             error="INVALID_STATEMENT"),
    ], landing)


def test_persist_docs_view_renames_and_materialized_view_listing(trace_gateway: tuple[Any, str],
                                                                 landing: str) -> None:
    """Issue 27's gaps 1, 2 and 7, as dbt-databricks sends them: a column's docs with COMMENT ON COLUMN, a view
    moved aside with ALTER VIEW ... RENAME TO, and `is_materialized` read as the strings dbt compares with."""
    gateway, token = trace_gateway
    replay(gateway, token, "main", [
        Step("create schema if not exists `main`.`analytics`"),
        Step("create or replace table `main`.`analytics`.`docs_t`\n  using delta\n    as\n"
             "    select 1 as id, 'a' as name"),
        Step("COMMENT ON COLUMN `main`.`analytics`.`docs_t`.`id` IS 'the key'"),
        Step("describe extended `main`.`analytics`.`docs_t`", lambda r: ("id", "int", "the key") in r),
        Step("create or replace view `main`.`analytics`.`docs_v`\nas (\n  select id from "
             "`main`.`analytics`.`docs_t`\n)"),
        Step("ALTER VIEW `main`.`analytics`.`docs_v` RENAME TO `main`.`analytics`.`docs_v__dbt_backup`"),
        Step("SELECT id FROM `main`.`analytics`.`docs_v__dbt_backup`", lambda r: r == [(1,)]),
        Step("ALTER VIEW `main`.`analytics`.`docs_t` RENAME TO `main`.`analytics`.`docs_t2`",
             error="EXPECT_VIEW_NOT_TABLE.USE_ALTER_TABLE"),
        Step("create materialized view `main`.`analytics`.`docs_mv` as select count(*) as n from "
             "`main`.`analytics`.`docs_t`"),
        Step("SELECT table_name, is_materialized FROM `system`.`information_schema`.`views` "
             "WHERE table_schema = 'analytics' AND table_name LIKE 'docs%' ORDER BY table_name",
             lambda r: r == [("docs_mv", "TRUE"), ("docs_v__dbt_backup", "FALSE")]),
    ], landing)


def test_a_seed_with_dates_timestamps_and_decimals(trace_gateway: tuple[Any, str], landing: str) -> None:
    """Issue 27's gap 8: dbt-databricks loads a seed with `insert overwrite ... values (%s, ...)`, its values
    inlined by the connector as quoted text; Databricks casts the literals to the columns' types."""
    gateway, token = trace_gateway
    replay(gateway, token, "main", [
        Step("create schema if not exists `main`.`analytics`"),
        Step("create or replace table `main`.`analytics`.`seed_typed` (`id` bigint, `day` date, `at` timestamp, "
             "`price` decimal(10,2)) using delta"),
        Step("insert overwrite `main`.`analytics`.`seed_typed` values ('1', '2021-01-02', '2021-01-02 03:04:05', "
             "'9.99'), ('2', '2021-01-03', NULL, '10')"),
        Step("SELECT id, CAST(day AS STRING), CAST(at AS STRING), CAST(price AS STRING) "
             "FROM `main`.`analytics`.`seed_typed` ORDER BY id",
             lambda r: r == [(1, "2021-01-02", "2021-01-02 03:04:05", "9.99"), (2, "2021-01-03", None, "10.00")]),
        Step("insert into `main`.`analytics`.`seed_typed` values ('3', 'yesterday', NULL, NULL)",
             error="CAST_INVALID_INPUT"),
    ], landing)


def test_a_materialized_view_with_a_contract_column_list(trace_gateway: tuple[Any, str], landing: str) -> None:
    """Issue 27's gap 3: dbt-databricks writes a model contract's columns, then its key constraints, into the
    materialized view's column list; the keys are informational (as on Databricks), not columns."""
    gateway, token = trace_gateway
    replay(gateway, token, "main", [
        Step("create schema if not exists `main`.`analytics`"),
        Step("create or replace table `main`.`analytics`.`contract_src` using delta as select 1 as id, 10 as value"),
        Step("create materialized view `main`.`analytics`.`contract_mv` (`id` bigint NOT NULL COMMENT 'the key', "
             "`value` bigint, PRIMARY KEY (id)) as select cast(id as bigint) as id, cast(value as bigint) as value "
             "from `main`.`analytics`.`contract_src`"),
        Step("SELECT id, value FROM `main`.`analytics`.`contract_mv`", lambda r: r == [(1, 10)]),
        Step("describe extended `main`.`analytics`.`contract_mv`", lambda r: ("id", "bigint", "the key") in r),
        Step("SELECT column_name, is_nullable FROM `main`.`information_schema`.`columns` WHERE table_catalog = 'main' "
             "AND table_schema = 'analytics' AND table_name = 'contract_mv' ORDER BY ordinal_position",
             lambda r: r == [("id", "NO"), ("value", "YES")]),   # gap 4 for materialized views: NOT NULL is kept
    ], landing)


def test_a_streaming_table_keeps_not_null_and_its_create_waits_for_the_first_update(
        trace_gateway: tuple[Any, str], landing: str, landing_root: Path) -> None:
    """Issue 27's gaps 4 and 5, as dbt-databricks writes a streaming table with a contract: NOT NULL is kept
    (`information_schema.columns.is_nullable` is 'NO', as dbt's constraint check reads it) and enforced; the CREATE
    returns with the first update in the table, so dbt's next query sees the rows; a first update that fails makes
    the CREATE fail with Delta's error, the table left FAILED."""
    gateway, token = trace_gateway
    nulls = landing_root / "dbx_trace_null_ids"
    land_named(nulls, "part-1.json", [{"id": 1, "name": "a"}, {"id": None, "name": "b"}])
    columns = "(\n    `id` bigint NOT NULL COMMENT 'the key',\n    `name` string\n)"
    replay(gateway, token, "main", [
        Step("create schema if not exists `main`.`analytics`"),
        Step(f"CREATE STREAMING TABLE `main`.`analytics`.`st_nn`\n{columns}\n  AS {ST_QUERY}"),
        Step("SELECT count(*) FROM `main`.`analytics`.`st_nn`", lambda r: r == [(2,)]),
        Step("SELECT column_name, is_nullable FROM `main`.`information_schema`.`columns` WHERE table_catalog = 'main' "
             "AND table_schema = 'analytics' AND table_name = 'st_nn' ORDER BY ordinal_position",
             lambda r: r == [("id", "NO"), ("name", "YES")]),
        Step("describe extended `main`.`analytics`.`st_nn`", lambda r: ("id", "bigint", "the key") in r),
        Step(f"CREATE OR REFRESH STREAMING TABLE `main`.`analytics`.`st_nn`\n{columns}\n  AS {ST_QUERY}"),
        Step("SELECT id, name FROM `main`.`analytics`.`st_nn` ORDER BY id", lambda r: r == [(1, "a"), (2, "b")]),
        Step(f"CREATE STREAMING TABLE `main`.`analytics`.`st_nn_bad`\n{columns}\n  AS "
             f"{ST_QUERY.replace('/data/clicks', str(nulls))}", error="DELTA_NOT_NULL_CONSTRAINT_VIOLATED"),
        Step("SHOW STREAMING TABLES IN analytics LIKE 'st_nn_bad'", lambda r: r[0][2] == "FAILED"),
        Step("SELECT count(*) FROM `main`.`analytics`.`st_nn_bad`", lambda r: r == [(0,)]),
    ], landing)


def test_a_views_tblproperties_are_kept(trace_gateway: tuple[Any, str]) -> None:
    """dbt-databricks creates a view with `tblproperties` config as `create or replace view v COMMENT ...
    TBLPROPERTIES (...) as (...)` and reads them back with SHOW TBLPROPERTIES (its suite's
    tblproperties/test_set_tblproperties.py found none: the clause was dropped). As on Databricks, they are kept with
    the view, and a CREATE OR REPLACE without them leaves none."""
    gateway, token = trace_gateway
    connection = trace_connection(gateway, token)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"create or replace view `main`.`{SCHEMA}`.`propped` comment 'a view' "
                           "tblproperties ('tblproperties_to_view' = 'true', 'owner_team' = 'x') as (select 1 as id)")
            cursor.execute(f"show tblproperties `main`.`{SCHEMA}`.`propped`")
            assert [tuple(row) for row in cursor.fetchall()] == [("owner_team", "x"), ("tblproperties_to_view", "true")]
            cursor.execute(f"show tblproperties {SCHEMA}.propped ('owner_team')")
            assert [tuple(row) for row in cursor.fetchall()] == [("owner_team", "x")]
            # dbt-databricks' alter path for a changed tblproperties config (and its suite's views files)
            cursor.execute(f"alter view `main`.`{SCHEMA}`.`propped` set tblproperties ('owner_team' = 'y', 'k' = 'v')")
            cursor.execute(f"alter view {SCHEMA}.propped unset tblproperties if exists ('tblproperties_to_view', 'z')")
            cursor.execute(f"show tblproperties {SCHEMA}.propped")
            assert [tuple(row) for row in cursor.fetchall()] == [("k", "v"), ("owner_team", "y")]
            cursor.execute(f"create or replace view {SCHEMA}.propped as select 2 as id")
            cursor.execute(f"show tblproperties {SCHEMA}.propped")
            assert cursor.fetchall() == []
            cursor.execute(f"create or replace table {SCHEMA}.propped_t (id int)")
            with pytest.raises(Exception, match=r"EXPECT_VIEW_NOT_TABLE.USE_ALTER_TABLE"):
                cursor.execute(f"alter view {SCHEMA}.propped_t set tblproperties ('k' = 'v')")
    finally:
        connection.close()
