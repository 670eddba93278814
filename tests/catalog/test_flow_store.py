"""The catalog's flows (version 5): several streams per streaming table, named per database, going with their table.
No JVM."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from sluicegate.catalog.errors import FlowAlreadyExistsError, FlowNotFoundError
from sluicegate.catalog.migrations import LATEST, migrate
from sluicegate.catalog.store import CatalogStore, StreamEntry, TableEntry


def _flow(table: str, flow: str | None) -> StreamEntry:
    return StreamEntry("db", table, uuid.uuid4().hex, "{}", f"/cp/{flow}", "STARTING", "RUNNING", flow=flow)


@pytest.fixture()
def store(tmp_path: Path):
    store = CatalogStore.for_warehouse(tmp_path)
    store.create_database("db")
    for name in ("t", "u"):
        store.create_table(TableEntry("db", name, "STREAMING_TABLE", f"/w/{name}", None, None))
    yield store
    store.close()


def test_flows_are_streams_of_their_table_and_named_per_database(store: CatalogStore) -> None:
    assert LATEST >= 5
    own = store.put_stream(_flow("t", None))
    a = store.create_flow(_flow("t", "a"), "first", "alice")
    store.create_flow(_flow("t", "b"), None, "alice")
    assert a.key == ("db", "t", "a") and own.key == ("db", "t")
    with pytest.raises(FlowAlreadyExistsError):
        store.create_flow(_flow("u", "a"), None, "bob")          # one namespace of flows per database
    assert store.find_flow("db", "a").stream_id == a.stream_id
    assert [f.stream.flow for f in store.list_flows("db", "t")] == ["a", "b"]
    assert store.list_flows("db")[0].comment == "first" and store.list_flows("db")[0].owner == "alice"
    assert store.get_stream("db", "t").stream_id == own.stream_id   # the table's own stream is apart
    store.update_stream("db", "t", "a", status="RUNNING", last_batch_id=3)
    assert (store.get_stream("db", "t", "a").status, store.get_stream("db", "t", "a").last_batch_id) == ("RUNNING", 3)
    assert store.get_stream("db", "t").status == "STARTING"
    assert {e.key for e in store.list_streams(desired_state="RUNNING")} == {("db", "t"), ("db", "t", "a"),
                                                                             ("db", "t", "b")}
    store.record_event("db", "t", "STARTED", "go", flow="a")
    assert store.event_log("db", "t")[-1].origin.count('"flow_name": "db.a"') == 1
    with pytest.raises(FlowNotFoundError):
        store.put_stream(_flow("t", "never"))
    store.drop_flow("db", "a")
    assert store.find_flow("db", "a") is None and store.get_stream("db", "t", "b") is not None
    store.drop_table("db", "t")                                    # its flows go with it
    assert store.list_flows("db") == [] and store.list_streams() == []


def test_version_5_adds_the_flows_table_to_an_older_catalog(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as conn:
        migrate(conn)
        conn.execute(text("DROP TABLE flows"))
        conn.execute(text("DELETE FROM schema_version WHERE version >= 5"))   # a catalog of version 4
    with engine.begin() as conn:
        assert migrate(conn) == list(range(5, LATEST + 1))
        assert conn.execute(text("SELECT count(*) FROM flows")).scalar() == 0
