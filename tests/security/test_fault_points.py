"""The crash points of the crash tests (engine/streams/faults.py) are armed by the gateway process's environment
only: no statement can arm one (SET changes Spark or session variables, never os.environ), so a user cannot make
the gateway exit."""

from __future__ import annotations

from typing import Any

from pyhive import exc as hive_exc
from pyhive_helpers import cursor_in

from sluicegate.engine.streams import faults


def test_sql_cannot_arm_a_crash_point(connect: Any, streams: Any, tmp_path: Any) -> None:
    cur = cursor_in(connect, "sec_fault_points")
    for statement in ("SET SLUICEGATE_FAULT = full_refresh.after_empty",
                      "SET hivevar:SLUICEGATE_FAULT = full_refresh.after_empty",
                      "SET spark.executorEnv.SLUICEGATE_FAULT = full_refresh.after_empty"):
        try:
            cur.execute(statement)
        except hive_exc.OperationalError:
            pass  # refused by the policy: as good
    source = tmp_path / "in"
    source.mkdir()
    (source / "part-0.json").write_text('{"k": "a"}\n', encoding="utf-8")
    cur.execute(f"CREATE STREAMING TABLE t AS SELECT k, count(*) AS n FROM STREAM "
                f"read_files('{source}', format => 'json', schema => 'k STRING') GROUP BY k")
    streams.wait_for("sec_fault_points", "t")
    cur.execute("REFRESH STREAMING TABLE t FULL")   # passes every crash point: this process would exit if armed
    cur.execute("SELECT k, n FROM t")
    assert cur.fetchall() == [("a", 1)]
    assert faults._ARMED is None
