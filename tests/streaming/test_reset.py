"""The table's reset for a new stream id (engine/streams/reset.py) and the test-only crash points
(engine/streams/faults.py), without a JVM: delta-rs tables on disk, a subprocess for the crash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from pyspark.sql.types import LongType, StringType, StructField, StructType

from sluicegate.dialect.streaming.analyze import analyze
from sluicegate.engine.streams.reset import RESET_VERSION, empty_for_stream, empty_table
from sluicegate.storage.delta.write import AppTransaction, commit_files

SCHEMA = StructType([StructField("k", StringType()), StructField("n", LongType(), False)])
PLAN = analyze("CREATE STREAMING TABLE t AS SELECT k, count(*) AS n FROM STREAM "
               "read_files('/tmp/in', format => 'json', schema => 'k STRING') GROUP BY k")


def test_a_table_is_emptied_once_for_a_stream_id(tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    empty_table(location, SCHEMA, PLAN, replace_existing=False)
    assert empty_for_stream(location, SCHEMA, PLAN, "first") is False     # created empty: no commit needed
    write_deltalake(location, pa.table({"k": ["a"], "n": pa.array([1], pa.int64())}), mode="append")
    assert empty_for_stream(location, SCHEMA, PLAN, "new") is True       # the old stream's rows: gone
    table = DeltaTable(location)
    assert table.to_pyarrow_table().num_rows == 0
    assert table.transaction_version("new") == RESET_VERSION
    version = table.version()
    assert empty_for_stream(location, SCHEMA, PLAN, "new") is False      # again (a boot after a crash): nothing
    assert DeltaTable(location).version() == version
    assert empty_for_stream(location, SCHEMA, PLAN, "new", always=True) is False
    other = StructType([StructField("k", StringType())])                  # empty, but another schema: a commit
    assert empty_for_stream(location, other, PLAN, "newer") is True
    assert DeltaTable(location).schema().fields[0].name == "k" and len(DeltaTable(location).schema().fields) == 1


def test_a_stream_that_has_written_is_never_emptied(tmp_path: Path) -> None:
    location = str(tmp_path / "t")
    empty_table(location, SCHEMA, PLAN, replace_existing=False)
    rows = pa.table({"k": ["a"], "n": pa.array([1], pa.int64())})
    write_deltalake(location, rows, mode="append")
    commit_files(location, [], rows.schema, "append", app_transaction=AppTransaction("s", 0))
    assert empty_for_stream(location, SCHEMA, PLAN, "s") is False
    assert DeltaTable(location).to_pyarrow_table().num_rows == 1


def _run(code: str, fault: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SLUICEGATE_FAULT"}
    if fault is not None:
        env["SLUICEGATE_FAULT"] = fault
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                          check=False)


def test_a_crash_point_kills_the_process_only_when_armed_by_the_environment() -> None:
    code = ("import os\nfrom sluicegate.engine.streams import faults\nfaults.crash_point('full_refresh.after_row')\n"
            "os.environ['SLUICEGATE_FAULT'] = 'full_refresh.after_empty'\n"   # read once at import: no effect
            "faults.crash_point('full_refresh.after_empty')\nprint('alive')")
    assert _run(code, None).stdout.strip() == "alive"
    assert _run(code, "full_refresh.after_stop").stdout.strip() == "alive"
    crashed = _run(code, "full_refresh.after_row")
    assert crashed.returncode == 137 and "alive" not in crashed.stdout
