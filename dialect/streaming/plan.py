"""The checked streaming plan: pure data with a JSON round trip, so the catalog can store it and the runtime can
rebuild a stream from it after a restart without parsing SQL again.

What code decides on is data: what an operator is (`Operator.kind`) and how the query aggregates (`aggregation`);
`Operator.text` is only shown (EXPLAIN, DESCRIBE). The JSON carries `plan_version`; a plan
stored by an older gateway is converted when it is read (`_from_v1`), so catalogs need no migration for it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from sluicegate.dialect.columns import ColumnSpec
from sluicegate.dialect.errors import SqlError

PLAN_VERSION = 2

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


OperatorKind = Literal["stream", "join", "filter", "union", "aggregate", "deduplicate", "sort", "limit", "project"]
Aggregation = Literal["global", "keyed"]    # global: one result row, no keys; keyed: GROUP BY, windows included


@dataclass(frozen=True)
class Operator:
    """One step of the query, in the order EXPLAIN lists them: `kind` is what code reads, `text` what a person reads
    (written when the plan is checked, with the names as the user typed them, and never parsed back)."""

    kind: OperatorKind
    text: str


@dataclass(frozen=True)
class CdcSpec:
    """`AUTO CDC` (Databricks' change data capture): the stream's rows are change events applied to the table by key.
    Every name is as the user wrote it; `sequence_sql` is SEQUENCE BY as Spark SQL over the source's columns, which
    are `sequence_columns`; `delete_sql` / `truncate_sql` the APPLY AS conditions; `columns` / `except_columns` what
    of an event the table keeps (neither: every column); `track_history` / `track_except` TRACK HISTORY ON (SCD 2);
    `flow` the flow's name for `CREATE FLOW f AS AUTO CDC INTO t` (None: the table's own)."""

    keys: tuple[str, ...]
    sequence_sql: str
    sequence_columns: tuple[str, ...]
    scd_type: int = 1
    ignore_null_updates: bool = False
    delete_sql: str | None = None
    truncate_sql: str | None = None
    columns: tuple[str, ...] = ()
    except_columns: tuple[str, ...] = ()
    track_history: tuple[str, ...] = ()
    track_except: tuple[str, ...] = ()
    flow: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CdcSpec:
        converted: dict[str, Any] = {key: tuple(value) if isinstance(value, list) else value
                                     for key, value in data.items()}
        return cls(**converted)


class PlanVersionError(SqlError):
    """A stored plan written by a newer gateway: its fields may mean what this code does not know."""

    error_class = "STREAMING_PLAN_VERSION"
    sqlstate = "XX000"


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
    operators: tuple[Operator, ...]
    aggregation: Aggregation | None
    state: str
    or_refresh: bool
    if_not_exists: bool
    expectations: tuple[ExpectationSpec, ...] = ()
    partition_by: tuple[str, ...] = ()   # PARTITIONED BY: the Delta table's partition columns
    cdc: CdcSpec | None = None           # AUTO CDC: the rows are change events applied by key

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "plan_version": PLAN_VERSION}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> StreamingPlan:
        data: dict[str, Any] = json.loads(text)
        version = data.pop("plan_version", 1)
        if version > PLAN_VERSION:
            raise PlanVersionError(f"the stored plan of `{data.get('name')}` has version {version}, newer than this "
                                   f"gateway knows ({PLAN_VERSION})", hint="upgrade sluicegate")
        if version == 1:
            data = _from_v1(data)
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
            "operators": tuple(Operator(**operator) for operator in data["operators"]),
            # a plan stored before expectations existed has none
            "expectations": tuple(ExpectationSpec(**e) for e in data.get("expectations") or ()),
            "partition_by": tuple(data.get("partition_by") or ()),   # a plan stored before it: unpartitioned
            "cdc": CdcSpec.from_dict(data["cdc"]) if data.get("cdc") else None,
        })


# How the gateway before plan_version 2 wrote each operator (dialect/streaming/analyze.py at the time); only the
# conversion of such a plan reads these texts.
_V1_EXACT: dict[str, OperatorKind] = {
    "filter": "filter", "union all": "union", "union (distinct)": "union", "global aggregate": "aggregate",
    "deduplicate (SELECT DISTINCT)": "deduplicate", "sort": "sort", "limit": "limit", "project": "project"}
_V1_AGGREGATE = re.compile(r"^(?:\w+ )?aggregate by ")
_V1_JOIN = re.compile(r"^\w+ join with (?:stream|static table)$")


def _v1_kind(text: str) -> OperatorKind:
    if text.startswith("stream "):
        return "stream"
    if text in _V1_EXACT:
        return _V1_EXACT[text]
    if _V1_AGGREGATE.match(text):
        return "aggregate"
    if _V1_JOIN.match(text):
        return "join"
    raise PlanVersionError(f"a stored plan names an operator this gateway does not know: {text!r}")


def _from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 plan (operators as text, no `aggregation`) in version 2's shape; the texts shown stay as stored."""
    operators = [{"kind": _v1_kind(text), "text": text} for text in data["operators"]]
    aggregation = ("global" if "global aggregate" in data["operators"]
                   else "keyed" if any(op["kind"] == "aggregate" for op in operators) else None)
    return {**data, "operators": operators, "aggregation": aggregation}
