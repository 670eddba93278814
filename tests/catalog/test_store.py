"""The catalog store on a real SQLite file: every method, its errors, reopening, and two processes racing."""

from __future__ import annotations

import dataclasses
import datetime
import multiprocessing
from pathlib import Path

import pytest

from sluicegate.catalog.errors import (
    CatalogVersionError,
    SchemaAlreadyExistsError,
    SchemaNotEmptyError,
    SchemaNotFoundError,
    TableAlreadyExistsError,
    TableNotFoundError,
)
from sluicegate.catalog.functions import FunctionEntry, FunctionStore
from sluicegate.catalog.migrations import MIGRATIONS
from sluicegate.catalog.models import SchemaVersion
from sluicegate.catalog.store import CatalogStore, StreamEntry, TableEntry
from sluicegate.dialect.constraints import KeyConstraint


@pytest.fixture()
def store(tmp_path: Path) -> CatalogStore:
    return CatalogStore.for_warehouse(tmp_path)


def table(database: str, name: str, kind: str = "TABLE") -> TableEntry:
    return TableEntry(database, name, kind, f"/w/{database}.db/{name}", '{"type":"struct","fields":[]}', None,
                      {"k": "v"}, ("p",), "a comment", "ann")


def test_default_database_exists_and_databases_are_case_insensitive(store):
    assert [d.name for d in store.list_databases()] == ["default"]
    store.create_database("Sales", comment="money")
    assert store.get_database("SALES").comment == "money"
    with pytest.raises(SchemaAlreadyExistsError) as caught:
        store.create_database("sales")
    assert caught.value.sqlstate == "42P06"
    assert store.create_database("sales", if_not_exists=True).comment == "money"
    assert [d.name for d in store.list_databases("s*|nothing")] == ["sales"]


def test_tables_round_trip_with_patterns_and_kinds(store):
    store.create_table(table("default", "Orders"))
    store.create_table(table("default", "order_view", "VIEW"))
    store.create_table(table("default", "clicks", "STREAMING_TABLE"))
    got = store.require_table("DEFAULT", "ORDERS")
    assert (got.name, got.properties, got.partition_by, got.owner) == ("orders", {"k": "v"}, ("p",), "ann")
    assert got.created_at is not None and got.updated_at is not None
    assert [t.name for t in store.list_tables("default", "ord*")] == ["order_view", "orders"]
    assert [t.name for t in store.list_tables(kinds=["STREAMING_TABLE"])] == ["clicks"]
    assert [t.name for t in store.list_tables("default", "clicks|orders")] == ["clicks", "orders"]


def test_table_errors_carry_their_sqlstates(store):
    store.create_table(table("default", "t"))
    with pytest.raises(TableAlreadyExistsError) as exists:
        store.create_table(table("default", "T"))
    assert exists.value.sqlstate == "42P07" and exists.value.hint
    assert store.create_table(table("default", "t"), if_not_exists=True).name == "t"
    with pytest.raises(TableNotFoundError) as missing:
        store.require_table("default", "nope")
    assert missing.value.sqlstate == "42P01"
    assert store.get_table("default", "nope") is None
    with pytest.raises(SchemaNotFoundError) as no_schema:
        store.create_table(table("nowhere", "t"))
    assert no_schema.value.sqlstate == "42704"
    with pytest.raises(SchemaNotFoundError):
        store.list_tables("nowhere")


def test_replace_update_rename_and_drop(store):
    store.create_table(table("default", "t"))
    replaced = store.create_table(TableEntry("default", "t", "VIEW", None, None, "SELECT 1"), replace=True)
    assert (replaced.kind, replaced.definition) == ("VIEW", "SELECT 1")
    updated = store.update_table("default", "t", comment="new", properties={"a": "b"})
    assert (updated.comment, updated.properties) == ("new", {"a": "b"})
    store.create_database("other")
    moved = store.rename_table("default", "t", "other", "T2")
    assert (moved.database, moved.name) == ("other", "t2")
    assert store.get_table("default", "t") is None
    store.create_table(table("default", "t2"))
    with pytest.raises(TableAlreadyExistsError):
        store.rename_table("default", "t2", "other", "t2")
    assert store.drop_table("other", "t2").kind == "VIEW"
    with pytest.raises(TableNotFoundError):
        store.drop_table("other", "t2")


