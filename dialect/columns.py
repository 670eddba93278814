"""A column as a CREATE declares it: the one piece of a statement that the streaming plan keeps too (the catalog stores
the plan), so it sits below both `statements.py` and `streaming/plan.py`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    type: str                      # Spark SQL type string
    nullable: bool = True
    comment: str | None = None
