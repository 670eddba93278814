"""read_kafka in the dialect: a streaming source with checked options (each wrong one reported where it is written),
a plan that names what it reads, and credentials hidden wherever a definition or a plan is shown. No JVM."""

from __future__ import annotations

import pytest

from sluicegate.dialect.errors import SqlError
from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.dialect.streaming.explain import explain
from sluicegate.dialect.streaming.kafka import KafkaOptionError, parse_options, redact_sql, server_hosts
from sluicegate.dialect.streaming.plan import Operator

HEAD = "CREATE STREAMING TABLE t AS SELECT CAST(value AS STRING) AS v FROM STREAM "
GOOD = "read_kafka(bootstrapServers => '127.0.0.1:9092', subscribe => 'orders')"


def at(sql: str, needle: str) -> tuple[int, int]:
    offset = sql.index(needle)
    return sql.count("\n", 0, offset) + 1, offset - (sql.rfind("\n", 0, offset) + 1) + 1


def test_a_kafka_source_is_planned_with_its_options_as_the_source_reads_them():
    plan = analyze(HEAD + "read_kafka(BOOTSTRAPSERVERS => 'h:1', subscribe => 'a,b', maxOffsetsPerTrigger => 50, "
                          "failOnDataLoss => false, `kafka.security.protocol` => 'PLAINTEXT')")
    (source,) = plan.sources
    assert source.kind == "kafka"
    assert source.options == {"bootstrapServers": "h:1", "subscribe": "a,b", "maxOffsetsPerTrigger": "50",
                              "failOnDataLoss": "false", "kafka.security.protocol": "PLAINTEXT"}
    assert Operator("stream", "stream __sg_source_0: Kafka subscribe a,b at h:1") in plan.operators
    assert plan.output_mode == "append"


def test_a_group_by_over_kafka_is_update_mode():
    plan = analyze("CREATE STREAMING TABLE c AS SELECT CAST(key AS STRING) AS k, count(*) AS n FROM STREAM "
                   + GOOD + " GROUP BY CAST(key AS STRING)")
    assert plan.output_mode == "update"


WRONG = [
    # id, arguments, the text the error points at (None: the function), words in the message
    ("unknown", "bootstrapServers => 'h:1', subscribe => 'o', topics => 'x'", "topics =>", "no option `topics`"),
    ("no-servers", "subscribe => 'o'", None, "needs the brokers"),
    ("two-subscriptions", "bootstrapServers => 'h:1', subscribe => 'o',\n subscribePattern => 'o.*'",
     "subscribePattern", "exactly one of subscribe, subscribePattern or assign"),
    ("no-subscription", "bootstrapServers => 'h:1'", None, "exactly one of"),
    ("bad-assign", "bootstrapServers => 'h:1', assign => '[0]'", "assign", "assign must be JSON"),
    ("bad-start", "bootstrapServers => 'h:1', subscribe => 'o', startingOffsets => 'first'", "startingOffsets",
     "startingOffsets must be"),
    ("bad-cap", "bootstrapServers => 'h:1', subscribe => 'o', maxOffsetsPerTrigger => -3", "maxOffsetsPerTrigger",
     "at least 1"),
    ("bad-bool", "bootstrapServers => 'h:1', subscribe => 'o', failOnDataLoss => 'maybe'", "failOnDataLoss",
     "true or false"),
    ("spark-style-servers", "bootstrapServers => 'h:1', subscribe => 'o', `kafka.bootstrap.servers` => 'h:2'",
     "`kafka.bootstrap.servers`", "named by bootstrapServers"),
    ("positional", "'h:1', subscribe => 'o'", "'h:1'", "only named options"),
]


@pytest.mark.parametrize("arguments, where, words", [w[1:] for w in WRONG], ids=[w[0] for w in WRONG])
def test_wrong_options_are_reported_where_they_are_written(arguments, where, words):
    sql = HEAD + f"read_kafka({arguments})"
    with pytest.raises(SqlError) as raised:
        analyze(sql)
    error = raised.value
    assert (error.error_class, error.sqlstate) == ("INVALID_KAFKA_OPTION", "42616")
    assert words in error.message and error.hint
    assert (error.line, error.column) == at(sql, where if where is not None else "read_kafka")


def test_the_options_parse_into_what_the_reader_uses():
    options = parse_options({"bootstrapservers": " h:1 ", "assign": '{"t":[0,2]}', "startingoffsets":
                             '{"t":{"0":5,"2":-2}}', "groupidprefix": "g", "kafka.client.id": "c"})
    assert options.assignment == {"t": (0, 2)} and options.starting == {"t": {0: 5, 2: -2}}
    assert (options.bootstrap_servers, options.group_id_prefix, options.client) == ("h:1", "g", {"client.id": "c"})
    assert options.wants("t") and not options.wants("u")
    pattern = parse_options({"bootstrapServers": "h", "subscribePattern": "ord.*"})
    assert pattern.wants("orders") and not pattern.wants("__consumer_offsets") and not pattern.wants("xorders")
    with pytest.raises(KafkaOptionError):
        parse_options({"bootstrapServers": "h", "subscribe": "t", "startingOffsets": "earliest",
                       "startingTimestamp": "1"})


def test_credentials_are_hidden_in_definitions_and_explain():
    sql = (HEAD + "read_kafka(bootstrapServers => 'h:1', subscribe => 'o', `kafka.sasl.password` => 's3cr''et',\n"
           "  `kafka.ssl.key.pem` => \"-----BEGIN-----\", `kafka.sasl.username` => 'alice', "
           "`kafka.sasl.oauthbearer.client.secret` => 'cs')")
    shown = redact_sql(sql)
    assert "s3cr" not in shown and "BEGIN" not in shown and "'cs'" not in shown
    assert "`kafka.sasl.username` => 'alice'" in shown and "bootstrapServers => 'h:1'" in shown
    text = explain(analyze(sql))
    assert "s3cr" not in text and "BEGIN" not in text and "kafka.sasl.password=*****" in text
    assert redact_sql(None) is None


def test_server_hosts():
    assert server_hosts("a:1, [::1]:2,SASL_SSL://b,c") == [("a", "1"), ("::1", "2"), ("b", None), ("c", None)]


def test_a_watermark_on_the_record_timestamp_bounds_a_windowed_aggregate():
    plan = analyze("CREATE STREAMING TABLE w TBLPROPERTIES ('sluicegate.output_mode' = 'append') AS SELECT "
                   "window(timestamp, '1 minute') AS w, count(*) AS n FROM STREAM " + GOOD
                   + " WATERMARK timestamp DELAY OF INTERVAL 10 SECONDS GROUP BY window(timestamp, '1 minute')")
    (source,) = plan.sources
    assert (source.kind, source.watermark.column, source.watermark.delay) == ("kafka", "timestamp", "10 seconds")
    assert plan.output_mode == "append"