def test_drop_database_needs_cascade_when_not_empty(store):
    store.create_database("db")
    store.create_table(table("db", "a"))
    with pytest.raises(SchemaNotEmptyError) as not_empty:
        store.drop_database("db")
    assert not_empty.value.sqlstate == "2BP01"
    assert [t.name for t in store.drop_database("db", cascade=True)] == ["a"]
    assert store.get_database("db") is None
    assert store.drop_database("db", if_exists=True) == []


def test_a_schema_holding_only_functions_is_not_empty(store):
    """As on Databricks, a function is an object of its schema: DROP SCHEMA without CASCADE refuses it, CASCADE
    takes the function with the schema."""
    functions = FunctionStore(store)
    store.create_database("fdb")
    functions.create(FunctionEntry("fdb", "twice", (("x", "INT"),), "INT", "x * 2", None, "alice"), replace=False)
    with pytest.raises(SchemaNotEmptyError) as not_empty:
        store.drop_database("fdb")
    assert "1 function(s)" in str(not_empty.value) and "table" not in str(not_empty.value).split(":")[-1]
    assert functions.get("fdb", "twice") is not None
    assert store.drop_database("fdb", cascade=True) == []
    assert store.get_database("fdb") is None and functions.get("fdb", "twice") is None


def test_streams_upsert_update_events_and_go_with_their_table(store):
    store.create_table(table("default", "clicks", "STREAMING_TABLE"))
    entry = StreamEntry("default", "clicks", "abc123", '{"plan": 1}', "/w/_checkpoints/abc123", "STARTING", "RUNNING")
    store.put_stream(entry)
    running = store.update_stream("default", "CLICKS", status="RUNNING", query_id="q1", last_batch_id=4,
                                  rows_per_second=12.5)
    assert (running.status, running.query_id, running.last_batch_id, running.rows_per_second) == (
        "RUNNING", "q1", 4, 12.5)
    store.record_event("default", "clicks", "STARTED", "first")
    store.record_event("default", "clicks", "BATCH", "second")
    assert [kind for _, kind, _ in store.events("default", "clicks")] == ["BATCH", "STARTED"]
    assert [s.name for s in store.list_streams(desired_state="RUNNING")] == ["clicks"]
    assert store.list_streams(desired_state="STOPPED") == []
    store.drop_table("default", "clicks")
    assert store.list_streams() == []
    assert store.get_stream("default", "clicks") is None


def test_a_tables_informational_keys_round_trip(tmp_path):
    """Version 9: the keys information_schema lists, kept across a reopening and changed by update_table."""
    pk = KeyConstraint("t_pk", "PRIMARY KEY (id)", "PRIMARY KEY", ("id",))
    fk = KeyConstraint("t_fk_1", "FOREIGN KEY (u) REFERENCES s.u (id)", "FOREIGN KEY", ("u",), ("s", "u"), ("id",))
    first = CatalogStore.for_warehouse(tmp_path)
    first.create_table(dataclasses.replace(table("default", "t"), keys=(pk, fk)))
    assert first.require_table("default", "t").keys == (pk, fk)
    first.close()
    second = CatalogStore.for_warehouse(tmp_path)
    assert second.require_table("default", "t").keys == (pk, fk)
    assert second.update_table("default", "t", keys=(fk,)).keys == (fk,)
    assert second.create_table(table("default", "plain")).keys == ()


def test_reopening_keeps_everything_and_migrates_once(tmp_path):
    first = CatalogStore.for_warehouse(tmp_path)
    first.create_table(table("default", "kept"))
    first.close()
    second = CatalogStore.for_warehouse(tmp_path)
    assert second.require_table("default", "kept").location == "/w/default.db/kept"
    with second._engine.connect() as conn:
        versions = [row.version for row in conn.execute(SchemaVersion.__table__.select()).fetchall()]
    assert versions == [version for version, _, _ in MIGRATIONS]  # each migration once, not again at the second opening


