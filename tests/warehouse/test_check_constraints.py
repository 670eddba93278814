"""Delta CHECK constraints through real clients: ALTER TABLE ADD CONSTRAINT checks the rows first, then every write
of the gateway (INSERT, INSERT OVERWRITE, UPDATE, MERGE) enforces it with Delta's error and SQLSTATE and commits
nothing; DROP CONSTRAINT lifts it; CREATE TABLE keeps its column list's CHECKs and accepts informational keys; the
constraints show in SHOW TBLPROPERTIES and DESCRIBE TABLE EXTENDED as Delta shows them; the informational keys of
tables and materialized views (never enforced) are listed by information_schema as Unity Catalog lists them. PyHive,
and the Databricks SQL connector where dbt-databricks sends the statements."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import database_cursor, error_status, sorted_rows
from test_catalogs import FOREIGN_KEYS, PRIMARY_KEY

from sluicegate.storage.delta.tables import open_table

DB = "check_constraints"


@pytest.fixture(scope="module")
def cursor(gateway: Any) -> Iterator[Any]:
    yield from database_cursor(gateway, DB)


def _version(streams: Any, name: str) -> int:
    return int(open_table(streams.store.get_table(DB, name).location).version())


def _fails(cursor: Any, sql: str, error_class: str, sqlstate: str) -> str:
    status = error_status(cursor, sql)
    assert (status.sqlState, status.errorMessage.split("]")[0]) == (sqlstate, f"[{error_class}"), status.errorMessage
    return str(status.errorMessage)


def _properties(cursor: Any, table: str) -> dict[str, str]:
    cursor.execute(f"SHOW TBLPROPERTIES {table}")
    return dict(cursor.fetchall())


def test_add_constraint_checks_the_rows_then_every_write(cursor: Any, streams: Any) -> None:
    cursor.execute("CREATE TABLE t (id INT NOT NULL, v INT, name STRING)")
    cursor.execute("INSERT INTO t VALUES (1, 5, 'a'), (2, -1, 'b'), (3, NULL, 'c')")
    before = _version(streams, "t")
    message = _fails(cursor, "ALTER TABLE t ADD CONSTRAINT pos CHECK (v > 0)",
                     "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION", "23512")
    assert "2 rows in" in message and "violate the new CHECK constraint (v > 0)" in message  # NULL fails it too
    assert _version(streams, "t") == before and "delta.constraints.pos" not in _properties(cursor, "t")

    cursor.execute("DELETE FROM t WHERE v IS NULL OR v < 0")
    cursor.execute("ALTER TABLE t ADD CONSTRAINT Pos CHECK (v > 0)")
    assert _properties(cursor, "t")["delta.constraints.pos"] == "v > 0"  # the name lower-cased, the text as typed
    delta = open_table(streams.store.get_table(DB, "t").location)
    assert delta.metadata().configuration["delta.constraints.pos"] == "v > 0"
    assert delta.protocol().min_writer_version >= 3  # as Delta raises it for a CHECK constraint
    checked = _version(streams, "t")

    rejected = {
        "INSERT INTO t VALUES (4, 7, 'd'), (5, -5, 'e')": " - v : -5",
        "INSERT INTO t VALUES (5, NULL, 'e')": " - v : null",
        "INSERT OVERWRITE t VALUES (6, -6, 'f')": " - v : -6",
        "UPDATE t SET v = -v WHERE id = 1": " - v : -5",
        "MERGE INTO t USING (SELECT 9 AS id, -9 AS v, 'z' AS name) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *":
            " - v : -9",
        "MERGE INTO t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 0": " - v : 0",
    }
    for sql, values in rejected.items():
        message = _fails(cursor, sql, "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", "23001")
        assert "CHECK constraint pos (v > 0) violated by row with values:" in message, message
        assert values in message, message
    assert _version(streams, "t") == checked  # nothing was committed
    assert sorted_rows(cursor, "SELECT * FROM t") == [(1, 5, "a")]

    _fails(cursor, "INSERT INTO t VALUES (NULL, 1, 'x')", "DELTA_NOT_NULL_CONSTRAINT_VIOLATED", "23502")
    cursor.execute("INSERT INTO t VALUES (4, 7, 'd')")
    cursor.execute("UPDATE t SET v = v + 1")
    assert sorted_rows(cursor, "SELECT id, v FROM t") == [(1, 6), (4, 8)]

    message = _fails(cursor, "ALTER TABLE t ADD CONSTRAINT pos CHECK (v > 1)", "DELTA_CONSTRAINT_ALREADY_EXISTS",
                     "42710")
    assert "Old constraint:\nv > 0" in message
    cursor.execute("ALTER TABLE t DROP CONSTRAINT POS")
    assert "delta.constraints.pos" not in _properties(cursor, "t")
    assert "delta.constraints.pos" not in open_table(streams.store.get_table(DB, "t").location).metadata().configuration
    cursor.execute("INSERT INTO t VALUES (5, -5, 'e')")  # lifted
    _fails(cursor, "ALTER TABLE t DROP CONSTRAINT pos", "DELTA_CONSTRAINT_DOES_NOT_EXIST", "42704")
    cursor.execute("ALTER TABLE t DROP CONSTRAINT IF EXISTS pos")


def test_a_check_is_judged_on_the_tables_columns(cursor: Any, streams: Any) -> None:
    cursor.execute("CREATE TABLE j (id INT, v INT)")
    before = _version(streams, "j")
    _fails(cursor, "ALTER TABLE j ADD CONSTRAINT c CHECK (nope > 0)", "DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES",
           "42621")
    _fails(cursor, "ALTER TABLE j ADD CONSTRAINT c CHECK (v + 1)", "DELTA_NON_BOOLEAN_CHECK_CONSTRAINT", "42621")
    _fails(cursor, "ALTER TABLE j ADD CONSTRAINT c CHECK (count(v) > 0)", "DELTA_AGGREGATE_IN_CHECK_CONSTRAINT",
           "42621")
    assert _version(streams, "j") == before
    cursor.execute("CREATE VIEW jv AS SELECT * FROM j")
    _fails(cursor, "ALTER TABLE jv ADD CONSTRAINT c CHECK (v > 0)", "EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE", "42809")


def test_create_table_keeps_its_checks_and_accepts_keys(cursor: Any) -> None:
    cursor.execute("CREATE TABLE parent (id INT NOT NULL, PRIMARY KEY (id))")
    cursor.execute("CREATE TABLE c (id INT NOT NULL CHECK (id > 0), v INT, CONSTRAINT small CHECK (v < 10), "
                   "CONSTRAINT c_pk PRIMARY KEY (id), FOREIGN KEY (v) REFERENCES parent (id)) USING delta")
    properties = _properties(cursor, "c")
    assert (properties["delta.constraints.chk_1"], properties["delta.constraints.small"]) == ("id > 0", "v < 10")
    cursor.execute("DESCRIBE TABLE EXTENDED c")
    described = {row[0]: row[1] for row in cursor.fetchall()}
    assert "delta.constraints.small=v < 10" in described["Table Properties"]
    message = _fails(cursor, "INSERT INTO c VALUES (1, 10)", "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", "23001")
    assert "CHECK constraint small (v < 10) violated" in message
    _fails(cursor, "INSERT INTO c VALUES (0, 1)", "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", "23001")
    cursor.execute("INSERT INTO c VALUES (1, 1), (1, 2)")  # keys are informational: a duplicate id is accepted
    cursor.execute("ALTER TABLE c ADD CONSTRAINT c_fk FOREIGN KEY (v) REFERENCES parent (id)")  # kept, not enforced
    assert sorted_rows(cursor, "SELECT * FROM c") == [(1, 1), (1, 2)]
    cursor.execute("SHOW CREATE TABLE c")  # the keys as Databricks shows them, after the columns
    created = cursor.fetchall()[0][0]
    assert "  v INT,\n  CONSTRAINT c_pk PRIMARY KEY (`id`),\n  CONSTRAINT c_fk_2 FOREIGN KEY (`v`) REFERENCES " \
           "`main`.`check_constraints`.`parent` (`id`),\n  CONSTRAINT c_fk FOREIGN KEY (`v`)" in created, created


def test_create_or_replace_drops_the_old_constraints_as_delta_does(cursor: Any) -> None:
    """dbt-spark's table materialization: CREATE OR REPLACE ... AS SELECT, then ADD CONSTRAINT again (which fails on
    rows that break it: the replaced data stays, as dbt's tests expect of Delta)."""
    cursor.execute("CREATE OR REPLACE TABLE m USING delta AS SELECT 1 AS id, 'blue' AS color")
    cursor.execute("ALTER TABLE m ADD CONSTRAINT pos CHECK ((id > 0))")
    cursor.execute("CREATE OR REPLACE TABLE m USING delta AS SELECT CAST(NULL AS INT) AS id, 'red' AS color")
    assert "delta.constraints.pos" not in _properties(cursor, "m")
    _fails(cursor, "ALTER TABLE m ADD CONSTRAINT pos CHECK ((id > 0))", "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION", "23512")
    assert sorted_rows(cursor, "SELECT color FROM m") == [("red",)]


