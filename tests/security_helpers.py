"""What the security tests share: a refusal's checks, a victim folder's checks, and a liveness probe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyhive_helpers import error_status


def refused(cursor: Any, sql: str, error_class: str = "", sqlstate: str = "42501") -> str:
    """Run `sql`, expect a refusal with `sqlstate` (and `error_class` in the message); returns the message."""
    status = error_status(cursor, sql)
    assert status.sqlState == sqlstate, status.errorMessage
    if error_class:
        assert f"[{error_class}]" in status.errorMessage, status.errorMessage
    assert "\tat " not in status.errorMessage  # no JVM stack reaches the client
    return status.errorMessage


def still_serves(cursor: Any) -> None:
    cursor.execute("SELECT 40 + 2")
    assert cursor.fetchall() == [(42,)]


def untouched(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == ["important.txt"]
    assert (folder / "important.txt").read_text() == "keep me\n"
