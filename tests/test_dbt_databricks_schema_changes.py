"""The statements dbt-databricks' own suite sent that the gateway refused (issue 27), through
databricks-sql-connector over the HTTP port as dbt sends them, and through PyHive where Spark has the statement too:
`ALTER TABLE t CLUSTER BY (...) | NONE | AUTO` (liquid_clustered_by), `MERGE WITH SCHEMA EVOLUTION`
(merge_with_schema_evolution), `ALTER TABLE t DROP COLUMNS (...)` and `ALTER TABLE t ALTER COLUMN c TYPE bigint`
(on_schema_change: sync_all_columns), a DELETE correlating on the target's full name (delete+insert on a composite
key), and `select operation from (describe history t)` (its liquid clustering tests). Each with the rows and the
metadata dbt reads afterwards, and the errors Delta gives for what it refuses."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pyhive_helpers import error_status, fresh_database

from sluicegate.gateway.auth.tokens import create_token

sql = pytest.importorskip("databricks.sql")

SCHEMA = "dbx_schema_changes"
Run = Callable[..., list[tuple[Any, ...]]]


@pytest.fixture(scope="module")
def dbx(start_gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Run]]:
    """The gateway and a function running statements on one Databricks connector session (catalog `main`, schema
    SCHEMA), returning a statement's rows."""
    tokens = tmp_path_factory.mktemp("dbx_schema_tokens") / "tokens"
    gateway = start_gateway({"server": {"http_port": 0}, "auth": {"token_file": str(tokens)}})
    token = create_token(tokens, "tester", "schema changes")[1]
    with fresh_database(gateway, SCHEMA):
        connection = sql.connect(server_hostname="127.0.0.1", http_path="/sql/1.0/warehouses/test",
                                 access_token=token, catalog="main", schema=SCHEMA, enable_telemetry=False,
                                 _connection_uri=f"http://127.0.0.1:{gateway.server.http_port}/cliservice")
        cursor = connection.cursor()

        def run(*statements: str) -> list[tuple[Any, ...]]:
            rows: list[tuple[Any, ...]] = []
            for statement in statements:
                cursor.execute(statement)
                rows = [tuple(row) for row in cursor.fetchall()] if cursor.description else []
            return rows

        run(f"CREATE SCHEMA IF NOT EXISTS main.{SCHEMA}")
        try:
            yield gateway, run
        finally:
            cursor.close()
            connection.close()


@pytest.fixture()
def hive(dbx: tuple[Any, Run]) -> Iterator[Any]:
    """A PyHive cursor on the same gateway's binary port, in SCHEMA."""
    from pyhive import hive as pyhive

    gateway, _ = dbx
    connection = pyhive.connect(gateway.host, gateway.port, username="tester")
    cursor = connection.cursor()
    cursor.execute(f"USE {SCHEMA}")
    yield cursor
    connection.close()


def _fails(run: Run, statement: str, error_class: str) -> str:
    with pytest.raises(Exception) as raised:
        run(statement)
    assert f"[{error_class}]" in str(raised.value) or error_class in str(raised.value), str(raised.value)
    return str(raised.value)


def _properties(run: Run, table: str) -> dict[str, str]:
    return dict(run(f"SHOW TBLPROPERTIES {table}"))


def _columns(run: Run, table: str) -> list[str]:
    return [row[0] for row in run(f"SHOW COLUMNS IN {table}")]


def _history(run: Run, table: str) -> list[str]:
    """The operations of the table's commits, newest first."""
    return [row[4] for row in run(f"DESCRIBE HISTORY {table}")]


