"""The policy point on Spark's plans: what no user may run, whatever the spelling, refused with 42501 and a hint,
through PyHive and beeline; the server keeps serving and nothing outside the warehouse changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import error_status
from security_helpers import refused, still_serves, untouched

MARKER = "sg-pwned-marker"


@pytest.fixture()
def cursor(connect: Any) -> Any:
    return connect(username="mallory").cursor()


def _marker(tmp_path: Path) -> Path:
    return tmp_path / MARKER


SCRIPT_TRANSFORMS = [
    "SELECT TRANSFORM(id) USING 'touch {m}' AS (line STRING) FROM range(1)",
    "select transform(id) using 'touch {m}' as (line string) from range(1)",
    "MAP id USING 'touch {m}' AS x FROM range(1)",
    "FROM range(1) REDUCE id USING 'touch {m}' AS x",
    "SELECT * FROM (SELECT TRANSFORM(id) USING 'touch {m}' AS (l STRING) FROM range(1)) t",
    "WITH s AS (SELECT TRANSFORM(id) USING 'touch {m}' AS (l STRING) FROM range(1)) SELECT * FROM s",
    "CREATE TEMPORARY VIEW tv_script AS SELECT TRANSFORM(id) USING 'touch {m}' AS (l STRING) FROM range(1)",
    "CREATE VIEW v_script AS SELECT TRANSFORM(id) USING 'touch {m}' AS (l STRING) FROM range(1)",
    "CREATE TABLE t_script AS SELECT TRANSFORM(id) USING 'touch {m}' AS (l STRING) FROM range(1)",
    "EXPLAIN SELECT TRANSFORM(id) USING 'touch {m}' AS (l STRING) FROM range(1)",
]


@pytest.mark.parametrize("sql", SCRIPT_TRANSFORMS)
def test_script_transforms_never_run(cursor: Any, tmp_path: Path, sql: str) -> None:
    message = refused(cursor, sql.format(m=_marker(tmp_path)))
    assert "42501" not in message or "not allowed" in message.lower() or "INSUFFICIENT" in message
    assert not _marker(tmp_path).exists()
    still_serves(cursor)


REFLECTION = [
    "SELECT java_method('java.lang.System', 'exit', 0)",
    "SELECT JAVA_METHOD('java.lang.System', 'exit', 0)",
    "SELECT `java_method`('java.lang.System', 'exit', 0)",
    "SELECT reflect('java.lang.System', 'getenv', 'HOME')",
    "SELECT try_reflect('java.lang.System', 'setProperty', 'sg.pwned', 'yes')",
    "SELECT (SELECT reflect('java.lang.System', 'exit', 0)) AS x",
    "SELECT id FROM range(3) WHERE id > (SELECT length(java_method('java.lang.System', 'exit', 0)))",
    "CREATE TEMPORARY VIEW tv_reflect AS SELECT reflect('java.lang.System', 'exit', 0) AS x",
    "CREATE VIEW v_reflect AS SELECT reflect('java.lang.System', 'exit', 0) AS x",
    "CREATE TABLE t_reflect AS SELECT reflect('java.lang.System', 'exit', 0) AS x",
    "SELECT system.builtin.java_method('java.lang.System', 'exit', 0)",
    "SELECT IDENTIFIER('java_method')('java.lang.System', 'exit', 0)",
    "SELECT transform(array(1), x -> reflect('java.lang.System', 'exit', 0))",
]


@pytest.mark.parametrize("sql", REFLECTION)
def test_reflection_is_refused_and_the_jvm_lives(cursor: Any, sql: str) -> None:
    status_message = _refusal_or_unknown(cursor, sql)
    assert any(word in status_message.lower() for word in ("java_method", "reflect", "system"))
    still_serves(cursor)


def _refusal_or_unknown(cursor: Any, sql: str) -> str:
    """Reflection is refused by the plan check (42501) or, where Spark resolves names first, unknown to the
    session (the functions are dropped from every user session's registry: 42883, or 42K05 for a qualified
    name Spark's session catalog cannot look up)."""
    status = error_status(cursor, sql)
    assert status.sqlState in ("42501", "42883", "42K05"), status.errorMessage
    assert "\tat " not in status.errorMessage
    return status.errorMessage


def test_reflection_functions_do_not_exist_in_a_user_session(cursor: Any) -> None:
    cursor.execute("SHOW FUNCTIONS LIKE 'java_method|reflect|try_reflect|abs'")
    assert [row[0] for row in cursor.fetchall()] == ["abs"]


REFUSED_COMMANDS = [
    ("ADD JAR '/tmp/sg-evil.jar'", "ADD JAR"),
    ("ADD FILE '/etc/hostname'", "ADD FILE"),
    ("ADD ARCHIVE '/tmp/sg-evil.zip'", "ADD ARCHIVE"),
    ("LIST JARS", "LIST JAR"),
    ("LIST FILES", "LIST FILE"),
    ("CREATE FUNCTION evil AS 'com.evil.Udf' USING JAR '/tmp/sg-evil.jar'", "CREATE FUNCTION"),
    ("CREATE TEMPORARY FUNCTION evil AS 'org.apache.spark.sql.catalyst.expressions.CallMethodViaReflection'",
     "CREATE FUNCTION"),
    ("CACHE TABLE cached_range AS SELECT * FROM range(3)", "CACHE TABLE"),
    ("UNCACHE TABLE IF EXISTS anything", "UNCACHE TABLE"),
    ("CLEAR CACHE", "CLEAR CACHE"),
    ("LOAD DATA LOCAL INPATH '/etc/passwd' INTO TABLE anything", "LOAD DATA"),
    ("EXECUTE IMMEDIATE 'SELECT java_method(''java.lang.System'', ''exit'', 0)'", "EXECUTE IMMEDIATE"),
    ("EXECUTE IMMEDIATE 'SELECT 1'", "EXECUTE IMMEDIATE"),
    ("CREATE GLOBAL TEMPORARY VIEW gv AS SELECT 1 AS x", "global temporary views"),
    ("CREATE OR REPLACE GLOBAL TEMP VIEW gv USING text OPTIONS (path '/etc/passwd')", "global temporary views"),
    ("SET spark.sql.runSQLOnFiles = true", "spark.sql.runSQLOnFiles"),
    ("SET spark.sql.catalog.evil = org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog",
     "spark.sql.catalog.evil"),
    ("SET fs.file.impl = org.evil.FileSystem", "fs.file.impl"),
    ("SET hivevar:fs.file.impl = org.evil.FileSystem", "fs.file.impl"),
    ("SET spark.hadoop.fs.defaultFS = file:///etc", "spark.hadoop"),
    ("CREATE TEMPORARY VIEW jdbc_view USING jdbc OPTIONS (url 'jdbc:h2:mem:x', dbtable 't')", "jdbc"),
    ("CREATE TEMPORARY VIEW class_view USING org.apache.spark.sql.execution.datasources.text.TextFileFormat "
     "OPTIONS (path '/etc/passwd')", "TextFileFormat"),
]


@pytest.mark.parametrize(("sql", "named"), REFUSED_COMMANDS)
def test_commands_no_user_may_run(cursor: Any, sql: str, named: str) -> None:
    message = refused(cursor, sql)
    assert "hint:" in message
    if named:
        assert named.lower() in message.lower()
    still_serves(cursor)


def test_file_paths_as_table_names_find_nothing(cursor: Any) -> None:
    for sql in ("SELECT * FROM text.`/etc/passwd`", "SELECT * FROM parquet.`/etc`",
                "SELECT * FROM json.`file:///etc/passwd`"):
        status = error_status(cursor, sql)
        assert "TABLE_OR_VIEW_NOT_FOUND" in status.errorMessage, status.errorMessage
        assert "root:" not in status.errorMessage
    cursor.execute("RESET")  # RESET brings back the context's setting, which is off
    assert "TABLE_OR_VIEW_NOT_FOUND" in error_status(cursor, "SELECT * FROM text.`/etc/passwd`").errorMessage


def test_insert_overwrite_directory_writes_nothing(cursor: Any, victim: Path) -> None:
    for sql in (f"INSERT OVERWRITE DIRECTORY '{victim}' USING csv SELECT 1 AS x",
                f"INSERT OVERWRITE LOCAL DIRECTORY '{victim}' SELECT 1 AS x",
                f"WITH s AS (SELECT 1 AS x) INSERT OVERWRITE DIRECTORY '{victim}' USING csv SELECT * FROM s"):
        refused(cursor, sql)
    untouched(victim)
    still_serves(cursor)


def test_spark_tables_with_a_location_outside_the_roots_are_refused(cursor: Any, victim: Path) -> None:
    refused(cursor, f"CREATE TABLE located (id INT) USING parquet LOCATION '{victim}'", "PATH_NOT_ALLOWED")
    refused(cursor, f"CREATE TABLE located2 USING parquet OPTIONS (path '{victim}') AS SELECT 1 AS id",
            "PATH_NOT_ALLOWED")
    untouched(victim)


def test_legitimate_spark_statements_still_work(cursor: Any) -> None:
    cursor.execute("SET spark.sql.ansi.enabled = false")
    cursor.execute("SET spark.sql.ansi.enabled")
    assert cursor.fetchall()[0][1] == "false"
    cursor.execute("SET hivevar:limit_rows = 2")
    cursor.execute("SELECT ${hivevar:limit_rows} + 40, ${limit_rows} + 40")  # the gateway's own substitution
    assert cursor.fetchall() == [(42, 42)]
    status = error_status(cursor, "SELECT *\nFROM read_files('${landing}/x', format => 'json')")
    assert "UNRESOLVED_VARIABLE" in status.errorMessage and status.sqlState == "42883"
    assert "at line 2, column 18" in status.errorMessage
    cursor.execute("SET")
    assert cursor.fetchall()
    cursor.execute("CREATE OR REPLACE TEMPORARY VIEW legit_tv AS SELECT id FROM range(5)")
    cursor.execute("SELECT count(*) FROM legit_tv")
    assert cursor.fetchall() == [(5,)]
    cursor.execute("EXPLAIN SELECT * FROM legit_tv")
    assert "Range" in cursor.fetchall()[0][0]
    cursor.execute("DESCRIBE FUNCTION abs")
    assert cursor.fetchall()
    cursor.execute("SELECT explode(array(1, 2)), stack(1, 'a')")
    assert cursor.fetchall() == [(1, "a"), (2, "a")]
    cursor.execute("DROP VIEW legit_tv")


def test_open_session_settings_pass_the_policy(gateway: Any) -> None:
    from pyhive import exc as hive_exc
    from pyhive import hive

    with pytest.raises(hive_exc.OperationalError) as raised:
        hive.connect(gateway.host, gateway.port, username="mallory",
                     configuration={"spark.sql.runSQLOnFiles": "true"})
    assert "CONFIG_NOT_ALLOWED" in str(raised.value)
    conn = hive.connect(gateway.host, gateway.port, username="mallory",
                        configuration={"spark.sql.ansi.enabled": "false", "hive.server2.thrift.resultset.x": "1"})
    cursor = conn.cursor()
    cursor.execute("SET spark.sql.ansi.enabled")
    assert cursor.fetchall()[0][1] == "false"
    conn.close()


@pytest.mark.beeline
def test_beeline_sees_the_refusals(gateway: Any, beeline: Any, tmp_path: Path) -> None:
    marker = _marker(tmp_path)
    done = beeline(gateway.port, "-e", f"SELECT TRANSFORM(id) USING 'touch {marker}' AS (l STRING) FROM range(1);"
                   " SELECT java_method('java.lang.System', 'exit', 0);", user="mallory")
    assert done.returncode != 0
    assert "42501" in done.stderr or "STATEMENT_NOT_ALLOWED" in done.stderr, done.stderr
    assert not marker.exists()
    done = beeline(gateway.port, "-e", "SELECT java_method('java.lang.System', 'exit', 0);", user="mallory")
    assert done.returncode != 0 and "java_method" in done.stderr.lower()
    done = beeline(gateway.port, "-e", "SELECT 42 AS answer;", user="mallory")
    assert done.returncode == 0 and "42" in done.stdout


def test_admins_are_bound_by_the_list_unless_unrestricted(start_gateway: Any, tmp_path: Path) -> None:
    from pyhive import hive

    restricted = start_gateway({"security": {"admins": ["root_admin"]}})
    cursor = hive.connect(restricted.host, restricted.port, username="root_admin").cursor()
    refused(cursor, f"SELECT TRANSFORM(id) USING 'touch {_marker(tmp_path)}' AS (l STRING) FROM range(1)")
    assert not _marker(tmp_path).exists()
    cursor.execute("CREATE OR REPLACE TEMPORARY VIEW hostname USING text OPTIONS (path '/etc/hostname')")
    cursor.execute("SELECT count(*) FROM hostname")  # admins read outside the allowed roots
    assert cursor.fetchall()[0][0] >= 1
    other = hive.connect(restricted.host, restricted.port, username="someone").cursor()
    refused(other, "CREATE OR REPLACE TEMPORARY VIEW hostname USING text OPTIONS (path '/etc/hostname')",
            "PATH_NOT_ALLOWED")


def test_current_user_is_the_session_user_and_the_environment_stays_hidden(connect: Any) -> None:
    cursor = connect(username="mallory").cursor()
    cursor.execute("SELECT current_user(), session_user(), '${env:HOME}', '${system:user.name}'")
    assert cursor.fetchall() == [("mallory", "mallory", "${env:HOME}", "${system:user.name}")]
    refused(cursor, "SET spark.sql.variable.substitute = true", "CONFIG_NOT_ALLOWED")
    refused(cursor, "SET spark.sql.adaptive.customCostEvaluatorClass = java.lang.Object", "CONFIG_NOT_ALLOWED")


@pytest.mark.parametrize("glob", ["{../..,zz}/etc/passwd", "*", "[a-z]*", "x?"])
def test_glob_characters_cannot_climb_out_of_the_roots(cursor: Any, tmp_path: Path, victim: Path, glob: str) -> None:
    refused(cursor, f"CREATE TEMPORARY VIEW globbed USING text OPTIONS (path '{tmp_path}/{glob}')", "PATH_NOT_ALLOWED")
    refused(cursor, f"CREATE TABLE globbed_t (l STRING) USING text LOCATION '{tmp_path}/{{../{victim.name},zz}}'",
            "PATH_NOT_ALLOWED")
    untouched(victim)


def test_a_stream_cannot_be_asked_to_flood(cursor: Any) -> None:
    message = refused(cursor, "CREATE STREAMING TABLE flood AS SELECT * FROM STREAM rate(rows_per_second => 100000000)",
                      "STATEMENT_NOT_ALLOWED")
    assert "1,000,000" in message


def test_spark_tables_need_create_on_the_schema(as_user: Any) -> None:
    import uuid

    schema = f"carols_{uuid.uuid4().hex[:6]}"
    as_user("carol").execute(f"CREATE SCHEMA {schema}")
    refused(as_user("mallory"), f"CREATE TABLE {schema}.squat (id INT) USING parquet", "INSUFFICIENT_PERMISSIONS")


def test_a_command_hidden_where_a_query_belongs_never_runs(gateway: Any, cursor: Any) -> None:
    """The binder hands a view's text to spark.sql, which runs a command at once: a catalog row holding a command
    that sqlglot reads as well as Spark (written by hand, or by an older release) is refused before Spark sees it."""
    from sluicegate.catalog.store import TableEntry

    cursor.execute("CREATE TABLE hidden_sink (x INT) USING parquet")
    gateway.service.catalog.create_table(TableEntry(
        "default", "hidden_command", "VIEW", None, None, "INSERT INTO default.hidden_sink SELECT 1", owner="mallory"))
    try:
        refused(cursor, "SELECT * FROM default.hidden_command", "STATEMENT_NOT_ALLOWED")
        cursor.execute("SELECT count(*) FROM hidden_sink")
        assert cursor.fetchall() == [(0,)]
    finally:
        gateway.service.catalog.drop_table("default", "hidden_command")
        cursor.execute("DROP TABLE hidden_sink")
