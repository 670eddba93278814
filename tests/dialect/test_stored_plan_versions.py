"""A plan stored by an older gateway still loads and means the same: `fixtures/streaming_plans_v1.json` holds plans
as the code at 9854b58 wrote them (operators as prose, no `plan_version`), with the EXPLAIN and DESCRIBE texts that
code showed for them. No JVM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sluicegate.dialect.streaming.analyze import analyze, analyze_flow
from sluicegate.dialect.streaming.explain import explain
from sluicegate.dialect.streaming.plan import PLAN_VERSION, PlanVersionError, StreamingPlan

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "streaming_plans_v1.json").read_text(encoding="utf-8"))
CASES = FIXTURE["cases"]


def _describe(plan: StreamingPlan) -> tuple[list[str], str]:
    """The Source rows and the Operators row of DESCRIBE STREAMING TABLE (executor/streaming_tables.py)."""
    return ([op.text for op in plan.operators if op.kind == "stream"],
            "; ".join(op.text for op in plan.operators if op.kind != "stream"))


@pytest.mark.parametrize("case", CASES, ids=[case["sql"][:60] for case in CASES])
def test_a_version_1_plan_loads_as_the_plan_of_its_statement_today(case: dict[str, Any]) -> None:
    stored = StreamingPlan.from_json(case["plan_json"])
    today = analyze(case["sql"]) if case["kind"] == "create" else analyze_flow(case["sql"])
    assert stored == today
    assert explain(stored) == explain(today) == case["explain"]
    assert _describe(stored) == _describe(today) == (case["describe_sources"], case["describe_operators"])
    again = json.loads(stored.to_json())
    assert again["plan_version"] == PLAN_VERSION and StreamingPlan.from_json(stored.to_json()) == stored


def test_the_aggregation_of_a_version_1_plan_is_read_from_its_operators() -> None:
    plans = [StreamingPlan.from_json(case["plan_json"]) for case in CASES]
    aggregations = {plan.name: plan.aggregation for plan in plans}
    assert aggregations["total"] == "global" and aggregations["top"] == "keyed"
    assert aggregations["s"] == "keyed" and aggregations["d"] is None and aggregations["r"] is None
    stored = StreamingPlan.from_json(FIXTURE["stored_global_aggregate"])
    assert (stored.aggregation, stored.database, stored.output_mode) == ("global", "fixture_database", "update")


def test_a_plan_from_a_newer_gateway_is_refused() -> None:
    data = json.loads(analyze(CASES[0]["sql"]).to_json())
    data["plan_version"] = PLAN_VERSION + 1
    with pytest.raises(PlanVersionError, match="newer than this gateway knows"):
        StreamingPlan.from_json(json.dumps(data))
