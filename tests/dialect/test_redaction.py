"""What of a statement's text the query history and the statement log keep (no JVM): literals become `?` by default,
secret options are masked even when the text is kept whole, and text that does not parse is kept only as a short
prefix with its quoted strings and numbers replaced."""

from __future__ import annotations

import pytest

from sluicegate.dialect.redaction import (
    PREFIX_CHARS,
    is_secret_key,
    mask_secret_assignments,
    redact_statement,
)

SECRETS = ("pw-Sekr1t", "AKIAEXAMPLE", "jaas-Sekr1t", "tok-Sekr1t")


def test_literals_become_placeholders_and_names_stay() -> None:
    text = redact_statement("SELECT name, 'alice@example.com' AS mail FROM db.people WHERE age > 42 LIMIT 10;")
    assert text == "SELECT name, ? AS mail FROM db.people WHERE age > ? LIMIT ?"


def test_keeping_the_text_whole_keeps_literals() -> None:
    assert redact_statement("SELECT 'abc', 42", keep_literals=True) == "SELECT 'abc', 42"


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("sql", [
    "CREATE TABLE t USING parquet OPTIONS (password 'pw-Sekr1t', path '/x') AS SELECT 1",
    "CREATE TABLE t USING delta TBLPROPERTIES ('kafka.sasl.jaas.config'='jaas-Sekr1t', 'delta.appendOnly'='true')",
    "CREATE TABLE s USING parquet OPTIONS ('fs.s3a.access.key'='AKIAEXAMPLE', 'aws_secret_access_key'='pw-Sekr1t')",
    "CREATE STREAMING TABLE s AS SELECT * FROM STREAM read_kafka(bootstrapServers => 'h:9092', subscribe => 't', "
    "`kafka.sasl.jaas.config` => 'jaas-Sekr1t')",
    "SET spark.hadoop.fs.s3a.secret.key=pw-Sekr1t",
    "SET spark.sluicegate.token = 'tok-Sekr1t'",
])
def test_secrets_never_survive_even_when_the_text_is_kept_whole(sql: str, keep: bool) -> None:
    text = redact_statement(sql, keep_literals=keep)
    assert not any(secret in text for secret in SECRETS), text
    assert "***" in text or "?" in text


def test_option_names_survive_redaction() -> None:
    text = redact_statement("CREATE TABLE t USING delta TBLPROPERTIES ('delta.appendOnly'='true')")
    assert "'delta.appendOnly'" in text and "'true'" not in text


def test_text_that_does_not_parse_is_a_redacted_prefix() -> None:
    text = redact_statement("SELEC 'alice' , 12345 FROM " + "x " * 300)
    assert "alice" not in text and "12345" not in text
    assert text.startswith("SELEC ? , ? FROM") and text.endswith("...") and len(text) <= PREFIX_CHARS + 4


def test_an_unterminated_quote_is_still_redacted() -> None:
    assert "secret stuff" not in redact_statement("SELECT 'secret stuff")


@pytest.mark.parametrize("key", ["password", "kafka.sasl.jaas.config", "fs.s3a.secret.key", "aws_access_key_id",
                                 "spark.sluicegate.token", "kafka.sasl.password", "ssl.key.password"])
def test_secret_keys(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize("key", ["path", "subscribe", "delta.appendOnly", "bootstrapServers", "keyspace_name"])
def test_ordinary_keys(key: str) -> None:
    assert not is_secret_key(key)


def test_error_messages_lose_secret_assignments() -> None:
    message = "option password='pw-Sekr1t' was refused; token => tok-Sekr1t too"
    masked = mask_secret_assignments(message)
    assert "pw-Sekr1t" not in masked and "tok-Sekr1t" not in masked and "refused" in masked


# -- from sqlglot's tokens: what the query history's writer runs for every statement, without a parse ------------


@pytest.mark.parametrize(("sql", "stored"), [
    ("select sum(amount) from db.sales where region = 'EU' and n > 10", "SELECT SUM(amount) FROM db.sales WHERE "
                                                                        "region = ? AND n > ?"),
    ("SELECT *\n  FROM t -- the customer's name is 'alice'\n WHERE id IN (1, 2, 3) /* 'bob' */", "SELECT * FROM t "
                                                                                              "WHERE id IN (?, ?, ?)"),
    ("CREATE TABLE t(id INT, name STRING) USING delta", "CREATE TABLE t(id INT, name STRING) USING delta"),
    ("INSERT INTO db.t(id) VALUES (-1), (x'00ff')", "INSERT INTO db.t(id) VALUES (-?), (?)"),
    ("SELECT `weird col`, date '2024-01-02' FROM range(0, 5) AS r(id)", "SELECT `weird col`, DATE ? FROM "
                                                                        "RANGE(?, ?) AS r(id)"),
    ("ALTER TABLE t UNSET TBLPROPERTIES ('delta.appendOnly', 'comment')", "ALTER TABLE t UNSET TBLPROPERTIES "
                                                                          "('delta.appendOnly', 'comment')"),
])
def test_statements_that_parse_are_written_from_their_tokens(sql: str, stored: str) -> None:
    assert redact_statement(sql, parsed=True) == stored
    assert redact_statement(sql) == stored   # the parse finds they parse: the same text


def test_what_the_caller_knows_does_not_parse_is_a_prefix_without_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlglot

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(sqlglot, "parse_one", no_parse)
    assert redact_statement("SET k = 'v' AND 42", parsed=False) == "SET k = ? AND ?"
    assert redact_statement("SELECT 'v', 42", parsed=True) == "SELECT ?, ?"


@pytest.mark.parametrize("sql", [
    "SELECT * FROM STREAM read_kafka(bootstrapServers => 'h:9092', `kafka.sasl.jaas.config` => 'jaas-Sekr1t')",
    "CREATE TABLE s USING parquet OPTIONS (path '/x', 'fs.s3a.secret.key' 'pw-Sekr1t') AS SELECT 1",
    "CREATE TABLE s USING parquet OPTIONS (fs.s3a.secret.key = 'pw-Sekr1t')",
    "CREATE TABLE s USING delta TBLPROPERTIES (\n  'kafka.sasl.password' =\n 'pw-Sekr1t')",
])
def test_kept_whole_from_tokens_secrets_are_masked(sql: str) -> None:
    text = redact_statement(sql, keep_literals=True, parsed=True)
    assert "Sekr1t" not in text and "'***'" in text, text
