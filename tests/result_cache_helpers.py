"""What the result cache's tests share (tests/test_result_cache.py, tests/security/test_result_cache_access.py): a
gateway of its own with a database, a table and a view owned by one user and granted to two others, and how to run
a statement as a user and ask what Spark and the query history say of it."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyhive import hive

from sluicegate.gateway.app import RunningGateway


@dataclass(frozen=True)
class Names:
    """The database, users and queries of one test module (each module its own, as they share a catalog)."""

    suffix: str = field(default_factory=lambda: uuid.uuid4().hex[:6])

    @property
    def db(self) -> str:
        return f"rc_{self.suffix}"

    @property
    def users(self) -> tuple[str, str, str]:
        return f"rc_alice_{self.suffix}", f"rc_bob_{self.suffix}", f"rc_carol_{self.suffix}"

    @property
    def count(self) -> str:
        return f"SELECT count(*) AS n, max(id) AS top, sum(id) AS total FROM {self.db}.t"

    @property
    def view(self) -> str:
        return f"SELECT id, v FROM {self.db}.small ORDER BY id"


def cached_gateway(start_gateway: Callable[..., RunningGateway], names: Names) -> RunningGateway:
    """A gateway of its own (a fresh cache) with the default settings: the cache on. alice owns the database, its
    table `t` (ids 0..999) and the view `small` (ids below 10); carol may read `t`, bob only `small`."""
    db, (alice, bob, carol) = names.db, names.users
    gateway = start_gateway()
    cursor = hive.connect(gateway.host, gateway.port, username=alice).cursor()
    for sql in (f"CREATE DATABASE {db}",
                f"CREATE TABLE {db}.t (id BIGINT, v STRING) USING delta",
                f"INSERT INTO {db}.t SELECT id, CAST(id AS STRING) FROM range(1000)",
                f"CREATE VIEW {db}.small AS SELECT id, v FROM {db}.t WHERE id < 10",
                f"GRANT SELECT ON TABLE {db}.t TO `{carol}`",
                f"GRANT SELECT ON TABLE {db}.small TO `{bob}`"):
        cursor.execute(sql)
    cursor.close()
    return gateway


def execute(cursor: Any, sql: str) -> tuple[list[tuple[Any, ...]], str]:
    """`sql` on `cursor`, its rows fetched; returns the rows and the statement's id (its Spark job group)."""
    cursor.execute(sql)
    rows = cursor.fetchall() if cursor.description else []
    return rows, cursor._operationHandle.operationId.guid.hex()


def run(gateway: RunningGateway, user: str, sql: str) -> tuple[list[tuple[Any, ...]], str]:
    """`sql` as `user` on a connection of its own (a pool's next connection), the statement closed after."""
    connection = hive.connect(gateway.host, gateway.port, username=user)
    try:
        cursor = connection.cursor()
        found = execute(cursor, sql)
        cursor.close()
    finally:
        connection.close()
    return found


def jobs(spark: Any, statement_id: str) -> int:
    """The Spark jobs the statement's job group ran."""
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(statement_id))


def from_cache(gateway: RunningGateway, user: str, *statement_ids: str) -> list[bool]:
    """What the query history says of each statement (read as `user`, who ran them)."""
    assert gateway.history is not None and gateway.history.flush(30)
    ids = ", ".join(f"'{each}'" for each in statement_ids)
    rows, _ = run(gateway, user, "SELECT statement_id, from_result_cache FROM system.query.history "
                                 f"WHERE statement_id IN ({ids})")
    found = dict(rows)
    return [found[each] for each in statement_ids]
