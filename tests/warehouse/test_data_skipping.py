"""Data skipping through PyHive against a real gateway (issue 25): every query over a table of a few hundred files
answers exactly as the same query with skipping off (`spark.sluicegate.dataSkipping.enabled=false`, the reference),
EXPLAIN says how many files each table reference read, and DELETE, UPDATE and MERGE rewrite exactly the files they
hit. The table's files come from the storage layer's own write path (Spark writes, delta-rs commits), a few more
from INSERT statements."""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from delta_writes import write_dataframe
from deltalake import DeltaTable
from pyhive import hive
from pyhive_helpers import database_cursor, land_named, poll_until, sorted_rows

DB = "wh_data_skipping"
# Random WHERE clauses compared with the reference (each reads all 204 files there: about 1.3 s late in the suite);
# SLUICEGATE_SKIPPING_QUERIES=300 for a longer look.
RANDOM_QUERIES = int(os.environ.get("SLUICEGATE_SKIPPING_QUERIES", "16"))
OFF = {"spark.sluicegate.dataSkipping.enabled": "false"}
FILES_PER_COMMIT = 50
ROWS_PER_COMMIT = 5000
# one region per commit (the partition column), flag per commit: true, false, NULL, mixed
COMMITS = [("'eu'", "true"), ("'us'", "false"), ("CAST(NULL AS STRING)", "CAST(NULL AS BOOLEAN)"),
           ("'eu'", "id % 2 = 0")]


@pytest.fixture(scope="module")
def cursor(gateway: Any, spark: Any, warehouse: Path) -> Iterator[Any]:
    """A cursor with skipping on, in a database holding `facts`: 4 commits of 50 files of 100 rows (ids rising),
    then 4 INSERTs of a row each (a file each): ids far above, a NULL id, an id below; 204 files, version 8."""
    for cur in database_cursor(gateway, DB):
        cur.execute("CREATE TABLE facts (id BIGINT, small INT, name STRING, day DATE, flag BOOLEAN, ratio DOUBLE, "
                    "region STRING) USING delta PARTITIONED BY (region)")
        location = str(warehouse / f"{DB}.db" / "facts")
        for i, (region, flag) in enumerate(COMMITS):
            # spark.range splits evenly: each task (and file) holds 100 consecutive ids
            rows = spark.range(i * ROWS_PER_COMMIT, (i + 1) * ROWS_PER_COMMIT, 1, FILES_PER_COMMIT).selectExpr(
                "id", "CAST(id % 97 AS INT) AS small",
                "CASE WHEN id % 50 = 0 THEN NULL ELSE concat('n', lpad(CAST(id AS STRING), 6, '0')) END AS name",
                "date_add(DATE '2024-01-01', CAST(id DIV 100 AS INT)) AS day", f"{flag} AS flag",
                "id / 3.0D AS ratio", f"{region} AS region")
            write_dataframe(rows, location, partition_by=["region"])
        cur.execute("INSERT INTO facts VALUES (100000, 1, 'zz', DATE '2030-01-01', true, 1.0, 'eu')")
        cur.execute("INSERT INTO facts VALUES (100001, 2, NULL, NULL, NULL, NULL, 'us')")
        cur.execute("INSERT INTO facts VALUES (NULL, NULL, NULL, NULL, NULL, NULL, 'eu')")
        cur.execute("INSERT INTO facts VALUES (-5, 0, 'a', DATE '2023-12-31', false, -1.0, NULL)")
        cur.execute("CREATE VIEW recent AS SELECT * FROM facts WHERE id >= 19000")
        yield cur


@pytest.fixture(scope="module")
def reference(gateway: Any, cursor: Any) -> Iterator[Any]:
    """A cursor on a session of its own with skipping turned off at open (the setting a client sends)."""
    connection = hive.connect(gateway.host, gateway.port, username="tester", configuration=OFF)
    cur = connection.cursor()
    cur.execute(f"USE {DB}")
    yield cur
    connection.close()


def _total_files(warehouse: Path, table: str = "facts") -> int:
    return len(DeltaTable(str(warehouse / f"{DB}.db" / table)).file_uris())


