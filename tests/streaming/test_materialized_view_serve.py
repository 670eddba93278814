"""`sluicegate serve` refreshes materialized views by itself: a TRIGGER ON UPDATE view follows its input (the table is
polled, no sleep stands in for the refresh), and after a restart the scheduler takes the view on again from the
catalog."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from gateway_process import GatewayProcess


def _until(cur: Any, sql: str, expected: list[tuple[Any, ...]], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while True:
        cur.execute(sql)
        rows = sorted(cur.fetchall())
        if rows == expected:
            return
        assert time.monotonic() < deadline, f"{sql} gave {rows}, not {expected}"
        time.sleep(0.2)


@pytest.mark.timeout(600)
def test_serve_refreshes_a_trigger_on_update_view_across_a_restart(tmp_path: Path) -> None:
    from pyhive import hive

    conf = tmp_path / "sluicegate.toml"
    conf.write_text('[streams]\ntick_interval = 0.2\n\n[spark]\ndriver_memory = "1g"\n')
    gateway = GatewayProcess(tmp_path / "warehouse", conf, tmp_path / "gateway.log")
    gateway.start()
    try:
        cur = hive.connect("127.0.0.1", gateway.port, username="tester").cursor()
        cur.execute("CREATE DATABASE shop")
        cur.execute("USE shop")
        cur.execute("CREATE TABLE sales (item STRING, qty INT)")
        cur.execute("INSERT INTO sales VALUES ('a', 1)")
        cur.execute("CREATE MATERIALIZED VIEW totals TRIGGER ON UPDATE AS "
                    "SELECT item, sum(qty) AS qty FROM sales GROUP BY item")
        cur.execute("INSERT INTO sales VALUES ('a', 2), ('b', 5)")
        _until(cur, "SELECT * FROM totals", [("a", 3), ("b", 5)])
        gateway.stop()
        gateway.start()
        cur = hive.connect("127.0.0.1", gateway.port, username="tester").cursor()
        cur.execute("USE shop")
        cur.execute("INSERT INTO sales VALUES ('c', 7)")
        _until(cur, "SELECT * FROM totals", [("a", 3), ("b", 5), ("c", 7)])
        cur.execute("DESCRIBE EXTENDED totals")
        info = {row[0]: row[1] for row in cur.fetchall()}
        assert info["Refresh Schedule"] == "TRIGGER ON UPDATE" and info["Latest Refresh Status"] == "COMPLETED"
    finally:
        gateway.stop()
