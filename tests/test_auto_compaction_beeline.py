"""Background auto-compaction through beeline (the Hive JDBC driver), with the compactor at the shipped defaults as
`sluicegate serve` runs it: a plain table that asks for it (`delta.autoOptimize.autoCompact`) and a streaming table
fed one file per micro-batch end in one file each, a plain table that does not ask keeps every file, and the rows
read back through beeline are exact (issue 25 through the JDBC driver; the races against running streams:
tests/streaming/test_auto_compaction.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from delta_log import delta_log_operations, txn_actions
from pyhive_helpers import drop_database, land_named, poll_until
from test_beeline import clean, csv_rows, sections

from sluicegate.engine.maintenance import TableMaintenance

DATABASE = "auto_compact_beeline"
WRITES = 8   # the shipped fan_in: this many small files of one size class become one


def _write_script(folder: Path) -> str:
    inserts = "".join(f"INSERT INTO asks VALUES ({i}, 'w{i}');\nINSERT INTO plain VALUES ({i});\n"
                      for i in range(WRITES))
    return f"""
CREATE DATABASE {DATABASE};
USE {DATABASE};
CREATE TABLE asks (id INT, note STRING) TBLPROPERTIES ('delta.autoOptimize.autoCompact' = 'true');
CREATE TABLE plain (id INT);
{inserts}SET spark.sluicegate.streams.createWaitsForFirstUpdate = false;
CREATE STREAMING TABLE fed TBLPROPERTIES ('pipelines.trigger.interval' = '0 ms') AS SELECT id, batch
  FROM STREAM read_files('{folder}', format => 'json', schema => 'id INT, batch INT', maxFilesPerTrigger => 1);
"""


READ_SCRIPT = f"""
USE {DATABASE};
SELECT 'asks' AS section;
DESCRIBE DETAIL asks;
SELECT 'plain' AS section;
DESCRIBE DETAIL plain;
SELECT 'fed' AS section;
DESCRIBE DETAIL fed;
SELECT 'history' AS section;
DESCRIBE HISTORY asks;
SELECT 'rows' AS section;
SELECT 'asks', count(*), count(DISTINCT id), sum(id) FROM asks
UNION ALL SELECT 'plain', count(*), count(DISTINCT id), sum(id) FROM plain
UNION ALL SELECT 'fed', count(*), count(DISTINCT id), sum(id) FROM fed;
"""


def _location(gateway: Any, name: str) -> str:
    entry = gateway.service.catalog.get_table(DATABASE, name)
    assert entry is not None and entry.location
    return str(entry.location)


@pytest.fixture(scope="module")
def read_back(beeline: Any, gateway: Any, shipped_compactor: TableMaintenance,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, str]]]:
    """The tables written through beeline, the compactor let finish, then read through beeline again."""
    scripts = tmp_path_factory.mktemp("beeline_compaction")
    folder = scripts / "landing"
    for batch in range(WRITES):
        land_named(folder, f"batch-{batch}.json", [{"id": 100 + batch * 2 + i, "batch": batch} for i in range(2)])
    (scripts / "write.sql").write_text(_write_script(folder))
    (scripts / "read.sql").write_text(READ_SCRIPT)
    drop_database(gateway, DATABASE)
    try:
        wrote = beeline(gateway.port, "-f", str(scripts / "write.sql"))
        assert wrote.returncode == 0, wrote.stdout + wrote.stderr
        locations = {name: _location(gateway, name) for name in ("asks", "plain", "fed")}
        stream = gateway.service.catalog.get_stream(DATABASE, "fed")
        assert stream is not None
        poll_until(lambda: [v for app, v in txn_actions(locations["fed"]) if app == stream.stream_id][-1:]
                   == [WRITES - 1], f"the stream to commit its {WRITES} micro-batches", timeout=180)
        gateway.service.streams.stop(DATABASE, "fed")
        for location in (locations["asks"], locations["fed"]):   # `plain` stays full: nothing merges it
            poll_until(lambda location=location: not shipped_compactor.pending(location),
                       f"the compactor to finish {location}", timeout=120)
        yield beeline(gateway.port, "-f", str(scripts / "read.sql")), locations
    finally:
        drop_database(gateway, DATABASE)


def _detail(lines: list[str]) -> dict[str, str]:
    header, *rows = csv_rows([line for line in lines if line])
    assert len(rows) == 1, rows
    return dict(zip(header, rows[0], strict=True))


def test_tables_that_ask_and_streaming_tables_end_in_one_file(read_back: tuple[Any, dict[str, str]]) -> None:
    read, locations = read_back
    assert read.returncode == 0, read.stdout + read.stderr
    found = sections(clean(read.stdout))
    assert _detail(found["asks"])["numFiles"] == "1"
    assert _detail(found["fed"])["numFiles"] == "1"
    assert _detail(found["plain"])["numFiles"] == str(WRITES)   # no property, not a stream's: left as written
    assert delta_log_operations(locations["asks"]).count("OPTIMIZE") == 1
    assert delta_log_operations(locations["fed"]).count("OPTIMIZE") == 1
    assert "OPTIMIZE" not in delta_log_operations(locations["plain"])
    header, *history = csv_rows([line for line in found["history"] if line])
    assert history[0][header.index("operation")] == "OPTIMIZE"   # newest first, as an operator reads it


def test_compacted_tables_read_back_every_row_once(read_back: tuple[Any, dict[str, str]]) -> None:
    read, _ = read_back
    assert read.returncode == 0, read.stdout + read.stderr
    rows = csv_rows([line for line in sections(clean(read.stdout))["rows"] if line])
    written = sum(range(WRITES))
    fed = list(range(100, 100 + WRITES * 2))
    assert sorted(rows[1:]) == sorted([["asks", str(WRITES), str(WRITES), str(written)],
                                       ["plain", str(WRITES), str(WRITES), str(written)],
                                       ["fed", str(len(fed)), str(len(fed)), str(sum(fed))]])
