"""AUTO CDC's grammar (Databricks' `CREATE STREAMING TABLE ... FLOW AUTO CDC` and `CREATE FLOW ... AS AUTO CDC INTO`)
and what CREATE checks before anything runs: each error with its class, SQLSTATE, position and hint."""

from __future__ import annotations

import pytest

from sluicegate.dialect import statements as st
from sluicegate.dialect.classify import classify
from sluicegate.dialect.dialect import StreamingSpark
from sluicegate.dialect.errors import SqlError
from sluicegate.dialect.parse import parse
from sluicegate.dialect.streaming.cdc import check_agrees, check_cdc_source, describe_cdc, kept_columns, tracked_columns
from sluicegate.dialect.streaming.plan import CdcSpec, StreamingPlan

FULL = ("CREATE OR REFRESH STREAMING TABLE IF NOT EXISTS db.customers (id INT, name STRING) COMMENT 'mirror' "
        "FLOW AUTO CDC FROM STREAM(db.cdc_events) KEYS (id, region) IGNORE NULL UPDATES "
        "APPLY AS DELETE WHEN operation = 'DELETE' APPLY AS TRUNCATE WHEN operation = 'TRUNCATE' "
        "SEQUENCE BY struct(ts, lsn) COLUMNS * EXCEPT (operation, ts) STORED AS SCD TYPE 1")


def _error(sql: str) -> SqlError:
    with pytest.raises(SqlError) as raised:
        classify(sql)
    return raised.value


def test_the_table_form_with_every_clause() -> None:
    statement = classify(FULL.replace("(id INT, name STRING) ", ""))
    assert isinstance(statement, st.CreateAutoCdc) and statement.flow is None
    assert statement.table == st.TableName("db", "customers")
    plan = statement.plan
    assert plan.cdc == CdcSpec(keys=("id", "region"), sequence_sql="struct(ts, lsn)", sequence_columns=("ts", "lsn"),
                               scd_type=1, ignore_null_updates=True, delete_sql="operation = 'DELETE'",
                               truncate_sql="operation = 'TRUNCATE'", except_columns=("operation", "ts"))
    assert plan.or_refresh and plan.if_not_exists and plan.comment == "mirror"
    assert [source.table for source in plan.sources] == ["cdc_events"] and plan.output_mode == "append"
    assert StreamingPlan.from_json(plan.to_json()) == plan
    # the text sqlglot writes back parses to the same statement
    assert classify(parse(FULL.replace("(id INT, name STRING) ", "")).sql(StreamingSpark)).plan.cdc == plan.cdc


def test_the_flow_form_and_scd_type_2() -> None:
    statement = classify("CREATE FLOW f AS AUTO CDC INTO t FROM STREAM read_files('/in', format => 'json') "
                         "KEYS (id) SEQUENCE BY ts COLUMNS id, name STORED AS SCD TYPE 2 "
                         "TRACK HISTORY ON * EXCEPT (name)")
    assert isinstance(statement, st.CreateAutoCdc)
    assert statement.flow == st.TableName(None, "f") and statement.table == st.TableName(None, "t")
    assert statement.plan.cdc is not None
    assert (statement.plan.cdc.scd_type, statement.plan.cdc.columns, statement.plan.cdc.track_except) == \
        (2, ("id", "name"), ("name",))
    assert statement.plan.sources[0].kind == "files"


def test_explain_shows_keys_sequence_and_scd_type() -> None:
    statement = classify("EXPLAIN CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) SEQUENCE BY ts")
    assert isinstance(statement, st.ExplainStreamingTable)
    assert any("auto cdc: keys (id), sequence by ts, SCD type 1" in op.text for op in statement.plan.operators)


