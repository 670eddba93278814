"""Each query that cannot run incrementally is refused before anything runs, by its own typed error, pointing at
the offending text (line and column of its first character) with a hint saying what to write instead."""

from __future__ import annotations

import json

import pytest

from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.statements import CLUSTERING_PROPERTY
from sluicegate.dialect.streaming import errors
from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.dialect.streaming.context import TableKindLookup
from sluicegate.dialect.streaming.plan import StreamingPlan
from sluicegate.dialect.streaming.rules import RULES


def at(sql: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """Line and column (1-based) where `needle` starts in `sql`: computed from the text, not from the parser."""
    offset = -1
    for _ in range(occurrence):
        offset = sql.index(needle, offset + 1)
    line = sql.count("\n", 0, offset) + 1
    return line, offset - (sql.rfind("\n", 0, offset) + 1) + 1


HEAD = "CREATE STREAMING TABLE t AS "
APPEND = "CREATE STREAMING TABLE t TBLPROPERTIES ('sluicegate.output_mode' = 'append') AS "
COMPLETE = "CREATE STREAMING TABLE t TBLPROPERTIES ('sluicegate.output_mode' = 'complete') AS "
UPDATE = "CREATE STREAMING TABLE t TBLPROPERTIES ('sluicegate.output_mode' = 'update') AS "
KINDS = {"gold": "complete", "raw": "append", "mirror": "auto_cdc"}
SELF_REWRITTEN: TableKindLookup = lambda _db, name: KINDS.get(name)  # noqa: E731

REJECTED = [
    # id, sql, error type, error class, sqlstate, where (text it starts at), table kinds
    ("sort", HEAD + "SELECT k, count(*) AS n FROM STREAM(s) GROUP BY k ORDER BY n",
     errors.SortNotSupportedError, "STREAMING_UNSUPPORTED_OPERATION.SORT", "0A000", "ORDER BY", None),
    ("bucketed", "CREATE STREAMING TABLE t (k string)\n  CLUSTERED BY (k) INTO 4 BUCKETS AS SELECT k FROM STREAM(s)",
     errors.BucketingNotSupportedError, "UNSUPPORTED_FEATURE.STREAMING_TABLE_BUCKETING", "0A000", "CLUSTERED BY",
     None),
    ("partitioned-and-clustered", "CREATE STREAMING TABLE t PARTITIONED BY (k) CLUSTER BY (k) AS "
     "SELECT k FROM STREAM(s)", errors.PartitionedAndClusteredError,
     "SPECIFY_CLUSTER_BY_WITH_PARTITIONED_BY_IS_NOT_ALLOWED", "42908", "CLUSTER BY", None),
    ("limit", HEAD + "SELECT k FROM STREAM(s) LIMIT 5",
     errors.LimitNotSupportedError, "STREAMING_UNSUPPORTED_OPERATION.LIMIT", "0A000", "LIMIT", None),
    ("distinct-aggregate", HEAD + "SELECT k, count(DISTINCT u) AS n FROM STREAM(s) GROUP BY k",
     errors.DistinctAggregateNotSupportedError, "STREAMING_UNSUPPORTED_OPERATION.DISTINCT_AGGREGATE", "0A000",
     "count(DISTINCT", None),
    ("window-function", HEAD + "SELECT k, row_number() OVER (PARTITION BY k ORDER BY ts) AS r FROM STREAM(s)",
     errors.NonTimeWindowNotSupportedError, "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING", "0A000", "row_number()",
     None),
    ("chained-aggregation",
     HEAD + "SELECT n, count(*) AS groups FROM (SELECT k, count(*) AS n FROM STREAM(s) GROUP BY k) GROUP BY n",
     errors.ChainedAggregationNotSupportedError, "STREAMING_UNSUPPORTED_OPERATION.CHAINED_AGGREGATION", "0A000",
     "count(*) AS groups", None),
    ("chained-aggregation-through-cte",
     HEAD + "WITH per_k AS (SELECT k, count(*) AS n FROM STREAM(s) GROUP BY k) SELECT max(n) AS m FROM per_k",
     errors.ChainedAggregationNotSupportedError, "STREAMING_UNSUPPORTED_OPERATION.CHAINED_AGGREGATION", "0A000",
     "max(n)", None),
    ("outer-join-without-watermark",
     HEAD + "SELECT a.id FROM STREAM(a) LEFT JOIN STREAM(b) ON a.id = b.id AND b.ts BETWEEN a.ts AND a.ts + 1",
     errors.OuterJoinWithoutWatermarkError, "STREAMING_UNSUPPORTED_OPERATION.OUTER_JOIN_WITHOUT_WATERMARK", "0A000",
     "LEFT JOIN", None),
    ("outer-join-without-range",
     HEAD + "SELECT a.id FROM STREAM(a) WATERMARK ts DELAY OF INTERVAL 1 MINUTE AS a FULL OUTER JOIN STREAM(b) "
            "WATERMARK ts DELAY OF INTERVAL 1 MINUTE AS b ON a.id = b.id",
     errors.OuterJoinWithoutWatermarkError, "STREAMING_UNSUPPORTED_OPERATION.OUTER_JOIN_WITHOUT_WATERMARK", "0A000",
     "FULL OUTER", None),
    ("stream-on-the-right-of-left-join", HEAD + "SELECT u.id FROM users u LEFT JOIN STREAM(s) ON u.id = s.id",
     errors.UnsupportedStreamingJoinError, "STREAMING_UNSUPPORTED_OPERATION.JOIN", "0A000", "LEFT JOIN", None),
    ("rand", HEAD + "SELECT k, rand() AS r FROM STREAM(s)",
     errors.NonDeterministicFunctionError, "STREAMING_UNSUPPORTED_OPERATION.NON_DETERMINISTIC_FUNCTION", "0A000",
     "rand()", None),
    ("uuid", HEAD + "SELECT k, uuid() AS r FROM STREAM(s)",
     errors.NonDeterministicFunctionError, "STREAMING_UNSUPPORTED_OPERATION.NON_DETERMINISTIC_FUNCTION", "0A000",
     "uuid()", None),
    ("current_timestamp", HEAD + "SELECT k FROM STREAM(s) WHERE ts > current_timestamp()",
     errors.NonDeterministicFunctionError, "STREAMING_UNSUPPORTED_OPERATION.NON_DETERMINISTIC_FUNCTION", "0A000",
     "current_timestamp()", None),
    ("now", HEAD + "SELECT k, now() AS at FROM STREAM(s)",
     errors.NonDeterministicFunctionError, "STREAMING_UNSUPPORTED_OPERATION.NON_DETERMINISTIC_FUNCTION", "0A000",
     "now()", None),
    ("no-streaming-source", HEAD + "SELECT k FROM db.s",
     errors.NoStreamingSourceError, "INVALID_FLOW_QUERY_TYPE.BATCH_RELATION_FOR_STREAMING_TABLE", "42000", "db.s",
     None),
    ("stream-of-a-complete-table", HEAD + "SELECT * FROM raw JOIN STREAM(gold) g ON raw.k = g.k",
     errors.RewrittenSourceError, "STREAMING_SOURCE_NOT_APPEND_ONLY", "0A000", "STREAM(gold)", SELF_REWRITTEN),
    ("stream-of-an-auto-cdc-table", HEAD + "SELECT * FROM STREAM(mirror)",
     errors.RewrittenSourceError, "STREAMING_SOURCE_NOT_APPEND_ONLY", "0A000", "STREAM(mirror)", SELF_REWRITTEN),
    ("unknown-source-function", HEAD + "SELECT * FROM STREAM kafka('topic')",
     errors.UnknownSourceFunctionError, "UNRESOLVABLE_TABLE_VALUED_FUNCTION", "42883", "kafka(", None),
    ("read-files-without-format", HEAD + "SELECT * FROM STREAM read_files('/in')",
     errors.MissingSourceFormatError, "STREAMING_SOURCE_FORMAT_REQUIRED", "42601", "read_files(", None),
    ("read-files-unknown-format", HEAD + "SELECT * FROM STREAM read_files('/in', format => 'avro')",
     errors.UnknownSourceFormatError, "UNSUPPORTED_STREAMING_SOURCE_FORMAT", "0A000", "'avro'", None),
    ("watermark-on-an-expression",
     HEAD + "SELECT * FROM STREAM(s) WATERMARK to_timestamp(ts_text) AS ts DELAY OF INTERVAL 1 MINUTE",
     errors.WatermarkNotOnColumnError, "STREAMING_WATERMARK_EXPRESSION_NOT_SUPPORTED", "0A000", "WATERMARK", None),
    ("append-on-aggregation-without-watermark", APPEND + "SELECT k, count(*) AS n FROM STREAM(s) GROUP BY k",
     errors.UnsupportedOutputModeError, "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION", "42KDE", "'append'", None),
    ("append-on-window-without-watermark",
     APPEND + "SELECT window(ts, '1 minute') AS w, count(*) AS n FROM STREAM(s) GROUP BY window(ts, '1 minute')",
     errors.UnsupportedOutputModeError, "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION", "42KDE", "'append'", None),
    ("complete-without-aggregation", COMPLETE + "SELECT k FROM STREAM(s)",
     errors.UnsupportedOutputModeError, "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION", "42KDE", "'complete'", None),
    ("update-with-order-by", UPDATE + "SELECT k, count(*) AS n FROM STREAM(s) GROUP BY k ORDER BY n",
     errors.UnsupportedOutputModeError, "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION", "42KDE", "'update'", None),
    ("unknown-output-mode", "CREATE STREAMING TABLE t TBLPROPERTIES ('sluicegate.output_mode' = 'upsert') AS "
                            "SELECT k FROM STREAM(s)",
     errors.InvalidOutputModeError, "STREAMING_OUTPUT_MODE.INVALID", "42KDE", "'upsert'", None),
    ("group-key-not-in-result", HEAD + "SELECT count(*) AS n FROM STREAM(s) GROUP BY k",
     errors.GroupKeyNotInOutputError, "STREAMING_GROUP_KEY_NOT_IN_OUTPUT", "42803", "k", None),
    ("union-of-stream-and-static", HEAD + "SELECT id FROM STREAM(a) UNION ALL SELECT id FROM b",
     errors.UnsupportedSetOperationError, "STREAMING_UNSUPPORTED_OPERATION.SET_OPERATION", "0A000", "SELECT id FROM b",
     None),
    ("union-distinct-of-streams", HEAD + "SELECT id FROM STREAM(a) UNION SELECT id FROM STREAM(b)",
     errors.UnsupportedSetOperationError, "STREAMING_UNSUPPORTED_OPERATION.SET_OPERATION", "0A000", "UNION", None),
    ("aggregate-after-stream-stream-join",
     HEAD + "SELECT a.k, count(*) AS n FROM STREAM(a) JOIN STREAM(b) ON a.id = b.id GROUP BY a.k",
     errors.UnsupportedOutputModeError, "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION", "42KDE", "JOIN STREAM(b)", None),
    ("create-or-replace", "CREATE OR REPLACE STREAMING TABLE t AS SELECT * FROM STREAM(s)",
     errors.CreateOrReplaceNotAllowedError, "STREAMING_TABLE_OPERATION_NOT_ALLOWED.CREATE_OR_REPLACE", "42601",
     "CREATE", None),
    ("bad-trigger-interval", "CREATE STREAMING TABLE t TBLPROPERTIES ('pipelines.trigger.interval' = 'often') AS "
                             "SELECT * FROM STREAM(s)",
     errors.InvalidTriggerIntervalError, "INVALID_TRIGGER_INTERVAL", "22023", "'often'", None),
]


@pytest.mark.parametrize(("sql", "kind", "error_class", "sqlstate", "where", "table_kind"),
                         [case[1:] for case in REJECTED], ids=[case[0] for case in REJECTED])
def test_rejected_with_class_state_position_and_hint(sql: str, kind: type[DialectError], error_class: str,
                                                     sqlstate: str, where: str,
                                                     table_kind: TableKindLookup | None) -> None:
    with pytest.raises(kind) as raised:
        analyze(sql, table_kind=table_kind)
    error = raised.value
    assert (error.error_class, error.sqlstate) == (error_class, sqlstate)
    assert (error.line, error.column) == _expected(sql, where)
    assert error.hint and error.message


def _expected(sql: str, where: str) -> tuple[int, int]:
    if where == "k":  # the GROUP BY key, not the k in other words
        line, column = at(sql, "BY k")
        return line, column + 3
    return at(sql, where)


def test_positions_span_lines() -> None:
    sql = ("CREATE STREAMING TABLE t\nAS SELECT k,\n       rand() AS r\nFROM STREAM(s)")
    with pytest.raises(errors.NonDeterministicFunctionError) as raised:
        analyze(sql)
    assert (raised.value.line, raised.value.column) == (3, 8)


def test_every_rejection_class_is_distinct_and_typed() -> None:
    classes = {case[2] for case in REJECTED}
    assert len({c.error_class for c in classes}) == len(classes)  # one class, one error class
    for cls in classes:
        assert issubclass(cls, DialectError) and len(cls.sqlstate) == 5 and cls.error_class.isupper()


def test_rules_run_from_one_tuple_in_a_fixed_order() -> None:
    names = [rule.__name__ for rule in RULES]
    assert names.index("check_has_streaming_source") < names.index("check_sort")
    assert len(set(names)) == len(names)


def test_stream_of_an_append_only_table_passes_the_lookup() -> None:
    assert analyze(HEAD + "SELECT * FROM STREAM(raw)", table_kind=SELF_REWRITTEN).sources[0].table == "raw"


def test_stream_of_an_auto_cdc_table_names_a_materialized_view_or_skip_change_commits() -> None:
    with pytest.raises(errors.RewrittenSourceError) as raised:
        analyze(HEAD + "SELECT * FROM STREAM(mirror)", table_kind=SELF_REWRITTEN)
    assert "AUTO CDC" in raised.value.message and "update and delete" in raised.value.message
    assert "CREATE MATERIALIZED VIEW" in raised.value.hint and "skipChangeCommits" in raised.value.hint
    skipping = "CREATE STREAMING TABLE t TBLPROPERTIES ('skipChangeCommits' = 'true') AS "
    assert analyze(skipping + "SELECT * FROM STREAM(mirror)", table_kind=SELF_REWRITTEN).sources[0].table == "mirror"


def test_stream_of_a_rewritten_table_is_fine_without_a_lookup() -> None:
    assert analyze(HEAD + "SELECT * FROM STREAM(gold)").sources[0].table == "gold"


def test_partitioned_by_and_cluster_by_are_planned() -> None:
    plan = analyze("CREATE STREAMING TABLE t (k string, n bigint)\n  PARTITIONED BY (k) AS SELECT k, n FROM STREAM(s)")
    assert plan.partition_by == ("k",)
    assert StreamingPlan.from_json(plan.to_json()).partition_by == ("k",)
    clustered = analyze("CREATE OR REFRESH STREAMING TABLE t CLUSTER BY (k, n) AS SELECT k, n FROM STREAM(s)")
    assert clustered.partition_by == () and json.loads(clustered.properties[CLUSTERING_PROPERTY]) == ["k", "n"]
    stored = json.loads(plan.to_json())
    del stored["partition_by"]                              # a plan stored before partitioning existed
    assert StreamingPlan.from_json(json.dumps(stored)).partition_by == ()
