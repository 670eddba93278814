"""Files users name: only under `security.allowed_paths`, never the gateway's own files, never created or deleted.

The shared test gateway allows the tests' temporary root (where they land files); the warehouse lies inside it and
stays protected. The victim folder lies outside the root."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import error_status
from security_helpers import refused, still_serves, untouched


@pytest.fixture()
def cursor(connect: Any, request: pytest.FixtureRequest) -> Any:
    database = "sec_" + request.node.name.removeprefix("test_")[:30].lower()
    cur = connect(username="mallory").cursor()
    cur.execute(f"CREATE DATABASE IF NOT EXISTS {database}")
    cur.execute(f"USE {database}")
    return cur


def _stream(path: str, extra: str = "") -> str:
    return (f"CREATE STREAMING TABLE copied AS SELECT * FROM STREAM read_files('{path}', format => 'csv', "
            f"schema => 'line STRING'{extra})")


def _no_table(cursor: Any) -> None:
    cursor.execute("SHOW TABLES")
    assert [row[1] for row in cursor.fetchall()] == []


@pytest.mark.parametrize("path", ["/etc", "file:///etc", "/etc/../etc", "hdfs://namenode/etc", "etc/relative"])
def test_read_files_outside_the_roots_is_refused(cursor: Any, path: str) -> None:
    refused(cursor, _stream(path, ", pathGlobFilter => 'passwd'"), "PATH_NOT_ALLOWED")
    _no_table(cursor)
    still_serves(cursor)


def test_the_gateways_own_files_are_never_readable(cursor: Any, warehouse: Path) -> None:
    for path in (warehouse, warehouse / "_checkpoints", warehouse / "default.db"):
        refused(cursor, _stream(str(path)), "PATH_NOT_ALLOWED")
    refused(cursor, f"CREATE TEMPORARY VIEW cat USING text OPTIONS (path '{warehouse / 'catalog.db'}')",
            "PATH_NOT_ALLOWED")
    refused(cursor, f"CREATE TEMPORARY VIEW pw USING text OPTIONS (path '{warehouse / 'passwd'}')",
            "PATH_NOT_ALLOWED")
    _no_table(cursor)


def test_dot_dot_and_links_are_resolved_before_the_check(cursor: Any, tmp_path: Path, victim: Path) -> None:
    escape = tmp_path / ".." / ".." / victim.name
    assert escape.resolve() == victim.resolve()
    refused(cursor, _stream(str(escape)), "PATH_NOT_ALLOWED")
    link = tmp_path / "innocent"
    os.symlink(victim, link)
    refused(cursor, _stream(str(link)), "PATH_NOT_ALLOWED")
    refused(cursor, f"CREATE TEMPORARY VIEW linked USING text OPTIONS (path '{link}')", "PATH_NOT_ALLOWED")
    untouched(victim)


def test_options_that_delete_or_move_sources_are_refused(cursor: Any, tmp_path: Path) -> None:
    source = tmp_path / "landing"
    source.mkdir()
    (source / "a.csv").write_text("x\n")
    for option in ("cleanSource => 'delete'", "cleanSource => 'archive', sourceArchiveDir => '/tmp'",
                   "sourceArchiveDir => '/tmp'", "CLEANSOURCE => 'delete'"):
        message = refused(cursor, _stream(str(source), ", " + option), "STATEMENT_NOT_ALLOWED")
        assert "reader option" in message
    assert sorted(p.name for p in source.iterdir()) == ["a.csv"]
    _no_table(cursor)


def test_a_missing_folder_is_an_error_and_is_not_created(cursor: Any, tmp_path: Path) -> None:
    missing = tmp_path / "not" / "there"
    status = error_status(cursor, _stream(str(missing)))
    assert "does not exist" in status.errorMessage, status.errorMessage
    assert not missing.exists() and not (tmp_path / "not").exists()
    _no_table(cursor)
    still_serves(cursor)


def test_files_under_the_roots_still_work(cursor: Any, tmp_path: Path) -> None:
    source = tmp_path / "good"
    source.mkdir()
    (source / "a.csv").write_text("hello\nworld\n")
    cursor.execute(f"CREATE TEMPORARY VIEW good USING csv OPTIONS (path '{source}', header 'false')")
    cursor.execute("SELECT count(*) FROM good")
    assert cursor.fetchall() == [(2,)]
