"""What the PyHive-driven test modules share: a statement's rows in a stable order, and a failing statement's
HiveServer2 status (its errorMessage and sqlState are what the tests assert on)."""

from __future__ import annotations

from typing import Any

import pytest
from pyhive import exc as hive_exc


def sorted_rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return sorted(cursor.fetchall(), key=repr)


def error_status(cursor: Any, sql: str) -> Any:
    with pytest.raises(hive_exc.OperationalError) as raised:
        cursor.execute(sql)
    return raised.value.args[0].status


def cursor_in(connect: Any, database: str) -> Any:
    """A new connection's cursor using `database` (created if missing): each test module keeps its own."""
    cursor = connect().cursor()
    cursor.execute(f"CREATE DATABASE IF NOT EXISTS {database}")
    cursor.execute(f"USE {database}")
    return cursor
