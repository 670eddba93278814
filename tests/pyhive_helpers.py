"""What the PyHive-driven test modules share: connections to a gateway, a cursor in a database of its own, a
statement's rows in a stable order, a failing statement's HiveServer2 status (its errorMessage and sqlState are what
the tests assert on), bounded polling for what a stream does in the background, and files landed whole under a
name."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
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


def connections(gateway: Any) -> Iterator[Callable[..., Any]]:
    """For a `connect` fixture (`yield from connections(gateway)`): a function opening PyHive connections to
    `gateway` (as `tester` unless `username=` says otherwise; `port=` for another port), closed afterwards."""
    from pyhive import hive

    opened = []

    def open_connection(**kwargs: Any) -> Any:
        kwargs.setdefault("username", "tester")
        conn = hive.connect(gateway.host, kwargs.pop("port", gateway.port), **kwargs)
        opened.append(conn)
        return conn

    yield open_connection
    for conn in opened:
        with contextlib.suppress(Exception):  # a test may have closed it, or killed its server
            conn.close()


def use_database(cursor: Any, database: str) -> Any:
    """`cursor` using `database` (created if missing), which `cursor.database` names."""
    cursor.execute(f"CREATE DATABASE IF NOT EXISTS {database}")
    cursor.execute(f"USE {database}")
    cursor.database = database
    return cursor


def cursor_in(connect: Any, database: str, **login: Any) -> Any:
    """A new connection's cursor (`login`: connect's arguments, e.g. username=) using `database` (created if
    missing): each test module keeps its own."""
    return use_database(connect(**login).cursor(), database)


def database_named_after(request: pytest.FixtureRequest, prefix: str, length: int) -> str:
    """A database name of the test's own: `prefix` and the first `length` characters of the test's name."""
    name = prefix + request.node.name.removeprefix("test_")[:length].lower()
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def dropped_after(cursor: Any) -> Iterator[Any]:
    """For a `cursor` fixture (`yield from dropped_after(cursor_in(...))`): the cursor, then its database dropped
    with everything in it (its streams stopped)."""
    yield cursor
    cursor.execute(f"DROP DATABASE IF EXISTS {cursor.database} CASCADE")


def database_cursor(gateway: Any, database: str) -> Iterator[Any]:
    """For a module's `cursor` fixture (`yield from database_cursor(gateway, NAME)`): a cursor of `tester` in
    `database` on a connection of its own, the database dropped with everything in it afterwards."""
    from pyhive import hive

    connection = hive.connect(gateway.host, gateway.port, username="tester")
    yield from dropped_after(use_database(connection.cursor(), database))
    connection.close()


def poll_until(predicate: Any, what: str, timeout: float = 120.0) -> Any:
    """`predicate()`'s first truthy value, polled every 0.1 s; fails the test naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def land_named(folder: Path, name: str, rows: list[dict[str, Any]]) -> None:
    """JSON lines written under a hidden name, then renamed: a file source never sees half a file."""
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{name}.tmp"
    partial.write_text("".join(json.dumps(row) + "\n" for row in rows))
    partial.rename(folder / name)


def drop_database(gateway: Any, database: str) -> None:
    """DROP DATABASE IF EXISTS ... CASCADE on its own connection: a module's streams must not run on into others'."""
    from pyhive import hive

    conn = hive.connect(gateway.host, gateway.port, username="tester")
    try:
        conn.cursor().execute(f"DROP DATABASE IF EXISTS {database} CASCADE")
    finally:
        conn.close()


@contextmanager
def fresh_database(gateway: Any, database: str) -> Iterator[None]:
    """`database` dropped before (a rerun starts clean) and after (its streams stop with the module)."""
    drop_database(gateway, database)
    try:
        yield
    finally:
        drop_database(gateway, database)


# Every type, one row of values and one of NULLs (IF keeps the value's type).
ALL_TYPES = """
SELECT IF(id = 1, NULL, CAST(1 AS TINYINT)) AS t, IF(id = 1, NULL, CAST(2 AS SMALLINT)) AS s,
       IF(id = 1, NULL, 3) AS i, IF(id = 1, NULL, CAST(4 AS BIGINT)) AS b, IF(id = 1, NULL, CAST(1.5 AS FLOAT)) AS f,
       IF(id = 1, NULL, 2.25D) AS d, IF(id = 1, NULL, CAST('12.34' AS DECIMAL(10,2))) AS dec,
       IF(id = 1, NULL, 'text') AS str, IF(id = 1, NULL, X'0102') AS bin, IF(id = 1, NULL, true) AS bool,
       IF(id = 1, NULL, DATE'2024-01-02') AS day, IF(id = 1, NULL, TIMESTAMP'2024-01-02 03:04:05.123456') AS ts,
       IF(id = 1, NULL, array(1, 2)) AS arr, IF(id = 1, NULL, map('k', 1)) AS m,
       IF(id = 1, NULL, named_struct('a', 1, 'b', 'x')) AS st
FROM range(2) ORDER BY id
"""


def execute_on(port: int, *statements: str, user: str = "tester") -> list[tuple[Any, ...]]:
    """Run `statements` in a session of their own on the gateway at 127.0.0.1:`port` (one started as a process);
    returns the last one's rows."""
    from pyhive import hive

    connection = hive.connect("127.0.0.1", port, username=user)
    try:
        cursor = connection.cursor()
        rows: list[tuple[Any, ...]] = []
        for statement in statements:
            cursor.execute(statement)
            rows = cursor.fetchall() if cursor.description else []
        return rows
    finally:
        connection.close()


def logged_quality(cur: Any, streams: Any, table: str) -> tuple[dict[str, tuple[int, int]], int]:
    """The expectations' (passed, failed) and the dropped rows summed over the table's flow_progress events, read
    through the client once every batch the stream ran has its event."""
    entry = streams.store.get_stream(cur.database, table)
    poll_until(lambda: len([e for e in streams.store.event_log(cur.database, table)
                            if e.event_type == "flow_progress"]) >= entry.last_batch_id + 1,
               f"a flow_progress event for each batch of {table}")
    cur.execute(f"SELECT get_json_object(details, '$.flow_progress.data_quality') FROM event_log(TABLE({table})) "
                f"WHERE event_type = 'flow_progress'")
    totals: dict[str, tuple[int, int]] = {}
    dropped = 0
    for (text,) in cur.fetchall():
        quality = json.loads(text)
        dropped += quality["dropped_records"]
        for item in quality["expectations"]:
            passed, failed = totals.get(item["name"], (0, 0))
            totals[item["name"]] = (passed + item["passed_records"], failed + item["failed_records"])
    return totals, dropped
