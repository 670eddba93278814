"""The catalog's version (catalog/versions.py): tables, schemas and grants read from memory while no write moved the
counter, and every write, in this process or another sharing the database, seen by the next read. Real SQLite files,
a real second process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import event

from sluicegate.catalog.errors import TableNotFoundError
from sluicegate.catalog.functions import FunctionEntry, FunctionStore
from sluicegate.catalog.grants import GrantStore, Securable
from sluicegate.catalog.store import CatalogStore, TableEntry
from sluicegate.catalog.versions import read_version


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[CatalogStore]:
    opened = CatalogStore.for_warehouse(tmp_path)
    yield opened
    opened.close()


def _table(database: str, name: str) -> TableEntry:
    return TableEntry(database, name, "TABLE", f"/w/{database}.db/{name}", None, None, owner="ann")


def _statements(store: CatalogStore) -> list[str]:
    """Every SQL statement the store's engine sends from now on (BEGIN IMMEDIATE included), recorded."""
    sent: list[str] = []
    event.listen(store._engine, "before_cursor_execute",
                 lambda _conn, _cursor, statement, *_rest: sent.append(statement))
    return sent


def _in_another_process(warehouse: Path, code: str) -> None:
    """`code` run by another Python process on its own CatalogStore of the same warehouse (`store`, `grants`)."""
    program = textwrap.dedent("""
        import sys
        from sluicegate.catalog.grants import GrantStore, Securable
        from sluicegate.catalog.store import CatalogStore, TableEntry
        store = CatalogStore.for_warehouse(sys.argv[1])
        grants = GrantStore(store)
    """) + textwrap.dedent(code) + "\nstore.close()\n"
    subprocess.run([sys.executable, "-c", program, str(warehouse)], check=True, timeout=120)


def test_reads_are_kept_while_nothing_is_written(store: CatalogStore) -> None:
    store.create_database("sales")
    store.create_table(_table("sales", "orders"))
    functions = FunctionStore(store)
    functions.create(FunctionEntry("sales", "twice", (("x", "INT"),), "INT", "x * 2"), replace=False)
    grants = GrantStore(store)
    first = (store.get_table("sales", "orders"), store.get_database("sales"), grants.held("bob", "sales", "orders"),
             store.list_databases(), store.list_tables("sales"), functions.list("sales"))
    sent = _statements(store)
    again = (store.get_table("SALES", "Orders"), store.get_database("sales"), grants.held("bob", "sales", "orders"),
             store.list_databases(), store.list_tables("Sales"), functions.list("SALES"))
    assert again == first
    assert [t.name for t in again[4]] == ["orders"] and [f.name for f in again[5]] == ["twice"]
    assert sent == []   # no transaction, so no BEGIN IMMEDIATE: only the counter's plain read, below SQLAlchemy


def test_every_write_raises_the_version_and_is_seen(store: CatalogStore) -> None:
    grants = GrantStore(store)
    version = read_version(store._engine)

    def moved() -> bool:
        nonlocal version
        now = read_version(store._engine)
        changed, version = now > version, now
        return changed

    def listed() -> list[str]:   # the listings (kept like the rows) as a schema browser reads them
        return [f"{d.name}.{t.name}" for d in store.list_databases() for t in store.list_tables(d.name)]

    assert "sales.orders" not in listed()
    store.create_database("sales")
    assert moved()
    store.create_table(_table("sales", "orders"))
    assert moved()
    assert "sales.orders" in listed()
    assert store.get_table("sales", "orders").comment is None
    store.update_table("sales", "orders", comment="money")
    assert moved()
    assert store.get_table("sales", "orders").comment == "money"
    assert grants.held("bob", "sales", "orders") == set()
    grants.grant(Securable.table("sales", "orders"), ("bob",), ("SELECT",), "ann")
    assert moved()
    assert grants.held("bob", "sales", "orders") == {"SELECT"}
    grants.revoke(Securable.table("sales", "orders"), ("bob",), ("SELECT",))   # a bulk DELETE
    assert moved()
    assert grants.held("bob", "sales", "orders") == set()
    store.rename_table("sales", "orders", "sales", "orders2")
    assert moved()
    assert store.get_table("sales", "orders") is None
    assert store.get_table("sales", "orders2") is not None
    assert "sales.orders2" in listed() and "sales.orders" not in listed()
    functions = FunctionStore(store)
    functions.create(FunctionEntry("sales", "twice", (("x", "INT"),), "INT", "x * 2"), replace=False)
    assert moved()
    assert [f.name for f in functions.list("sales")] == ["twice"]
    functions.drop("sales", "twice")
    assert moved()
    assert functions.list("sales") == []
    store.drop_database("sales", cascade=True)   # bulk deletes of its tables and grants
    assert moved()
    assert not [name for name in listed() if name.startswith("sales.")]
    assert store.get_table("sales", "orders2") is None
    assert store.get_database("sales") is None
    with pytest.raises(TableNotFoundError):   # a failed write rolls back and raises nothing
        store.drop_table("default", "nothing")
    assert not moved()