@pytest.mark.parametrize(("sql", "error_class", "sqlstate", "column", "hint"), [
    ("CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) APPLY AS TRUNCATE WHEN op = 'T' "
     "SEQUENCE BY ts STORED AS SCD TYPE 2", "INVALID_AUTO_CDC_CLAUSE", "42000", 90, "SCD TYPE 1"),
    ("CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) SEQUENCE BY ts TRACK HISTORY ON (v)",
     "INVALID_AUTO_CDC_CLAUSE", "42000", 100, "SCD TYPE 2"),
    ("CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) SEQUENCE BY ts + 1",
     "INVALID_AUTO_CDC_CLAUSE", "42000", 79, "struct(a, b)"),
    ("CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id, ID) SEQUENCE BY ts",
     "INVALID_AUTO_CDC_CLAUSE", "42000", 67, "once"),
    ("CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) SEQUENCE BY ts COLUMNS * EXCEPT (id)",
     "INVALID_AUTO_CDC_CLAUSE", "42000", 100, "every key"),
    ("CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) SEQUENCE BY ts COLUMNS name",
     "INVALID_AUTO_CDC_CLAUSE", "42000", 90, "every key"),
    ("CREATE STREAMING TABLE t (id INT, v STRING) FLOW AUTO CDC FROM STREAM(src) KEYS (idx) SEQUENCE BY ts",
     "UNRESOLVED_COLUMN.WITH_SUGGESTION", "42703", 82, "declare"),
    ("CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) APPLY AS DELETE WHEN "
     "op IN (SELECT op FROM x) SEQUENCE BY ts", "INVALID_AUTO_CDC_CLAUSE", "42000", 102, "operation"),
    ("CREATE STREAMING TABLE t FLOW AUTO CDC FROM src KEYS (id) SEQUENCE BY ts",
     "INVALID_FLOW_QUERY_TYPE.BATCH_RELATION_FOR_STREAMING_TABLE", "42000", 45, "STREAM"),
])
def test_create_is_checked_with_sqlstate_position_and_hint(sql: str, error_class: str, sqlstate: str, column: int,
                                                          hint: str) -> None:
    error = _error(sql)
    assert (error.error_class, error.sqlstate, error.line, error.column) == (error_class, sqlstate, 1, column), \
        error.message
    assert hint in (error.hint or ""), error.hint


@pytest.mark.parametrize("sql", [
    "CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) SEQUENCE BY ts",
    "CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id)",
    "CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) SEQUENCE BY ts STORED AS SCD TYPE 3",
    "CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) APPLY AS UPDATE WHEN x SEQUENCE BY ts",
    "CREATE FLOW f AS AUTO CDC t FROM STREAM(src) KEYS (id) SEQUENCE BY ts",
])
def test_syntax_errors_are_the_gateways_not_sparks(sql: str) -> None:
    error = _error(sql)
    assert error.error_class == "PARSE_SYNTAX_ERROR" and error.sqlstate == "42601"


def test_source_columns_are_checked_once_known() -> None:
    sql = "CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src)\nKEYS (id) SEQUENCE BY struct(ts, lsn)"
    check_cdc_source(sql, {"id": "int", "ts": "timestamp", "lsn": "bigint"})
    with pytest.raises(SqlError) as raised:
        check_cdc_source(sql, {"id": "int", "ts": "timestamp"})
    assert (raised.value.error_class, raised.value.sqlstate, raised.value.line) == \
        ("UNRESOLVED_COLUMN.WITH_SUGGESTION", "42703", 2) and "`lsn`" in raised.value.message
    with pytest.raises(SqlError) as raised:
        check_cdc_source(sql, {"id": "map<string,int>", "ts": "timestamp", "lsn": "bigint"})
    assert (raised.value.sqlstate, raised.value.line, raised.value.column) == ("42K09", 2, 7)


def test_kept_columns() -> None:
    spec = CdcSpec(keys=("id",), sequence_sql="ts", sequence_columns=("ts",))
    assert kept_columns(["id", "op", "ts"], spec) == ["id", "op", "ts"]
    assert kept_columns(["id", "op", "ts"], CdcSpec(**{**spec.__dict__, "except_columns": ("OP",)})) == ["id", "ts"]
    assert kept_columns(["id", "op", "ts"], CdcSpec(**{**spec.__dict__, "columns": ("ts", "id")})) == ["ts", "id"]