def test_alter_table_cluster_by_sets_the_columns_dbt_reads_and_optimize_uses(dbx: tuple[Any, Run]) -> None:
    _, run = dbx
    table = f"`main`.`{SCHEMA}`.`clustered`"
    run(f"CREATE OR REPLACE TABLE {table} USING delta AS SELECT CAST(id AS BIGINT) AS id, "
        "CAST(id % 3 AS STRING) AS msg FROM range(6)", f"INSERT INTO {table} VALUES (7, 'x')")
    assert "clusteringColumns" not in _properties(run, table)
    versions = len(_history(run, table))

    run(f"ALTER TABLE {table} CLUSTER BY (id)")
    assert _properties(run, table)["clusteringColumns"] == '[["id"]]'   # Databricks' form, which dbt parses
    assert len(_history(run, table)) == versions                      # no file changed: no commit
    (detail,) = run(f"DESCRIBE DETAIL {table}")
    assert list(detail[8]) == ["id"]                                  # clusteringColumns, an array
    (_, metrics), = run(f"OPTIMIZE {table}")
    assert metrics["numFilesAdded"] == 1 and metrics["numFilesRemoved"] >= 2
    parameters = json.loads(run(f"DESCRIBE HISTORY {table}")[0][5])   # OPTIMIZE's: z-ordered by the columns
    assert json.loads(parameters["zOrderBy"]) == ["id"] and json.loads(parameters["clusterBy"]) == ["id"]

    run(f"ALTER TABLE {table} CLUSTER BY (msg, ID)")                  # the table's spelling is kept
    assert _properties(run, table)["clusteringColumns"] == '[["msg"],["id"]]'
    run(f"ALTER TABLE {table} CLUSTER BY AUTO")
    assert _properties(run, table)["clusterByAuto"] == "true"
    assert _properties(run, table)["clusteringColumns"] == '[["msg"],["id"]]'
    run(f"ALTER TABLE {table} CLUSTER BY NONE")
    properties = _properties(run, table)
    assert properties["clusteringColumns"] == "[]" and "clusterByAuto" not in properties
    assert sorted(run(f"SELECT id FROM {table}")) == [(0,), (1,), (2,), (3,), (4,), (5,), (7,)]
    # a CREATE's CLUSTER BY AUTO sets the same (dbt-databricks' auto_liquid_cluster; its suite reads it back)
    auto = f"`main`.`{SCHEMA}`.`clustered_auto`"
    run(f"create or replace table {auto} using delta cluster by auto as select 1 as id, 'Joe' as name")
    properties = _properties(run, auto)
    assert properties["clusterByAuto"] == "true" and properties["clusteringColumns"] == "[]"


def test_alter_materialized_view_and_streaming_table_cluster_by(dbx: tuple[Any, Run]) -> None:
    """Databricks changes a materialized view's or streaming table's clustering with its own ALTER (dbt-databricks'
    `apply_liquid_clustered_cols` writes `ALTER <the relation's type> ... CLUSTER BY`), not ALTER TABLE: the columns
    as for a table, kept by a refresh, used by OPTIMIZE; each form refuses the other kinds, naming the right one."""
    _, run = dbx
    source, mv, st = (f"`main`.`{SCHEMA}`.`{name}`" for name in ("mv_src", "clustered_mv", "clustered_st"))
    run(f"CREATE OR REPLACE TABLE {source} (id BIGINT, msg STRING, m MAP<STRING, INT>)",
        f"INSERT INTO {source} VALUES (1, 'a', map('k', 1))", f"INSERT INTO {source} VALUES (2, 'b', map('k', 2))",
        f"CREATE OR REPLACE MATERIALIZED VIEW {mv} AS SELECT id, msg, m FROM {source}",
        f"CREATE STREAMING TABLE {st} (id BIGINT, m MAP<STRING, INT>)")

    run(f"ALTER MATERIALIZED VIEW {mv} CLUSTER BY (msg, ID)")
    assert _properties(run, mv)["clusteringColumns"] == '[["msg"],["id"]]'
    run(f"INSERT INTO {source} VALUES (3, 'c', map('k', 3))", f"REFRESH MATERIALIZED VIEW {mv}")
    assert _properties(run, mv)["clusteringColumns"] == '[["msg"],["id"]]'   # the refresh keeps it
    run(f"OPTIMIZE {mv}")
    parameters = json.loads(run(f"DESCRIBE HISTORY {mv}")[0][5])           # OPTIMIZE's: z-ordered by them
    assert json.loads(parameters["zOrderBy"]) == ["msg", "id"]
    assert sorted(run(f"SELECT id, msg FROM {mv}")) == [(1, "a"), (2, "b"), (3, "c")]
    run(f"ALTER MATERIALIZED VIEW {mv} CLUSTER BY AUTO")
    assert _properties(run, mv)["clusterByAuto"] == "true"
    run(f"ALTER MATERIALIZED VIEW {mv} CLUSTER BY NONE")
    assert _properties(run, mv)["clusteringColumns"] == "[]" and "clusterByAuto" not in _properties(run, mv)

    run(f"alter streaming table {st} cluster by (id)")
    assert _properties(run, st)["clusteringColumns"] == '[["id"]]'
    (detail,) = run(f"DESCRIBE DETAIL {st}")
    assert list(detail[8]) == ["id"]
    _fails(run, f"ALTER STREAMING TABLE {st} CLUSTER BY (m)", "DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED")
    _fails(run, f"ALTER STREAMING TABLE {st} CLUSTER BY (nope)", "UNRESOLVED_COLUMN")

    # each form alters its own kind only, as on Databricks
    assert "ALTER MATERIALIZED VIEW" in _fails(run, f"ALTER TABLE {mv} CLUSTER BY (id)", "EXPECT_TABLE_NOT_VIEW")
    assert "ALTER TABLE" in _fails(run, f"ALTER MATERIALIZED VIEW {source} CLUSTER BY (id)",
                                   "EXPECT_MATERIALIZED_VIEW")
    _fails(run, f"ALTER STREAMING TABLE {mv} CLUSTER BY (id)", "EXPECT_STREAMING_TABLE")
    _fails(run, f"ALTER MATERIALIZED VIEW {st} CLUSTER BY (id)", "EXPECT_MATERIALIZED_VIEW")
    _fails(run, f"ALTER MATERIALIZED VIEW `main`.`{SCHEMA}`.`nothing` CLUSTER BY (id)", "TABLE_OR_VIEW_NOT_FOUND")
    run(f"CREATE OR REPLACE MATERIALIZED VIEW main.{SCHEMA}.parted_mv PARTITIONED BY (msg) AS "
        f"SELECT id, msg FROM {source}")
    _fails(run, f"ALTER MATERIALIZED VIEW main.{SCHEMA}.parted_mv CLUSTER BY (id)",
           "DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED")
    assert _properties(run, st)["clusteringColumns"] == '[["id"]]'
    run(f"DROP MATERIALIZED VIEW {mv}", f"DROP MATERIALIZED VIEW main.{SCHEMA}.parted_mv", f"DROP TABLE {st}")


