"""AUTO CDC from several sources into one table (`CREATE FLOW f AS AUTO CDC INTO t ...`, issue 29), through PyHive
against a real gateway.

Two flows bring change events of the same keys with sequences interleaved across them, each shuffled (late events)
and with duplicates: after every round of files the table equals a plain batch SQL query over both folders, written
here independently of the sink; the flows are then stopped and resumed from their checkpoints as a boot resumes
them, with files landed meanwhile, and nothing is lost or applied twice. Two SCD type 2 flows into one table end
equal to the SCD type 2 reference over both folders.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from cdc_reference import events_source, scd1_reference, scd2_reference
from pyhive_helpers import error_status, sorted_rows

CDC = "KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, _rescued_data)"


def _events(rng: random.Random, count: int) -> list[dict[str, Any]]:
    """Events of 5 keys with sequences from one range, so that two flows' sequences interleave."""
    events: list[dict[str, Any]] = []
    for _ in range(count):
        if events and rng.random() < 0.1:
            events.append(dict(rng.choice(events)))
            continue
        key, seq = rng.randrange(5), rng.randrange(40)
        if rng.random() < 0.25:
            events.append({"id": key, "op": "D", "seq": seq, "name": None, "amount": None})
        else:
            events.append({"id": key, "op": "U", "seq": seq, "name": rng.choice(["a", "b", "c", None]),
                           "amount": rng.randrange(100)})
    rng.shuffle(events)
    return events


def _two_sources(tmp_path: Path, land: Any, seed: int, size: int,
                 count: int) -> tuple[Path, Path, list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]]:
    """Two source folders and `count` rounds of `size` events for each, the first round landed."""
    first, second = tmp_path / "eu", tmp_path / "us"
    rng = random.Random(seed)
    rounds = [(_events(rng, size), _events(rng, size)) for _ in range(count)]
    land(first, rounds[0][0])
    land(second, rounds[0][1])
    return first, second, rounds


def _wait(streams: Any, database: str, table: str, flows: tuple[str, ...]) -> None:
    for flow in flows:
        streams.wait_for(database, table, flow=flow)


