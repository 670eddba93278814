"""AUTO CDC through beeline and `sluicegate shell` against a real gateway (issue 29): one script creates an AUTO CDC
table over a Delta table of change events, adds a second source with CREATE FLOW ... AS AUTO CDC INTO, feeds both
with INSERTs, and reads the table, its flows and its description back; each client's printout is asserted on. (The
Databricks connector: tests/test_databricks_connector.py; PyHive: tests/streaming/test_auto_cdc*.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import fresh_database
from test_beeline import csv_rows, script_sections
from test_shell import run_shell
from test_streaming_operations_clients import shell_script_sections, shell_table

CDC = "KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op)"
SCRIPT = f"""\
CREATE DATABASE {{db}};
USE {{db}};
CREATE TABLE changes (id INT, op STRING, seq BIGINT, name STRING);
INSERT INTO changes VALUES (1, 'U', 1, 'ann'), (2, 'U', 1, 'bob'), (1, 'U', 3, 'ann3');
CREATE TABLE more_changes (id INT, op STRING, seq BIGINT, name STRING);
INSERT INTO more_changes VALUES (1, 'U', 2, 'late'), (2, 'D', 4, NULL), (3, 'U', 1, 'cy');
CREATE STREAMING TABLE customers FLOW AUTO CDC FROM STREAM(changes) {CDC} STORED AS SCD TYPE 1;
CREATE FLOW from_more AS AUTO CDC INTO customers FROM STREAM(more_changes) {CDC};
INSERT INTO changes VALUES (3, 'U', 2, 'cy2');
REFRESH STREAMING TABLE customers;
SELECT 'rows' AS section;
SELECT id, seq, name FROM customers ORDER BY id;
SELECT 'flows' AS section;
SHOW FLOWS;
"""
SECTIONS = ["rows", "flows"]
# per id the highest seq of both sources: ann3 (3) over `late` (2); bob deleted at 4; cy2 (2) over cy (1)
EXPECTED = [["id", "seq", "name"], ["1", "3", "ann3"], ["3", "2", "cy2"]]


def _script(tmp: Path, db: str) -> Path:
    script = tmp / "cdc.sql"
    script.write_text(SCRIPT.format(db=db))
    return script


@pytest.mark.beeline
def test_beeline_creates_feeds_and_reads_an_auto_cdc_table(beeline: Any, gateway: Any, tmp_path: Path) -> None:
    db = "cdc_beeline"
    with fresh_database(gateway, db):
        run = beeline(gateway.port, "-f", str(_script(tmp_path, db)))
    assert run.returncode == 0, run.stdout + run.stderr
    out = script_sections(run, SECTIONS)
    assert csv_rows(out["rows"]) == EXPECTED
    assert [row[:3] for row in csv_rows(out["flows"])[1:]] == [[db, "from_more", "customers"]]


def test_shell_creates_feeds_and_reads_an_auto_cdc_table(gateway: Any, tmp_path: Path) -> None:
    db = "cdc_shell"
    with fresh_database(gateway, db):
        run = run_shell(gateway.port, "-f", str(_script(tmp_path, db)), home=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    out = shell_script_sections(run, SECTIONS)
    assert shell_table(out["rows"]) == EXPECTED
    assert [row[:3] for row in shell_table(out["flows"])[1:]] == [[db, "from_more", "customers"]]
