"""Catalogs through PyHive: three-part names in DDL, DML, queries, streaming tables, materialized views, DESCRIBE,
SHOW, DROP and GRANT; USE/SET CATALOG, SHOW CATALOGS, SHOW SCHEMAS IN, current_catalog(); and the information_schema
queries dbt-databricks sends (shared/reference/dbt-databricks-traces/uc_trace.txt), verbatim but for the schema."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import error_status

# dbt-databricks 1.12's relation listing, as the trace shows it
LIST_RELATIONS = """SELECT
  table_name,
  if(table_type IN ('EXTERNAL', 'MANAGED', 'MANAGED_SHALLOW_CLONE', 'EXTERNAL_SHALLOW_CLONE'), 'table',
     lower(table_type)) AS table_type,
  lower(data_source_format) AS file_format,
  table_owner,
  if(
    table_type IN (
      'EXTERNAL',
      'MANAGED',
      'MANAGED_SHALLOW_CLONE',
      'EXTERNAL_SHALLOW_CLONE'
    ),
    lower(table_type),
    NULL
  ) AS databricks_table_type
FROM `system`.`information_schema`.`tables`
WHERE table_catalog = 'main'
  AND table_schema = '{schema}'"""

ROW_FILTERS = """SELECT table_catalog, table_schema, table_name, filter_name, target_columns
FROM `main`.`information_schema`.`row_filters`
WHERE table_catalog = 'main' AND table_schema = '{schema}' AND table_name = 'm_incr'"""

NOT_NULL_COLUMNS = """SELECT column_name
FROM `main`.`information_schema`.`columns`
WHERE table_catalog = 'main'
  AND table_schema = '{schema}'
  AND table_name = 'm_incr'
  AND is_nullable = 'NO'"""

PRIMARY_KEY = """SELECT kcu.constraint_name, kcu.column_name
FROM `main`.information_schema.key_column_usage kcu
WHERE kcu.table_catalog = 'main'
  AND kcu.table_schema = '{schema}'
  AND kcu.table_name = 'm_incr'
  AND kcu.constraint_name = (
    SELECT constraint_name
    FROM `main`.information_schema.table_constraints
    WHERE table_catalog = 'main'
      AND table_schema = '{schema}'
      AND table_name = 'm_incr'
      AND constraint_type = 'PRIMARY KEY'
  )
ORDER BY kcu.ordinal_position"""

FOREIGN_KEYS = """SELECT
  kcu.constraint_name,
  kcu.column_name AS from_column,
  ukcu.table_catalog AS to_catalog,
  ukcu.table_schema AS to_schema,
  ukcu.table_name AS to_table,
  ukcu.column_name AS to_column
FROM `main`.information_schema.key_column_usage kcu
JOIN `main`.information_schema.referential_constraints rc
  ON kcu.constraint_catalog = rc.constraint_catalog
  AND kcu.constraint_schema = rc.constraint_schema
  AND kcu.constraint_name = rc.constraint_name
JOIN `main`.information_schema.key_column_usage ukcu
  ON rc.unique_constraint_catalog = ukcu.constraint_catalog
  AND rc.unique_constraint_schema = ukcu.constraint_schema
  AND rc.unique_constraint_name = ukcu.constraint_name
  AND kcu.ordinal_position = ukcu.ordinal_position
WHERE kcu.table_catalog = 'main'
  AND kcu.table_schema = '{schema}'
  AND kcu.table_name = 'm_incr'
  AND kcu.constraint_name IN (
    SELECT constraint_name
    FROM `main`.information_schema.table_constraints
    WHERE table_catalog = 'main'
      AND table_schema = '{schema}'
      AND table_name = 'm_incr'
      AND constraint_type = 'FOREIGN KEY'
  )