def test_a_flow_agrees_with_the_tables_other_writers_on_keys_and_scd_type() -> None:
    sql = ("CREATE FLOW from_eu COMMENT 'eu' AS AUTO CDC INTO customers FROM STREAM(eu_events)\n"
           "  KEYS (region, id) SEQUENCE BY seq STORED AS SCD TYPE 1")
    statement = classify(sql)
    assert isinstance(statement, st.CreateAutoCdc) and statement.comment == "eu"
    spec = statement.plan.cdc
    assert spec is not None
    # the same keys in another order and spelling, the same type: agreed
    check_agrees(sql, spec, CdcSpec(keys=("ID", "Region"), sequence_sql="ts", sequence_columns=("ts",)), "us")
    with pytest.raises(SqlError) as raised:
        check_agrees(sql, spec, CdcSpec(keys=("id",), sequence_sql="seq", sequence_columns=("seq",)), "the flow `us`")
    error = raised.value
    assert (error.error_class, error.sqlstate, error.line, error.column) == ("INVALID_AUTO_CDC_CLAUSE", "42000", 2, 9)
    assert "KEYS (region, id)" in error.message and "the flow `us`" in error.message and "KEYS (id)" in str(error.hint)
    with pytest.raises(SqlError) as raised:
        check_agrees(sql, spec, CdcSpec(keys=("id", "region"), sequence_sql="seq", sequence_columns=("seq",),
                                        scd_type=2), "the flow `us`")
    assert raised.value.error_class == "INVALID_AUTO_CDC_CLAUSE" and "SCD TYPE 2" in str(raised.value.hint)
    assert raised.value.line == 1


def test_tracked_columns_and_what_describe_shows_of_them() -> None:
    spec = CdcSpec(keys=("id",), sequence_sql="ts", sequence_columns=("ts",), scd_type=2)
    kept = ["id", "name", "city", "ts"]
    assert tracked_columns(kept, spec) == ["name", "city", "ts"]
    assert "track history on every column but the keys" in describe_cdc(spec)
    only = CdcSpec(**{**spec.__dict__, "track_history": ("CITY",)})
    assert tracked_columns(kept, only) == ["city"] and "track history on CITY" in describe_cdc(only)
    but = CdcSpec(**{**spec.__dict__, "track_except": ("ts",)})
    assert tracked_columns(kept, but) == ["name", "city"] and "track history on * except (ts)" in describe_cdc(but)
    assert "track history" not in describe_cdc(CdcSpec(keys=("id",), sequence_sql="ts", sequence_columns=("ts",)))


def test_explain_of_scd_type_2_and_truncate() -> None:
    statement = classify("EXPLAIN CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) SEQUENCE BY ts "
                         "STORED AS SCD TYPE 2 TRACK HISTORY ON name")
    assert isinstance(statement, st.ExplainStreamingTable)
    assert any("SCD type 2; track history on name" in op.text for op in statement.plan.operators)
    assert "__START_AT" in statement.plan.mode_reason and "every change" in statement.plan.state
    statement = classify("EXPLAIN CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) "
                         "APPLY AS TRUNCATE WHEN op = 'T' SEQUENCE BY ts")
    assert isinstance(statement, st.ExplainStreamingTable)
    assert "latest truncate" in statement.plan.state


def test_a_changed_auto_cdc_clause_refreshes_the_table_fully() -> None:
    from sluicegate.engine.streams import refresh

    def plan(sql: str) -> StreamingPlan:
        statement = classify(sql)
        assert isinstance(statement, st.CreateAutoCdc)
        return statement.plan

    base = "CREATE OR REFRESH STREAMING TABLE t FLOW AUTO CDC FROM STREAM(src) KEYS (id) SEQUENCE BY ts"
    assert refresh.decide(plan(base), plan(base), True).kind == refresh.UNCHANGED
    for changed in (" STORED AS SCD TYPE 2", " COLUMNS * EXCEPT (op)"):
        assert refresh.decide(plan(base), plan(base + changed), True).kind == refresh.FULL
