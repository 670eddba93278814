"""A table's columns and layout are its owner's: ALTER TABLE ... DROP COLUMNS, ... ALTER COLUMN c TYPE (and CHANGE
COLUMN c c <type>, Delta's type widening, which rewrites the table), ALTER {TABLE | MATERIALIZED VIEW |
STREAMING TABLE} ... CLUSTER BY and MERGE WITH SCHEMA EVOLUTION (which may add columns) need the table's ownership,
as ADD COLUMNS does here; MODIFY lets a user change rows, not the schema. A refused statement leaves the table as it
was: no Delta version, the same schema and properties in the catalog (nothing reached Spark or the files before the
refusal). The owner's statements work; a plain MERGE stays MODIFY's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyhive_helpers import sorted_rows
from security_helpers import refused, secret_schema, still_serves

from sluicegate.storage.delta.tables import open_table

# what only the table's owner may run, even with SELECT and MODIFY on it
OWNERS_ONLY = (
    "ALTER TABLE {schema}.t DROP COLUMN secret",
    "ALTER TABLE main.{schema}.t DROP COLUMNS IF EXISTS (secret, nothing)",
    "ALTER TABLE {schema}.t CLUSTER BY (id)",
    "ALTER TABLE {schema}.t ALTER COLUMN id TYPE BIGINT",
    "ALTER TABLE main.{schema}.t CHANGE COLUMN id id BIGINT",
    "ALTER TABLE {schema}.t CLUSTER BY NONE",
    "ALTER TABLE {schema}.t CLUSTER BY AUTO",
    "MERGE WITH SCHEMA EVOLUTION INTO {schema}.t AS t USING (SELECT 1 AS id, 'z' AS secret, 'x' AS added) AS s "
    "ON t.id = s.id WHEN MATCHED THEN UPDATE SET *",
)


def _state(streams: Any, schema: str) -> tuple[int, str | None, dict[str, str]]:
    """The table's Delta version, its catalog schema and its catalog properties."""
    entry = streams.store.get_table(schema, "t")
    return open_table(entry.location).version(), entry.schema_json, dict(entry.properties or {})


def test_schema_and_layout_changes_need_ownership(as_user: Callable[[str], Any], streams: Any) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "evolve")
    alice.execute(f"GRANT SELECT, MODIFY ON TABLE {schema}.t TO bob")
    before = _state(streams, schema)
    for template in OWNERS_ONLY:
        message = refused(bob, template.format(schema=schema), "INSUFFICIENT_PERMISSIONS")
        assert "owner" in message and "hint:" in message
    assert _state(streams, schema) == before
    still_serves(bob)

    # his MODIFY still merges rows, within the schema the owner chose
    bob.execute(f"MERGE INTO {schema}.t AS t USING (SELECT 1 AS id, 'z' AS secret) AS s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET *")
    assert sorted_rows(bob, f"SELECT * FROM {schema}.t") == [(1, "z"), (2, "b")]
    carol = as_user("carol")  # no grant at all: not even a plain MERGE
    refused(carol, f"MERGE INTO {schema}.t AS t USING (SELECT 1 AS id) AS s ON t.id = s.id WHEN MATCHED THEN DELETE",
            "INSUFFICIENT_PERMISSIONS")

    # the owner may do all of it
    alice.execute(f"MERGE WITH SCHEMA EVOLUTION INTO {schema}.t AS t USING (SELECT 2 AS id, 'y' AS secret, 'x' AS "
                  "added) AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *")
    alice.execute(f"ALTER TABLE {schema}.t CLUSTER BY (id)")
    alice.execute(f"ALTER TABLE {schema}.t SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    alice.execute(f"ALTER TABLE {schema}.t ALTER COLUMN id TYPE BIGINT")
    alice.execute(f"ALTER TABLE {schema}.t DROP COLUMN secret")
    assert sorted_rows(alice, f"SELECT * FROM {schema}.t") == [(1, None), (2, "x")]
    alice.execute(f"DROP SCHEMA {schema} CASCADE")


def test_the_clustering_of_a_materialized_view_or_streaming_table_is_its_owners(as_user: Callable[[str], Any],
                                                                                 streams: Any) -> None:
    """As the schedule of either (test_schedule_owner.py): SELECT and MODIFY on it are not enough; the refusal comes
    before anything changes (the same Delta version and catalog properties), and the owner's ALTER works."""
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "cluster_owner")
    alice.execute(f"CREATE MATERIALIZED VIEW {schema}.mv AS SELECT id, secret FROM {schema}.t")
    alice.execute(f"CREATE STREAMING TABLE {schema}.st (id BIGINT, secret STRING)")  # no query: no stream to wait for
    for name in ("mv", "st"):
        alice.execute(f"GRANT SELECT, MODIFY ON TABLE {schema}.{name} TO bob")

    def state(name: str) -> tuple[int, dict[str, str]]:
        entry = streams.store.get_table(schema, name)
        return open_table(entry.location).version(), dict(entry.properties or {})

    before = {name: state(name) for name in ("mv", "st")}
    for kind, name in (("MATERIALIZED VIEW", "mv"), ("STREAMING TABLE", "st")):
        for clause in ("(id)", "NONE", "AUTO"):
            message = refused(bob, f"ALTER {kind} {schema}.{name} CLUSTER BY {clause}", "INSUFFICIENT_PERMISSIONS")
            assert "owner" in message and "hint:" in message
    assert {name: state(name) for name in ("mv", "st")} == before
    still_serves(bob)

    alice.execute(f"ALTER MATERIALIZED VIEW {schema}.mv CLUSTER BY (id)")
    alice.execute(f"ALTER STREAMING TABLE {schema}.st CLUSTER BY (secret)")
    assert state("mv")[1]["clusteringColumns"] == '["id"]' and state("st")[1]["clusteringColumns"] == '["secret"]'
    alice.execute(f"DROP SCHEMA {schema} CASCADE")
