"""The facts a statement needs of its session, kept in Python instead of asked of the JVM each time (issue 28): the
current user set on the JVM thread only when it changed, the current database kept by the session that changes it.
Kept means exact: each connection still sees its own user and database whichever pool thread runs its statement, and
a database changed by a statement Spark runs as typed is seen by the next one. Counted through py4j's real client."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from round_trips import RoundTrips


@pytest.fixture()
def round_trips() -> Iterator[RoundTrips]:
    with RoundTrips().installed() as counter:
        yield counter


def _one(cursor: Any, sql: str) -> Any:
    cursor.execute(sql)
    return cursor.fetchall()[0][0]


def test_select_1_makes_no_round_trip(connect: Any, round_trips: RoundTrips) -> None:
    cursor = connect().cursor()
    for _ in range(3):  # the first statement on a pool thread sets its user; later ones find it set
        assert _one(cursor, "SELECT 1") == 1
    round_trips.take()
    for _ in range(5):
        assert _one(cursor, "SELECT 1") == 1
    statement_trips, _background = round_trips.take()
    assert statement_trips == 0


def test_the_session_s_parser_and_conf_are_asked_once(connect: Any, round_trips: RoundTrips) -> None:
    """A projection Spark computes (its result in the driver) and a query the policy parses: the session's parser,
    conf and Arrow converters are kept, so no statement after the first asks for them again."""
    cursor = connect().cursor()
    assert _one(cursor, "SELECT 1 + 1") == 2
    round_trips.take()
    round_trips.tracing = True
    for _ in range(3):
        assert _one(cursor, "SELECT 1 + 1") == 2
        assert _one(cursor, "SELECT count(*) FROM range(3)") == 3
    round_trips.tracing = False
    assert round_trips.methods["sqlParser"] == 0
    assert round_trips.methods["sessionState"] == 0
    assert round_trips.methods["empty"] == 0
    assert round_trips.methods["r"] == 0   # no static member looked up again (py4j's reflection command)
    assert round_trips.methods["parsePlan"] >= 3  # the policy still parses every statement's text itself
    assert round_trips.methods["setCurrentDatabase"] == round_trips.methods["currentDatabase"] == 0
    assert round_trips.methods["toArray"] == 0   # spark.sql's empty parameter array, built in the JVM, is not asked for


def test_each_connection_sees_its_own_user(connect: Any) -> None:
    """Two users taking turns share the operation pool's threads: each statement sees its own user."""
    cursors = {user: connect(username=user).cursor() for user in ("rt_alice", "rt_bob")}
    for _ in range(6):
        for user, cursor in cursors.items():
            assert _one(cursor, "SELECT current_user()") == user
            assert _one(cursor, "SELECT session_user()") == user


def test_current_database_follows_every_change(connect: Any) -> None:
    """USE and a DROP of the current database: an unqualified name resolves in the database each leaves current,
    and Spark's own `current_database()` agrees."""
    first, second = f"rt_a_{uuid.uuid4().hex[:8]}", f"rt_b_{uuid.uuid4().hex[:8]}"
    cursor = connect().cursor()
    for database, value in ((first, 1), (second, 2)):
        cursor.execute(f"CREATE DATABASE {database}")
        cursor.execute(f"CREATE TABLE {database}.t (v INT) USING delta")
        cursor.execute(f"INSERT INTO {database}.t VALUES ({value})")
    cursor.execute(f"USE {first}")
    assert _one(cursor, "SELECT v FROM t") == 1
    cursor.execute(f"USE {second}")
    assert _one(cursor, "SELECT current_database()") == second
    assert _one(cursor, "SELECT v FROM t") == 2
    cursor.execute(f"USE NAMESPACE {first}")   # Spark's third spelling of USE
    assert _one(cursor, "SELECT v FROM t") == 1
    with pytest.raises(Exception, match=r"PARSE_SYNTAX_ERROR.*USE ROLE is not supported") as refused:
        cursor.execute(f"USE ROLE {second}")   # no such thing in Spark: refused, the database left as it was
    assert "42601" in str(refused.value)
    assert _one(cursor, "SELECT v FROM t") == 1
    cursor.execute(f"DROP DATABASE {first} CASCADE")
    assert _one(cursor, "SELECT current_database()") == "default"
    cursor.execute(f"USE {second}")
    assert _one(cursor, "SELECT v FROM t") == 2
    cursor.execute(f"DROP DATABASE {second} CASCADE")


def test_a_session_opened_in_a_database_starts_there(connect: Any) -> None:
    database = f"rt_c_{uuid.uuid4().hex[:8]}"
    setup = connect().cursor()
    setup.execute(f"CREATE DATABASE {database}")
    setup.execute(f"CREATE TABLE {database}.t (v INT) USING delta")
    setup.execute(f"INSERT INTO {database}.t VALUES (3)")
    cursor = connect(database=database).cursor()
    assert _one(cursor, "SELECT v FROM t") == 3
    setup.execute(f"DROP DATABASE {database} CASCADE")


def test_text_columns_cost_no_round_trip_each(connect: Any, round_trips: RoundTrips) -> None:
    """A result's DECIMAL, DATE, TIMESTAMP and nested columns are rendered as text in one projection whose names and
    expressions cross to the JVM whole: 12 such columns cost the round trips of 2, and every value (a repeated name,
    a NULL, a comma or a separator-like character in the data) comes back as Spark renders it."""
    cursor = connect().cursor()

    def trips(sql: str) -> tuple[int, list[Any]]:
        cursor.execute(sql)   # warm: the JVM helper and the session's parser are asked for once
        cursor.fetchall()
        round_trips.take()
        cursor.execute(sql)
        rows = cursor.fetchall()
        return round_trips.take()[0], rows

    two, rows = trips("SELECT CAST(1.5 AS DECIMAL(5,2)) AS a, DATE'2024-01-02' AS a FROM range(2)")
    assert rows == [(Decimal("1.50"), "2024-01-02")] * 2   # PyHive reads DECIMAL's text as a Decimal
    columns = ", ".join(f"CAST({i}.25 AS DECIMAL(6,2)) AS c{i}" for i in range(10))
    twelve, rows = trips(f"SELECT {columns}, array('x,y', '\x1f') AS n, CAST(NULL AS DECIMAL(3,1)) AS z "
                         "FROM range(2)")
    assert rows == [(*(Decimal(f"{i}.25") for i in range(10)), '["x,y","\\u001F"]', None)] * 2
    assert twelve == two


def test_a_one_partition_result_is_collected_in_few_round_trips(connect: Any, round_trips: RoundTrips) -> None:
    """A result of one partition is collected in one job with the collect's own round trips only (no call site set
    and cleared around it), its rows in order, and a failure inside the job comes back as Spark's error."""
    cursor = connect().cursor()
    sql = "SELECT id, CAST(id AS DECIMAL(5,1)) AS d FROM range(0, 3000, 1, 1)"
    cursor.execute(sql)
    cursor.fetchall()
    round_trips.take()
    round_trips.tracing = True
    cursor.execute(sql)
    rows = cursor.fetchall()
    round_trips.tracing = False
    assert rows == [(i, Decimal(f"{i}.0")) for i in range(3000)]
    assert round_trips.methods["collectAsArrowToPython"] == 1
    assert round_trips.methods["setCallSite"] == 0
    with pytest.raises(Exception, match="DIVIDE_BY_ZERO") as failed:
        cursor.execute("SELECT 1 / (id - 1) AS boom FROM range(0, 2, 1, 1)")
        cursor.fetchall()
    assert "22012" in str(failed.value)
