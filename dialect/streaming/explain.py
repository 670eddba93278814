"""EXPLAIN CREATE STREAMING TABLE: the checked plan as text a person reads before starting the stream."""

from __future__ import annotations

from sluicegate.dialect.streaming.kafka import kafka_description, redacted
from sluicegate.dialect.streaming.plan import StreamingPlan


def explain(plan: StreamingPlan) -> str:
    name = f"{plan.database}.{plan.name}" if plan.database else plan.name
    lines = [f"== Streaming table {name} =="]
    lines.append("Sources:")
    for source in plan.sources:
        if source.kind == "table":
            what = f"Delta table {source.database + '.' if source.database else ''}{source.table}"
        elif source.kind == "files":
            what = f"{source.format} files in {source.path}" + (f" with schema {source.schema}" if source.schema
                                                                 else " (schema inferred at CREATE)")
        elif source.kind == "kafka":
            what = kafka_description(source.options)
        else:
            what = "rate generator"
        options = ", ".join(f"{k}={v}" for k, v in sorted(redacted(source.options).items()))
        lines.append(f"  {source.view_name}: {what}" + (f" [{options}]" if options else ""))
        if source.watermark is not None:
            lines.append(f"    watermark: {source.watermark.column} delayed by {source.watermark.delay}")
    for static in plan.static_tables:
        lines.append(f"  {static.view_name}: static Delta table "
                     f"{static.database + '.' if static.database else ''}{static.table} (pinned snapshot)")
    lines.append("Operators:")
    lines.extend(f"  {op.text}" for op in plan.operators)
    lines.append(f"Output mode: {plan.output_mode} ({plan.mode_reason})")
    lines.append(f"Keys: {', '.join(plan.keys) if plan.keys else '(none)'}")
    lines.append(f"State: {plan.state}")
    trigger = f"every {plan.trigger_seconds:g} s" if plan.trigger_seconds is not None else "the configured default"
    lines.append(f"Trigger: {trigger}")
    if plan.expectations:
        actions = {"warn": "write and count", "drop": "keep out of the table", "fail": "fail the micro-batch"}
        lines.append("Expectations (a row that does not pass):")
        lines.extend(f"  {e.name}: EXPECT ({e.expression_sql}) -> {actions[e.action]}" for e in plan.expectations)
    lines.append(f"Query: {plan.query_sql}")
    return "\n".join(lines)