def test_set_not_null_checks_the_column_then_every_write(cursor: Any, streams: Any) -> None:
    """What dbt-spark sends for a column's not_null: `alter table t change column c set not null`."""
    cursor.execute("CREATE TABLE n (id INT, `from` STRING)")
    cursor.execute("INSERT INTO n VALUES (1, 'blue'), (NULL, 'red')")
    message = _fails(cursor, "alter table n change column id set not null", "DELTA_NEW_NOT_NULL_VIOLATION", "23512")
    assert "1 rows in" in message and "violate the new NOT NULL constraint on id" in message
    cursor.execute("INSERT INTO n VALUES (2, 'blue')")  # still nullable: nothing changed
    cursor.execute("DELETE FROM n WHERE id IS NULL")
    cursor.execute("alter table n change column id set not null")
    cursor.execute("ALTER TABLE n ALTER COLUMN `from` SET NOT NULL")
    assert [(f.name, f.nullable) for f in _schema(streams, "n")] == [("id", False), ("from", False)]
    before = _version(streams, "n")
    message = _fails(cursor, "INSERT INTO n VALUES (3, NULL)", "DELTA_NOT_NULL_CONSTRAINT_VIOLATED", "23502")
    assert f"NOT NULL constraint violated for column: from of `{DB}`.`n`." in message
    _fails(cursor, "UPDATE n SET id = NULL WHERE id = 1", "DELTA_NOT_NULL_CONSTRAINT_VIOLATED", "23502")
    assert _version(streams, "n") == before
    cursor.execute("ALTER TABLE n CHANGE COLUMN id DROP NOT NULL")
    cursor.execute("INSERT INTO n VALUES (NULL, 'green')")
    _fails(cursor, "ALTER TABLE n ALTER COLUMN nope SET NOT NULL", "UNRESOLVED_COLUMN.WITH_SUGGESTION", "42703")


