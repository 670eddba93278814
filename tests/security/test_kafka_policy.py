"""read_kafka makes the server open connections and hand settings to librdkafka: a user may reach only the brokers
`security.kafka_servers` lists (loopback by default), may give only the client settings on the allow-list (none
that runs a command, loads a library or reads the server's files), and the credentials a table's owner gives are
shown to nobody, the owner included: not in DESCRIBE, EXPLAIN, SHOW CREATE TABLE, the event log or an error."""

from __future__ import annotations

from typing import Any

import pytest
from kafka_broker import MockKafka
from pyhive_helpers import poll_until
from security_helpers import own_database, refused, still_serves

SECRET = "hunter2-do-not-show"


@pytest.fixture()
def cursor(connect: Any, request: pytest.FixtureRequest) -> Any:
    yield from own_database(connect, request)   # dropped, its streams stopped, before the broker goes


def _create(servers: str, extra: str = "") -> str:
    return ("CREATE STREAMING TABLE copied AS SELECT CAST(value AS STRING) AS v FROM STREAM read_kafka("
            f"bootstrapServers => '{servers}', subscribe => 'secrets'{extra})")


def _no_table(cursor: Any) -> None:
    cursor.execute("SHOW TABLES")
    assert [row[1] for row in cursor.fetchall()] == []


@pytest.mark.parametrize("servers", ["10.0.0.7:9092", "127.0.0.1:9092,metadata.internal:80", "localhost.evil.example",
                                     "SASL_SSL://192.168.1.1:9093", "[fe80::1]:9092"])
def test_brokers_outside_the_allow_list_are_refused(cursor: Any, servers: str) -> None:
    message = refused(cursor, _create(servers), "STATEMENT_NOT_ALLOWED")
    assert "security.kafka_servers" in message
    _no_table(cursor)
    still_serves(cursor)


@pytest.mark.parametrize("setting", ["sasl.kerberos.kinit.cmd", "plugin.library.paths", "ssl.ca.location",
                                     "ssl.keystore.location", "sasl.oauthbearer.token.endpoint.url",
                                     "test.mock.num.brokers", "group.id", "isolation.level", "debug"])
def test_client_settings_off_the_allow_list_are_refused(cursor: Any, setting: str) -> None:
    message = refused(cursor, _create("127.0.0.1:9092", f", `kafka.{setting}` => 'touch /tmp/pwned'"),
                      "STATEMENT_NOT_ALLOWED")
    assert "touch /tmp/pwned" not in message
    _no_table(cursor)


def test_another_gateway_may_allow_named_brokers(start_gateway: Any, kafka: MockKafka) -> None:
    from pyhive import hive

    host, port = kafka.bootstrap.split(":")
    narrow = start_gateway({"security": {"kafka_servers": [f"{host}:{int(port) + 1}"]}})
    conn = hive.connect(narrow.host, narrow.port, username="mallory")
    try:
        cur = conn.cursor()
        cur.execute("CREATE DATABASE IF NOT EXISTS sec_kafka_narrow")
        refused(cur, _create(kafka.bootstrap).replace("copied", "sec_kafka_narrow.copied"), "STATEMENT_NOT_ALLOWED")
        cur.execute("DROP DATABASE sec_kafka_narrow CASCADE")
    finally:
        conn.close()


def test_credentials_are_shown_to_nobody(cursor: Any, streams: Any, kafka: MockKafka, as_user: Any) -> None:
    kafka.produce("secrets", [(None, b"one")])
    sql = _create(kafka.bootstrap, f", startingOffsets => 'earliest', `kafka.sasl.username` => 'mallory', "
                                   f"`kafka.sasl.password` => '{SECRET}', `kafka.ssl.key.password` => '{SECRET}'")
    cursor.execute(sql)
    database = cursor.database
    streams.wait_for(database, "copied")
    cursor.execute("SELECT v FROM copied")
    assert cursor.fetchall() == [("one",)]
    shown: list[str] = []
    for statement in ("DESCRIBE STREAMING TABLE copied", "DESCRIBE TABLE EXTENDED copied", "SHOW CREATE TABLE copied",
                      "EXPLAIN " + sql, "SHOW STREAMING TABLES", "SHOW TBLPROPERTIES copied",
                      "SELECT * FROM event_log(TABLE(copied))"):
        cursor.execute(statement)
        shown.append(repr(cursor.fetchall()))
    text = "\n".join(shown)
    assert "mallory" in text and "*****" in text        # the definition is there, its secrets are not
    assert SECRET not in text
    poll_until(lambda: streams.store.events(database, "copied", 50), "the stream's events")
    assert SECRET not in repr(streams.store.events(database, "copied", 50))
    error = refused(cursor, sql.replace("subscribe =>", "`kafka.debug` => 'all', subscribe =>"),
                    "STATEMENT_NOT_ALLOWED")
    assert SECRET not in error
    still_serves(as_user("someone_else"))