def test_cluster_by_refuses_what_delta_refuses(dbx: tuple[Any, Run]) -> None:
    _, run = dbx
    run(f"CREATE OR REPLACE TABLE main.{SCHEMA}.parted (id BIGINT, day STRING, m MAP<STRING, INT>, a BIGINT, "
        "b BIGINT, c BIGINT) PARTITIONED BY (day)",
        f"CREATE OR REPLACE TABLE main.{SCHEMA}.plain (id BIGINT, m MAP<STRING, INT>, a BIGINT, b BIGINT, "
        "c BIGINT, d BIGINT)")
    _fails(run, f"ALTER TABLE main.{SCHEMA}.parted CLUSTER BY (id)",
           "DELTA_ALTER_TABLE_CLUSTER_BY_ON_PARTITIONED_TABLE_NOT_ALLOWED")
    _fails(run, f"ALTER TABLE main.{SCHEMA}.plain CLUSTER BY (id, a, b, c, d)", "DELTA_CLUSTER_BY_INVALID_NUM_COLUMNS")
    _fails(run, f"ALTER TABLE main.{SCHEMA}.plain CLUSTER BY (m)", "DELTA_CLUSTERING_COLUMNS_DATATYPE_NOT_SUPPORTED")
    _fails(run, f"ALTER TABLE main.{SCHEMA}.plain CLUSTER BY (nope)", "UNRESOLVED_COLUMN")
    _fails(run, f"ALTER TABLE main.{SCHEMA}.nothing CLUSTER BY (id)", "TABLE_OR_VIEW_NOT_FOUND")
    assert "clusteringColumns" not in _properties(run, f"main.{SCHEMA}.plain")


