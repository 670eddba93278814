"""Expectations (CONSTRAINT ... EXPECT, the quarantine table, their counts in the event log) and flows (a table
without a query, CREATE FLOW ... INSERT INTO ... BY NAME, SHOW FLOWS) through beeline and `sluicegate shell`, against a
real gateway, asserting on what each client prints; a CREATE FLOW into a missing table as each client reports it.

The same script runs in both clients, cut into parts by marker queries as in test_streaming_operations_clients.py.
(PyHive covers the same statements per feature: tests/streaming/test_expectations.py, test_flows.py.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import fresh_database
from test_beeline import clean, csv_rows, sections
from test_shell import run_shell
from test_streaming_operations_clients import shell_sections, shell_table

SCRIPT = """\
CREATE DATABASE {db};
USE {db};
CREATE STREAMING TABLE checked (
  CONSTRAINT has_id EXPECT (id IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT short_name EXPECT (length(name) < 6)
) AS SELECT id, name FROM STREAM read_files('{folder}', format => 'json', schema => 'id INT, name STRING');
REFRESH STREAMING TABLE checked;
CREATE STREAMING TABLE merged (id INT, name STRING, src STRING);
CREATE FLOW from_checked AS INSERT INTO merged BY NAME SELECT id, name, 'checked' AS src FROM STREAM(checked);
CREATE FLOW from_files AS INSERT INTO merged BY NAME
  SELECT 'files' AS src, id, name FROM STREAM read_files('{folder}', format => 'json', schema => 'id INT, name STRING');
REFRESH STREAMING TABLE merged;
SELECT 'kept' AS section;
SELECT id, name FROM checked ORDER BY id;
SELECT 'quarantined' AS section;
SELECT name, _failed_expectations FROM checked__quarantine;
SELECT 'quality' AS section;
SELECT get_json_object(details, '$.flow_progress.data_quality.dropped_records') AS dropped
  FROM event_log(TABLE(checked)) WHERE event_type = 'flow_progress';
SELECT 'flows' AS section;
SELECT src, count(*) AS n FROM merged GROUP BY src ORDER BY src;
SELECT 'shown' AS section;
SHOW FLOWS;
SELECT 'error' AS section;
CREATE FLOW lost AS INSERT INTO missing BY NAME SELECT id FROM STREAM(checked);
SELECT 'never' AS section;
"""

SECTIONS = ["kept", "quarantined", "quality", "flows", "shown", "error"]
ROWS = [{"id": 1, "name": "good"}, {"id": "abc", "name": "bad"}, {"id": 2, "name": "toolong"}]


def _script(tmp: Path, db: str) -> Path:
    folder = tmp / "in"
    folder.mkdir()
    (folder / "part-0.json").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    script = tmp / "script.sql"
    script.write_text(SCRIPT.format(db=db, folder=folder))
    return script



@pytest.fixture(scope="module")
def beeline_run(beeline: Any, gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = "quality_beeline"
    with fresh_database(gateway, db):
        yield beeline(gateway.port, "-f", str(_script(tmp_path_factory.mktemp(db), db)))


@pytest.mark.beeline
def test_beeline_expectations_quarantine_flows_and_an_error(beeline_run: Any) -> None:
    found = sections(clean(beeline_run.stdout))
    assert list(found) == SECTIONS, beeline_run.stdout + beeline_run.stderr
    out = {name: [line for line in lines if line] for name, lines in found.items()}
    assert out["kept"] == ["id,name", "1,good", "2,toolong"]            # warn keeps `toolong`; DROP ROW took `bad`
    assert csv_rows(out["quarantined"]) == [["name", "_failed_expectations"], ["bad", '["has_id"]']]
    assert out["quality"] == ["dropped", "1"]
    assert out["flows"] == ["src,n", "checked,2", "files,3"]
    header, *rows = csv_rows(out["shown"])
    assert [row[:2] for row in rows] == [["quality_beeline", "from_checked"], ["quality_beeline", "from_files"]], \
        header
    assert beeline_run.returncode != 0 and out["error"] == []
    errors = [line for line in beeline_run.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and errors[0].startswith("Error: [TABLE_OR_VIEW_NOT_FOUND]"), beeline_run.stderr
    assert "(state=42P01,code=0)" in beeline_run.stderr


def test_shell_expectations_quarantine_flows_and_an_error(gateway: Any, tmp_path: Path) -> None:
    db = "quality_shell"
    with fresh_database(gateway, db):
        done = run_shell(gateway.port, "-f", str(_script(tmp_path, db)), home=tmp_path, timeout=300)
    out = shell_sections(done.stdout)
    assert list(out) == SECTIONS, done.stdout + done.stderr
    assert shell_table(out["kept"]) == [["id", "name"], ["1", "good"], ["2", "toolong"]]
    assert shell_table(out["quarantined"]) == [["name", "_failed_expectations"], ["bad", '["has_id"]']]
    assert shell_table(out["quality"]) == [["dropped"], ["1"]]
    assert shell_table(out["flows"]) == [["src", "n"], ["checked", "2"], ["files", "3"]]
    assert [row[:2] for row in shell_table(out["shown"])[1:]] == [[db, "from_checked"], [db, "from_files"]]
    assert done.returncode == 1 and out["error"] == ""
    assert done.stderr.splitlines()[0].startswith("ERROR [42P01] TABLE_OR_VIEW_NOT_FOUND:"), done.stderr
