"""A streaming table that streams from another one, after that source's REFRESH ... FULL: it fails with an error that
names the statement to run (REFRESH STREAMING TABLE <itself> FULL), or, with 'skipChangeCommits' = 'true', skips the
rewriting commit and goes on with the appends after it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyhive_helpers import error_status, land_named, poll_until, sorted_rows


def _bronze(cur: Any, folder: Path) -> None:
    cur.execute(f"CREATE STREAMING TABLE bronze AS SELECT id, country FROM STREAM read_files('{folder}', "
                "format => 'json', schema => 'id INT, country STRING')")
    cur.execute("REFRESH STREAMING TABLE bronze")


def test_the_downstream_error_names_its_own_full_refresh(stream_cursor: Any, landing_root: Path, streams: Any) -> None:
    cur, database = stream_cursor, stream_cursor.database
    folder = landing_root / f"{database}_in"
    land_named(folder, "a.json", [{"id": 1, "country": "fr"}, {"id": 2, "country": "de"}])
    _bronze(cur, folder)
    cur.execute("CREATE STREAMING TABLE silver AS SELECT id, upper(country) AS country FROM STREAM(bronze)")
    cur.execute("REFRESH STREAMING TABLE silver")
    cur.execute("REFRESH STREAMING TABLE bronze FULL")  # one commit removing bronze's files, then all input again
    failed = poll_until(lambda: (e := streams.store.get_stream(database, "silver")) and e.status == "FAILED" and e,
                        "silver to fail on the rewritten source")
    assert "[DELTA_SOURCE_TABLE_REWRITTEN]" in failed.last_error, failed.last_error
    status = error_status(cur, "REFRESH STREAMING TABLE silver")  # a plain refresh cannot cure it: it says how
    assert f"REFRESH STREAMING TABLE `{database}`.`silver` FULL" in status.errorMessage, status.errorMessage
    assert "skipChangeCommits" in status.errorMessage
    cur.execute(f"REFRESH STREAMING TABLE `{database}`.`silver` FULL")  # the statement it named, as written there
    assert sorted_rows(cur, "SELECT * FROM silver") == [(1, "FR"), (2, "DE")]


def test_skip_change_commits_goes_on_with_the_appends_after_a_rewrite(stream_cursor: Any, streams: Any) -> None:
    """The commit that rewrote rows (a DELETE here; a full refresh's emptying commit alike) is skipped whole, and the
    appends after it flow on. Rows a source writes again after a rewrite arrive as new rows, as in Databricks."""
    cur, database = stream_cursor, stream_cursor.database
    cur.execute("CREATE TABLE orders (id INT, country STRING)")
    cur.execute("INSERT INTO orders VALUES (1, 'fr'), (2, 'de')")
    cur.execute("CREATE STREAMING TABLE copied TBLPROPERTIES ('skipChangeCommits' = 'true') AS "
                "SELECT id, country FROM STREAM(orders)")
    cur.execute("REFRESH STREAMING TABLE copied")
    cur.execute("DELETE FROM orders WHERE id = 1")      # removes a file: skipped downstream, not an error
    cur.execute("INSERT INTO orders VALUES (3, 'it')")
    cur.execute("REFRESH STREAMING TABLE copied")
    assert sorted_rows(cur, "SELECT * FROM copied") == [(1, "fr"), (2, "de"), (3, "it")]
    entry = streams.store.get_stream(database, "copied")
    assert entry.status == "RUNNING" and not entry.last_error


def test_skip_change_commits_also_admits_a_source_rewritten_in_place(stream_cursor: Any, landing_root: Path) -> None:
    """Streaming from an update-mode table is refused at CREATE (its rows change in place), unless the reader says
    it wants only the appends."""
    cur = stream_cursor
    folder = landing_root / f"{cur.database}_in"
    land_named(folder, "a.json", [{"id": 1, "country": "fr"}])
    cur.execute(f"CREATE STREAMING TABLE per_country AS SELECT country, count(*) AS n FROM STREAM read_files("
                f"'{folder}', format => 'json', schema => 'id INT, country STRING') GROUP BY country")
    statement = "CREATE STREAMING TABLE follower AS SELECT country FROM STREAM(per_country)"
    status = error_status(cur, statement)
    assert "skipChangeCommits" in status.errorMessage and status.sqlState, status
    cur.execute("CREATE STREAMING TABLE follower TBLPROPERTIES ('skipChangeCommits' = 'true') AS "
                "SELECT country FROM STREAM(per_country)")
    cur.execute("REFRESH STREAMING TABLE per_country")
    cur.execute("REFRESH STREAMING TABLE follower")
    assert sorted_rows(cur, "SELECT * FROM follower") == [("fr",)]