def test_merge_with_schema_evolution_adds_the_source_columns(dbx: tuple[Any, Run]) -> None:
    """dbt-databricks' TestMergeSchemaEvolution, as its merge macro writes it."""
    _, run = dbx
    target = f"`main`.`{SCHEMA}`.`evolving`"
    run(f"CREATE OR REPLACE TABLE {target} USING delta AS SELECT 1 AS id, 'Vasya' AS first, 'Pupkin' AS second "
        "UNION ALL SELECT 2, 'Paul', 'Atreides' UNION ALL SELECT 3, 'Dunkan', 'Aidaho'",
        "CREATE OR REPLACE TEMPORARY VIEW evolving__dbt_tmp AS SELECT 1 AS id, 'Jessica' AS first, "
        "'Atreides' AS second, 1 AS V UNION ALL SELECT 3, 'Dunkan', 'Aidaho', 2")
    versions = len(_history(run, target))
    run(f"merge\n        with schema evolution\n    into\n        {target} as DBT_INTERNAL_DEST\n    using\n"
        "        evolving__dbt_tmp as DBT_INTERNAL_SOURCE\n    on\n        DBT_INTERNAL_SOURCE.`id` <=> "
        "DBT_INTERNAL_DEST.`id`\n    when matched\n        then update set\n            *\n    when not matched\n"
        "        then insert\n            *")
    assert _columns(run, target) == ["id", "first", "second", "V"]
    assert sorted(run(f"SELECT * FROM {target}")) == [
        (1, "Jessica", "Atreides", 1), (2, "Paul", "Atreides", None), (3, "Dunkan", "Aidaho", 2)]
    assert _history(run, target)[0] == "MERGE" and len(_history(run, target)) == versions + 1  # one commit
    assert [row[:2] for row in run(f"DESCRIBE TABLE {target}")][3] == ("V", "int")

    # an explicit assignment adds its column; a source column only read in an expression does not
    run("CREATE OR REPLACE TEMPORARY VIEW more AS SELECT 2 AS id, 'x' AS tag, 10 AS unused")
    run(f"MERGE WITH SCHEMA EVOLUTION INTO {target} AS t USING more AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET tag = s.tag, V = s.unused + 1")
    assert _columns(run, target) == ["id", "first", "second", "V", "tag"]
    assert sorted(run(f"SELECT id, V, tag FROM {target}")) == [(1, 1, None), (2, 11, "x"), (3, 2, None)]
    # without the clause the target's schema stays: a column it lacks is an error, `*` ignores the extra ones
    _fails(run, f"MERGE INTO {target} AS t USING more AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET unused = 1",
           "UNRESOLVED_COLUMN")
    assert _columns(run, target) == ["id", "first", "second", "V", "tag"]


def test_merge_with_schema_evolution_and_nothing_new_rewrites_only_what_it_touches(dbx: tuple[Any, Run]) -> None:
    _, run = dbx
    target = f"main.{SCHEMA}.steady"
    run(f"CREATE OR REPLACE TABLE {target} (id INT, v STRING)", f"INSERT INTO {target} VALUES (1, 'a')",
        f"INSERT INTO {target} VALUES (2, 'b')")
    run(f"MERGE WITH SCHEMA EVOLUTION INTO {target} t USING (SELECT 2 AS id) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")   # the source lacks `v`: it stays
    assert sorted(run(f"SELECT * FROM {target}")) == [(1, "a"), (2, "b")]
    run(f"MERGE WITH SCHEMA EVOLUTION INTO {target} t USING (SELECT 3 AS id) s ON t.id = s.id "
        "WHEN NOT MATCHED THEN INSERT *")
    assert sorted(run(f"SELECT * FROM {target}")) == [(1, "a"), (2, "b"), (3, None)]
    assert _columns(run, target) == ["id", "v"]
    (detail,) = run(f"DESCRIBE DETAIL {target}")
    assert detail[9] == 3   # numFiles: the first two untouched, the merge added one