def _explained(cursor: Any, sql: str) -> str:
    cursor.execute(f"EXPLAIN {sql}")
    return cursor.fetchall()[0][0]


def _same(cursor: Any, reference: Any, sql: str) -> list[tuple[Any, ...]]:
    on, off = sorted_rows(cursor, sql), sorted_rows(reference, sql)
    assert on == off, sql
    return on


QUERIES = [
    ("SELECT * FROM facts WHERE id = 1234", 1),
    ("SELECT * FROM facts WHERE 1234 = id AND small = 70", 1),
    ("SELECT id FROM facts WHERE id BETWEEN 5000 AND 5150", 2),
    ("SELECT id FROM facts WHERE id < 150 OR id >= 19900", 6),   # and the files of ids -5, 100000, 100001
    ("SELECT id FROM facts WHERE id IN (3, 4999, 15000, 99999)", 3),
    ("SELECT id FROM facts WHERE id IS NULL", 1),
    ("SELECT count(*) FROM facts WHERE id IS NOT NULL", None),
    ("SELECT id FROM facts WHERE name IS NULL AND id < 1000", 10),
    ("SELECT id FROM facts WHERE name = 'n012345'", 1),
    ("SELECT id FROM facts WHERE name > 'n019950'", 2),
    ("SELECT id FROM facts WHERE day = DATE '2024-01-05'", 1),
    ("SELECT id FROM facts WHERE day = '2024-01-05'", 1),
    ("SELECT count(*) FROM facts WHERE day >= '2024-07-10'", None),
    ("SELECT count(*) FROM facts WHERE flag = false", None),
    ("SELECT count(*) FROM facts WHERE region = 'us'", 51),
    ("SELECT count(*) FROM facts WHERE region IS NULL", 51),
    ("SELECT id FROM facts WHERE region = 'eu' AND id < 300", 3),
    ("SELECT count(*) FROM facts WHERE ratio > 6000", None),      # a double: never skipped, still equal
    ("SELECT count(*) FROM facts", None),
    ("SELECT region, count(*), min(id) FROM facts WHERE id BETWEEN 4900 AND 5100 GROUP BY region", 3),
    ("SELECT id, row_number() OVER (ORDER BY id) FROM facts WHERE id > 19990", 3),
    ("SELECT DISTINCT flag FROM facts WHERE id >= 14950 AND id < 15050 LIMIT 5", 2),
    ("SELECT name FROM facts WHERE lower(name) = 'n000042'", None),  # a function of the column: all files
]


@pytest.mark.parametrize(("sql", "files"), QUERIES)
def test_results_equal_skipping_off_and_explain_says_what_was_read(cursor: Any, reference: Any, warehouse: Path,
                                                                   sql: str, files: int | None) -> None:
    _same(cursor, reference, sql)
    total = _total_files(warehouse)
    line = re.search(r"Delta \S+\.facts version \d+: read (\d+)(?: of (\d+))? files(.*)", _explained(cursor, sql))
    assert line is not None
    read = int(line.group(1))
    if files is None:
        assert read <= total
    else:
        assert (read, int(line.group(2)), line.group(3)) == (files, total, f" ({total - files} skipped by statistics)")
    # with skipping off every file is read; where a predicate was there to use, EXPLAIN says skipping was off
    off = f"read {total} files" + (" (data skipping is off)" if files is not None else "")
    assert off in _explained(reference, sql)


def test_explain_keeps_sparks_plan_and_counts_files_without_filters(cursor: Any, warehouse: Path) -> None:
    text = _explained(cursor, "SELECT count(*) FROM facts")
    head, plan = text.split("\n\n", 1)
    version = DeltaTable(str(warehouse / f"{DB}.db" / "facts")).version()
    assert head.splitlines() == ["== Delta files ==",
                                 f"Delta main.{DB}.facts version {version}: read {_total_files(warehouse)} files"]
    assert plan.startswith("== Physical Plan ==")


