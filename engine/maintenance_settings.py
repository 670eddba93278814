"""The background compactor's settings (`[compaction]` in conf), free of Arrow and Delta so configuration loads
without them."""

from __future__ import annotations

from dataclasses import dataclass, field

from sluicegate.storage.delta.compaction_policy import CompactionPolicy


@dataclass(frozen=True)
class MaintenanceSettings:
    enabled: bool = True
    policy: CompactionPolicy = field(default_factory=CompactionPolicy)
    delay: float = 5.0             # seconds after a table's first unexamined commit before it is looked at
    settle: float = 60.0           # seconds without a commit before a table's last small files are merged; 0 = never
    cpu_share: float = 0.25        # the most of one core the compactor averages (it rests between steps)
    retention_interval: float = 3600.0  # seconds between two retention passes over a table that commits; 0 = never
