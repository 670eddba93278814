"""Helpers for stream tests: files landed atomically in a source folder, and a cursor in a database of its own."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest


def land_json(folder: Path, rows: list[dict[str, Any]]) -> Path:
    """Write rows as a JSON-lines file that appears at once (written under a hidden name, then renamed), as a
    producer must for any file stream."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"part-{uuid.uuid4().hex}.json"
    hidden = folder / f".{name}"
    hidden.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    os.rename(hidden, folder / name)
    return folder / name


@pytest.fixture()
def land() -> Any:
    return land_json


@pytest.fixture()
def stream_cursor(connect: Any, request: pytest.FixtureRequest) -> Any:
    """A PyHive cursor in a fresh database named after the test."""
    database = "st_" + request.node.name.removeprefix("test_")[:40].lower()
    cursor = connect().cursor()
    cursor.execute(f"CREATE DATABASE IF NOT EXISTS {database}")
    cursor.execute(f"USE {database}")
    cursor.database = database
    return cursor
