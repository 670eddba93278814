"""The batch SQL references the AUTO CDC tests compare a table with (tests/streaming/test_auto_cdc.py, its flows'
and expectations' tests, and the SIGKILL crash test): change events landed as JSON files, and per key what an SCD
type 1 or 2 table must hold after them, by plain window functions over all the events through the gateway, written
apart from the sinks (engine/streams/cdc_sink.py, cdc_scd2.py) so that they check them rather than repeat them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyhive_helpers import sorted_rows

EVENT_SCHEMA = "id INT, op STRING, seq BIGINT, name STRING, amount INT"


def events_source(folder: Path) -> str:
    """The events landed as JSON files in `folder`, as a streaming or batch source."""
    return f"read_files('{folder}', format => 'json', schema => '{EVENT_SCHEMA}')"


def scd1_reference(cur: Any, folder: Path, *more: Path, truncates: bool = False) -> list[tuple[Any, ...]]:
    """Per id over the events of every folder, the event with the highest seq wins (a delete over an upsert at an
    equal seq, then the upsert whose values as JSON sort last); the id is in the table when that event is an
    upsert. With `truncates`, events of op 'T' are truncates: the others count, and a winner only when sequenced
    after the latest truncate."""
    events = " UNION ALL ".join(f"SELECT id, op, seq, name, amount FROM {events_source(f)}" for f in (folder, *more))
    others = " WHERE op <> 'T'" if truncates else ""
    after = f" AND seq > coalesce((SELECT max(seq) FROM ({events}) WHERE op = 'T'), -1)" if truncates else ""
    return sorted_rows(cur, f"""
        SELECT id, seq, name, amount FROM (
          SELECT *, row_number() OVER (
            PARTITION BY id ORDER BY seq DESC, CASE WHEN op = 'D' THEN 1 ELSE 0 END DESC,
                                     to_json(named_struct('id', id, 'seq', seq, 'name', name, 'amount', amount)) DESC
          ) AS position
          FROM ({events}){others})
        WHERE position = 1 AND op <> 'D'{after}""")


def scd2_reference(cur: Any, folder: Path, values: tuple[str, ...] = ("seq", "name", "amount"),
                   tracked: tuple[str, ...] = ("name",), ignore_nulls: bool = False,
                   more: tuple[Path, ...] = ()) -> list[tuple[Any, ...]]:
    """The versions of each id, by window functions over all its events (those of `folder` and of `more`, as
    several flows into one table bring them): one event per (id, seq) (a delete over an
    upsert, then the upsert whose kept values as JSON sort last); with `ignore_nulls`, an upsert's NULL takes the
    column's last non-NULL value since the id's last delete; an upsert opens a version after nothing, after a delete
    or when a `tracked` column differs from the event before; a version ends at the sequence of the event after its
    last one (LEAD), and holds its last upsert's values."""
    kept = ("id", *values)
    tie = "to_json(named_struct(" + ", ".join(f"'{c}', {c}" for c in kept) + "))"
    cleaned = ", ".join(f"last({c}, true) OVER (PARTITION BY id, deletes ORDER BY seq ROWS BETWEEN UNBOUNDED "
                        f"PRECEDING AND CURRENT ROW) AS {c}" if ignore_nulls and c != "seq" else c for c in values)
    if "seq" not in values:
        cleaned += ", seq"
    differs = " OR ".join(f"NOT ({c} <=> lag({c}) OVER w)" for c in tracked) or "false"
    last = "max_by(named_struct(" + ", ".join(f"'{c}', {c}" for c in values) + "), seq)"
    return sorted_rows(cur, f"""
        WITH chosen AS (
          SELECT id, seq, name, amount, op = 'D' AS is_delete, row_number() OVER (
            PARTITION BY id, seq ORDER BY CASE WHEN op = 'D' THEN 1 ELSE 0 END DESC, {tie} DESC) AS position
          FROM ({" UNION ALL ".join(f"SELECT * FROM {events_source(f)}" for f in (folder, *more))})),
        counted AS (
          SELECT *, sum(CASE WHEN is_delete THEN 1 ELSE 0 END) OVER (PARTITION BY id ORDER BY seq) AS deletes
          FROM chosen WHERE position = 1),
        filled AS (SELECT id, is_delete, {cleaned} FROM counted),
        opened AS (
          SELECT *, CASE WHEN NOT is_delete AND (lag(seq) OVER w IS NULL OR lag(is_delete) OVER w OR {differs})
                         THEN 1 ELSE 0 END AS opens,
                    lead(seq) OVER w AS next_seq
          FROM filled WINDOW w AS (PARTITION BY id ORDER BY seq)),
        numbered AS (SELECT *, sum(opens) OVER (PARTITION BY id ORDER BY seq) AS version FROM opened)
        SELECT id, {", ".join(f"last_values.{c}" for c in values)}, start_at, end_at FROM (
          SELECT id, {last} AS last_values, min(seq) AS start_at, max_by(next_seq, seq) AS end_at
          FROM numbered WHERE NOT is_delete GROUP BY id, version)""")
