"""databricks-sql-connector (the real `databricks.sql.connect`) against a real gateway's HTTP port with a Bearer
token: Arrow results (LZ4 or not), columnar results (the connector without pyarrow, its default install), every
type with NULLs, a million rows counted through fetchmany, cancel from another thread, errors with their class and
SQLSTATE, the metadata calls, an initial namespace, a streaming table and a materialized view; and the Databricks
SQLAlchemy dialect. The connector needs `_connection_uri` for http:// and `enable_telemetry=False` (else it GETs
feature flags from https://<host>:443 first)."""

from __future__ import annotations

import datetime as dt
import json
import logging
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from pyhive_helpers import ALL_TYPES, poll_until

from sluicegate.gateway.auth.tokens import create_token
from sluicegate.gateway.thrift.convert import with_sqlstate

sql = pytest.importorskip("databricks.sql")

SCHEMA = "dbx_clients_db"
USER = "dbx_user"

NAMES = ["t", "s", "i", "b", "f", "d", "dec", "str", "bin", "bool", "day", "ts", "arr", "m", "st"]
TYPE_NAMES = ["tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "string", "binary", "boolean",
              "date", "timestamp", "array", "map", "struct"]
SCALARS = {"t": 1, "s": 2, "i": 3, "b": 4, "f": 1.5, "d": 2.25, "dec": Decimal("12.34"), "str": "text",
           "bin": b"\x01\x02", "bool": True, "day": dt.date(2024, 1, 2)}


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dbx_tokens") / "tokens"


@pytest.fixture(scope="module")
def dbx_gateway(start_gateway: Any, token_file: Path) -> Any:
    return start_gateway({"server": {"http_port": 0}, "auth": {"token_file": str(token_file)}})


@pytest.fixture(scope="module")
def token(token_file: Path) -> str:
    return create_token(token_file, USER, "databricks-sql-connector tests")[1]


def connect(gateway: Any, token: str, **kwargs: Any) -> Any:
    """As a user writes it for sluicegate: the private `_connection_uri` (the connector forces https:// otherwise)
    and no telemetry (its feature-flag GET goes to https://<server_hostname>:443 whatever the port)."""
    return sql.connect(server_hostname="127.0.0.1", http_path="/cliservice", access_token=token,
                       _connection_uri=f"http://127.0.0.1:{gateway.server.http_port}/cliservice",
                       enable_telemetry=False, **kwargs)


@contextmanager
def dbx_cursor(gateway: Any, token: str, **kwargs: Any) -> Iterator[Any]:
    connection = connect(gateway, token, **kwargs)
    try:
        with connection.cursor() as cursor:
            yield cursor
    finally:
        connection.close()


@pytest.fixture(scope="module")
def schema(dbx_gateway: Any, token: str) -> str:
    with dbx_cursor(dbx_gateway, token) as cursor:
        cursor.execute(f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
    return SCHEMA


def result_queue(cursor: Any) -> str:
    """Which form the rows came in: ArrowQueue (ARROW_BASED_SET) or ColumnQueue (COLUMN_BASED_SET)."""
    return type(cursor.active_result_set.results).__name__


# -- results --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [{}, {"use_cloud_fetch": False, "enable_query_result_lz4_compression": False}],
                         ids=["arrow-lz4", "arrow-plain"])
def test_every_type_with_nulls_as_arrow(dbx_gateway: Any, token: str, options: dict[str, Any]) -> None:
    with dbx_cursor(dbx_gateway, token, **options) as cursor:
        cursor.execute(ALL_TYPES)
        assert result_queue(cursor) == "ArrowQueue"
        assert [(d[0], d[1]) for d in cursor.description] == list(zip(NAMES, TYPE_NAMES, strict=True))
        assert cursor.description[6][4:6] == (10, 2)  # the decimal's precision and scale
        first, second = (row.asDict() for row in cursor.fetchall())
    assert {name: first[name] for name in SCALARS} == SCALARS
    assert first["ts"] == dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone.utc)  # session zone UTC
    assert list(first["arr"]) == [1, 2] and first["m"] == [("k", 1)] and first["st"] == {"a": 1, "b": "x"}
    assert all(value is None for value in second.values())