def _schema(streams: Any, name: str) -> Any:
    from sluicegate.executor.tables.dml import table_schema

    return table_schema(streams.store.get_table(DB, name)).fields


@pytest.fixture(scope="module")
def dbx(start_gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Databricks SQL connector cursor on a gateway's HTTP port."""
    sql = pytest.importorskip("databricks.sql")
    from sluicegate.gateway.auth.tokens import create_token

    tokens: Path = tmp_path_factory.mktemp("check_tokens") / "tokens"
    gateway = start_gateway({"server": {"http_port": 0}, "auth": {"token_file": str(tokens)}})
    connection = sql.connect(server_hostname="127.0.0.1", http_path="/cliservice",
                             access_token=create_token(tokens, "tester", "constraints")[1], enable_telemetry=False,
                             _connection_uri=f"http://127.0.0.1:{gateway.server.http_port}/cliservice")
    try:
        with connection.cursor() as cursor:
            yield cursor, sql.exc.ServerOperationError
    finally:
        connection.close()


def test_constraints_through_the_databricks_connector(dbx: Any, cursor: Any) -> None:
    """As dbt-databricks sends them (three-part names, a key then a CHECK), and Delta's error as the connector shows
    it: the class first, the SQLSTATE ending the first line, the row's values below."""
    dbx_cursor, failure = dbx
    cursor.execute("CREATE TABLE x (id BIGINT NOT NULL, amount BIGINT)")
    dbx_cursor.execute(f"alter table `main`.`{DB}`.`x` add constraint x_pk primary key(id)")
    dbx_cursor.execute(f"alter table `main`.`{DB}`.`x` add constraint amount_nonneg check (amount >= 0);")
    with pytest.raises(failure) as failed:
        dbx_cursor.execute(f"INSERT INTO main.{DB}.x VALUES (1, 5), (2, -3)")
    lines = failed.value.message.splitlines()
    assert lines[0].startswith("[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint amount_nonneg (amount >= 0)")
    assert lines[0].endswith("SQLSTATE: 23001") and " - amount : -3" in lines
    dbx_cursor.execute(f"SELECT count(*) FROM main.{DB}.x")
    assert dbx_cursor.fetchall()[0][0] == 0
    dbx_cursor.execute(f"SHOW TBLPROPERTIES main.{DB}.x ('delta.constraints.amount_nonneg')")
    assert [tuple(row) for row in dbx_cursor.fetchall()] == [("delta.constraints.amount_nonneg", "amount >= 0")]
    dbx_cursor.execute(f"alter table `main`.`{DB}`.`x` alter column amount set not null")
    with pytest.raises(failure) as failed:  # NULL fails the CHECK first, as in Delta (CHECKs before NOT NULLs)
        dbx_cursor.execute(f"INSERT INTO main.{DB}.x VALUES (3, NULL)")
    assert " - amount : null" in failed.value.message.splitlines()
    dbx_cursor.execute(f"alter table `main`.`{DB}`.`x` drop constraint if exists amount_nonneg")
    with pytest.raises(failure) as failed:
        dbx_cursor.execute(f"INSERT INTO main.{DB}.x VALUES (3, NULL)")
    assert failed.value.message.startswith("[DELTA_NOT_NULL_CONSTRAINT_VIOLATED] NOT NULL constraint violated for "
                                           f"column: amount of `{DB}`.`x`. SQLSTATE: 23502")
    dbx_cursor.execute(f"INSERT INTO main.{DB}.x VALUES (3, -1)")  # the CHECK is gone


def _keys_query(template: str, table: str) -> str:
    """dbt-databricks' query of a table's primary or foreign keys (tests/test_catalogs.py holds them, for m_incr)."""
    return template.format(schema=DB).replace("'m_incr'", f"'{table}'")


def test_keys_are_listed_in_information_schema_through_the_connector(dbx: Any, cursor: Any) -> None:
    """dbt-databricks' materialized view with a contract (its suite's test_basic.py) and its queries of a table's
    keys: Unity Catalog keeps a PRIMARY KEY / FOREIGN KEY of a column list or of ADD CONSTRAINT (never enforced) and
    lists it in table_constraints and key_column_usage; DROP CONSTRAINT removes it; CREATE OR REPLACE keeps only
    those it declares."""
    dbx_cursor, _ = dbx

    def rows(template: str, table: str) -> list[tuple]:
        dbx_cursor.execute(_keys_query(template, table))
        return [tuple(row) for row in dbx_cursor.fetchall()]

    cursor.execute("CREATE TABLE k_src (id BIGINT, value BIGINT)")
    cursor.execute("INSERT INTO k_src VALUES (1, 10), (2, 20)")
    dbx_cursor.execute(
        f"create or replace materialized view `main`.`{DB}`.`k_mv`\n    (`id` bigint NOT NULL COMMENT 'The key', "
        f"`value` bigint, constraint k_mv_pk primary key (id))\n    COMMENT 'Bob''s view'\n  as\n    "
        f"select id, value from `main`.`{DB}`.`k_src`")
    assert rows(PRIMARY_KEY, "k_mv") == [("k_mv_pk", "id")]
    assert rows(FOREIGN_KEYS, "k_mv") == []
    dbx_cursor.execute(f"SELECT count(*) FROM main.{DB}.k_mv")
    assert dbx_cursor.fetchall()[0][0] == 2

    dbx_cursor.execute(f"CREATE TABLE main.{DB}.k_child (id BIGINT NOT NULL PRIMARY KEY, mv_id BIGINT, "
                       f"CONSTRAINT k_child_mv FOREIGN KEY (mv_id) REFERENCES main.{DB}.k_mv (id))")
    assert rows(PRIMARY_KEY, "k_child") == [("k_child_pk", "id")]  # an unnamed key gets the table's name
    assert rows(FOREIGN_KEYS, "k_child") == [("k_child_mv", "mv_id", "main", DB, "k_mv", "id")]
    dbx_cursor.execute("SELECT constraint_type, is_deferrable, initially_deferred, enforced "
                       f"FROM main.information_schema.table_constraints WHERE table_schema = '{DB}' "
                       "AND table_name = 'k_child' ORDER BY constraint_name")
    assert [tuple(r) for r in dbx_cursor.fetchall()] == [("FOREIGN KEY", "YES", "NO", "NO"),
                                                        ("PRIMARY KEY", "YES", "NO", "NO")]
    dbx_cursor.execute(f"INSERT INTO main.{DB}.k_child VALUES (1, 7), (1, 8)")  # informational: not enforced

    dbx_cursor.execute(f"alter table `main`.`{DB}`.`k_child` drop constraint k_child_pk cascade")
    assert rows(PRIMARY_KEY, "k_child") == []
    dbx_cursor.execute(f"alter table `main`.`{DB}`.`k_child` add constraint k_child_key primary key(id, mv_id)")
    assert rows(PRIMARY_KEY, "k_child") == [("k_child_key", "id"), ("k_child_key", "mv_id")]
    _fails(cursor, "ALTER TABLE k_child ADD CONSTRAINT k_child_mv FOREIGN KEY (id) REFERENCES k_mv (id)",
           "DELTA_CONSTRAINT_ALREADY_EXISTS", "42710")
    dbx_cursor.execute(f"CREATE OR REPLACE TABLE main.{DB}.k_child (id BIGINT)")
    assert rows(PRIMARY_KEY, "k_child") == [] and rows(FOREIGN_KEYS, "k_child") == []


def test_describe_as_json_lists_the_keys_as_databricks(dbx: Any, cursor: Any) -> None:
    """DESCRIBE TABLE EXTENDED ... AS JSON has Databricks' `table_constraints` (dbt-databricks' suite,
    TestIncrementalUpdatePrimaryKeyConstraintDescribeJsonOn: with use_describe_as_json_for_relation_metadata, dbt
    reads a model's keys there, and kept the old primary key beside the new one when it was missing); the
    referenced table named in full; a table without keys has none."""
    dbx_cursor, _ = dbx

    def described(table: str) -> dict[str, Any]:
        dbx_cursor.execute(f"DESCRIBE TABLE EXTENDED `main`.`{DB}`.`{table}` AS JSON")
        return json.loads(dbx_cursor.fetchall()[0][0])

    dbx_cursor.execute(f"CREATE TABLE main.{DB}.j_parent (id BIGINT NOT NULL, version INT NOT NULL, "
                       "CONSTRAINT j_parent_pk PRIMARY KEY (id, version))")
    dbx_cursor.execute(f"CREATE TABLE main.{DB}.j_child (id BIGINT, parent BIGINT, v INT, "
                       f"CONSTRAINT j_fk FOREIGN KEY (parent, v) REFERENCES {DB}.j_parent (id, version))")
    assert described("j_parent")["table_constraints"] == "[(j_parent_pk,PRIMARY KEY (`id`, `version`))]"
    assert described("j_child")["table_constraints"] == (
        f"[(j_fk,FOREIGN KEY (`parent`, `v`) REFERENCES `main`.`{DB}`.`j_parent` (`id`, `version`))]")
    dbx_cursor.execute(f"ALTER TABLE main.{DB}.j_parent DROP CONSTRAINT j_parent_pk CASCADE")  # j_fk goes too
    assert "table_constraints" not in described("j_parent")
    assert "table_constraints" not in described("j_child")


def test_drop_primary_key_cascade_drops_the_foreign_keys_that_reference_it(dbx: Any, cursor: Any) -> None:
    """dbt-databricks drops a primary key a model no longer declares with DROP CONSTRAINT ... CASCADE; as on
    Databricks, the foreign keys of other tables that reference it go too (its suite's TestCascadingConstraintDrop
    found the foreign key still listed), and those of other tables stay; without CASCADE, a referenced primary key is
    kept and the statement fails (RESTRICT, the default)."""
    dbx_cursor, _ = dbx

    def referential() -> list[str]:
        dbx_cursor.execute("SELECT constraint_name FROM main.information_schema.referential_constraints "
                           f"WHERE constraint_schema = '{DB}' ORDER BY 1")
        return [row[0] for row in dbx_cursor.fetchall() if row[0].startswith("cx_")]

    cursor.execute("CREATE TABLE cx_parent (id BIGINT NOT NULL, CONSTRAINT cx_parent_pk PRIMARY KEY (id))")
    cursor.execute("CREATE TABLE cx_other (id BIGINT NOT NULL, CONSTRAINT cx_other_pk PRIMARY KEY (id))")
    dbx_cursor.execute(f"CREATE TABLE main.{DB}.cx_ref (id BIGINT, o BIGINT, "
                       f"CONSTRAINT cx_fk_parent FOREIGN KEY (id) REFERENCES main.{DB}.cx_parent (id), "
                       f"CONSTRAINT cx_fk_other FOREIGN KEY (o) REFERENCES {DB}.cx_other (id))")
    assert referential() == ["cx_fk_other", "cx_fk_parent"]
    # no CASCADE: RESTRICT, Databricks' default, refuses to orphan a foreign key; nothing changes
    message = _fails(cursor, f"ALTER TABLE `main`.`{DB}`.`cx_other` DROP CONSTRAINT cx_other_pk",
                     "CONSTRAINT_DEPENDENT_FOREIGN_KEYS", "2BP01")
    assert "`cx_fk_other`" in message and "CASCADE" in message
    _fails(cursor, "ALTER TABLE cx_other DROP CONSTRAINT cx_other_pk RESTRICT", "CONSTRAINT_DEPENDENT_FOREIGN_KEYS",
           "2BP01")
    assert referential() == ["cx_fk_other", "cx_fk_parent"]
    dbx_cursor.execute("SELECT constraint_name FROM main.information_schema.table_constraints "
                       f"WHERE table_schema = '{DB}' AND table_name = 'cx_other'")
    assert [row[0] for row in dbx_cursor.fetchall()] == ["cx_other_pk"]
    dbx_cursor.execute(f"ALTER TABLE `main`.`{DB}`.`cx_parent` DROP CONSTRAINT cx_parent_pk CASCADE")
    assert referential() == ["cx_fk_other"]
    dbx_cursor.execute(f"DESCRIBE TABLE EXTENDED main.{DB}.cx_ref AS JSON")
    assert "cx_fk_parent" not in json.loads(dbx_cursor.fetchall()[0][0])["table_constraints"]


def test_drop_primary_key_and_foreign_key_by_kind_and_columns(dbx: Any, cursor: Any) -> None:
    """Databricks' other DROP forms: `DROP PRIMARY KEY [IF EXISTS] [RESTRICT | CASCADE]` drops the table's primary key
    whatever its name, with DROP CONSTRAINT's RESTRICT (the default) and CASCADE; `DROP FOREIGN KEY [IF EXISTS]
    (cols)` the foreign key on exactly those columns in that order; no such key fails unless IF EXISTS. The
    connector with three-part names, PyHive with two."""
    dbx_cursor, failure = dbx

    def keys(table: str) -> list[tuple[str, str]]:
        dbx_cursor.execute("SELECT constraint_name, constraint_type FROM main.information_schema.table_constraints "
                           f"WHERE table_schema = '{DB}' AND table_name = '{table}' ORDER BY 1")
        return [tuple(row) for row in dbx_cursor.fetchall()]

    cursor.execute("CREATE TABLE dk_parent (id BIGINT NOT NULL, v INT NOT NULL, CONSTRAINT dk_pk PRIMARY KEY (id, v))")
    cursor.execute("CREATE TABLE dk_child (id BIGINT, v INT, w INT, "
                   f"CONSTRAINT dk_fk_iv FOREIGN KEY (id, v) REFERENCES {DB}.dk_parent (id, v), "
                   f"CONSTRAINT dk_fk_w FOREIGN KEY (w) REFERENCES {DB}.dk_parent (v))")
    parent, child = f"`main`.`{DB}`.`dk_parent`", f"`main`.`{DB}`.`dk_child`"
    with pytest.raises(failure) as failed:  # RESTRICT, the default: dk_fk_iv and dk_fk_w depend on it
        dbx_cursor.execute(f"ALTER TABLE {parent} DROP PRIMARY KEY")
    assert failed.value.message.startswith("[CONSTRAINT_DEPENDENT_FOREIGN_KEYS]")
    _fails(cursor, "ALTER TABLE dk_parent DROP PRIMARY KEY RESTRICT", "CONSTRAINT_DEPENDENT_FOREIGN_KEYS", "2BP01")
    assert keys("dk_parent") == [("dk_pk", "PRIMARY KEY")]
    # a foreign key is named by its columns in order: (v, id) is no key of dk_child
    _fails(cursor, "ALTER TABLE dk_child DROP FOREIGN KEY (v, id)", "DELTA_CONSTRAINT_DOES_NOT_EXIST", "42704")
    dbx_cursor.execute(f"ALTER TABLE {child} DROP FOREIGN KEY IF EXISTS (v, id)")
    dbx_cursor.execute(f"ALTER TABLE {child} DROP FOREIGN KEY (`ID`, v)")
    assert keys("dk_child") == [("dk_fk_w", "FOREIGN KEY")]
    dbx_cursor.execute(f"ALTER TABLE {parent} DROP PRIMARY KEY IF EXISTS CASCADE")  # dk_fk_w goes with it
    assert keys("dk_parent") == [] and keys("dk_child") == []
    with pytest.raises(failure) as failed:
        dbx_cursor.execute(f"ALTER TABLE {parent} DROP PRIMARY KEY")
    assert failed.value.message.startswith("[DELTA_CONSTRAINT_DOES_NOT_EXIST]")
    cursor.execute("ALTER TABLE dk_parent DROP PRIMARY KEY IF EXISTS")
    cursor.execute("ALTER TABLE dk_parent ADD CONSTRAINT dk_pk2 PRIMARY KEY (id)")
    cursor.execute("ALTER TABLE dk_parent DROP PRIMARY KEY")  # no foreign key references it: RESTRICT drops it
    assert keys("dk_parent") == []


def test_a_varchar_column_is_a_string_that_keeps_its_length(dbx: Any, cursor: Any) -> None:
    """dbt's seeds and snapshots create `VARCHAR(n)` columns (its suite's simple_snapshot files: the CREATE failed,
    the Arrow conversion knowing no varchar): as Spark with Delta, the column is a string whose metadata keeps
    `varchar(n)`, and every write fails a longer value with EXCEED_LIMIT_LENGTH (54006), committing nothing."""
    dbx_cursor, failure = dbx
    dbx_cursor.execute(f"CREATE TABLE `main`.`{DB}`.`vc` (id INTEGER, name VARCHAR(5), note STRING)")
    dbx_cursor.execute(f"INSERT INTO main.{DB}.vc VALUES (1, 'abcde', 'a note longer than five')")
    with pytest.raises(failure) as failed:
        dbx_cursor.execute(f"INSERT INTO main.{DB}.vc VALUES (2, 'abcdef', 'x')")
    assert failed.value.message.startswith("[EXCEED_LIMIT_LENGTH] Exceeds char/varchar type length limitation: 5.")
    _fails(cursor, "UPDATE vc SET name = concat(name, '!')", "EXCEED_LIMIT_LENGTH", "54006")
    cursor.execute("MERGE INTO vc t USING (SELECT 3 AS id, 'xyz' AS name) s ON t.id = s.id "
                   "WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, s.name)")
    assert sorted_rows(cursor, "SELECT id, name, length(note) FROM vc") == [(1, "abcde", 23), (3, "xyz", None)]


def test_a_char_column_is_a_string_padded_to_its_length(dbx: Any, cursor: Any) -> None:
    """dbt-databricks' contract on a table model declares `char(10)` (its suite's columns/test_get_columns.py: the
    CREATE failed, the Arrow conversion knowing no char): as Spark with Delta, the column is a string whose metadata
    keeps `char(n)`, DESCRIBE names that type, each write pads a shorter value with spaces and cuts trailing spaces
    past n, and a longer value fails with EXCEED_LIMIT_LENGTH (54006), committing nothing."""
    dbx_cursor, failure = dbx
    dbx_cursor.execute(f"CREATE TABLE `main`.`{DB}`.`ch` (id INTEGER, code CHAR(4), name VARCHAR(5))")
    dbx_cursor.execute(f"INSERT INTO main.{DB}.ch VALUES (1, 'ab', 'x'), (2, 'abcd  ', 'y'), (3, NULL, NULL)")
    with pytest.raises(failure) as failed:
        dbx_cursor.execute(f"INSERT INTO main.{DB}.ch VALUES (4, 'abcde', 'z')")
    assert failed.value.message.startswith("[EXCEED_LIMIT_LENGTH] Exceeds char/varchar type length limitation: 4.")
    dbx_cursor.execute(f"DESCRIBE TABLE main.{DB}.ch")
    assert [tuple(row[:2]) for row in dbx_cursor.fetchall()[:3]] == [
        ("id", "int"), ("code", "char(4)"), ("name", "varchar(5)")]
    assert sorted_rows(cursor, "SELECT id, code, length(code) FROM ch") == [
        (1, "ab  ", 4), (2, "abcd", 4), (3, None, None)]
    cursor.execute("UPDATE ch SET code = 'z' WHERE id = 3")
    assert sorted_rows(cursor, "SELECT code FROM ch WHERE id = 3") == [("z   ",)]
