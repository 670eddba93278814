"""The information_schema views' rows, built from plain facts about the catalog (no JVM): Databricks' columns, the
table types dbt-databricks maps, and empty views for what does not exist here."""

from __future__ import annotations

import datetime as dt

from sluicegate.executor.listings.information_schema import VIEWS, ColumnFacts, SchemaFacts, TableFacts, rows

WHEN = dt.datetime(2026, 11, 25, 12, 0)
SCHEMAS = [SchemaFacts("analytics", "ann", "models", WHEN), SchemaFacts("information_schema")]
TABLES = [
    TableFacts("analytics", "t", "TABLE", owner="ann", created=WHEN, delta=True, partition_by=("day",),
               columns=(ColumnFacts("id", "bigint", False, "the id"), ColumnFacts("day", "date", True, None),
                        ColumnFacts("price", "decimal(10,2)", True, None))),
    TableFacts("analytics", "v", "VIEW", definition="SELECT id FROM t"),
    TableFacts("analytics", "st", "STREAMING_TABLE", delta=True),
    TableFacts("analytics", "mv", "MATERIALIZED_VIEW", delta=True, definition="SELECT count(*) FROM t"),
]


def _named(view: str, row: tuple) -> dict:
    names = [name for name, _ in VIEWS[view]]
    assert len(row) == len(names), view
    return dict(zip(names, row, strict=True))


def test_tables_report_databricks_table_types_and_formats() -> None:
    found = [_named("tables", row) for row in rows("tables", "main", SCHEMAS, TABLES)]
    assert [(t["table_catalog"], t["table_schema"], t["table_name"], t["table_type"], t["data_source_format"])
            for t in found] == [("main", "analytics", "t", "MANAGED", "DELTA"),
                                ("main", "analytics", "v", "VIEW", None),
                                ("main", "analytics", "st", "STREAMING_TABLE", "DELTA"),
                                ("main", "analytics", "mv", "MATERIALIZED_VIEW", "DELTA")]
    assert found[0]["table_owner"] == "ann" and found[0]["created"] == WHEN
    assert all(t["storage_path"] is None for t in found)  # a name is never a path, not even here


def test_columns_with_nullability_types_and_partitions() -> None:
    found = [_named("columns", row) for row in rows("columns", "main", SCHEMAS, TABLES)]
    assert [(c["column_name"], c["ordinal_position"], c["is_nullable"], c["full_data_type"], c["data_type"],
             c["partition_index"], c["comment"]) for c in found] == [
        ("id", 0, "NO", "bigint", "BIGINT", None, "the id"),
        ("day", 1, "YES", "date", "DATE", 0, None),
        ("price", 2, "YES", "decimal(10,2)", "DECIMAL", None, None)]
    assert (found[2]["numeric_precision"], found[2]["numeric_scale"]) == (10, 2)


def test_catalogs_schemata_and_views() -> None:
    assert [row[0] for row in rows("catalogs", "lake", SCHEMAS, TABLES)] == ["lake", "system"]
    schemata = [_named("schemata", row) for row in rows("schemata", "lake", SCHEMAS, TABLES)]
    assert [(s["catalog_name"], s["schema_name"], s["schema_owner"]) for s in schemata] == [
        ("lake", "analytics", "ann"), ("lake", "information_schema", None)]
    views = [_named("views", row) for row in rows("views", "main", SCHEMAS, TABLES)]
    assert [(v["table_name"], v["view_definition"], v["is_materialized"]) for v in views] == [
        ("v", "SELECT id FROM t", "FALSE"), ("mv", "SELECT count(*) FROM t", "TRUE")]


def test_what_does_not_exist_here_is_empty_with_databricks_columns() -> None:
    for view in ("row_filters", "column_masks", "table_constraints", "key_column_usage", "referential_constraints",
                 "table_tags", "column_tags"):
        assert rows(view, "main", SCHEMAS, TABLES) == []
    assert [name for name, _ in VIEWS["row_filters"]] == ["table_catalog", "table_schema", "table_name",
                                                          "filter_name", "target_columns"]
    assert [name for name, _ in VIEWS["column_masks"]][3:] == ["column_name", "mask_name", "using_columns"]
    assert {"constraint_name", "column_name", "ordinal_position"} <= {n for n, _ in VIEWS["key_column_usage"]}
    assert {"constraint_type", "table_name"} <= {n for n, _ in VIEWS["table_constraints"]}