def test_describe_detail_types_as_databricks(dbx: tuple[Any, Run], hive: Any) -> None:
    """DESCRIBE DETAIL's arrays, maps and timestamps reach the connector as values of those types, as from
    Databricks (dbt-databricks' test_incremental_partition_reconcile compares `partitionColumns` with a list), and
    PyHive as text, as from Spark's Thrift server."""
    _, run = dbx
    table = f"`main`.`{SCHEMA}`.`detailed`"
    run(f"CREATE OR REPLACE TABLE {table} (id BIGINT, part_a STRING) USING delta PARTITIONED BY (part_a) "
        "TBLPROPERTIES ('team' = 'a')", f"INSERT INTO {table} VALUES (1, 'x')")
    (detail,) = run(f"DESCRIBE DETAIL {table}")
    assert list(detail[7]) == ["part_a"] and list(detail[8]) == []           # partitionColumns, clusteringColumns
    assert dict(detail[11])["team"] == "a"                                   # properties, a map
    assert isinstance(detail[5], dt.datetime) and detail[6] >= detail[5]     # createdAt, lastModified
    assert detail[9] == 1 and dict(detail[15])["numDeletionVectors"] == 0    # numFiles; statistics, a map
    hive.execute("DESCRIBE DETAIL detailed")
    (text,) = hive.fetchall()
    assert json.loads(text[7]) == ["part_a"] and json.loads(text[11])["team"] == "a"
    assert text[6] >= text[5]   # PyHive reads the timestamps' text as datetimes


def test_drop_columns_as_dbt_sync_all_columns_sends_it(dbx: tuple[Any, Run], hive: Any) -> None:
    """dbt-databricks' TestDeleteInsertUpdateSchema: the table keeps its rows, without the column, in one commit."""
    _, run = dbx
    table = f"`main`.`{SCHEMA}`.`shrinking`"
    run(f"CREATE OR REPLACE TABLE {table} USING delta TBLPROPERTIES ('delta.columnMapping.mode' = 'name') AS "
        "SELECT CAST(1 AS BIGINT) AS id, 'hello' AS msg, 'blue' AS color UNION ALL SELECT 2, 'goodbye', 'red'")
    versions = len(_history(run, table))
    run(f"ALTER TABLE {table} DROP COLUMNS (`msg`)")
    assert _columns(run, table) == ["id", "color"]
    assert sorted(run(f"SELECT * FROM {table}")) == [(1, "blue"), (2, "red")]
    assert _history(run, table)[0] == "DROP COLUMNS" and len(_history(run, table)) == versions + 1
    run(f"INSERT INTO {table} BY NAME SELECT CAST(3 AS BIGINT) AS id, 'green' AS color")
    run(f"ALTER TABLE {table} DROP COLUMN IF EXISTS nothing")              # nothing to drop: no commit
    assert len(_history(run, table)) == versions + 2

    # PyHive: Spark's syntax, one column without parentheses
    hive.execute("ALTER TABLE shrinking DROP COLUMN color")
    hive.execute("SELECT * FROM shrinking ORDER BY id")
    assert hive.fetchall() == [(1,), (2,), (3,)]
    status = error_status(hive, "ALTER TABLE shrinking DROP COLUMN id")
    assert status.sqlState == "0AKDC" and "DELTA_DROP_COLUMN_ON_SINGLE_FIELD_SCHEMA" in status.errorMessage


def test_drop_columns_refuses_what_delta_refuses(dbx: tuple[Any, Run], hive: Any) -> None:
    _, run = dbx
    run(f"CREATE OR REPLACE TABLE main.{SCHEMA}.guarded (id BIGINT, day STRING, k BIGINT, pos BIGINT, note STRING, "
        "CONSTRAINT positive CHECK (pos > 0)) PARTITIONED BY (day)",
        f"CREATE OR REPLACE TABLE main.{SCHEMA}.clustered_drop (id BIGINT, k BIGINT, note STRING) CLUSTER BY (k)",
        f"INSERT INTO main.{SCHEMA}.guarded VALUES (1, 'd', 1, 1, 'n')")
    versions = len(_history(run, f"main.{SCHEMA}.guarded"))
    _fails(run, f"ALTER TABLE main.{SCHEMA}.guarded DROP COLUMN day", "DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN")
    _fails(run, f"ALTER TABLE main.{SCHEMA}.guarded DROP COLUMNS (note, pos)",
           "DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE")
    _fails(run, f"ALTER TABLE main.{SCHEMA}.guarded DROP COLUMNS (nope)", "UNRESOLVED_COLUMN")
    _fails(run, f"ALTER TABLE main.{SCHEMA}.clustered_drop DROP COLUMN k", "DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN")
    assert len(_history(run, f"main.{SCHEMA}.guarded")) == versions
    assert _columns(run, f"main.{SCHEMA}.guarded") == ["id", "day", "k", "pos", "note"]
    run(f"ALTER TABLE main.{SCHEMA}.guarded DROP CONSTRAINT positive",
        f"ALTER TABLE main.{SCHEMA}.guarded DROP COLUMNS (note, pos)")
    assert run(f"SELECT * FROM main.{SCHEMA}.guarded") == [(1, "d", 1)]
    (detail,) = run(f"DESCRIBE DETAIL main.{SCHEMA}.guarded")
    assert list(detail[7]) == ["day"]                                 # still partitioned by day
    status = error_status(hive, "ALTER TABLE guarded DROP COLUMN k, id")   # not Spark's grammar either
    assert status.errorMessage