def test_joins_prune_inner_sides_but_never_the_null_supplying_side(cursor: Any, reference: Any,
                                                                   warehouse: Path) -> None:
    total = _total_files(warehouse)
    inner = ("SELECT a.id, b.id FROM facts a JOIN facts b ON a.id = b.id + 1 "
             "WHERE a.id < 200 AND b.id BETWEEN 100 AND 198")
    assert len(_same(cursor, reference, inner)) == 99
    assert re.findall(r"read (\d+) of", _explained(cursor, inner)) == ["3", "1"]  # a: ids 0-199 and -5
    left = ("SELECT a.id, b.name FROM facts a LEFT JOIN facts b ON a.id = b.id + 1 "
            "WHERE a.id < 250 AND b.name IS NULL")
    assert len(_same(cursor, reference, left)) > 0
    lines = _explained(cursor, left).split("\n\n")[0].splitlines()[1:]
    assert lines[0].endswith(f"read 4 of {total} files ({total - 4} skipped by statistics)")
    assert lines[1].endswith(f"read {total} files")


def test_a_view_the_same_table_twice_and_time_travel(cursor: Any, reference: Any, warehouse: Path) -> None:
    assert _same(cursor, reference, "SELECT count(*), min(id) FROM recent WHERE name IS NOT NULL") == [(981, 19001)]
    assert "read 12 of" in _explained(cursor, "SELECT count(*) FROM recent")  # ids 19000-19999, 100000, 100001
    twice = ("SELECT (SELECT count(*) FROM facts WHERE id < 100), (SELECT count(*) FROM facts WHERE id >= 19950), "
             "(SELECT count(*) FROM facts)")
    assert _same(cursor, reference, twice) == [(101, 52, 20004)]
    assert re.findall(r"read (\d+)", _explained(cursor, twice)) == ["2", "3", str(_total_files(warehouse))]
    old = "SELECT count(*) FROM facts VERSION AS OF 2 WHERE id < 7000"
    assert _same(cursor, reference, old) == [(7000,)]
    assert "version 2: read 70 of 100 files (30 skipped by statistics)" in _explained(cursor, old)


def _random_where(rng: random.Random) -> str:
    def leaf() -> str:
        column = rng.choice(["id", "name", "day", "flag", "region", "small"])
        if rng.random() < 0.15:
            return f"{column} IS {rng.choice(['', 'NOT '])}NULL"
        op = rng.choice(["=", "<", "<=", ">", ">=", "IN", "BETWEEN"])
        value = {"id": lambda: str(rng.randint(-10, 20010)), "small": lambda: str(rng.randint(0, 97)),
                 "name": lambda: f"'n{rng.randint(0, 20010):06d}'", "flag": lambda: rng.choice(["true", "false"]),
                 "day": lambda: f"DATE '2024-{rng.randint(1, 7):02d}-{rng.randint(1, 28):02d}'",
                 "region": lambda: rng.choice(["'eu'", "'us'", "'zz'"])}[column]
        if op == "IN":
            return f"{column} IN ({', '.join(value() for _ in range(rng.randint(1, 4)))})"
        if op == "BETWEEN":
            return f"{column} BETWEEN {value()} AND {value()}"
        return f"{column} {op} {value()}"

    shape = rng.random()
    if shape < 0.4:
        return leaf()
    if shape < 0.7:
        return f"{leaf()} OR {leaf()}"
    return f"{leaf()} AND ({leaf()} OR {leaf()})"


def test_randomized_predicates_answer_as_with_skipping_off(cursor: Any, reference: Any) -> None:
    rng = random.Random(2025)
    for _ in range(RANDOM_QUERIES):
        where = _random_where(rng)
        _same(cursor, reference, f"SELECT count(*), sum(id), min(name), max(day) FROM facts WHERE {where}")


def test_skipping_is_turned_off_and_on_by_a_session_setting(cursor: Any, warehouse: Path) -> None:
    sql = "SELECT * FROM facts WHERE id = 77"
    cursor.execute("SET spark.sluicegate.dataSkipping.enabled=false")
    try:
        assert "(data skipping is off)" in _explained(cursor, sql)
    finally:
        cursor.execute("SET spark.sluicegate.dataSkipping.enabled=true")
    assert f"read 1 of {_total_files(warehouse)} files" in _explained(cursor, sql)


