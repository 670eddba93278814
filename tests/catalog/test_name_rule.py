"""The name rule, the containment check and identifier quoting, without a JVM (catalog/names.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sluicegate.catalog.errors import InvalidNameError, PathOutsideWarehouseError
from sluicegate.catalog.names import check_name, owned_table_folder, quote_identifier, quote_string, table_folder
from sluicegate.catalog.store import CatalogStore, TableEntry

REFUSED = [
    ("", "it is empty"),
    (".", "`.`"),
    ("..", "`.`"),
    (".hidden", "`.`"),
    ("a/b", "`/`"),
    ("a\\b", "`\\`"),
    ("a`b", "a backtick"),
    ("a\x00b", "U+0000"),
    ("a\nb", "U+000A"),
    ("my table", "a space"),
    ("été", "`é`"),
    ("x" * 129, "129 characters"),
]


@pytest.mark.parametrize(("name", "why"), REFUSED, ids=[repr(n)[:20] for n, _ in REFUSED])
def test_refused_names_say_why(name, why):
    with pytest.raises(InvalidNameError) as raised:
        check_name(name)
    assert why in raised.value.message
    assert (raised.value.error_class, raised.value.sqlstate) == ("INVALID_SCHEMA_OR_RELATION_NAME", "42602")
    assert "ASCII letters, digits and `_`" in raised.value.hint


def test_allowed_names_are_lower_cased():
    assert check_name("Orders_2026") == "orders_2026"
    assert check_name("_x") == "_x"
    assert check_name("x" * 128) == "x" * 128
    assert check_name("catalog") == "catalog"  # only a database of that name would be the catalog file
    with pytest.raises(InvalidNameError, match="reserved"):
        check_name("Catalog", "database")


def test_folders_stay_inside_the_warehouse_even_through_a_link(tmp_path: Path):
    warehouse = tmp_path / "wh"
    warehouse.mkdir()
    assert table_folder(warehouse, "Sales", "Orders") == (warehouse / "sales.db" / "orders").resolve()
    (warehouse / "linked.db").symlink_to(tmp_path)
    with pytest.raises(PathOutsideWarehouseError):
        table_folder(warehouse, "linked", "t")


@pytest.mark.parametrize("location", ["{w}", "{w}/db.db", "{w}/db.db/..", "{w}/../elsewhere/t", "{w}/other/t",
                                      "{w}/db.db/t/..", "", "/"])
def test_only_table_folders_are_owned(tmp_path: Path, location: str):
    with pytest.raises(PathOutsideWarehouseError):
        owned_table_folder(tmp_path, location.format(w=tmp_path))
    assert owned_table_folder(tmp_path, f"{tmp_path}/db.db/t") == (tmp_path / "db.db" / "t").resolve()


def test_quoting():
    assert quote_identifier("a`b") == "`a``b`"
    assert quote_identifier("my col") == "`my col`"
    assert quote_string("it's \\ here") == "'it\\'s \\\\ here'"


def test_the_store_refuses_a_bad_name_whatever_the_caller(tmp_path: Path):
    store = CatalogStore.for_warehouse(tmp_path)
    try:
        with pytest.raises(InvalidNameError):
            store.create_database("../../escape")
        with pytest.raises(InvalidNameError):
            store.create_database("catalog")
        with pytest.raises(InvalidNameError):
            store.create_table(TableEntry("default", "..", "TABLE", None, None, None))
        store.create_table(TableEntry("default", "ok", "VIEW", None, None, "SELECT 1"))
        with pytest.raises(InvalidNameError):
            store.rename_table("default", "ok", "default", "a/b")
        assert {d.name for d in store.list_databases()} == {"default"}
        assert [t.name for t in store.list_tables("default")] == ["ok"]
    finally:
        store.close()
