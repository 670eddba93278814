"""REFRESH STREAMING TABLE: a refresh waits until the stream has processed what landed before it; FULL empties the
table in one Delta commit and processes everything again; the owner only; `pipelines.reset.allowed` guards FULL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from pyhive_helpers import cursor_in, error_status, land_named, sorted_rows

DB = "st_refresh"


@pytest.fixture()
def cursor(connect: Any) -> Any:
    return cursor_in(connect, DB)



def _create(cursor: Any, table: str, folder: Path, properties: str = "") -> None:
    cursor.execute(f"DROP TABLE IF EXISTS {table}")
    cursor.execute(
        f"CREATE STREAMING TABLE {table} {properties} AS SELECT country, count(*) AS n "
        f"FROM STREAM read_files('{folder}', format => 'json', schema => 'country STRING') GROUP BY country")


def test_refresh_returns_once_what_landed_before_it_is_in_the_table(cursor: Any, landing_root: Path) -> None:
    folder = landing_root / "refresh_sync"
    land_named(folder, "a.json", [{"country": "fr"}, {"country": "de"}])
    _create(cursor, "per_country", folder)
    cursor.execute("REFRESH STREAMING TABLE per_country")
    assert sorted_rows(cursor, "SELECT * FROM per_country") == [("de", 1), ("fr", 1)]
    for i in range(3):
        land_named(folder, f"b{i}.json", [{"country": "fr"}])
    cursor.execute("/* dbt */ REFRESH TABLE per_country SYNC")  # REFRESH TABLE on a streaming table: the same
    assert sorted_rows(cursor, "SELECT * FROM per_country") == [("de", 1), ("fr", 4)]


def test_full_refresh_empties_in_one_commit_and_processes_everything_again(cursor: Any, landing_root: Path,
                                                                            warehouse: Path) -> None:
    folder = landing_root / "refresh_full"
    land_named(folder, "a.json", [{"country": "fr"}, {"country": "fr"}])
    _create(cursor, "full_again", folder)
    cursor.execute("REFRESH STREAMING TABLE full_again")
    before = DeltaTable(str(warehouse / f"{DB}.db" / "full_again")).version()
    cursor.execute("REFRESH STREAMING TABLE full_again FULL")
    assert sorted_rows(cursor, "SELECT * FROM full_again") == [("fr", 2)]
    table = DeltaTable(str(warehouse / f"{DB}.db" / "full_again"))
    assert table.version() > before
    emptied = table.history()[-(before + 2)]  # the commit just after the old version: the emptying overwrite
    assert emptied["version"] == before + 1 and emptied.get("operation") in ("WRITE", "CREATE OR REPLACE TABLE")
    # time travel to before the refresh still reads the old rows
    assert sorted_rows(cursor, f"SELECT * FROM full_again VERSION AS OF {before}") == [("fr", 2)]
    history = sorted_rows(cursor, "DESCRIBE HISTORY full_again")  # a streaming table is a Delta table: it has one
    assert max(row[0] for row in history) == table.version()
    cursor.execute("DESCRIBE STREAMING TABLE full_again")
    events = [row[1] for row in cursor.fetchall() if row[0] == "Event"]
    assert any("REFRESH_FULL" in event for event in events)


def test_async_returns_at_once_and_the_stream_still_catches_up(cursor: Any, landing_root: Path, streams: Any) -> None:
    folder = landing_root / "refresh_async"
    land_named(folder, "a.json", [{"country": "it"}])
    _create(cursor, "later", folder)
    cursor.execute("REFRESH STREAMING TABLE later ASYNC")
    streams.wait_for(DB, "later")
    assert sorted_rows(cursor, "SELECT * FROM later") == [("it", 1)]


def test_full_refresh_is_refused_when_the_table_says_so(cursor: Any, landing_root: Path) -> None:
    folder = landing_root / "refresh_guarded"
    land_named(folder, "a.json", [{"country": "es"}])
    _create(cursor, "guarded", folder, "TBLPROPERTIES ('pipelines.reset.allowed' = 'false')")
    status = error_status(cursor, "REFRESH STREAMING TABLE guarded FULL")
    assert "FULL_REFRESH_NOT_ALLOWED" in status.errorMessage and status.sqlState == "42000"
    cursor.execute("REFRESH STREAMING TABLE guarded")
    assert sorted_rows(cursor, "SELECT * FROM guarded") == [("es", 1)]


def test_refresh_needs_the_owner_and_a_streaming_table(cursor: Any, connect: Any, landing_root: Path) -> None:
    folder = landing_root / "refresh_owned"
    land_named(folder, "a.json", [{"country": "pt"}])
    _create(cursor, "owned", folder)
    cursor.execute("GRANT SELECT ON TABLE owned TO mallory")
    other = connect(username="mallory").cursor()
    assert error_status(other, f"REFRESH STREAMING TABLE {DB}.owned FULL").sqlState == "42501"
    assert error_status(other, f"REFRESH TABLE {DB}.owned").sqlState == "42501"
    cursor.execute("CREATE OR REPLACE TABLE plain (x INT) USING delta")
    cursor.execute("REFRESH TABLE plain")  # Spark's cache refresh: nothing to do on a Delta table here
    status = error_status(cursor, "REFRESH STREAMING TABLE plain")
    assert "EXPECT_STREAMING_TABLE" in status.errorMessage
    status = error_status(cursor, "REFRESH MATERIALIZED VIEW owned")
    assert "EXPECT_MATERIALIZED_VIEW" in status.errorMessage
    assert "TABLE_OR_VIEW_NOT_FOUND" in error_status(cursor, "REFRESH STREAMING TABLE nowhere").errorMessage


def test_describe_extended_of_a_streaming_table_has_what_dbt_databricks_reads(cursor: Any,
                                                                              landing_root: Path) -> None:
    folder = landing_root / "refresh_described"
    land_named(folder, "a.json", [{"country": "nl"}])
    _create(cursor, "described", folder)
    cursor.execute("REFRESH STREAMING TABLE described")
    cursor.execute("DESCRIBE TABLE EXTENDED described")
    details = {row[0]: row[1] for row in cursor.fetchall()}
    assert details["Type"] == "STREAMING_TABLE" and details["Refresh Schedule"] == "MANUAL"
    assert details["View Text"].startswith("SELECT country, count(*) AS n") and "GROUP BY country" in \
        details["View Text"]
    assert details["Statistics"].endswith(", 1 rows") and details["Provider"] == "delta"


def test_a_full_refresh_upstream_then_downstream(cursor: Any, landing_root: Path) -> None:
    """bronze -> silver: bronze's FULL refresh rewrites it, so silver's stream stops with an error that names the
    cure; silver's own FULL refresh starts from bronze as it is now (its snapshot, not its history)."""
    folder = landing_root / "refresh_chain"
    land_named(folder, "a.json", [{"country": "fr"}, {"country": "de"}])
    cursor.execute("DROP TABLE IF EXISTS chain_silver")
    cursor.execute("DROP TABLE IF EXISTS chain_bronze")
    cursor.execute(f"CREATE STREAMING TABLE chain_bronze AS SELECT * FROM STREAM read_files('{folder}', "
                   "format => 'json', schema => 'country STRING')")
    cursor.execute("CREATE STREAMING TABLE chain_silver AS SELECT upper(country) AS c FROM STREAM(chain_bronze)")
    cursor.execute("REFRESH STREAMING TABLE chain_bronze")
    cursor.execute("REFRESH STREAMING TABLE chain_silver")
    assert sorted_rows(cursor, "SELECT * FROM chain_silver") == [("DE",), ("FR",)]
    cursor.execute("REFRESH STREAMING TABLE chain_bronze FULL")
    status = error_status(cursor, "REFRESH STREAMING TABLE chain_silver")
    assert "STREAM_FAILED_AGAIN" in status.errorMessage and "REFRESH STREAMING TABLE ... FULL" in status.errorMessage
    assert "REFRESH started the stream of" in status.errorMessage and "failed again" in status.errorMessage
    cursor.execute("REFRESH STREAMING TABLE chain_silver FULL")
    assert sorted_rows(cursor, "SELECT * FROM chain_silver") == [("DE",), ("FR",)]
    land_named(folder, "b.json", [{"country": "it"}])
    cursor.execute("REFRESH STREAMING TABLE chain_bronze")
    cursor.execute("REFRESH STREAMING TABLE chain_silver")
    assert sorted_rows(cursor, "SELECT * FROM chain_silver") == [("DE",), ("FR",), ("IT",)]
