"""Proof that a write's files are all there before its Delta commit.

Executors write the Parquet files, the driver lists them and commits what it found. When the executors' disk is not
the driver's (separate machines without a shared mount) the listing finds nothing, and a commit of that would report
success for a table of 0 rows. So every write on a cluster counts its rows as Spark writes them (an observed metric, no
second pass) and compares that with the row counts in the footers of the files it is about to commit (footers the
listing reads anyway): any difference fails the write before anything is committed. The count is an Observation in
a throwaway clone of the writer's session (storage/observations.py), whose listener leaves with the clone: on the
writer's own session it would stay on Spark's listener bus for good, one more per client session and per stream
start. A local master's tasks run in the driver's process, on its filesystem: its writes need no count.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sluicegate.storage.delta.errors import DeltaFilesNotVisibleError
from sluicegate.storage.masters import is_local
from sluicegate.storage.observations import observable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Observation

    from sluicegate.storage.delta.files import WrittenFile

SHARED_STORAGE_HINT = ("executors must write where the driver reads: put the warehouse on a filesystem every Spark "
                       "node mounts at the same path (NFS, a cluster filesystem) or on object storage")
ROWS = "rows"


def executors_share_driver_files(df: DataFrame) -> bool:
    """Whether `df`'s tasks run in this process (a local master), on the driver's own filesystem: then what they
    write is what the driver lists, and no count is needed."""
    master = df.sparkSession.sparkContext.master
    return master is not None and is_local(master)  # typed optional; a running context always has its master


def counting_rows(df: DataFrame) -> tuple[DataFrame, Observation]:
    """`df` with its rows counted as an action writes it; the count is read from the observation afterwards."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    observation = Observation(f"sluicegate_write_{uuid.uuid4().hex}")
    return df.observe(observation, F.count(F.lit(1)).alias(ROWS)), observation


def written_and_counted(df: DataFrame, table_path: str,
                        write: Callable[[DataFrame], list[WrittenFile]]) -> list[WrittenFile]:
    """`write(df)`, refused (before any commit) unless the files it returns hold every row Spark wrote."""
    with observable(df) as writable:
        counted, observation = counting_rows(writable)
        files = write(counted)
        require_all_rows_visible(table_path, int(observation.get[ROWS]), files)
    return files


def committed_rows(files: Sequence[Any]) -> int:
    """The rows in `files` (WrittenFile) by their footers' statistics."""
    import json

    return sum(int(json.loads(f.stats)["numRecords"]) for f in files)


def require_all_rows_visible(table_path: str, rows_written: int, files: Sequence[Any]) -> None:
    """Refuse a commit whose files do not hold every row Spark wrote."""
    found = committed_rows(files)
    if found != rows_written:
        raise DeltaFilesNotVisibleError(
            f"the write to {table_path} produced {rows_written} rows but the driver sees {found} rows in "
            f"{len(files)} files: the executors wrote where the driver cannot read; nothing was committed",
            hint=SHARED_STORAGE_HINT,
        )
