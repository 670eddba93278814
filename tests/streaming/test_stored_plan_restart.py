"""A stream whose catalog row holds a plan as an older gateway stored it (version 1: operators as prose, see
tests/dialect/fixtures/streaming_plans_v1.json) restarts and runs as before: a global aggregate keeps its one row
(its update batches replace it rather than merge on every column), and DESCRIBE shows the same."""

from __future__ import annotations

import json
from pathlib import Path

from sluicegate.dialect.streaming.plan import StreamingPlan

FIXTURE = Path(__file__).parent.parent / "dialect" / "fixtures" / "streaming_plans_v1.json"


def _plan_rows(cur) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    cur.execute("DESCRIBE STREAMING TABLE totals")
    rows: dict[str, list[str]] = {}
    for key, value in cur.fetchall():
        if key in ("Source", "Operators", "Output mode", "Keys", "State"):
            rows.setdefault(key, []).append(value)
    return rows


def test_a_version_1_plan_in_the_catalog_restarts_the_same_stream(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    source = tmp_path / "in"
    land(source, [{"amount": 1}, {"amount": 2}])
    cur.execute(f"CREATE STREAMING TABLE totals AS SELECT count(*) AS n, sum(amount) AS amount FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'amount INT')")
    streams.wait_for(cur.database, "totals")
    described = _plan_rows(cur)
    streams.stop(cur.database, "totals", desired=None)
    stored = json.loads(FIXTURE.read_text(encoding="utf-8"))["stored_global_aggregate"]
    stored = stored.replace("/SOURCE_FOLDER", str(source)).replace("fixture_database", cur.database)
    assert "plan_version" not in json.loads(stored)
    assert StreamingPlan.from_json(stored) == StreamingPlan.from_json(
        streams.store.get_stream(cur.database, "totals").plan_json)
    streams.store.update_stream(cur.database, "totals", plan_json=stored)
    land(source, [{"amount": 4}])
    streams.resume(streams.store.get_stream(cur.database, "totals"))
    streams.wait_for(cur.database, "totals")
    cur.execute("SELECT n, amount FROM totals")
    assert cur.fetchall() == [(3, 7)]
    assert _plan_rows(cur) == described
    assert described["Operators"] == ["global aggregate; project"]
