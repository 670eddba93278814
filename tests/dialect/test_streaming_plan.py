"""The plan survives JSON (the catalog stores it, the runtime rebuilds a stream from it), EXPLAIN reads it back, and
the streaming statements classify into their variants."""

from __future__ import annotations

import pytest

from sluicegate.dialect.classify import classify
from sluicegate.dialect.statements import (
    CreateStreamingTable,
    DescribeStreamingTable,
    DropStreamingTable,
    ExplainStreamingTable,
    ShowStreamingTables,
    TableName,
)
from sluicegate.dialect.streaming import errors
from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.dialect.streaming.explain import explain
from sluicegate.dialect.streaming.plan import StreamingPlan

YAHOO = """CREATE OR REFRESH STREAMING TABLE ads.campaign_views (campaign_id STRING NOT NULL, time_window
STRUCT<start: TIMESTAMP, end: TIMESTAMP>, views BIGINT COMMENT 'view events')
COMMENT 'views per campaign per 10 seconds'
TBLPROPERTIES ('pipelines.trigger.interval' = '500 milliseconds', 'owner' = 'ads')
AS SELECT c.campaign_id, window(e.event_time, '10 seconds') AS time_window, count(*) AS views
FROM STREAM(ads.ad_events) WATERMARK event_time DELAY OF INTERVAL 10 SECONDS AS e
JOIN ads.campaigns c ON e.ad_id = c.ad_id
WHERE e.event_type = 'view'
GROUP BY c.campaign_id, window(e.event_time, '10 seconds')"""

FILES = ("CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('/in', format => 'csv', "
         "schema => 'a INT, b STRING', header => true, sep => ';') WATERMARK ts DELAY OF INTERVAL '1 minute'")


@pytest.mark.parametrize("sql", [YAHOO, FILES,
                                 "CREATE STREAMING TABLE r AS SELECT * FROM STREAM rate(rows_per_second => 5)"])
def test_json_round_trip_gives_an_equal_plan(sql: str) -> None:
    plan = analyze(sql)
    text = plan.to_json()
    again = StreamingPlan.from_json(text)
    assert again == plan
    assert again.to_json() == text
    assert isinstance(again.keys, tuple) and isinstance(again.columns, tuple)


def test_plan_fields_from_the_full_statement() -> None:
    plan = analyze(YAHOO)
    assert (plan.database, plan.name, plan.or_refresh) == ("ads", "campaign_views", True)
    assert plan.trigger_seconds == 0.5
    assert plan.properties == {"pipelines.trigger.interval": "500 milliseconds", "owner": "ads"}
    assert [c.name for c in plan.columns] == ["campaign_id", "time_window", "views"]
    assert plan.columns[0].nullable is False and plan.columns[2].comment == "view events"
    assert (plan.static_tables[0].database, plan.static_tables[0].table) == ("ads", "campaigns")
    files = analyze(FILES).sources[0]
    assert (files.schema, files.options) == ("a INT, b STRING", {"header": "true", "sep": ";"})
    assert (files.watermark.column, files.watermark.delay) == ("ts", "1 minute")  # type: ignore[union-attr]


def test_explain_names_sources_operators_mode_keys_watermarks_and_state() -> None:
    text = explain(analyze(YAHOO))
    assert text.splitlines()[0] == "== Streaming table ads.campaign_views =="
    for expected in (
        "__sg_source_0: Delta table ads.ad_events",
        "watermark: event_time delayed by 10 seconds",
        "__sg_static_0: static Delta table ads.campaigns (pinned snapshot)",
        "inner join with static table",
        "Output mode: update (the query aggregates",
        "Keys: campaign_id, time_window",
        "State: one row per open group, dropped once the watermark on event_time passes its window's end",
        "Trigger: every 0.5 s",
    ):
        assert expected in text, expected


def test_streaming_statements_classify_into_their_variants() -> None:
    create = classify(YAHOO)
    assert isinstance(create, CreateStreamingTable) and create.sql == YAHOO and create.plan == analyze(YAHOO)
    assert classify("DROP STREAMING TABLE IF EXISTS ads.campaign_views") == DropStreamingTable(
        TableName("ads", "campaign_views"), True)
    assert classify("drop streaming table `my t`;") == DropStreamingTable(TableName(None, "my t"), False)
    assert classify("SHOW STREAMING TABLES IN ads LIKE 'camp*'") == ShowStreamingTables("ads", "camp*")
    assert classify("SHOW STREAMING TABLES") == ShowStreamingTables(None, None)
    assert classify("DESCRIBE STREAMING TABLE ads.campaign_views") == DescribeStreamingTable(
        TableName("ads", "campaign_views"))


def test_explain_statement_keeps_positions_of_the_text_as_typed() -> None:
    statement = classify("EXPLAIN " + FILES)
    assert isinstance(statement, ExplainStreamingTable) and statement.plan == analyze(FILES)
    sql = "EXPLAIN CREATE STREAMING TABLE t AS SELECT k, rand() AS r FROM STREAM(s)"
    with pytest.raises(errors.NonDeterministicFunctionError) as raised:
        classify(sql)
    assert (raised.value.line, raised.value.column) == (1, sql.index("rand()") + 1)


def test_create_streaming_table_errors_surface_through_classify() -> None:
    with pytest.raises(errors.NoStreamingSourceError):
        classify("CREATE STREAMING TABLE t AS SELECT * FROM s")


def test_explain_of_a_complete_top_n_and_of_a_stream_stream_join() -> None:
    top = explain(analyze("CREATE STREAMING TABLE top TBLPROPERTIES ('sluicegate.output_mode' = 'complete') AS "
                          "SELECT page, count(*) AS n FROM STREAM(visits) GROUP BY page ORDER BY n DESC LIMIT 3"))
    assert "Output mode: complete (set by TBLPROPERTIES ('sluicegate.output_mode' = 'complete'))" in top
    assert "  sort\n  limit\n" in top and "the whole result is rewritten each trigger" in top
    assert "Trigger: the configured default" in top
    joined = explain(analyze(
        "CREATE STREAMING TABLE m AS SELECT i.id FROM STREAM(imps) WATERMARK its DELAY OF INTERVAL 1 MINUTE AS i "
        "JOIN STREAM(clicks) WATERMARK cts DELAY OF INTERVAL 1 MINUTE AS c ON i.id = c.id"))
    assert "inner join with stream" in joined
    assert "State: both join inputs buffered until the watermark on cts, its passes them" in joined
