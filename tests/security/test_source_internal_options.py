"""The options the gateway gives its capped sources (the query's checkpoint folder, the source's tag in its offsets:
engine/streams/checkpoint_offsets.py) are no user's to write: the folder is a path into the gateway's own files
and the tag decides where a stream resumes. read_files (stream or batch) and read_kafka refuse them from anyone, an
unrestricted admin included, and nothing is created or read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import error_status
from security_helpers import own_database, refused, still_serves

from sluicegate.engine.streams.checkpoint_offsets import CHECKPOINT_OPTION, TAG_OPTION


@pytest.fixture()
def cursor(connect: Any, request: pytest.FixtureRequest) -> Any:
    yield from own_database(connect, request)


def _no_table(cursor: Any) -> None:
    cursor.execute("SHOW TABLES")
    assert [row[1] for row in cursor.fetchall()] == []


def _landing(landing_root: Path) -> Path:
    folder = landing_root / "internal_options"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "part-0.csv").write_text("a\n")
    return folder


def _internal(warehouse: Path, option: str) -> str:
    """The option as a statement would write it (the tag in another case: option names are case-insensitive)."""
    value = str(warehouse / "_checkpoints") if option == CHECKPOINT_OPTION else "__sg_source_0"
    return f", `{option.lower()}` => '{value}'" if option == TAG_OPTION else f", {option} => '{value}'"


@pytest.mark.parametrize("option", [CHECKPOINT_OPTION, TAG_OPTION])
def test_read_files_refuses_the_gateways_source_options(cursor: Any, landing_root: Path, warehouse: Path,
                                                        option: str) -> None:
    folder = _landing(landing_root)
    extra = _internal(warehouse, option)
    message = refused(cursor, f"CREATE STREAMING TABLE copied AS SELECT * FROM STREAM read_files('{folder}', "
                              f"format => 'csv', schema => 'line STRING', maxFilesPerTrigger => 1{extra})",
                      "STATEMENT_NOT_ALLOWED")
    assert "set by the gateway" in message
    refused(cursor, f"SELECT * FROM read_files('{folder}', format => 'csv', schema => 'line STRING'{extra})",
            "STATEMENT_NOT_ALLOWED")
    _no_table(cursor)
    still_serves(cursor)


@pytest.mark.parametrize("option", [CHECKPOINT_OPTION, TAG_OPTION])
def test_read_kafka_refuses_the_gateways_source_options(cursor: Any, kafka: Any, warehouse: Path,
                                                        option: str) -> None:
    status = error_status(cursor, "CREATE STREAMING TABLE copied AS SELECT CAST(value AS STRING) AS v FROM STREAM "
                                  f"read_kafka(bootstrapServers => '{kafka.bootstrap}', subscribe => 'internal', "
                                  f"maxOffsetsPerTrigger => 5{_internal(warehouse, option)})")
    assert status.sqlState and status.sqlState != "00000", status.errorMessage
    assert option.lower() in status.errorMessage.lower() and "\tat " not in status.errorMessage
    _no_table(cursor)
    still_serves(cursor)


def test_an_unrestricted_admin_is_refused_too(start_gateway: Any, landing_root: Path, warehouse: Path) -> None:
    from pyhive import hive

    gateway = start_gateway({"security": {"admins": ["root_admin"], "admin_unrestricted": True}})
    cursor = hive.connect(gateway.host, gateway.port, username="root_admin").cursor()
    folder = _landing(landing_root)
    message = refused(cursor, f"SELECT * FROM read_files('{folder}', format => 'csv', schema => 'line STRING'"
                              f"{_internal(warehouse, CHECKPOINT_OPTION)})", "STATEMENT_NOT_ALLOWED")
    assert "set by the gateway" in message
    still_serves(cursor)
