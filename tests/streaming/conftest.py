"""Helpers for stream tests: files landed atomically in a source folder, and a cursor in a database of its own."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyhive_helpers import cursor_in, database_named_after


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
    return cursor_in(connect, database_named_after(request, "st_", 40))