CHILD_WITHOUT_PYARROW = """
import json, sys
class NoPyarrow:
    def find_spec(self, name, path=None, target=None):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("pyarrow is not installed (the connector's default install)")
sys.meta_path.insert(0, NoPyarrow())
from databricks import sql
port, token, query = sys.argv[1:]
connection = sql.connect(server_hostname="127.0.0.1", http_path="/cliservice", access_token=token,
                         _connection_uri=f"http://127.0.0.1:{port}/cliservice", enable_telemetry=False)
cursor = connection.cursor()
cursor.execute(query)
rows = [[repr(value) for value in row] for row in cursor.fetchall()]
print(json.dumps({"queue": type(cursor.active_result_set.results).__name__, "rows": rows,
                  "types": [d[1] for d in cursor.description]}))
connection.close()
"""


def test_every_type_with_nulls_as_columns_without_pyarrow(dbx_gateway: Any, token: str) -> None:
    """Without pyarrow (its default install since 4.0) the connector cannot read Arrow and does not ask for it
    (there is no other switch): the same statement comes back as HiveServer2 columns."""
    done = subprocess.run([sys.executable, "-c", CHILD_WITHOUT_PYARROW, str(dbx_gateway.server.http_port), token,
                           ALL_TYPES], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["queue"] == "ColumnQueue" and answer["types"] == TYPE_NAMES
    first, second = answer["rows"]
    assert first == [repr(v) for v in SCALARS.values()] + [
        repr(dt.datetime(2024, 1, 2, 3, 4, 5, 123456)), "'[1,2]'", """'{"k":1}'""", """'{"a":1,"b":"x"}'"""]
    assert second == ["None"] * len(NAMES)


def test_a_million_rows_counted_through_fetchmany(dbx_gateway: Any, token: str) -> None:
    with dbx_cursor(dbx_gateway, token) as cursor:
        cursor.execute("SELECT id, id * 2 AS a, CAST(id AS STRING) AS s, id / 3.0D AS d, id % 7 = 0 AS b "
                       "FROM range(1000000)")
        count = id_sum = 0
        last = None
        while rows := cursor.fetchmany(100_000):
            count += len(rows)
            id_sum += sum(row[0] for row in rows)
            last = rows[-1]
    assert count == 1_000_000 and id_sum == 999_999 * 1_000_000 // 2
    assert tuple(last) == (999_999, 1_999_998, "999999", 333_333.0, True)  # 999999 = 7 * 142857


def test_initial_namespace_and_dml(dbx_gateway: Any, token: str, schema: str) -> None:
    with dbx_cursor(dbx_gateway, token, catalog="main", schema=schema) as cursor:
        cursor.execute("SELECT current_database(), current_user()")
        assert tuple(cursor.fetchone()) == (schema, USER)  # the token's owner
        cursor.execute("CREATE OR REPLACE TABLE dbx_people (id BIGINT, name STRING) USING DELTA")
        cursor.execute("INSERT INTO dbx_people VALUES (1, 'ada'), (2, 'grace')")
        cursor.execute("SELECT name FROM dbx_people ORDER BY id")
        assert [row[0] for row in cursor.fetchall()] == ["ada", "grace"]


def test_a_short_statement_is_one_http_request(start_gateway: Any, token_file: Path, token: str,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """Direct results: status, metadata and rows in the ExecuteStatement response, the operation closed there; the
    connector then sends nothing else. (A gateway of its own that waits long enough on a loaded machine.)"""
    patient = start_gateway({"server": {"http_port": 0}, "auth": {"token_file": str(token_file)},
                             "operation": {"databricks_long_polling_timeout": 60.0}})
    with dbx_cursor(patient, token) as cursor:
        cursor.execute("SELECT 1 AS one")  # a first statement warms the session up
        cursor.fetchall()
        with caplog.at_level(logging.DEBUG, logger="urllib3.connectionpool"):
            caplog.clear()
            cursor.execute("SELECT 41 + 1 AS answer")
            assert cursor.fetchall()[0][0] == 42
            posts = [r.getMessage() for r in caplog.records if "POST /cliservice" in r.getMessage()]
    assert len(posts) == 1, posts


def test_inline_parameters_work_and_native_ones_are_refused_with_the_way_around(dbx_gateway: Any,
                                                                                 token: str) -> None:
    with dbx_cursor(dbx_gateway, token, use_inline_params=True) as cursor:
        cursor.execute("SELECT %(n)s + 1 AS answer, %(s)s AS quoted", {"n": 41, "s": "it's"})
        assert tuple(cursor.fetchone()) == (42, "it's")
    with dbx_cursor(dbx_gateway, token) as cursor:
        with pytest.raises(sql.exc.DatabaseError) as refused:
            cursor.execute("SELECT :n + 1 AS answer", {"n": 41})
        assert "[FEATURE_NOT_SUPPORTED]" in str(refused.value) and "use_inline_params" in str(refused.value)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for 127.0.0.1: (cert, key)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("dbx_tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def test_https_with_the_certificate_trusted(start_gateway: Any, token_file: Path, token: str,
                                            certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    tls = start_gateway({"server": {"http_port": 0, "tls_cert": str(cert), "tls_key": str(key)},
                         "auth": {"token_file": str(token_file)}})
    connection = sql.connect(server_hostname="127.0.0.1", http_path="/cliservice", access_token=token,
                             _connection_uri=f"https://127.0.0.1:{tls.server.http_port}/cliservice",
                             _tls_trusted_ca_file=str(cert), enable_telemetry=False)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user() AS who")
            assert cursor.fetchone()[0] == USER
    finally:
        connection.close()


# -- cancel and errors ----------------------------------------------------------------------------------------


def test_cancel_from_another_thread(dbx_gateway: Any, token: str) -> None:
    """The connector sends CancelOperation from the calling thread once ExecuteStatement has answered (it knows the
    operation only then) and between two of its status polls (one lock guards its transport)."""
    with dbx_cursor(dbx_gateway, token) as cursor:
        outcome: list[Any] = []

        def run() -> None:
            try:
                cursor.execute("SELECT count(*) FROM range(0, 1000000000000, 1, 2)")  # minutes of work
                outcome.append(cursor.fetchall())
            except Exception as exc:  # noqa: BLE001 - the test asserts what came
                outcome.append(exc)

        worker = threading.Thread(target=run, name="dbx-long-query")
        worker.start()
        poll_until(lambda: cursor.active_command_id is not None, "the statement's operation id", timeout=60)
        cursor.cancel()
        worker.join(120)
        assert not worker.is_alive(), "the cancelled statement did not end"
        assert len(outcome) == 1 and isinstance(outcome[0], sql.exc.DatabaseError), outcome
        assert "[OPERATION_CANCELED]" in str(outcome[0]) and "SQLSTATE: 57014" in str(outcome[0])
    with dbx_cursor(dbx_gateway, token) as cursor:
        cursor.execute("SELECT 1 AS one")
        assert cursor.fetchall()[0][0] == 1


def test_databricks_sessions_wait_briefly_hive_sessions_long(start_gateway: Any, token_file: Path,
                                                              token: str) -> None:
    """What lets the cancel above through: ExecuteStatement's wait for direct results and a status poll of a Spark
    protocol session last `operation.databricks_long_polling_timeout`, a Hive session's `long_polling_timeout`."""
    from databricks.sql.thrift_api.TCLIService import TCLIService
    from databricks.sql.thrift_api.TCLIService import ttypes as T
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.transport.THttpClient import THttpClient

    waits = start_gateway({"server": {"http_port": 0}, "auth": {"token_file": str(token_file)},
                           "operation": {"long_polling_timeout": 5.0, "databricks_long_polling_timeout": 0.2}})
    transport = THttpClient(f"http://127.0.0.1:{waits.server.http_port}/cliservice")
    transport.setCustomHeaders({"Authorization": f"Bearer {token}"})
    client = TCLIService.Client(TBinaryProtocol(transport))
    long_query = "SELECT count(*) FROM range(0, 1000000000000, 1, 2)"
    spark = T.TOpenSessionReq(client_protocol_i64=T.TProtocolVersion.SPARK_CLI_SERVICE_PROTOCOL_V7)
    spark.client_protocol = None
    hive = T.TOpenSessionReq(client_protocol=T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10)
    for opened, brief in ((client.OpenSession(spark), True), (client.OpenSession(hive), False)):
        session = opened.sessionHandle
        started = time.monotonic()
        executed = client.ExecuteStatement(T.TExecuteStatementReq(
            sessionHandle=session, statement=long_query, runAsync=True,
            getDirectResults=T.TSparkGetDirectResults(maxRows=1000, maxBytes=1 << 20)))
        answered = time.monotonic() - started
        started = time.monotonic()
        polled = client.GetOperationStatus(T.TGetOperationStatusReq(operationHandle=executed.operationHandle))
        status_wait = time.monotonic() - started
        assert polled.operationState == T.TOperationState.RUNNING_STATE
        client.CancelOperation(T.TCancelOperationReq(operationHandle=executed.operationHandle))
        client.CloseSession(T.TCloseSessionReq(sessionHandle=session))
        if brief:
            assert executed.directResults.operationStatus.operationState == T.TOperationState.RUNNING_STATE
            assert answered < 4.0 and status_wait < 4.0, (answered, status_wait)
        else:
            assert executed.directResults is None  # a Hive session: no waiting in ExecuteStatement at all
            assert status_wait >= 4.9, status_wait


@pytest.mark.parametrize(("statement", "error_class", "sqlstate", "hint"), [
    ("SELECT no_such_column FROM range(1)", "UNRESOLVED_COLUMN", "42703", None),  # Spark's own
    ("SELECT reflect('java.lang.System', 'exit', 0)", "STATEMENT_NOT_ALLOWED", "42501", "hint: "),  # the policy's
    (f"CREATE STREAMING TABLE {SCHEMA}.dbx_sorted AS SELECT * FROM STREAM(dbx_nope) ORDER BY 1",
     "STREAMING_UNSUPPORTED_OPERATION", "0A000", "hint: remove ORDER BY"),  # sluicegate's analysis
])
def test_errors_carry_their_class_and_sqlstate(dbx_gateway: Any, token: str, statement: str, error_class: str,
                                               sqlstate: str, hint: str | None) -> None:
    """The connector drops TStatus.sqlState and keeps the message (and the operation id in `context`): the class
    opens the message and the SQLSTATE ends its first line, as in Spark's own texts."""
    with dbx_cursor(dbx_gateway, token) as cursor:
        with pytest.raises(sql.exc.ServerOperationError) as failed:
            cursor.execute(statement)
        message = failed.value.message
        assert message.startswith(f"[{error_class}")
        assert message.splitlines()[0].endswith(f"SQLSTATE: {sqlstate}")
        assert hint is None or hint in message
        assert len(failed.value.context["operation-id"]) == 36
        cursor.execute("SELECT 2 AS two")  # the connection goes on
        assert cursor.fetchall()[0][0] == 2


def test_sqlstate_is_added_to_the_first_line_once() -> None:
    assert with_sqlstate("[X] bad\n  hint: y", "42000") == "[X] bad SQLSTATE: 42000\n  hint: y"
    assert with_sqlstate("[X] bad SQLSTATE: 42703\n  at line 1", "42703") == "[X] bad SQLSTATE: 42703\n  at line 1"
    assert with_sqlstate("[X] bad", None) == "[X] bad"


# -- metadata, streaming tables, materialized views -----------------------------------------------------------


def test_metadata_calls(dbx_gateway: Any, token: str, schema: str) -> None:
    with dbx_cursor(dbx_gateway, token) as cursor:
        cursor.execute(f"CREATE OR REPLACE TABLE {schema}.dbx_meta (id BIGINT, amount DECIMAL(10,2), tag STRING)")
        cursor.schemas(schema_name=schema)
        assert [row.TABLE_SCHEM for row in cursor.fetchall()] == [schema]
        cursor.tables(schema_name=schema, table_name="dbx_meta")
        tables = cursor.fetchall()
        assert [(row.TABLE_SCHEM, row.TABLE_NAME, row.TABLE_TYPE) for row in tables] == [(schema, "dbx_meta",
                                                                                          "TABLE")]
        cursor.columns(schema_name=schema, table_name="dbx_meta")
        columns = [(row.COLUMN_NAME, row.TYPE_NAME, row.ORDINAL_POSITION) for row in cursor.fetchall()]
        assert columns == [("id", "BIGINT", 1), ("amount", "DECIMAL(10,2)", 2), ("tag", "STRING", 3)]


def test_a_streaming_table_and_a_materialized_view(dbx_gateway: Any, token: str, schema: str) -> None:
    with dbx_cursor(dbx_gateway, token, catalog="main", schema=schema) as cursor:
        cursor.execute("CREATE OR REPLACE TABLE dbx_orders (id BIGINT, amount INT) USING DELTA")
        cursor.execute("INSERT INTO dbx_orders VALUES (1, 10), (2, 20)")
        cursor.execute("CREATE OR REFRESH STREAMING TABLE dbx_orders_copy AS "
                       "SELECT id, amount * 2 AS doubled FROM STREAM(dbx_orders)")
        cursor.execute("CREATE OR REFRESH MATERIALIZED VIEW dbx_totals AS "
                       "SELECT count(*) AS n, sum(amount) AS total FROM dbx_orders")
        cursor.execute("SELECT n, total FROM dbx_totals")
        assert tuple(cursor.fetchone()) == (2, 30)
        cursor.execute("INSERT INTO dbx_orders VALUES (3, 30)")

        def copied() -> list[tuple[Any, ...]]:
            cursor.execute("SELECT id, doubled FROM dbx_orders_copy ORDER BY id")
            rows = [tuple(row) for row in cursor.fetchall()]
            return rows if len(rows) == 3 else []

        assert poll_until(copied, "the streaming table to copy three rows") == [(1, 20), (2, 40), (3, 60)]
        cursor.execute("REFRESH MATERIALIZED VIEW dbx_totals")
        cursor.execute("SELECT n, total FROM dbx_totals")
        assert tuple(cursor.fetchone()) == (3, 60)
        cursor.tables(schema_name=schema, table_name="dbx_%")
        kinds = {row.TABLE_NAME: row.TABLE_TYPE for row in cursor.fetchall()}
        assert kinds["dbx_orders_copy"] == "STREAMING TABLE" and kinds["dbx_totals"] == "MATERIALIZED VIEW"
        cursor.execute("DROP STREAMING TABLE dbx_orders_copy")
        cursor.execute("DROP MATERIALIZED VIEW dbx_totals")


def test_an_auto_cdc_table_and_flow(dbx_gateway: Any, token: str, schema: str) -> None:
    """AUTO CDC as a Databricks user writes it: change events in Delta tables, a table kept by key from one, a
    flow adding the other, fed with INSERTs and read back."""
    cdc = "KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op)"
    with dbx_cursor(dbx_gateway, token, catalog="main", schema=schema) as cursor:
        for table in ("dbx_changes", "dbx_more_changes"):
            cursor.execute(f"CREATE OR REPLACE TABLE {table} (id BIGINT, op STRING, seq BIGINT, name STRING) "
                           "USING DELTA")
        cursor.execute("INSERT INTO dbx_changes VALUES (1, 'U', 1, 'ann'), (2, 'U', 1, 'bob'), (1, 'U', 3, 'ann3')")
        cursor.execute("CREATE OR REFRESH STREAMING TABLE dbx_customers "
                       f"FLOW AUTO CDC FROM STREAM(dbx_changes) {cdc} STORED AS SCD TYPE 1")
        cursor.execute("SELECT id, seq, name FROM dbx_customers ORDER BY id")
        assert [tuple(row) for row in cursor.fetchall()] == [(1, 3, "ann3"), (2, 1, "bob")]
        cursor.execute(f"CREATE FLOW dbx_from_more AS AUTO CDC INTO dbx_customers FROM STREAM(dbx_more_changes) {cdc}")
        cursor.execute("INSERT INTO dbx_more_changes VALUES (1, 'U', 2, 'late'), (2, 'D', 4, NULL), (3, 'U', 1, 'cy')")

        def applied() -> list[tuple[Any, ...]]:
            cursor.execute("SELECT id, seq, name FROM dbx_customers ORDER BY id")
            rows = [tuple(row) for row in cursor.fetchall()]
            return rows if rows == [(1, 3, "ann3"), (3, 1, "cy")] else []

        assert poll_until(applied, "the flow's changes applied by key")
        cursor.execute("SHOW FLOWS LIKE 'dbx_*'")
        assert [(row[1], row[2]) for row in cursor.fetchall()] == [("dbx_from_more", "dbx_customers")]
        cursor.execute("DROP TABLE dbx_customers")


# -- SQLAlchemy -----------------------------------------------------------------------------------------------


def test_the_databricks_sqlalchemy_dialect_lists_tables(dbx_gateway: Any, token: str, schema: str) -> None:
    pytest.importorskip("databricks.sqlalchemy")
    with dbx_cursor(dbx_gateway, token) as cursor:
        cursor.execute(f"CREATE OR REPLACE TABLE {schema}.dbx_listed (id BIGINT)")
    engine = sa.create_engine(
        f"databricks://token:{token}@127.0.0.1?http_path=/cliservice&catalog=main&schema={schema}",
        connect_args={"_connection_uri": f"http://127.0.0.1:{dbx_gateway.server.http_port}/cliservice",
                      "enable_telemetry": False})
    try:
        assert "dbx_listed" in sa.inspect(engine).get_table_names(schema=schema)
        with engine.connect() as connection:
            assert connection.execute(sa.text(f"SELECT count(*) FROM {schema}.dbx_listed")).scalar() == 0
    finally:
        engine.dispose()