def _removed(location: Path, version: int) -> list[str]:
    commit = (location / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
    return sorted(json.loads(line)["remove"]["path"] for line in commit if '"remove"' in line)


def test_delete_update_and_merge_rewrite_exactly_the_files_they_hit(cursor: Any, spark: Any,
                                                                    warehouse: Path) -> None:
    """DELETE and UPDATE read only the files their WHERE may hit (the rest cannot hold a row they change); MERGE's
    target is read whole (its outer join needs every row), its source skips as any query."""
    cursor.execute("CREATE TABLE edits (id BIGINT, name STRING) USING delta")
    location = warehouse / f"{DB}.db" / "edits"
    write_dataframe(spark.range(0, 2000, 1, 20).selectExpr("id", "CAST(id AS STRING) AS name"), str(location))
    files = {add["path"]: (stats["minValues"]["id"], stats["maxValues"]["id"])
             for add, stats in ((a, json.loads(a["stats"])) for a in _adds(location, 1))}
    assert len(files) == 20

    def hit(low: int, high: int) -> list[str]:
        return sorted(path for path, (lo, hi) in files.items() if lo <= high and hi >= low)

    # a file the WHERE cannot hit is not even opened: moved away, the DELETE does not miss it
    far = hit(1900, 1999)[0]
    (location / far).rename(location / "aside.parquet")
    try:
        cursor.execute("DELETE FROM edits WHERE id BETWEEN 150 AND 250")
    finally:
        (location / "aside.parquet").rename(location / far)
    assert _removed(location, 2) == hit(150, 250)
    cursor.execute("UPDATE edits SET name = 'u' WHERE id = 1000")
    assert _removed(location, 3) == hit(1000, 1000)
    cursor.execute("MERGE INTO edits t USING (SELECT id, 'm' AS name FROM edits WHERE id >= 1990) s "
                   "ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name")
    assert _removed(location, 4) == hit(1990, 1999)
    rows = sorted_rows(cursor, "SELECT id, name FROM edits")
    expected = sorted((i, "u" if i == 1000 else "m" if i >= 1990 else str(i))
                      for i in range(2000) if not 150 <= i <= 250)
    assert rows == sorted(expected, key=repr)


def _adds(location: Path, version: int) -> list[dict[str, Any]]:
    commit = (location / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
    return [json.loads(line)["add"] for line in commit if '"add"' in line]


def test_a_streaming_table_read_while_it_is_written(cursor: Any, reference: Any, tmp_path: Path,
                                                    warehouse: Path) -> None:
    """Each landed file is a micro-batch, a commit, a file; queries pinned to a version the stream just wrote answer
    as with skipping off, and a point query at the latest version finds what landed."""
    folder = tmp_path / "events"
    land_named(folder, "0.json", [{"id": i, "name": f"e{i}"} for i in range(10)])
    cursor.execute(f"CREATE STREAMING TABLE events AS SELECT * FROM STREAM read_files('{folder}', "
                   "format => 'json', schema => 'id BIGINT, name STRING')")
    location = str(warehouse / f"{DB}.db" / "events")
    for batch in range(1, 13):
        land_named(folder, f"{batch}.json", [{"id": batch * 10 + i, "name": f"e{batch * 10 + i}"} for i in range(10)])
        newest = batch * 10 + 9
        poll_until(lambda newest=newest: sorted_rows(cursor, f"SELECT id FROM events WHERE id = {newest}"),
                   f"id {newest} in the streaming table")
        version = DeltaTable(location).version()
        for where in (f"id = {batch * 10 - 3}", f"id >= {batch * 5}", f"name = 'e{batch}'", "id IN (1, 55, 99)"):
            _same(cursor, reference, f"SELECT id, name FROM events VERSION AS OF {version} WHERE {where}")
    text = _explained(cursor, "SELECT * FROM events WHERE id = 42")
    assert re.search(r"read 1 of (\d+) files \(\d+ skipped by statistics\)", text), text