def test_a_first_release_catalog_gets_owners_and_grants(tmp_path):
    """A catalog written before owners and grants: v2 adds the databases' owner column and the grants table, and
    lets everybody create in `default`, as before."""
    import sqlite3

    from sluicegate.catalog.grants import GrantStore

    path = tmp_path / "catalog.db"
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description VARCHAR(200), applied_at DATETIME);"
            "INSERT INTO schema_version VALUES (1, 'v1', '2026-11-01 00:00:00');"
            "CREATE TABLE databases (name VARCHAR(128) PRIMARY KEY, comment TEXT, created_at DATETIME);"
            "INSERT INTO databases VALUES ('default', 'default database', '2026-11-01 00:00:00');"
            "INSERT INTO databases VALUES ('old', NULL, '2026-11-01 00:00:00');")
    store = CatalogStore(f"sqlite:///{path}")
    assert store.get_database("old").owner is None
    assert GrantStore(store).held("anyone", "default", None) == {"CREATE"}
    assert GrantStore(store).held("anyone", "old", None) == set()


def test_a_v2_catalog_gets_schedules_and_keeps_its_rows(tmp_path):
    """A catalog from before schedules: v3 adds the columns, and the rows already there read back unchanged."""
    first = CatalogStore.for_warehouse(tmp_path)
    first.create_table(table("default", "st", "STREAMING_TABLE"))
    first.put_stream(StreamEntry("default", "st", "s1", "{}", "/c/s1", "RUNNING", "RUNNING"))
    with first._engine.begin() as conn:
        for table_name, column in (("tables", "schedule"), ("streams", "next_run_at"),
                                   ("streams", "last_refresh_at"), ("streams", "last_refresh_status")):
            conn.exec_driver_sql(f"ALTER TABLE {table_name} DROP COLUMN {column}")
        conn.exec_driver_sql("DELETE FROM schema_version WHERE version >= 3")  # v4 (idempotent) runs again too
    first.close()
    store = CatalogStore.for_warehouse(tmp_path)
    assert store.get_stream("default", "st").last_refresh_status is None
    store.update_table("default", "st", schedule='{"kind": "every"}')
    store.update_stream("default", "st", last_refresh_status="COMPLETED")
    assert store.require_table("default", "st").schedule == '{"kind": "every"}'
    assert store.get_stream("default", "st").last_refresh_status == "COMPLETED"


def test_a_catalog_newer_than_the_code_is_refused(tmp_path):
    store = CatalogStore.for_warehouse(tmp_path)
    with store._engine.begin() as conn:
        conn.execute(SchemaVersion.__table__.insert().values(version=99, description="future",
                                                             applied_at=datetime.datetime(2030, 1, 1)))
    store.close()
    with pytest.raises(CatalogVersionError) as refused:
        CatalogStore.for_warehouse(tmp_path)
    assert refused.value.sqlstate == "55000" and "99" in refused.value.message


def _race(warehouse: str, names: list[str], results: multiprocessing.Queue[tuple[str, str]]) -> None:
    store = CatalogStore.for_warehouse(warehouse)
    for name in names:
        try:
            store.create_table(table("default", name))
            results.put((name, "created"))
        except TableAlreadyExistsError:
            results.put((name, "exists"))
        except Exception as exc:  # noqa: BLE001 - reported to the test, which fails on it
            results.put((name, f"{type(exc).__name__}: {exc}"))


def test_two_processes_racing_create_each_name_exactly_once(tmp_path):
    CatalogStore.for_warehouse(tmp_path).close()
    names = [f"t{i}" for i in range(50)]
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [context.Process(target=_race, args=(str(tmp_path), names, results)) for _ in range(2)]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=120) for _ in range(2 * len(names))]
    for worker in workers:
        worker.join(timeout=60)
    assert all(w.exitcode == 0 for w in workers)
    for name in names:
        kinds = sorted(outcome for n, outcome in outcomes if n == name)
        assert kinds == ["created", "exists"], (name, kinds)
    assert [t.name for t in CatalogStore.for_warehouse(tmp_path).list_tables("default")] == sorted(names)