def test_delete_correlated_on_the_targets_full_name(dbx: tuple[Any, Run], hive: Any) -> None:
    """dbt-databricks' legacy delete+insert on a composite key (TestDeleteInsertCompositeKey): the DELETE names the
    target's columns by its catalog, schema and table; and the one-key form with IN."""
    _, run = dbx
    target = f"`main`.`{SCHEMA}`.`keyed`"
    run(f"CREATE OR REPLACE TABLE {target} USING delta AS SELECT CAST(1 AS BIGINT) AS id, 'blue' AS color, "
        "'hello' AS msg UNION ALL SELECT 2, 'red', 'goodbye'",
        f"CREATE OR REPLACE TABLE `main`.`{SCHEMA}`.`keyed__dbt_tmp` AS SELECT CAST(1 AS BIGINT) AS id, "
        "'blue' AS color, 'replaced' AS msg UNION ALL SELECT 1, 'red', 'updated' UNION ALL SELECT 2, 'blue', 'updated'")
    source = f"`main`.`{SCHEMA}`.`keyed__dbt_tmp`"
    run(f"delete from {target}\nwhere EXISTS (SELECT 1 FROM {source} WHERE {target}.`id` <=> {source}.`id` AND "
        f"{target}.`color` <=> {source}.`color`)",
        f"insert into {target} by name\n\nselect id, color, msg\nfrom {source}")
    assert sorted(run(f"SELECT * FROM {target}")) == [
        (1, "blue", "replaced"), (1, "red", "updated"), (2, "blue", "updated"), (2, "red", "goodbye")]
    run(f"delete from {target}\nwhere {target}.`id` IN (SELECT `id` FROM {source} WHERE color = 'red')")
    assert sorted(run(f"SELECT id, color FROM {target}")) == [(2, "blue"), (2, "red")]
    # two-part names, through PyHive; an UPDATE and a MERGE read the same way
    hive.execute(f"UPDATE {SCHEMA}.keyed SET msg = 'seen' WHERE {SCHEMA}.keyed.color = 'red'")
    hive.execute(f"MERGE INTO main.{SCHEMA}.keyed USING (SELECT 2 AS id, 'blue' AS color) s "
                 f"ON main.{SCHEMA}.keyed.id = s.id AND main.{SCHEMA}.keyed.color = s.color "
                 "WHEN MATCHED THEN DELETE")
    hive.execute(f"SELECT * FROM {SCHEMA}.keyed")
    assert hive.fetchall() == [(2, "red", "seen")]
    # an alias replaces the name, as in Spark: the full name no longer resolves
    _fails(run, f"DELETE FROM {target} AS k WHERE {target}.id = 2", "UNRESOLVED_COLUMN")


