"""Which files compaction merges (storage/delta/compaction.py has the why), as plain data: configuration loads it
without Arrow or Delta."""

from __future__ import annotations

import math
from dataclasses import dataclass

# the Delta log property that turns auto-compaction off (or on) for one table, as Databricks names it
AUTO_COMPACT_PROPERTY = "delta.autoOptimize.autoCompact"


@dataclass(frozen=True)
class CompactionPolicy:
    """Which files are merged: see the module's docstring."""

    target_size: int = 128 * 1024 * 1024   # bytes; a file this big is never rewritten, a merge stops below it
    fan_in: int = 8                         # files of one size class that are merged into one
    base_size: int = 1024 * 1024            # bytes; the upper bound of the smallest size class

    def size_class(self, size: int) -> int:
        if size < self.base_size:
            return 0
        return 1 + int(math.log(size / self.base_size, self.fan_in))