def test_two_flows_rank_their_events_together_and_resume_exactly_once(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    first, second, rounds = _two_sources(tmp_path, land, seed=29, size=15, count=4)
    cur.execute("CREATE STREAMING TABLE customers (id INT, seq BIGINT, name STRING, amount INT)")
    for flow, folder in (("from_eu", first), ("from_us", second)):
        cur.execute(f"CREATE FLOW {flow} COMMENT 'cdc from {flow[5:]}' AS AUTO CDC INTO customers "
                    f"FROM STREAM {events_source(folder)} {CDC} STORED AS SCD TYPE 1")
    flows = ("from_eu", "from_us")
    _wait(streams, cur.database, "customers", flows)
    assert sorted_rows(cur, "SELECT * FROM customers") == scd1_reference(cur, first, second), "round 0"
    for number, (eu, us) in enumerate(rounds[1:3], start=1):
        land(first, eu)
        land(second, us)
        _wait(streams, cur.database, "customers", flows)
        assert sorted_rows(cur, "SELECT * FROM customers") == scd1_reference(cur, first, second), f"round {number}"

    # across the flows: an event of one older than what the other applied changes nothing, and a delete of one
    # leaves a tombstone the other's older upsert does not get past
    land(first, [{"id": 8, "op": "U", "seq": 10, "name": "x", "amount": 1}])
    _wait(streams, cur.database, "customers", flows)
    land(second, [{"id": 7, "op": "U", "seq": 50, "name": "new", "amount": 7},
                  {"id": 8, "op": "D", "seq": 60, "name": None, "amount": None}])
    _wait(streams, cur.database, "customers", flows)
    land(first, [{"id": 7, "op": "U", "seq": 49, "name": "late", "amount": -1},
                 {"id": 8, "op": "U", "seq": 55, "name": "zombie", "amount": -1}])
    _wait(streams, cur.database, "customers", flows)
    assert sorted_rows(cur, "SELECT * FROM customers WHERE id >= 7") == [(7, 50, "new", 7)]
    assert sorted_rows(cur, "SELECT * FROM customers") == scd1_reference(cur, first, second), "across the flows"

    # as a boot does: both flows stop, files land meanwhile, each resumes from its own checkpoint
    for flow in flows:
        streams.stop(cur.database, "customers", desired=None, flow=flow)
    land(first, rounds[3][0])
    land(second, rounds[3][1])
    for flow in flows:
        streams.resume(streams.store.get_stream(cur.database, "customers", flow=flow))
    _wait(streams, cur.database, "customers", flows)
    assert sorted_rows(cur, "SELECT * FROM customers") == scd1_reference(cur, first, second), "after the resume"

    cur.execute("SHOW FLOWS")
    shown = {row[1]: row for row in cur.fetchall()}
    assert set(shown) == set(flows) and {row[2] for row in shown.values()} == {"customers"}
    assert shown["from_eu"][7] == "cdc from eu"
    cur.execute("DESCRIBE STREAMING TABLE customers")
    described = cur.fetchall()
    assert ("Output mode", "auto cdc (its flows apply changes by key)") in described
    flow_lines = [value for key, value in described if key == "Flow"]
    assert len(flow_lines) == 2 and all("keys (id), sequence by seq, SCD type 1" in line for line in flow_lines)

    # DROP FLOW keeps the rows and their ranks: the flow made again reads its folder again and changes nothing
    before = sorted_rows(cur, "SELECT * FROM customers")
    cur.execute("DROP FLOW from_us")
    cur.execute(f"CREATE FLOW from_us AS AUTO CDC INTO customers FROM STREAM {events_source(second)} {CDC}")
    _wait(streams, cur.database, "customers", flows)
    assert sorted_rows(cur, "SELECT * FROM customers") == before == scd1_reference(cur, first, second)


def test_a_flows_truncate_holds_for_every_writer_of_the_table(stream_cursor, streams, tmp_path, land):
    """`CREATE FLOW ... AS AUTO CDC INTO t ... APPLY AS TRUNCATE WHEN` (Databricks' grammar has it, SCD type 1 only):
    a flow's truncate empties the table as of its sequence as the table's own does, and holds off the events of
    the table's other writers sequenced up to it too (their events are ranked together). The flow without a
    truncate runs first, so the state they share is made without truncates and gains them later."""
    cur = stream_cursor
    first, second = tmp_path / "eu", tmp_path / "us"

    def row(key: int | None, op: str, seq: int, name: str | None = None) -> dict[str, Any]:
        return {"id": key, "op": op, "seq": seq, "name": name, "amount": seq}

    land(first, [row(1, "U", 1, "a"), row(2, "U", 2, "b")])
    land(second, [row(3, "U", 3, "c")])
    cur.execute("CREATE STREAMING TABLE customers (id INT, seq BIGINT, name STRING, amount INT)")
    cur.execute(f"CREATE FLOW from_eu AS AUTO CDC INTO customers FROM STREAM {events_source(first)} {CDC}")
    streams.wait_for(cur.database, "customers", flow="from_eu")
    cur.execute(f"CREATE FLOW from_us AS AUTO CDC INTO customers FROM STREAM {events_source(second)} KEYS (id) "
                "APPLY AS DELETE WHEN op = 'D' APPLY AS TRUNCATE WHEN op = 'T' SEQUENCE BY seq "
                "COLUMNS * EXCEPT (op, _rescued_data) STORED AS SCD TYPE 1")
    _wait(streams, cur.database, "customers", ("from_eu", "from_us"))
    assert sorted_rows(cur, "SELECT * FROM customers") == [(1, 1, "a", 1), (2, 2, "b", 2), (3, 3, "c", 3)]

    # us truncates at 5: every row goes (the other flow's too) but what is sequenced after it
    land(second, [row(None, "T", 5), row(4, "U", 6, "d")])
    streams.wait_for(cur.database, "customers", flow="from_us")
    assert sorted_rows(cur, "SELECT * FROM customers") == [(4, 6, "d", 6)]
    # the other flow's late events sequenced up to the truncate stay out, a known key's or a new one's
    land(first, [row(5, "U", 4, "e"), row(2, "U", 5, "b5"), row(1, "U", 7, "a7")])
    streams.wait_for(cur.database, "customers", flow="from_eu")
    assert sorted_rows(cur, "SELECT * FROM customers") == [(1, 7, "a7", 7), (4, 6, "d", 6)]
    # an older truncate arriving late changes nothing; the latest still holds the other flow's old events off
    land(second, [row(None, "T", 2), row(6, "U", 8, "f")])
    land(first, [row(7, "U", 3, "g"), row(4, "D", 9)])
    _wait(streams, cur.database, "customers", ("from_eu", "from_us"))
    assert sorted_rows(cur, "SELECT * FROM customers") == [(1, 7, "a7", 7), (6, 8, "f", 8)]
    assert sorted_rows(cur, "SELECT * FROM customers") == scd1_reference(cur, first, second, truncates=True)
    cur.execute("DESCRIBE STREAMING TABLE customers")
    flows = [row[1] for row in cur.fetchall() if row[0] == "Flow"]
    assert any(text.startswith("from_us:") and "truncate when op = 'T'" in text for text in flows), flows


def test_every_writer_of_a_table_agrees_and_keeps_to_its_kind(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    folder = tmp_path / "changes"
    land(folder, [{"id": 1, "op": "U", "seq": 1, "name": "ann", "amount": 10}])
    cur.execute(f"CREATE STREAMING TABLE mirror FLOW AUTO CDC FROM STREAM {events_source(folder)} {CDC}")
    # another key: refused at the flow's KEYS
    status = error_status(cur, f"CREATE FLOW other AS AUTO CDC INTO mirror FROM STREAM {events_source(folder)}\n"
                               "KEYS (name) SEQUENCE BY seq COLUMNS * EXCEPT (op, _rescued_data)")
    assert status.sqlState == "42000" and "INVALID_AUTO_CDC_CLAUSE" in status.errorMessage, status.errorMessage
    assert "own AUTO CDC flow" in status.errorMessage and "line 2, column 7" in status.errorMessage, \
        status.errorMessage
    # an INSERT flow cannot append to a table kept by key, nor AUTO CDC into one others append to
    status = error_status(cur, f"CREATE FLOW appender AS INSERT INTO mirror BY NAME SELECT id, seq FROM STREAM "
                               f"{events_source(folder)}")
    assert "INVALID_FLOW_TARGET" in status.errorMessage, status.errorMessage
    # a flow's truncate, as a table's, only with SCD type 1 (refused at the clause); another SCD type: refused
    sequence = "SEQUENCE BY seq COLUMNS * EXCEPT (op, _rescued_data)"
    sql = (f"CREATE FLOW later AS AUTO CDC INTO mirror FROM STREAM {events_source(folder)} "
           f"KEYS (id) APPLY AS TRUNCATE WHEN op = 'T' {sequence} STORED AS SCD TYPE 2")
    status = error_status(cur, sql)
    assert status.sqlState == "42000" and "INVALID_AUTO_CDC_CLAUSE" in status.errorMessage, status.errorMessage
    assert "only with SCD type 1" in status.errorMessage, status.errorMessage
    at = sql.index("WHEN op = 'T'") + len("WHEN ") + 1       # at the condition, as for the table's own
    assert f"line 1, column {at}" in status.errorMessage, status.errorMessage
    status = error_status(cur, f"CREATE FLOW later AS AUTO CDC INTO mirror FROM STREAM {events_source(folder)} "
                               f"KEYS (id) {sequence} STORED AS SCD TYPE 2")
    assert status.sqlState == "42000" and "differs from SCD TYPE 1" in status.errorMessage, status.errorMessage
    cur.execute("CREATE STREAMING TABLE appended (id INT, seq BIGINT, name STRING, amount INT)")
    cur.execute(f"CREATE FLOW appends AS INSERT INTO appended BY NAME SELECT id, seq, name, amount FROM STREAM "
                f"{events_source(folder)}")
    status = error_status(cur, f"CREATE FLOW keyed AS AUTO CDC INTO appended FROM STREAM {events_source(folder)} {CDC}")
    assert "INVALID_FLOW_TARGET" in status.errorMessage and "appends" in status.errorMessage, status.errorMessage
    # a second source for the AUTO CDC table's own stream: ranked with it
    other = tmp_path / "more"
    land(other, [{"id": 1, "op": "U", "seq": 0, "name": "older", "amount": 0},
                 {"id": 2, "op": "U", "seq": 1, "name": "bo", "amount": 2}])
    cur.execute(f"CREATE FLOW more AS AUTO CDC INTO mirror FROM STREAM {events_source(other)} {CDC}")
    streams.wait_for(cur.database, "mirror", flow="more")
    assert sorted_rows(cur, "SELECT * FROM mirror") == [(1, 1, "ann", 10), (2, 1, "bo", 2)]
    assert streams.store.list_flows(cur.database, "appended")[0].stream.flow == "appends"
    assert [f.stream.flow for f in streams.store.list_flows(cur.database, "mirror")] == ["more"]


SCD2 = f"{CDC} STORED AS SCD TYPE 2 TRACK HISTORY ON name"


def test_two_flows_into_an_scd2_table_equal_the_reference(stream_cursor, streams, tmp_path, land):
    """Two AUTO CDC flows into one SCD type 2 table (declared with its version columns): the history over both
    sources' events (sequences interleaved across them, late, duplicated, deletes) equals the batch reference over
    both folders after each round. A flow tracking other columns is refused at its AUTO CDC clause, and APPLY AS
    TRUNCATE with SCD type 2 at CREATE (Databricks' TRUNCATE is SCD type 1's only)."""
    cur = stream_cursor
    first, second, rounds = _two_sources(tmp_path, land, seed=292, size=12, count=2)
    cur.execute("CREATE STREAMING TABLE dim (id INT, seq BIGINT, name STRING, amount INT, __START_AT BIGINT, "
                "__END_AT BIGINT)")
    flows = ("from_eu", "from_us")
    for flow, folder in zip(flows, (first, second), strict=True):
        cur.execute(f"CREATE FLOW {flow} AS AUTO CDC INTO dim FROM STREAM {events_source(folder)} {SCD2}")
    for number, (eu, us) in enumerate(rounds):
        if number:
            land(first, eu)
            land(second, us)
        _wait(streams, cur.database, "dim", flows)
        assert sorted_rows(cur, "SELECT * FROM dim") == scd2_reference(cur, first, more=(second,)), \
            f"round {number}"
    status = error_status(cur, f"CREATE FLOW other AS AUTO CDC INTO dim FROM STREAM {events_source(first)} {CDC} "
                               "STORED AS SCD TYPE 2 TRACK HISTORY ON amount")
    assert status.sqlState == "42000" and "INVALID_AUTO_CDC_CLAUSE" in status.errorMessage, status.errorMessage
    assert "TRACK HISTORY ON amount differs from TRACK HISTORY ON name" in status.errorMessage, status.errorMessage
    status = error_status(cur, f"CREATE FLOW cut AS AUTO CDC INTO dim FROM STREAM {events_source(first)} KEYS (id) "
                               "APPLY AS TRUNCATE WHEN op = 'T' SEQUENCE BY seq COLUMNS * EXCEPT (op, _rescued_data) "
                               "STORED AS SCD TYPE 2")
    assert status.sqlState == "42000" and "INVALID_AUTO_CDC_CLAUSE" in status.errorMessage, status.errorMessage
    assert "SCD type 1" in status.errorMessage or "SCD TYPE 1" in status.errorMessage, status.errorMessage
    assert [f.stream.flow for f in streams.store.list_flows(cur.database, "dim")] == list(flows)
    cur.execute("CREATE STREAMING TABLE no_versions (id INT, seq BIGINT, name STRING, amount INT)")
    sql = f"CREATE FLOW versions AS AUTO CDC INTO no_versions FROM STREAM {events_source(first)} {SCD2}"
    status = error_status(cur, sql)
    assert status.sqlState == "42809" and "__START_AT nor __END_AT" in status.errorMessage, status.errorMessage
    assert f"line 1, column {sql.index('no_versions') + 1}" in status.errorMessage, status.errorMessage