def test_a_write_by_another_gateway_process_is_seen_at_once(store: CatalogStore, tmp_path: Path) -> None:
    """Two gateways sharing one catalog database: what one changes, the other's next read sees, though it had the
    row in memory."""
    store.create_database("sales")
    store.create_table(_table("sales", "orders"))
    grants = GrantStore(store)
    assert store.get_table("sales", "orders").comment is None
    assert grants.held("bob", "sales", "orders") == set()
    assert [t.name for t in store.list_tables("sales")] == ["orders"]
    _in_another_process(tmp_path, """
        store.update_table("sales", "orders", comment="changed elsewhere")
        grants.grant(Securable.table("sales", "orders"), ("bob",), ("SELECT",), "ann")
        store.create_database("returns")
        store.create_table(TableEntry("sales", "refunds", "TABLE", "/w/sales.db/refunds", None, None, owner="ann"))
    """)
    assert [t.name for t in store.list_tables("sales")] == ["orders", "refunds"]
    assert "returns" in [d.name for d in store.list_databases()]
    assert store.get_table("sales", "orders").comment == "changed elsewhere"
    assert grants.held("bob", "sales", "orders") == {"SELECT"}
    _in_another_process(tmp_path, """
        grants.revoke(Securable.table("sales", "orders"), ("bob",), ("SELECT",))
        store.drop_table("sales", "orders")
    """)
    assert grants.held("bob", "sales", "orders") == set()
    assert store.get_table("sales", "orders") is None


def test_a_catalog_from_before_the_version_gets_one(tmp_path: Path) -> None:
    """A catalog at version 9 (no counter) is migrated: the counter exists and counts from its first write."""
    from sqlalchemy import create_engine, text

    from sluicegate.catalog.migrations import MIGRATIONS, migrate
    from sluicegate.catalog.models import Base

    engine = create_engine(f"sqlite:///{tmp_path / 'catalog.db'}")
    with engine.begin() as conn:
        earlier = [m for m in MIGRATIONS if m[0] <= 9]
        for version, description, step in earlier:
            if version == 1:
                Base.metadata.tables["schema_version"].create(conn)
                for name, table in Base.metadata.tables.items():
                    if name != "catalog_version":
                        table.create(conn, checkfirst=True)
                conn.execute(text("INSERT INTO databases (name, comment, created_at) "
                                  "VALUES ('default', 'default database', CURRENT_TIMESTAMP)"))
            else:
                step(conn)
            conn.execute(text("INSERT INTO schema_version VALUES (:v, :d, CURRENT_TIMESTAMP)"),
                         {"v": version, "d": description})
        assert not engine.dialect.has_table(conn, "catalog_version")
        assert migrate(conn) == [version for version, _, _ in MIGRATIONS if version >= 10]
    engine.dispose()
    opened = CatalogStore.for_warehouse(tmp_path)
    try:
        before = read_version(opened._engine)
        opened.create_database("later")
        assert read_version(opened._engine) == before + 1
    finally:
        opened.close()


def _back_to(tmp_path: Path, version: int, undo: str, table: str | None = None) -> None:
    """The catalog in `tmp_path` (made now, with the default database's `table` if given) as the gateway of
    `version` left it: `undo` takes back what the later migrations made, their versions forgotten."""
    from sqlalchemy import text

    store = CatalogStore.for_warehouse(tmp_path)
    if table is not None:
        store.create_table(TableEntry("default", table, "TABLE", str(tmp_path / "default.db" / table), None, None))
    with store._engine.begin() as conn:
        conn.execute(text(undo))
        conn.execute(text(f"DELETE FROM schema_version WHERE version > {version}"))
    store.close()


def test_a_catalog_from_before_shallow_clones_gets_their_column(tmp_path: Path) -> None:
    """A catalog at version 10 (tables without `clone_of`) is migrated: its tables stay, and a shallow clone's
    source is kept from then on."""
    _back_to(tmp_path, 10, "ALTER TABLE tables DROP COLUMN clone_of", "old")
    opened = CatalogStore.for_warehouse(tmp_path)
    try:
        assert opened.get_table("default", "old").clone_of is None
        opened.create_table(TableEntry("default", "c", "TABLE", str(tmp_path / "default.db" / "c"), None, None,
                                       clone_of="`default`.`old`"))
        assert opened.get_table("default", "c").clone_of == "`default`.`old`"
    finally:
        opened.close()


def test_a_catalog_from_before_functions_gets_their_table_and_keeps_them_across_a_restart(tmp_path: Path) -> None:
    """A catalog at version 11 (no `functions` table) is migrated; a function kept in it is there after a restart,
    its grants go with it when it is dropped, and reading it again after a write sees the write (the version)."""
    _back_to(tmp_path, 11, "DROP TABLE functions")
    opened = CatalogStore.for_warehouse(tmp_path)
    try:
        functions = FunctionStore(opened)
        assert functions.get("default", "f") is None  # kept in memory as missing: the write below must end that
        functions.create(FunctionEntry("default", "F", (("x", "INT"),), "INT", "x + 1", "one more", "alice"),
                         replace=False)
        GrantStore(opened).grant(Securable.function("default", "f"), ("bob",), ("EXECUTE",), "alice")
    finally:
        opened.close()
    again = CatalogStore.for_warehouse(tmp_path)
    try:
        functions = FunctionStore(again)
        found = functions.get("default", "f")
        assert (found.parameters, found.returns, found.body, found.owner) == ((("x", "INT"),), "INT", "x + 1",
                                                                             "alice")
        assert "EXECUTE" in GrantStore(again).held("bob", "default", "f", "FUNCTION")  # (CREATE: everyone's)
        functions.create(FunctionEntry("default", "f", (), "INT", "2", None, "bob"), replace=True)
        assert functions.get("default", "f").body == "2" and functions.get("default", "f").owner == "alice"
        functions.drop("default", "f")
        assert functions.get("default", "f") is None and functions.names("default") == frozenset()
        assert "EXECUTE" not in GrantStore(again).held("bob", "default", "f", "FUNCTION")
    finally:
        again.close()
