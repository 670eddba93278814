"""AUTO CDC into a streaming table (issue 29), SCD type 1 (with APPLY AS TRUNCATE) and SCD type 2, through PyHive
against a real gateway: change events land as JSON files, one micro-batch each, and after every batch the table must
equal a plain batch SQL query over every event seen so far, written independently of the sinks
(engine/streams/cdc_sink.py, engine/streams/cdc_scd2.py) in tests/cdc_reference.py, which the flows', expectations'
and crash tests share.

The randomized tests run `SLUICEGATE_CDC_ROUNDS` rounds each (3 in CI) of random keys, upserts and deletes, shuffled
across micro-batches (late events), with exact duplicates, equal sequences and NULL values in updates; SCD type 2's
rounds take turns among three ways of keeping and tracking columns (one with IGNORE NULL UPDATES).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from cdc_reference import events_source, scd1_reference, scd2_reference
from pyhive_helpers import error_status, poll_until, sorted_rows

from sluicegate.engine.streams import cdc_sink


def _create(cur: Any, table: str, folder: Path, extra: str = "") -> None:
    cur.execute(f"CREATE OR REFRESH STREAMING TABLE {table} FLOW AUTO CDC FROM STREAM {events_source(folder)} "
                f"KEYS (id) {extra}APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, _rescued_data) "
                "STORED AS SCD TYPE 1")


def test_changes_apply_by_key_with_the_highest_sequence(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    folder = tmp_path / "changes"
    land(folder, [{"id": 1, "op": "U", "seq": 1, "name": "ann", "amount": 10},
                  {"id": 2, "op": "U", "seq": 1, "name": "bob", "amount": 20},
                  {"id": 1, "op": "U", "seq": 3, "name": "ann3", "amount": 13},
                  {"id": 1, "op": "U", "seq": 2, "name": "ann2", "amount": 12}])
    _create(cur, "customers", folder)
    assert sorted_rows(cur, "SELECT * FROM customers") == [(1, 3, "ann3", 13), (2, 1, "bob", 20)]
    cur.execute("DESCRIBE TABLE customers")
    assert [row[0] for row in cur.fetchall()][:4] == ["id", "seq", "name", "amount"]

    # an older update arriving late changes nothing; a delete removes the row
    land(folder, [{"id": 1, "op": "U", "seq": 2, "name": "late", "amount": 0},
                  {"id": 2, "op": "D", "seq": 5, "name": None, "amount": None}])
    streams.wait_for(cur.database, "customers")
    assert sorted_rows(cur, "SELECT * FROM customers") == [(1, 3, "ann3", 13)]

    # the batches' flow_progress events count what they did: one row deleted so far
    def deleted() -> Any:
        cur.execute("SELECT sum(get_json_object(details, '$.flow_progress.metrics.num_deleted_rows')) "
                    "FROM event_log(TABLE(customers)) WHERE event_type = 'flow_progress'")
        return cur.fetchall()[0][0]

    poll_until(lambda: deleted() == 1, "a flow_progress event counting the one row deleted")

    # the tombstone keeps an upsert older than the delete from bringing the row back; a newer one does
    land(folder, [{"id": 2, "op": "U", "seq": 4, "name": "zombie", "amount": 1}])
    streams.wait_for(cur.database, "customers")
    assert sorted_rows(cur, "SELECT * FROM customers") == [(1, 3, "ann3", 13)]
    land(folder, [{"id": 2, "op": "U", "seq": 6, "name": "bob6", "amount": None}])
    streams.wait_for(cur.database, "customers")
    assert sorted_rows(cur, "SELECT * FROM customers") == [(1, 3, "ann3", 13), (2, 6, "bob6", None)]
    assert sorted_rows(cur, "SELECT * FROM customers") == scd1_reference(cur, folder)

    # the tombstones and ranks are no reader's rows: the table's files hold the table's rows only
    cur.execute("SELECT count(*) FROM customers")
    assert cur.fetchall() == [(2,)]
    cur.execute("DESCRIBE STREAMING TABLE customers")
    described = {row[0]: row[1] for row in cur.fetchall()}
    assert "keys (id), sequence by seq, SCD type 1" in described["Auto CDC"]


@pytest.mark.parametrize("ranked_by", ["driver", "spark"])
def test_a_null_sequence_fails_the_batch_and_applies_none_of_it(stream_cursor, streams, tmp_path, land, monkeypatch,
                                                                 ranked_by):
    """An event whose SEQUENCE BY value is NULL cannot be ordered: its batch fails with an error naming the
    sequence, whether the driver picks the winners or Spark's aggregate does (a batch above
    DRIVER_RANKING_BYTES), and none of the batch is applied; DESCRIBE STREAMING TABLE shows the error."""
    if ranked_by == "spark":
        monkeypatch.setattr(cdc_sink, "DRIVER_RANKING_BYTES", -1)
    cur = stream_cursor
    folder = tmp_path / "changes"
    land(folder, [{"id": 1, "op": "U", "seq": 1, "name": "ann", "amount": 10}])
    _create(cur, "unordered", folder)
    assert sorted_rows(cur, "SELECT * FROM unordered") == [(1, 1, "ann", 10)]
    land(folder, [{"id": 2, "op": "U", "seq": 2, "name": "bob", "amount": 20},
                  {"id": 1, "op": "U", "seq": None, "name": "no order", "amount": 0}])
    failed = poll_until(lambda: (e := streams.store.get_stream(cur.database, "unordered")) and e.last_error and e,
                        "the stream to fail on the NULL sequence")
    assert "SEQUENCE BY value (seq) is NULL, so it cannot be ordered" in failed.last_error
    assert "USER_RAISED_EXCEPTION" in failed.last_error and "P0001" in failed.last_error
    cur.execute("DESCRIBE STREAMING TABLE unordered")
    assert "SEQUENCE BY value (seq) is NULL" in ({row[0]: row[1] for row in cur.fetchall()}["Last error"] or "")
    assert sorted_rows(cur, "SELECT * FROM unordered") == [(1, 1, "ann", 10)]
    cur.execute("DROP TABLE unordered")


def test_ignore_null_updates_keeps_the_stored_values(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    folder = tmp_path / "changes"
    land(folder, [{"id": 1, "op": "U", "seq": 1, "name": "ann", "amount": 10}])
    _create(cur, "partial", folder, extra="IGNORE NULL UPDATES ")
    land(folder, [{"id": 1, "op": "U", "seq": 2, "name": None, "amount": 11},
                  {"id": 1, "op": "U", "seq": 3, "name": "ann3", "amount": None}])
    streams.wait_for(cur.database, "partial")
    assert sorted_rows(cur, "SELECT * FROM partial") == [(1, 3, "ann3", 11)]
    # after a delete the key starts afresh: NULLs are NULL
    land(folder, [{"id": 1, "op": "D", "seq": 4, "name": None, "amount": None},
                  {"id": 1, "op": "U", "seq": 5, "name": None, "amount": 7}])
    streams.wait_for(cur.database, "partial")
    assert sorted_rows(cur, "SELECT * FROM partial") == [(1, 5, None, 7)]


def test_create_checks_keys_and_sequence_against_the_source(stream_cursor, tmp_path, land):
    cur = stream_cursor
    folder = tmp_path / "changes"
    land(folder, [{"id": 1, "op": "U", "seq": 1, "name": "ann", "amount": 10}])
    status = error_status(cur, f"CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM {events_source(folder)}\n"
                               "KEYS (customer_id) SEQUENCE BY seq")
    assert status.sqlState == "42703" and "UNRESOLVED_COLUMN" in status.errorMessage, status.errorMessage
    assert "`customer_id`" in status.errorMessage
    assert "line 2" in status.errorMessage or "2:7" in status.errorMessage, status.errorMessage
    status = error_status(cur, f"CREATE STREAMING TABLE t FLOW AUTO CDC FROM STREAM {events_source(folder)} KEYS (id) "
                               "APPLY AS TRUNCATE WHEN op = 'T' SEQUENCE BY seq STORED AS SCD TYPE 2")
    assert status.sqlState == "42000" and "INVALID_AUTO_CDC_CLAUSE" in status.errorMessage
    # an expectation over what the events lack is refused at CREATE (they run: test_auto_cdc_expectations.py)
    status = error_status(cur, "CREATE STREAMING TABLE t (id INT, seq BIGINT, name STRING, amount INT, "
                               "CONSTRAINT positive EXPECT (price > 0)) FLOW AUTO CDC FROM STREAM "
                               f"{events_source(folder)} KEYS (id) SEQUENCE BY seq COLUMNS id, seq, name, amount")
    assert status.sqlState == "42703" and "UNRESOLVED_COLUMN.EXPECTATION" in status.errorMessage, status.errorMessage
    assert "`price`" in status.errorMessage and "line 1, column 100" in status.errorMessage, status.errorMessage
    cur.execute("SHOW TABLES")
    assert "t" not in {row[1] for row in cur.fetchall()}


def _events(rng: random.Random, keys: int, count: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for _ in range(count):
        if events and rng.random() < 0.1:
            events.append(dict(rng.choice(events)))           # an exact duplicate
            continue
        key = rng.randrange(keys)
        seq = rng.randrange(count // 2)                        # small range: equal sequences of a key happen
        if rng.random() < 0.25:
            events.append({"id": key, "op": "D", "seq": seq, "name": None, "amount": None})
        else:
            events.append({"id": key, "op": "U", "seq": seq,
                           "name": None if rng.random() < 0.2 else rng.choice(["a", "b", "c"]),
                           "amount": None if rng.random() < 0.2 else rng.randrange(100)})
    return events


def test_randomized_changes_equal_the_batch_reference(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    rounds = int(os.environ.get("SLUICEGATE_CDC_ROUNDS", "3"))
    for round_number in range(rounds):
        rng = random.Random(round_number)
        folder = tmp_path / f"round{round_number}"
        events = _events(rng, keys=6, count=60)
        rng.shuffle(events)                                    # late events: any order, across batches
        cuts = sorted(rng.sample(range(1, len(events)), 5))
        batches = [events[a:b] for a, b in zip([0, *cuts], [*cuts, len(events)], strict=True)]
        table = f"cdc_round{round_number}"
        land(folder, batches[0])
        _create(cur, table, folder)
        assert sorted_rows(cur, f"SELECT * FROM {table}") == scd1_reference(cur, folder), \
            f"round {round_number} batch 0"
        for number, batch in enumerate(batches[1:], start=1):
            land(folder, batch)
            streams.wait_for(cur.database, table)
            assert sorted_rows(cur, f"SELECT * FROM {table}") == scd1_reference(cur, folder), \
                f"round {round_number} batch {number}"
        cur.execute(f"DROP TABLE {table}")


def test_null_keys_and_ties_with_the_state_equal_the_batch_reference(stream_cursor, streams, tmp_path, land):
    """The sink looks each winner's stored rank up on the driver (engine/streams/cdc_sink.py `_driver_changes`),
    reading the stored tie only for winners tied with their key's stored (sequence, delete); a batch with a NULL key
    is ranked by Spark's join instead (`_changes`, NULL matching NULL). Batches of both kinds, with exact duplicates
    and equal sequences of events already applied, must equal the reference after every batch."""
    cur = stream_cursor
    rng = random.Random(29)
    folder = tmp_path / "changes"
    events = _events(rng, keys=5, count=60)
    for event in events[30:45]:              # a NULL key in the middle batches only: before and after, no NULL key
        if event["id"] == 0:
            event["id"] = None
    batches = [events[:15], events[15:30], events[30:45], events[45:], [dict(e) for e in events[:20]]]
    land(folder, batches[0])
    _create(cur, "ties", folder)
    for number, batch in enumerate(batches[1:], start=1):
        land(folder, batch)
        streams.wait_for(cur.database, "ties")
        assert sorted_rows(cur, "SELECT * FROM ties") == scd1_reference(cur, folder), f"batch {number}"


# -- SCD type 2 -------------------------------------------------------------------------------------------------------

def _create_scd2(cur: Any, table: str, folder: Path, columns: str = "* EXCEPT (op, _rescued_data)",
                 track: str = "TRACK HISTORY ON name", extra: str = "") -> None:
    cur.execute(f"CREATE OR REFRESH STREAMING TABLE {table} FLOW AUTO CDC FROM STREAM {events_source(folder)} "
                f"KEYS (id) {extra}APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS {columns} "
                f"STORED AS SCD TYPE 2 {track}")


def test_scd2_versions_by_hand(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    folder = tmp_path / "changes"
    # amount and seq are not tracked: id 1's second event updates its version in place; id 2's event comes twice;
    # id 3 has two upserts of one sequence, of which the one whose values as JSON sort last ("cz") counts
    land(folder, [{"id": 1, "op": "U", "seq": 1, "name": "ann", "amount": 10},
                  {"id": 1, "op": "U", "seq": 3, "name": "ann", "amount": 13},
                  {"id": 2, "op": "U", "seq": 1, "name": "bob", "amount": 20},
                  {"id": 2, "op": "U", "seq": 1, "name": "bob", "amount": 20},
                  {"id": 3, "op": "U", "seq": 2, "name": "cy", "amount": 1},
                  {"id": 3, "op": "U", "seq": 2, "name": "cz", "amount": 2}])
    _create_scd2(cur, "dim", folder)
    assert sorted_rows(cur, "SELECT * FROM dim") == [(1, 3, "ann", 13, 1, None), (2, 1, "bob", 20, 1, None),
                                                     (3, 2, "cz", 2, 2, None)]
    cur.execute("DESCRIBE TABLE dim")
    described = [(row[0], row[1]) for row in cur.fetchall()][:6]
    assert described == [("id", "int"), ("seq", "bigint"), ("name", "string"), ("amount", "int"),
                         ("__START_AT", "bigint"), ("__END_AT", "bigint")]

    # a tracked change opens a version; one arriving late (seq 2) splits id 1's first version; a delete closes id 2's
    land(folder, [{"id": 1, "op": "U", "seq": 5, "name": "ann5", "amount": 15},
                  {"id": 1, "op": "U", "seq": 2, "name": "zed", "amount": 12},
                  {"id": 2, "op": "D", "seq": 4, "name": None, "amount": None}])
    streams.wait_for(cur.database, "dim")
    assert sorted_rows(cur, "SELECT * FROM dim") == [
        (1, 1, "ann", 10, 1, 2), (1, 2, "zed", 12, 2, 3), (1, 3, "ann", 13, 3, 5), (1, 5, "ann5", 15, 5, None),
        (2, 1, "bob", 20, 1, 4), (3, 2, "cz", 2, 2, None)]

    # id 2 comes back in a new version (its delete again, a duplicate, changes nothing); id 3: an upsert losing the
    # tie changes nothing, a delete of the same sequence wins over the upsert, which leaves id 3 no version at all
    land(folder, [{"id": 2, "op": "U", "seq": 6, "name": "bob", "amount": 26},
                  {"id": 2, "op": "D", "seq": 4, "name": None, "amount": None},
                  {"id": 3, "op": "U", "seq": 2, "name": "ca", "amount": 0}])
    streams.wait_for(cur.database, "dim")
    assert (3, 2, "cz", 2, 2, None) in sorted_rows(cur, "SELECT * FROM dim")
    land(folder, [{"id": 3, "op": "D", "seq": 2, "name": None, "amount": None}])
    streams.wait_for(cur.database, "dim")
    assert sorted_rows(cur, "SELECT * FROM dim") == [
        (1, 1, "ann", 10, 1, 2), (1, 2, "zed", 12, 2, 3), (1, 3, "ann", 13, 3, 5), (1, 5, "ann5", 15, 5, None),
        (2, 1, "bob", 20, 1, 4), (2, 6, "bob", 26, 6, None)]
    assert sorted_rows(cur, "SELECT * FROM dim") == scd2_reference(cur, folder)

    cur.execute("DESCRIBE STREAMING TABLE dim")
    described = {row[0]: row[1] for row in cur.fetchall()}
    assert "SCD type 2" in described["Auto CDC"] and "track history on name" in described["Auto CDC"]

    def progress() -> Any:
        cur.execute("SELECT count(*), sum(get_json_object(details, '$.flow_progress.metrics.num_upserted_rows')) "
                    "FROM event_log(TABLE(dim)) WHERE event_type = 'flow_progress'")
        count, upserted = cur.fetchall()[0]
        return count >= 4 and upserted

    poll_until(progress, "a flow_progress event per batch, counting the versions written")


_SCD2_WAYS = (  # (COLUMNS, TRACK HISTORY, extra clause, the kept values, the tracked ones, IGNORE NULL UPDATES)
    ("* EXCEPT (op, _rescued_data)", "TRACK HISTORY ON name", "", ("seq", "name", "amount"), ("name",), False),
    ("* EXCEPT (op, seq, _rescued_data)", "", "", ("name", "amount"), ("name", "amount"), False),
    ("* EXCEPT (op, _rescued_data)", "TRACK HISTORY ON * EXCEPT (seq)", "IGNORE NULL UPDATES ",
     ("seq", "name", "amount"), ("name", "amount"), True),
)


def test_randomized_scd2_equals_the_batch_reference(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    rounds = int(os.environ.get("SLUICEGATE_CDC_ROUNDS", "3"))
    for round_number in range(rounds):
        rng = random.Random(1000 + round_number)
        columns, track, extra, values, tracked, ignore_nulls = _SCD2_WAYS[round_number % len(_SCD2_WAYS)]
        folder = tmp_path / f"round{round_number}"
        events = _events(rng, keys=5, count=50)
        rng.shuffle(events)
        cuts = sorted(rng.sample(range(1, len(events)), 3))
        batches = [events[a:b] for a, b in zip([0, *cuts], [*cuts, len(events)], strict=True)]
        table = f"scd2_round{round_number}"
        land(folder, batches[0])
        _create_scd2(cur, table, folder, columns, track, extra)
        for number, batch in enumerate(batches):
            if number:
                land(folder, batch)
                streams.wait_for(cur.database, table)
            assert sorted_rows(cur, f"SELECT * FROM {table}") == \
                scd2_reference(cur, folder, values, tracked, ignore_nulls), f"round {round_number} batch {number}"
        cur.execute(f"DROP TABLE {table}")


# -- APPLY AS TRUNCATE (SCD type 1) ----------------------------------------------------------------------------------

def test_apply_as_truncate(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    folder = tmp_path / "changes"

    def row(key: int | None, op: str, seq: int, name: str | None = None) -> dict[str, Any]:
        return {"id": key, "op": op, "seq": seq, "name": name, "amount": seq}

    # within one batch: the truncate at 4 removes what is sequenced up to it (id 6's upsert at 4 too), not after
    land(folder, [row(1, "U", 1, "a"), row(2, "U", 2, "b"), row(3, "U", 6, "c"), row(None, "T", 4),
                  row(4, "U", 5, "d"), row(5, "U", 3, "e"), row(6, "U", 4, "f")])
    cur.execute(f"CREATE OR REFRESH STREAMING TABLE mirror FLOW AUTO CDC FROM STREAM {events_source(folder)} KEYS (id) "
                "APPLY AS DELETE WHEN op = 'D' APPLY AS TRUNCATE WHEN op = 'T' SEQUENCE BY seq "
                "COLUMNS * EXCEPT (op, _rescued_data) STORED AS SCD TYPE 1")
    assert sorted_rows(cur, "SELECT * FROM mirror") == [(3, 6, "c", 6), (4, 5, "d", 5)]

    # late events sequenced before the truncate stay out, a known key's or a new one's; later ones apply
    land(folder, [row(1, "U", 3, "a3"), row(7, "U", 2, "g"), row(8, "U", 7, "h"), row(3, "D", 8)])
    streams.wait_for(cur.database, "mirror")
    assert sorted_rows(cur, "SELECT * FROM mirror") == [(4, 5, "d", 5), (8, 7, "h", 7)]

    # across batches: a later truncate empties the table (id 8's upsert of its sequence with it)
    land(folder, [row(None, "T", 9), row(8, "U", 9, "h9")])
    streams.wait_for(cur.database, "mirror")
    assert sorted_rows(cur, "SELECT * FROM mirror") == []

    # an older truncate arriving late changes nothing; the latest one still holds older events off
    land(folder, [row(None, "T", 7), row(10, "U", 8, "j"), row(9, "U", 11, "i11"), row(9, "U", 10, "i")])
    streams.wait_for(cur.database, "mirror")
    assert sorted_rows(cur, "SELECT * FROM mirror") == [(9, 11, "i11", 11)]
    assert sorted_rows(cur, "SELECT * FROM mirror") == scd1_reference(cur, folder, truncates=True)
    cur.execute("DESCRIBE STREAMING TABLE mirror")
    assert "truncate when op = 'T'" in {row[0]: row[1] for row in cur.fetchall()}["Auto CDC"]