def test_a_query_names_columns_by_their_tables_full_name(dbx: tuple[Any, Run], hive: Any) -> None:
    """`SELECT main.s.t.id FROM main.s.t` and `SELECT s.t.id FROM s.t`, as Spark and Databricks resolve them, in a
    query, a join, a view's definition and a CTAS; through PyHive too. An alias still replaces the name."""
    _, run = dbx
    t, u = f"`main`.`{SCHEMA}`.`named`", f"`main`.`{SCHEMA}`.`named_too`"
    run(f"CREATE OR REPLACE TABLE {t} (id BIGINT, msg STRING)", f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')",
        f"CREATE OR REPLACE TABLE {u} (id BIGINT, tag STRING)", f"INSERT INTO {u} VALUES (2, 'x')")
    assert sorted(run(f"SELECT main.{SCHEMA}.named.id, {t}.msg FROM {t}")) == [(1, "a"), (2, "b")]
    assert run(f"SELECT {SCHEMA}.named.id FROM {SCHEMA}.named WHERE {SCHEMA}.named.msg = 'b'") == [(2,)]
    assert run(f"SELECT {t}.msg, {u}.tag FROM {t} JOIN {u} ON {t}.id = {u}.id") == [("b", "x")]
    run(f"CREATE OR REPLACE VIEW main.{SCHEMA}.named_v AS SELECT {SCHEMA}.named.msg FROM {SCHEMA}.named",
        f"CREATE OR REPLACE TABLE main.{SCHEMA}.named_ctas AS SELECT main.{SCHEMA}.named.id * 10 AS id "
        f"FROM main.{SCHEMA}.named")
    assert sorted(run(f"SELECT * FROM main.{SCHEMA}.named_v")) == [("a",), ("b",)]
    assert sorted(run(f"SELECT * FROM main.{SCHEMA}.named_ctas")) == [(10,), (20,)]
    _fails(run, f"SELECT {t}.id FROM {t} AS n", "UNRESOLVED_COLUMN")

    hive.execute(f"SELECT main.{SCHEMA}.named.msg, {SCHEMA}.named.id FROM main.{SCHEMA}.named ORDER BY 2")
    assert hive.fetchall() == [("a", 1), ("b", 2)]
    hive.execute(f"SELECT {SCHEMA}.named.id FROM {SCHEMA}.named WHERE {SCHEMA}.named.id > 1")
    assert hive.fetchall() == [(2,)]


def test_describe_history_as_a_subquery(dbx: tuple[Any, Run], hive: Any) -> None:
    """dbt-databricks' liquid clustering tests read `select operation from (describe history t)`: the same rows as
    the statement, filtered, ordered and limited as any relation; DESCRIBE HISTORY alone is unchanged."""
    _, run = dbx
    table = f"`main`.`{SCHEMA}`.`historied`"
    run(f"CREATE OR REPLACE TABLE {table} (id BIGINT) CLUSTER BY (id)", f"INSERT INTO {table} VALUES (1)",
        f"INSERT INTO {table} VALUES (2)", f"OPTIMIZE {table}")
    statement = run(f"DESCRIBE HISTORY {table}")
    assert run(f"select operation from (describe history {table})") == [(row[4],) for row in statement]
    assert "OPTIMIZE" in [row[0] for row in run(f"select operation from (describe history {table})")]
    relation = run(f"SELECT * FROM (DESCRIBE HISTORY {table})")
    assert [(*row[:1], *row[2:]) for row in relation] == [(*row[:1], *row[2:]) for row in statement]
    assert [row[1].strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] for row in relation] == [row[1] for row in statement]
    assert run(f"SELECT version, operation FROM (DESCRIBE HISTORY {table}) AS h WHERE h.operation = 'WRITE' "
               "ORDER BY version DESC LIMIT 1") == [(2, "WRITE")]
    assert run(f"SELECT count(*) FROM (DESCRIBE HISTORY {table}) h JOIN (DESCRIBE HISTORY {table}) g "
               "ON h.version = g.version") == [(len(statement),)]
    run(f"INSERT INTO {table} VALUES (3)")                       # a new commit is seen at once (never cached)
    assert run(f"select count(*) from (describe history {table})") == [(len(statement) + 1,)]
    _fails(run, f"select * from (describe history main.{SCHEMA}.no_such_table)", "TABLE_OR_VIEW_NOT_FOUND")

    # PyHive: the same through the binary port, the column types Delta gives them
    hive.execute("SELECT version, timestamp, operation FROM (DESCRIBE HISTORY historied) ORDER BY version")
    rows = hive.fetchall()
    assert [(row[0], row[2]) for row in rows] == [(0, "CREATE TABLE"), (1, "WRITE"), (2, "WRITE"), (3, "OPTIMIZE"),
                                                  (4, "WRITE")]
    assert [column[1] for column in hive.description] == ["BIGINT_TYPE", "TIMESTAMP_TYPE", "STRING_TYPE"]


def _types(run: Run, table: str) -> dict[str, str]:
    return {row[0]: row[1] for row in run(f"DESCRIBE TABLE {table}") if row[0] and not row[0].startswith("#")}


