"""CREATE FLOW, DROP FLOW, SHOW FLOWS and CREATE STREAMING TABLE without a query, as the dialect parses, classifies
and checks them: no JVM."""

from __future__ import annotations

import pytest

from sluicegate.dialect import statements as st
from sluicegate.dialect.classify import classify
from sluicegate.dialect.columns import ColumnSpec
from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.parse import parse
from sluicegate.dialect.statements import TableName

FILES = "read_files('/in', format => 'json', schema => 'id INT, ts TIMESTAMP, k STRING')"


def test_create_flow_classifies_with_its_target_comment_and_append_plan() -> None:
    sql = f"CREATE FLOW db.f COMMENT 'from /in' AS INSERT INTO db.t BY NAME SELECT id, k FROM STREAM {FILES}"
    flow = classify(sql)
    assert isinstance(flow, st.CreateFlow)
    assert (flow.flow, flow.table, flow.comment) == (TableName("db", "f"), TableName("db", "t"), "from /in")
    assert (flow.plan.database, flow.plan.name, flow.plan.output_mode) == ("db", "t", "append")
    assert flow.plan.sources[0].kind == "files"
    # the generator writes it back as Spark 4.1's pipeline SQL
    assert parse(sql).sql("streamingspark").startswith("CREATE FLOW db.f COMMENT 'from /in' AS INSERT INTO db.t BY "
                                                        "NAME SELECT")


def test_without_by_name_the_flow_is_still_matched_by_name() -> None:
    assert isinstance(classify(f"CREATE FLOW f AS INSERT INTO t SELECT id FROM STREAM {FILES}"), st.CreateFlow)


def test_a_windowed_aggregation_closed_by_a_watermark_appends() -> None:
    flow = classify(f"CREATE FLOW f AS INSERT INTO t BY NAME SELECT window(ts, '1 minute').start AS w, count(*) AS n "
                    f"FROM STREAM {FILES} WATERMARK ts DELAY OF INTERVAL 10 SECONDS GROUP BY window(ts, '1 minute')")
    assert flow.plan.output_mode == "append" and "watermark" in flow.plan.mode_reason


@pytest.mark.parametrize(("query", "position"), [
    (f"SELECT k, count(*) AS n FROM STREAM {FILES}\nGROUP BY k", (3, 1)),
    (f"SELECT DISTINCT k FROM STREAM {FILES}", (2, 1)),
])
def test_a_flow_that_would_rewrite_its_rows_is_refused_at_its_position(query: str, position: tuple[int, int]) -> None:
    with pytest.raises(DialectError) as raised:
        classify(f"CREATE FLOW f AS INSERT INTO t BY NAME\n{query}")
    error = raised.value
    assert error.error_class == "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION" and error.sqlstate == "42KDE"
    assert error.line == position[0] and "WATERMARK" in (error.hint or "")


def test_a_flow_needs_a_stream_and_the_insert_into_form() -> None:
    with pytest.raises(DialectError) as raised:
        classify("CREATE FLOW f AS INSERT INTO t BY NAME SELECT id FROM db.static")
    assert raised.value.error_class == "INVALID_FLOW_QUERY_TYPE.BATCH_RELATION_FOR_STREAMING_TABLE"
    for sql in ("CREATE FLOW f AS INSERT OVERWRITE t SELECT 1", "CREATE FLOW f AS SELECT 1",
                "CREATE FLOW f AS INSERT INTO t"):
        with pytest.raises(DialectError) as raised:
            classify(sql)
        assert raised.value.sqlstate == "42601" and raised.value.line == 1, sql
    with pytest.raises(DialectError, match="catalog `c` cannot be found"):  # the catalog part: dialect/catalogs.py
        classify(f"CREATE FLOW c.db.f AS INSERT INTO t SELECT id FROM STREAM {FILES}")


def test_drop_and_show_flows() -> None:
    assert classify("DROP FLOW IF EXISTS db.f") == st.DropFlow(TableName("db", "f"), True)
    assert classify("DROP FLOW f") == st.DropFlow(TableName(None, "f"), False)
    assert classify("SHOW FLOWS IN db LIKE 'f*'") == st.ShowFlows("db", "f*")
    assert classify("SHOW FLOWS") == st.ShowFlows(None, None)


def test_a_streaming_table_without_a_query_declares_its_columns() -> None:
    table = classify("CREATE STREAMING TABLE IF NOT EXISTS db.t (id INT NOT NULL, note STRING COMMENT 'free') "
                     "COMMENT 'fed by flows' TBLPROPERTIES ('owner.team' = 'ingest')")
    assert isinstance(table, st.CreateStreamingTableSchema)
    assert table.columns == (ColumnSpec("id", "int", False), ColumnSpec("note", "string", True, "free"))
    assert (table.comment, table.properties, table.if_not_exists) == ("fed by flows", {"owner.team": "ingest"}, True)
    with pytest.raises(DialectError, match="neither a query nor columns"):
        classify("CREATE STREAMING TABLE t")
    with pytest.raises(DialectError, match="no refresh schedule"):
        classify("CREATE STREAMING TABLE t (id INT) SCHEDULE EVERY 1 HOUR")