ORDER BY kcu.ordinal_position"""

COLUMN_MASKS = """SELECT column_name, mask_name, using_columns
FROM `system`.`information_schema`.`column_masks`
WHERE table_catalog = 'main' AND table_schema = '{schema}' AND table_name = 'm_incr'"""


def land_json(folder: Path, lines: list[str]) -> None:
    """A JSON-lines file that appears at once (written hidden, then renamed), as a file stream needs."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"part-{uuid.uuid4().hex}.json"
    (folder / f".{name}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    (folder / f".{name}").rename(folder / name)


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return cursor.fetchall()


@pytest.fixture()
def schema(connect: Any) -> str:
    return f"cat_{uuid.uuid4().hex[:8]}"


def test_dbt_databricks_statements_with_three_part_names(connect: Any, schema: str) -> None:
    cur = connect().cursor()
    assert ("default",) in rows(cur, "SHOW SCHEMAS IN `main`")
    cur.execute(f"create schema if not exists `main`.`{schema}`")
    assert (schema,) in rows(cur, "SHOW SCHEMAS IN `main`")
    assert rows(cur, LIST_RELATIONS.format(schema=schema)) == []
    assert rows(cur, ROW_FILTERS.format(schema=schema)) == []
    cur.execute(f"create or replace table `main`.`{schema}`.`m_table` using delta as select 1 as id, 'a' as name")
    cur.execute(f"create or replace table `main`.`{schema}`.`m_incr` (id BIGINT NOT NULL, name STRING) using delta")
    cur.execute(f"insert into `main`.`{schema}`.`m_incr` select id, name from `main`.`{schema}`.`m_table`")
    cur.execute(f"create or replace view `main`.`{schema}`.`m_view` as ( select id, name from "
                f"`main`.`{schema}`.`m_table` )")
    assert sorted(rows(cur, LIST_RELATIONS.format(schema=schema))) == [
        ("m_incr", "table", "delta", "tester", "managed"),
        ("m_table", "table", "delta", "tester", "managed"),
        ("m_view", "view", None, "tester", None),
    ]
    assert rows(cur, NOT_NULL_COLUMNS.format(schema=schema)) == [("id",)]
    for empty in (PRIMARY_KEY, FOREIGN_KEYS, COLUMN_MASKS, ROW_FILTERS):
        assert rows(cur, empty.format(schema=schema)) == []
    cur.execute(f"ALTER TABLE main.{schema}.m_incr SET TBLPROPERTIES ('dbt' = 'yes')")
    assert ("dbt", "yes") in rows(cur, f"SHOW TBLPROPERTIES `main`.`{schema}`.`m_incr`")
    described = rows(cur, f"describe extended `main`.`{schema}`.`m_incr`")
    assert described[0][:2] == ("id", "bigint")
    cur.execute(f"create or replace temporary view `m_incr__dbt_tmp` as select id + 1 as id, 'b' as name "
                f"from `main`.`{schema}`.`m_table`")
    cur.execute(f"merge into `main`.`{schema}`.`m_incr` as DBT_INTERNAL_DEST using `m_incr__dbt_tmp` as "
                "DBT_INTERNAL_SOURCE on DBT_INTERNAL_SOURCE.`id` <=> DBT_INTERNAL_DEST.`id` "
                "when matched then update set * when not matched then insert *")
    assert rows(cur, f"SELECT id, name FROM hive_metastore.{schema}.m_incr ORDER BY id") == [(1, "a"), (2, "b")]
    assert rows(cur, f"SELECT count(*) FROM spark_catalog.{schema}.m_view v JOIN main.{schema}.m_incr i "
                     "ON v.id = i.id") == [(1,)]
    assert rows(cur, f"SHOW TABLES IN main.{schema} LIKE 'm_t*'") == [(schema, "m_table", False)]
    cur.execute(f"DROP VIEW main.{schema}.m_view")
    cur.execute(f"ALTER TABLE main.{schema}.m_table RENAME TO main.{schema}.m_renamed")
    assert [r[0] for r in rows(cur, LIST_RELATIONS.format(schema=schema))] == ["m_incr", "m_renamed"]


def test_streaming_tables_and_materialized_views_by_three_part_names(connect: Any, schema: str, streams: Any,
                                                                    tmp_path: Path) -> None:
    cur = connect().cursor()
    cur.execute(f"CREATE SCHEMA main.{schema}")
    source = tmp_path / "clicks"
    land_json(source, ['{"id": 1, "name": "a"}', '{"id": 2, "name": "b"}'])
    cur.execute(f"CREATE STREAMING TABLE `main`.`{schema}`.`m_st` AS SELECT id, name FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'id BIGINT, name STRING')")
    streams.wait_for(schema, "m_st")
    for call in (f"TABLE(main.{schema}.m_st)", f"'hive_metastore.{schema}.m_st'"):
        assert rows(cur, f"SELECT count(*) > 0 FROM event_log({call})") == [(True,)], call
    status = error_status(cur, f"SELECT * FROM event_log('other.{schema}.m_st')")
    assert status.sqlState == "42704" and "[NO_SUCH_CATALOG_EXCEPTION]" in status.errorMessage
    cur.execute(f"CREATE MATERIALIZED VIEW main.{schema}.m_mv AS SELECT count(*) AS n FROM main.{schema}.m_st")
    assert rows(cur, f"SELECT n FROM main.{schema}.m_mv") == [(2,)]
    assert sorted(rows(cur, LIST_RELATIONS.format(schema=schema))) == [
        ("m_mv", "materialized_view", "delta", "tester", None),
        ("m_st", "streaming_table", "delta", "tester", None),
    ]
    assert rows(cur, f"SELECT table_type FROM main.information_schema.tables WHERE table_schema = '{schema}' "
                     "ORDER BY table_name") == [("MATERIALIZED_VIEW",), ("STREAMING_TABLE",)]
    assert rows(cur, f"SELECT column_name, ordinal_position, data_type FROM system.information_schema.columns "
                     f"WHERE table_schema = '{schema}' AND table_name = 'm_st'") == [
        ("id", 0, "BIGINT"), ("name", 1, "STRING")]
    assert rows(cur, f"SHOW STREAMING TABLES IN main.{schema}")[0][:2] == (schema, "m_st")
    cur.execute(f"REFRESH MATERIALIZED VIEW main.{schema}.m_mv")
    cur.execute(f"DROP MATERIALIZED VIEW main.{schema}.m_mv")
    cur.execute(f"DROP STREAMING TABLE hive_metastore.{schema}.m_st")
    assert rows(cur, LIST_RELATIONS.format(schema=schema)) == []


def test_catalog_statements(connect: Any, schema: str) -> None:
    cur = connect().cursor()
    assert rows(cur, "SHOW CATALOGS") == [("main",), ("system",)]
    assert rows(cur, "SHOW CATALOGS LIKE 'sys*'") == [("system",)]
    cur.execute("USE CATALOG hive_metastore")
    cur.execute("SET CATALOG main")
    assert rows(cur, "SELECT CURRENT_CATALOG(), CURRENT_SCHEMA()") == [("main", "default")]
    cur.execute("SELECT current_catalog() AS c WHERE current_catalog() = 'main'")
    assert cur.description[0][0] == "c" and cur.fetchall() == [("main",)]
    assert rows(cur, "SELECT catalog_name FROM system.information_schema.catalogs") == [("main",), ("system",)]
    cur.execute(f"CREATE SCHEMA {schema}")
    cur.execute(f"USE main.{schema}")
    assert rows(cur, "SELECT current_database()") == [(schema,)]
    assert rows(cur, f"SELECT catalog_name, schema_owner FROM information_schema.schemata "
                     f"WHERE schema_name = '{schema}'") == [("main", "tester")]
    status = error_status(cur, "USE CATALOG lakehouse")
    assert status.sqlState == "42704" and "[NO_SUCH_CATALOG_EXCEPTION]" in status.errorMessage
    assert "line 1, column 13" in status.errorMessage


def test_grants_by_three_part_names(connect: Any, schema: str) -> None:
    owner = connect(username="carol").cursor()
    reader = connect(username="dave").cursor()
    owner.execute(f"CREATE SCHEMA main.{schema}")
    owner.execute(f"CREATE TABLE main.{schema}.t USING delta AS SELECT 7 AS v")
    assert error_status(reader, f"SELECT v FROM main.{schema}.t").sqlState == "42501"
    owner.execute(f"GRANT SELECT ON TABLE main.{schema}.t TO dave")
    assert ("dave", "SELECT") in {(r[0], r[1]) for r in rows(owner, f"SHOW GRANTS ON TABLE main.{schema}.t")}
    assert rows(reader, f"SELECT v FROM `hive_metastore`.`{schema}`.`t`") == [(7,)]
    owner.execute(f"REVOKE SELECT ON TABLE spark_catalog.{schema}.t FROM dave")
    assert error_status(reader, f"SELECT v FROM {schema}.t").sqlState == "42501"


def test_jdbc_metadata_reports_the_catalog(connect: Any, schema: str) -> None:
    conn = connect()
    cur = conn.cursor()
    cur.execute(f"CREATE SCHEMA {schema}")
    cur.execute(f"CREATE TABLE {schema}.t (a INT) USING delta")
    from TCLIService import ttypes as T  # PyHive's generated client: the RPCs JDBC's DatabaseMetaData sends

    session = conn.sessionHandle

    def fetched(resp: Any) -> list[list[Any]]:
        result = conn.client.FetchResults(T.TFetchResultsReq(operationHandle=resp.operationHandle,
                                                             orientation=T.TFetchOrientation.FETCH_NEXT,
                                                             maxRows=1000))
        columns = result.results.columns
        values = [next(v for v in vars(c).values() if v is not None).values for c in columns]
        return [list(row) for row in zip(*values, strict=True)]

    assert fetched(conn.client.GetCatalogs(T.TGetCatalogsReq(sessionHandle=session))) == [["main"]]
    assert [schema, "main"] in fetched(conn.client.GetSchemas(T.TGetSchemasReq(sessionHandle=session,
                                                                               schemaName=schema)))
    tables = fetched(conn.client.GetTables(T.TGetTablesReq(sessionHandle=session, catalogName="hive_metastore",
                                                           schemaName=schema)))
    assert [row[:4] for row in tables] == [["main", schema, "t", "TABLE"]]


def test_spark_s_own_tables_by_three_part_names(connect: Any, schema: str) -> None:
    """A table only Spark's session knows (USING parquet): Spark runs the statement, without the catalog part."""
    cur = connect().cursor()
    cur.execute(f"CREATE SCHEMA main.{schema}")
    cur.execute(f"CREATE TABLE main.{schema}.p (a INT) USING parquet")
    cur.execute(f"INSERT INTO `main`.`{schema}`.`p` SELECT 1")
    assert rows(cur, f"SELECT a FROM hive_metastore.{schema}.p") == [(1,)]
    assert rows(cur, f"SELECT table_type FROM system.information_schema.tables WHERE table_schema = '{schema}'") == [
        ("MANAGED",)]
    cur.execute(f"DROP TABLE spark_catalog.{schema}.p")
    assert rows(cur, f"SHOW TABLES IN main.{schema}") == []


def test_the_catalog_name_is_configured_and_checked() -> None:
    from sluicegate.gateway.config import ConfigError, load_config

    assert load_config().catalog_name == "main"
    assert load_config(overrides={"catalog": {"name": "Lake"}}).catalog_name == "lake"
    for bad in ("system", "a/b", "", "1x"):
        with pytest.raises(ConfigError, match="not a valid catalog name"):
            load_config(overrides={"catalog": {"name": bad}})
