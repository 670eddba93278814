"""The checked streaming plan: pure data with a JSON round trip, so the catalog can store it and the runtime can
rebuild a stream from it after a restart without parsing SQL again."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from sluicegate.dialect.columns import ColumnSpec

SKIP_CHANGE_COMMITS = "skipChangeCommits"


def skips_change_commits(properties: dict[str, str]) -> bool:
    """`TBLPROPERTIES ('skipChangeCommits' = 'true')`: the table's streams from Delta tables skip commits that rewrote
    rows (a full refresh, UPDATE, DELETE, MERGE) instead of failing on them, as Databricks' reader option does."""
    return any(key.lower() == SKIP_CHANGE_COMMITS.lower() and value.strip().lower() == "true"
               for key, value in properties.items())


@dataclass(frozen=True)
class WatermarkSpec:
    column: str
    delay: str                       # Spark's notation: "10 seconds"


@dataclass(frozen=True)
class SourceSpec:
    view_name: str                   # the name query_sql uses for this source, e.g. "__sg_source_0"
    kind: str                        # "table" | "files" | "rate" | "kafka"
    database: str | None = None
    table: str | None = None
    path: str | None = None
    format: str | None = None
    schema: str | None = None
    options: dict[str, str] = field(default_factory=dict, hash=False)
    watermark: WatermarkSpec | None = None
    # the column read_files keeps what it cannot parse or cast in (json, csv); None: none (a plan stored before
    # the column existed, FAILFAST / DROPMALFORMED, parquet)
    rescued_data: str | None = None


@dataclass(frozen=True)
class StaticTableSpec:
    view_name: str
    database: str | None
    table: str


EXPECTATION_ACTIONS = ("warn", "drop", "fail")


@dataclass(frozen=True)
class ExpectationSpec:
    """`CONSTRAINT name EXPECT (expression_sql) [ON VIOLATION DROP ROW | FAIL UPDATE]`: the condition as the user
    typed it (Spark evaluates that text over each result row); `action` "warn" writes and counts a failing row,
    "drop" keeps it out of the table (in its quarantine table), "fail" fails the micro-batch."""

    name: str
    expression_sql: str
    action: str = "warn"


@dataclass(frozen=True)
class StreamingPlan:
    database: str | None
    name: str
    columns: tuple[ColumnSpec, ...]
    comment: str | None
    properties: dict[str, str] = field(hash=False)
    query_sql: str
    sources: tuple[SourceSpec, ...]
    static_tables: tuple[StaticTableSpec, ...]
    output_mode: str
    mode_reason: str
    keys: tuple[str, ...]
    trigger_seconds: float | None
    operators: tuple[str, ...]
    state: str
    or_refresh: bool
    if_not_exists: bool
    expectations: tuple[ExpectationSpec, ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> StreamingPlan:
        data: dict[str, Any] = json.loads(text)
        sources = []
        for source in data["sources"]:
            watermark = source.get("watermark")
            sources.append(SourceSpec(**{**source, "watermark": WatermarkSpec(**watermark) if watermark else None}))
        return cls(**{
            **data,
            "columns": tuple(ColumnSpec(**column) for column in data["columns"]),
            "sources": tuple(sources),
            "static_tables": tuple(StaticTableSpec(**static) for static in data["static_tables"]),
            "keys": tuple(data["keys"]),
            "operators": tuple(data["operators"]),
            # a plan stored before expectations existed has none
            "expectations": tuple(ExpectationSpec(**e) for e in data.get("expectations") or ()),
        })
