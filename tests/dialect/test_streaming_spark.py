"""query_sql is Spark SQL that Spark itself runs over the views the runtime registers, and the plan's keys are
the names of the result columns Spark produces (batch views stand in for the streams here)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from sluicegate.dialect.streaming.analyze import analyze

T0 = dt.datetime(2026, 1, 1, 0, 0, 0)
YAHOO = """CREATE STREAMING TABLE campaign_views AS
SELECT c.campaign_id, window(e.event_time, '10 seconds') AS time_window, count(*) AS views
FROM STREAM(ad_events) WATERMARK event_time DELAY OF INTERVAL 10 SECONDS AS e
JOIN campaigns c ON e.ad_id = c.ad_id
WHERE e.event_type = 'view'
GROUP BY c.campaign_id, window(e.event_time, '10 seconds')"""

CASES = [
    (YAHOO,
     {"__sg_source_0": ([("a1", "view", T0), ("a1", "click", T0), ("a2", "view", T0 + dt.timedelta(seconds=12))],
                        "ad_id STRING, event_type STRING, event_time TIMESTAMP"),
      "__sg_static_0": ([("a1", "c1"), ("a2", "c1")], "ad_id STRING, campaign_id STRING")},
     [("c1", T0, 1), ("c1", T0 + dt.timedelta(seconds=10), 1)]),
    ("CREATE STREAMING TABLE s AS SELECT session_window(ts, '5 minutes'), user_id, count(*) AS n "
     "FROM STREAM(visits) GROUP BY session_window(ts, '5 minutes'), user_id",
     {"__sg_source_0": ([("u", T0), ("u", T0 + dt.timedelta(minutes=1))], "user_id STRING, ts TIMESTAMP")},
     [(T0, "u", 2)]),
]


@pytest.mark.parametrize(("sql", "views", "expected"), CASES)
def test_query_sql_runs_in_spark_and_keys_name_its_columns(spark: Any, sql: str, views: dict[str, Any],
                                                          expected: list[tuple[Any, ...]]) -> None:
    plan = analyze(sql)
    for view, (rows, schema) in views.items():
        spark.createDataFrame(rows, schema).createOrReplaceTempView(view)
    try:
        frame = spark.sql(plan.query_sql)
        assert set(plan.keys) <= set(frame.columns)
        rows = []
        for row in frame.collect():
            values = row.asDict()
            rows.append(tuple(v.start if hasattr(v, "start") else v for v in values.values()))
        assert sorted(rows, key=str) == sorted(expected, key=str)
    finally:
        for view in views:
            spark.catalog.dropTempView(view)
