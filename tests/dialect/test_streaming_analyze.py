"""The streaming analysis accepts what can run incrementally and plans it: sources, output mode and why, keys."""

from __future__ import annotations

import pytest
import sqlglot

from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.dialect.streaming.plan import Operator, SourceSpec, StaticTableSpec, WatermarkSpec

CLICKS_PER_COUNTRY = """CREATE OR REFRESH STREAMING TABLE analytics.clicks_per_country
COMMENT 'clicks per country' TBLPROPERTIES ('pipelines.trigger.interval' = '1 second')
AS SELECT country, count(*) AS clicks
FROM STREAM read_files('/data/clicks', format => 'json', schema => 'country STRING, ts TIMESTAMP')
GROUP BY country"""

WINDOWED = """CREATE STREAMING TABLE counts_10s AS
SELECT window(ts, '10 seconds') AS w, count(*) AS n
FROM STREAM events WATERMARK ts DELAY OF INTERVAL 10 SECONDS
GROUP BY window(ts, '10 seconds')"""

WINDOWED_APPEND = WINDOWED.replace(" AS\n", " TBLPROPERTIES ('sluicegate.output_mode' = 'append') AS\n", 1)

YAHOO = """CREATE STREAMING TABLE campaign_views AS
SELECT c.campaign_id, window(e.event_time, '10 seconds') AS time_window, count(*) AS views
FROM STREAM(ad_events) WATERMARK event_time DELAY OF INTERVAL 10 SECONDS AS e
JOIN campaigns c ON e.ad_id = c.ad_id
WHERE e.event_type = 'view'
GROUP BY c.campaign_id, window(e.event_time, '10 seconds')"""

BRONZE = ("CREATE STREAMING TABLE bronze AS SELECT * FROM STREAM read_files('/in/orders', format => 'csv', "
          "header => true)")
SILVER = ("CREATE STREAMING TABLE silver AS SELECT id, upper(name) AS name, amount FROM STREAM(bronze) "
          "WHERE amount > 0")
GOLD = "CREATE STREAMING TABLE gold AS SELECT name, sum(amount) AS total FROM STREAM(silver) GROUP BY name"

RATE = "CREATE STREAMING TABLE ticks AS SELECT value, timestamp FROM STREAM rate(rows_per_second => 100)"
STREAM_STREAM_INNER = ("CREATE STREAMING TABLE matched AS SELECT i.id, c.ts FROM STREAM(impressions) i "
                       "JOIN STREAM(clicks) c ON i.id = c.id")
STREAM_STREAM_LEFT = (
    "CREATE STREAMING TABLE matched AS SELECT i.id, c.ts FROM STREAM(impressions) WATERMARK its DELAY OF "
    "INTERVAL 1 MINUTE AS i LEFT JOIN STREAM(clicks) WATERMARK cts DELAY OF INTERVAL 2 MINUTES AS c "
    "ON i.id = c.id AND c.cts BETWEEN i.its AND i.its + INTERVAL 1 HOUR"
)
UNION_ALL = "CREATE STREAMING TABLE both_ AS SELECT id FROM STREAM(a) UNION ALL SELECT id FROM STREAM(b)"
DISTINCT = "CREATE STREAMING TABLE users AS SELECT DISTINCT user_id, country FROM STREAM(visits)"
COMPLETE_TOP = ("CREATE STREAMING TABLE top TBLPROPERTIES ('sluicegate.output_mode' = 'complete') AS "
                "SELECT page, count(*) AS n FROM STREAM(visits) GROUP BY page ORDER BY n DESC LIMIT 10")
UNALIASED_WINDOW = ("CREATE STREAMING TABLE s AS SELECT session_window(ts, '5 minutes'), user_id, count(*) AS n "
                    "FROM STREAM(visits) GROUP BY session_window(ts, '5 minutes'), user_id")
STREAM_STATIC_LEFT = ("CREATE STREAMING TABLE enriched AS SELECT o.id, u.name FROM STREAM(orders) o "
                      "LEFT JOIN users u ON o.user_id = u.id")

ACCEPTED = [
    # sql, mode, keys, source kinds
    (CLICKS_PER_COUNTRY, "update", ("country",), ("files",)),
    (WINDOWED, "update", ("w",), ("table",)),
    (WINDOWED_APPEND, "append", ("w",), ("table",)),
    (YAHOO, "update", ("campaign_id", "time_window"), ("table",)),
    (BRONZE, "append", (), ("files",)),
    (SILVER, "append", (), ("table",)),
    (GOLD, "update", ("name",), ("table",)),
    (RATE, "append", (), ("rate",)),
    (STREAM_STREAM_INNER, "append", (), ("table", "table")),
    (STREAM_STREAM_LEFT, "append", (), ("table", "table")),
    (UNION_ALL, "append", (), ("table", "table")),
    (DISTINCT, "update", ("user_id", "country"), ("table",)),
    (COMPLETE_TOP, "complete", ("page",), ("table",)),
    (UNALIASED_WINDOW, "update", ("session_window", "user_id"), ("table",)),
    (STREAM_STATIC_LEFT, "append", (), ("table",)),
]


@pytest.mark.parametrize(("sql", "mode", "keys", "kinds"), ACCEPTED)
def test_accepted_queries_get_their_mode_keys_and_sources(sql: str, mode: str, keys: tuple[str, ...],
                                                          kinds: tuple[str, ...]) -> None:
    plan = analyze(sql)
    assert plan.output_mode == mode
    assert plan.mode_reason
    assert plan.keys == keys
    assert tuple(s.kind for s in plan.sources) == kinds
    # query_sql reads only the registered views and is Spark SQL that parses back
    assert "STREAM" not in plan.query_sql.upper().replace("__SG_", "")
    assert "WATERMARK" not in plan.query_sql.upper()
    sqlglot.parse_one(plan.query_sql, read=StreamingSpark)  # plain sqlglot stops GROUP BY at WINDOW
    for source in plan.sources:
        assert source.view_name in plan.query_sql