def test_type_widening_as_dbt_sync_all_columns_sends_it(dbx: tuple[Any, Run], hive: Any) -> None:
    """dbt-databricks' TestSyncAllColumnsWidensType: a table created with delta.enableTypeWidening (kept, shown by
    SHOW TBLPROPERTIES), its int column widened to bigint in one commit, the rows kept, a bigint value then fits."""
    _, run = dbx
    table = f"`main`.`{SCHEMA}`.`widening`"
    run(f"CREATE OR REPLACE TABLE {table} USING delta TBLPROPERTIES ('delta.enableTypeWidening' = 'true') AS "
        "SELECT CAST(1 AS BIGINT) AS id, CAST(10 AS INT) AS measure, CAST(1.5 AS FLOAT) AS ratio, "
        "CAST(2.25 AS DECIMAL(5, 2)) AS amount, DATE'2024-01-02' AS day, CAST(3 AS TINYINT) AS small")
    assert _properties(run, table)["delta.enableTypeWidening"] == "true"
    versions = len(_history(run, table))
    run(f"alter table {table} alter column `measure` type bigint")
    assert _types(run, table)["measure"] == "bigint"
    assert _history(run, table)[0] == "CHANGE COLUMN" and len(_history(run, table)) == versions + 1
    run(f"INSERT INTO {table} (id, measure) VALUES (2, 3000000000)")
    assert run(f"SELECT measure FROM {table} ORDER BY id") == [(10,), (3000000000,)]
    run(f"ALTER TABLE {table} ALTER COLUMN ratio TYPE DOUBLE", f"ALTER TABLE {table} ALTER COLUMN amount TYPE "
        "DECIMAL(10, 4)", f"ALTER TABLE {table} CHANGE COLUMN day day TIMESTAMP_NTZ",
        f"ALTER TABLE {table} ALTER COLUMN small TYPE INT")
    assert _types(run, table) == {"id": "bigint", "measure": "bigint", "ratio": "double", "amount": "decimal(10,4)",
                                  "day": "timestamp_ntz", "small": "int"}
    (row,) = run(f"SELECT ratio, amount, day, small FROM {table} WHERE id = 1")
    assert row[0] == 1.5 and str(row[1]) == "2.2500" and row[3] == 3
    assert row[2].replace(tzinfo=None) == dt.datetime(2024, 1, 2)
    versions = len(_history(run, table))
    run(f"ALTER TABLE {table} ALTER COLUMN measure TYPE BIGINT")              # the same type: no change, no commit
    assert len(_history(run, table)) == versions

    # narrowing and other changes, as Delta refuses them; and none on a table without the property
    for change in ("measure TYPE INT", "ratio TYPE FLOAT", "amount TYPE DECIMAL(12, 2)", "id TYPE DOUBLE",
                   "small TYPE STRING", "day TYPE DATE"):
        _fails(run, f"ALTER TABLE {table} ALTER COLUMN {change}", "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP")
    _fails(run, f"ALTER TABLE {table} ALTER COLUMN nothing TYPE BIGINT", "UNRESOLVED_COLUMN")
    assert len(_history(run, table)) == versions
    run(f"CREATE OR REPLACE TABLE main.{SCHEMA}.unwidened (id INT, pos INT, CONSTRAINT positive CHECK (pos > 0)) "
        "TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    _fails(run, f"ALTER TABLE main.{SCHEMA}.unwidened ALTER COLUMN pos TYPE BIGINT",
           "DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE")
    run(f"ALTER TABLE main.{SCHEMA}.unwidened UNSET TBLPROPERTIES ('delta.enableTypeWidening')")
    message = _fails(run, f"ALTER TABLE main.{SCHEMA}.unwidened ALTER COLUMN id TYPE BIGINT",
                     "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP")
    assert "delta.enableTypeWidening" in message

    # PyHive: Spark's CHANGE COLUMN spelling, and its SQLSTATE
    hive.execute("ALTER TABLE widening CHANGE COLUMN small small BIGINT")
    hive.execute("DESCRIBE widening")
    assert ("small", "bigint") in [(row[0], row[1]) for row in hive.fetchall()]
    status = error_status(hive, "ALTER TABLE widening CHANGE COLUMN small small INT")
    assert status.sqlState == "0AKDC" and "DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP" in status.errorMessage