def test_files_source_keeps_path_format_schema_and_options() -> None:
    plan = analyze(CLICKS_PER_COUNTRY)
    assert plan.sources == (SourceSpec("__sg_source_0", "files", path="/data/clicks", format="json",
                                       schema="country STRING, ts TIMESTAMP", rescued_data="_rescued_data"),)
    assert (plan.database, plan.name, plan.comment) == ("analytics", "clicks_per_country", "clicks per country")
    assert plan.trigger_seconds == 1.0 and plan.or_refresh and not plan.if_not_exists
    bronze = analyze(BRONZE).sources[0]
    assert (bronze.format, bronze.options) == ("csv", {"header": "true"})


def test_rate_options_are_spark_names() -> None:
    assert analyze(RATE).sources[0].options == {"rowsPerSecond": "100"}


def test_yahoo_query_joins_the_static_campaigns_view_and_moves_the_watermark() -> None:
    plan = analyze(YAHOO)
    assert plan.sources == (SourceSpec("__sg_source_0", "table", table="ad_events",
                                       watermark=WatermarkSpec("event_time", "10 seconds")),)
    assert plan.static_tables == (StaticTableSpec("__sg_static_0", None, "campaigns"),)
    assert plan.query_sql == (
        "SELECT c.campaign_id, WINDOW(e.event_time, '10 seconds') AS time_window, COUNT(*) AS views "
        "FROM __sg_source_0 AS e JOIN __sg_static_0 AS c ON e.ad_id = c.ad_id WHERE e.event_type = 'view' "
        "GROUP BY c.campaign_id, WINDOW(e.event_time, '10 seconds')"
    )
    assert "dropped once the watermark on event_time" in plan.state


def test_unaliased_sources_keep_their_table_name_for_qualified_columns() -> None:
    plan = analyze("CREATE STREAMING TABLE t AS SELECT orders.id FROM STREAM(shop.orders) JOIN users "
                   "ON orders.uid = users.id")
    assert plan.query_sql == ("SELECT orders.id FROM __sg_source_0 AS orders JOIN __sg_static_0 AS users "
                              "ON orders.uid = users.id")
    assert plan.sources[0].database == "shop"


def test_column_definitions_and_if_not_exists() -> None:
    plan = analyze("CREATE STREAMING TABLE IF NOT EXISTS t (id INT NOT NULL, name STRING COMMENT 'who') "
                   "AS SELECT id, name FROM STREAM(s)")
    assert plan.if_not_exists and [(c.name, c.type, c.nullable, c.comment) for c in plan.columns] == [
        ("id", "int", False, None), ("name", "string", True, "who")]


def test_bronze_silver_gold_chain_passes_when_every_upstream_table_is_append_only() -> None:
    kinds = {"bronze": "append", "silver": "append", "gold": "update"}
    for sql in (BRONZE, SILVER, GOLD):
        assert analyze(sql, table_kind=lambda _db, name: kinds.get(name)).sources


def test_stream_static_join_and_aggregations_are_described_for_explain() -> None:
    plan = analyze(YAHOO)
    assert plan.operators[0] == Operator("stream", "stream __sg_source_0: Delta table ad_events, watermark event_time "
                                                   "- 10 seconds")
    assert Operator("join", "inner join with static table") in plan.operators
    assert Operator("filter", "filter") in plan.operators
    assert any(op.kind == "aggregate" and op.text.startswith("window aggregate by") for op in plan.operators)
    assert plan.aggregation == "keyed"
    assert analyze(SILVER).state.startswith("none")
    assert "kept forever" in analyze(GOLD).state


def test_sources_and_static_tables_are_numbered_in_text_order() -> None:
    plan = analyze("CREATE STREAMING TABLE t AS SELECT * FROM users u JOIN STREAM(zeta) z ON u.id = z.id "
                   "JOIN STREAM(alpha) a ON a.id = z.id JOIN accounts ac ON ac.id = u.id")
    assert [(s.view_name, s.table) for s in plan.sources] == [("__sg_source_0", "zeta"), ("__sg_source_1", "alpha")]
    assert [(s.view_name, s.table) for s in plan.static_tables] == [("__sg_static_0", "users"),
                                                                    ("__sg_static_1", "accounts")]
    assert plan.query_sql == (
        "SELECT * FROM __sg_static_0 AS u JOIN __sg_source_0 AS z ON u.id = z.id JOIN __sg_source_1 AS a "
        "ON a.id = z.id JOIN __sg_static_1 AS ac ON ac.id = u.id")


def test_watermark_column_may_be_named_as_itself_and_prints_back() -> None:
    sql = "SELECT * FROM STREAM s WATERMARK ts AS ts DELAY OF INTERVAL 5 SECONDS AS x"
    assert sqlglot.parse_one(sql, read=StreamingSpark).sql(StreamingSpark) == (
        "SELECT * FROM STREAM s WATERMARK ts AS ts DELAY OF INTERVAL '5' SECONDS AS x")
    plan = analyze("CREATE STREAMING TABLE t AS " + sql)
    assert plan.sources[0].watermark == WatermarkSpec("ts", "5 seconds")
    assert plan.query_sql == "SELECT * FROM __sg_source_0 AS x"
