"""Constraints (CHECK, keys, a column's NOT NULL) are the table owner's, and a CHECK expression is user SQL that runs
on every later write, by anyone: ALTER TABLE ADD / DROP CONSTRAINT and SET NOT NULL need the table's ownership (MODIFY
is not enough: a constraint changes what others may write); a hostile expression (reflection into the JVM, a query
reading another table or files) is refused by the dialect before anything reaches Spark; and a constraint text
changed behind the gateway's back (the catalog edited by hand) is judged again before a write evaluates it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pyhive_helpers import sorted_rows
from security_helpers import refused, secret_schema, still_serves

from sluicegate.storage.delta.tables import open_table


def _state(streams: Any, schema: str) -> tuple[int, dict[str, str], dict[str, str]]:
    """The table's Delta version, its Delta configuration and its catalog properties."""
    entry = streams.store.get_table(schema, "t")
    table = open_table(entry.location)
    return table.version(), dict(table.metadata().configuration), dict(entry.properties or {})


def test_adding_or_dropping_a_constraint_needs_ownership(as_user: Callable[[str], Any], streams: Any) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "chk")
    alice.execute(f"ALTER TABLE {schema}.t ADD CONSTRAINT known CHECK (id > 0)")
    alice.execute(f"GRANT SELECT, MODIFY ON TABLE {schema}.t TO bob")  # may change rows, not the table's rules
    before = _state(streams, schema)
    for sql in (f"ALTER TABLE {schema}.t ADD CONSTRAINT mine CHECK (id < 100)",
                f"ALTER TABLE {schema}.t ADD CONSTRAINT pk PRIMARY KEY (id)",
                f"ALTER TABLE {schema}.t DROP CONSTRAINT known",
                f"ALTER TABLE {schema}.t DROP CONSTRAINT IF EXISTS nothing",
                f"ALTER TABLE {schema}.t DROP PRIMARY KEY IF EXISTS",
                f"ALTER TABLE {schema}.t DROP FOREIGN KEY IF EXISTS (id)",
                f"ALTER TABLE {schema}.t ALTER COLUMN id SET NOT NULL",
                f"alter table {schema}.t change column secret set not null"):
        message = refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
        assert "owner" in message and "hint:" in message
    assert _state(streams, schema) == before
    refused(bob, f"INSERT INTO {schema}.t VALUES (-1, 'x')", "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", "23001")
    bob.execute(f"INSERT INTO {schema}.t VALUES (3, 'c')")  # his grant still writes what the constraint allows
    still_serves(bob)
    alice.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.mark.parametrize("expression", [
    "java_method('java.lang.System', 'getProperty', 'user.home') IS NOT NULL",
    "reflect('java.lang.Thread', 'sleep', 0) IS NULL",
    "try_reflect('java.lang.Thread', 'sleep', 0) IS NULL",
    "id IN (SELECT id FROM {other}.t)",
    "(SELECT count(*) FROM read_files('/etc/hostname', format => 'text')) > 0",
    "secret = (SELECT max(secret) FROM {other}.t)",
])
def test_a_hostile_check_never_reaches_spark(as_user: Callable[[str], Any], streams: Any, expression: str) -> None:
    alice, carol = as_user("alice"), as_user("carol")
    schema, other = secret_schema(alice, "chk_own"), secret_schema(carol, "chk_other")
    before = _state(streams, schema)
    text = expression.format(other=other)
    for sql in (f"ALTER TABLE {schema}.t ADD CONSTRAINT evil CHECK ({text})",
                f"CREATE TABLE {schema}.evil (id INT, secret STRING, CONSTRAINT evil CHECK ({text}))"):
        message = refused(alice, sql, "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT", "42621")
        assert "cannot be used in a CHECK constraint" in message
    assert _state(streams, schema) == before
    assert streams.store.get_table(schema, "evil") is None
    alice.execute(f"INSERT INTO {schema}.t VALUES (3, 'c')")
    still_serves(alice)
    alice.execute(f"DROP SCHEMA {schema} CASCADE")
    carol.execute(f"DROP SCHEMA {other} CASCADE")


def test_constraints_are_not_properties_to_set(as_user: Callable[[str], Any], streams: Any) -> None:
    """A property write would skip both the check of the rows and the judgement of the expression."""
    alice = as_user("alice")
    schema = secret_schema(alice, "chk_prop")
    before = _state(streams, schema)
    for sql in (f"ALTER TABLE {schema}.t SET TBLPROPERTIES ('delta.constraints.evil' = 'reflect(\"a\", \"b\") "
                "IS NULL')",
                f"ALTER TABLE {schema}.t UNSET TBLPROPERTIES ('delta.constraints.evil')"):
        refused(alice, sql, "DELTA_ADD_CONSTRAINTS", "0A000")
    assert _state(streams, schema) == before
    # a CREATE's TBLPROPERTIES declare constraints, judged as any
    refused(alice, f"CREATE TABLE {schema}.u (id INT) TBLPROPERTIES ('delta.constraints.evil' = "
                   "'reflect(\"java.lang.Thread\", \"sleep\", 0) IS NULL')",
            "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT", "42621")
    assert streams.store.get_table(schema, "u") is None
    alice.execute(f"DROP SCHEMA {schema} CASCADE")


def test_a_tampered_constraint_is_judged_again_before_a_write(as_user: Callable[[str], Any], streams: Any,
                                                               spark: Any) -> None:
    """The catalog row edited by hand to hold reflection: the next write refuses it before Spark parses it, and
    commits nothing."""
    alice = as_user("alice")
    schema = secret_schema(alice, "chk_tamper")
    entry = streams.store.get_table(schema, "t")
    streams.store.update_table(schema, "t", properties={
        **(entry.properties or {}),
        "delta.constraints.evil": "java_method('java.lang.System', 'setProperty', 'sluicegate.pwned', 'yes') IS NULL"})
    version = _state(streams, schema)[0]
    refused(alice, f"INSERT INTO {schema}.t VALUES (3, 'c')", "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT", "42621")
    refused(alice, f"UPDATE {schema}.t SET secret = 'z'", "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT", "42621")
    assert _state(streams, schema)[0] == version
    assert spark._jvm.java.lang.System.getProperty("sluicegate.pwned") is None  # the gateway's JVM: never called
    assert sorted_rows(alice, f"SELECT * FROM {schema}.t") == [(1, "a"), (2, "b")]
    alice.execute(f"DROP SCHEMA {schema} CASCADE")


def test_cascade_drops_foreign_keys_only_on_tables_the_caller_owns(as_user: Callable[[str], Any],
                                                                    streams: Any) -> None:
    """DROP CONSTRAINT pk CASCADE (or DROP PRIMARY KEY CASCADE) drops the foreign keys that reference the key;
    Databricks documents that the caller must own the tables those keys are on: alice may not drop bob's foreign key
    by dropping her own primary key, nor by DROP FOREIGN KEY on his table. She is refused before anything changes
    (her key and his stay), and without CASCADE the key is kept by RESTRICT, the default; once bob drops his foreign
    key (by its columns), hers goes without CASCADE."""
    alice, bob = as_user("alice"), as_user("bob")
    mine, his = secret_schema(alice, "pk_own"), secret_schema(bob, "fk_other")
    alice.execute(f"ALTER TABLE {mine}.t ADD CONSTRAINT t_pk PRIMARY KEY (id)")
    bob.execute(f"ALTER TABLE {his}.t ADD CONSTRAINT his_fk FOREIGN KEY (id) REFERENCES {mine}.t (id)")

    def keys() -> tuple[list[str], list[str]]:
        return ([k.name for k in streams.store.get_table(mine, "t").keys],
                [k.name for k in streams.store.get_table(his, "t").keys])

    for sql in (f"ALTER TABLE {mine}.t DROP CONSTRAINT t_pk CASCADE", f"ALTER TABLE {mine}.t DROP PRIMARY KEY CASCADE"):
        message = refused(alice, sql, "INSUFFICIENT_PERMISSIONS")
        assert f"`{his}`.`t`" in message and "hint:" in message
    refused(alice, f"ALTER TABLE {his}.t DROP FOREIGN KEY (id)", "INSUFFICIENT_PERMISSIONS")  # bob's key
    assert keys() == (["t_pk"], ["his_fk"])
    refused(alice, f"ALTER TABLE {mine}.t DROP CONSTRAINT t_pk", "CONSTRAINT_DEPENDENT_FOREIGN_KEYS", "2BP01")
    refused(alice, f"ALTER TABLE {mine}.t DROP CONSTRAINT t_pk RESTRICT", "CONSTRAINT_DEPENDENT_FOREIGN_KEYS",
            "2BP01")
    refused(alice, f"ALTER TABLE {mine}.t DROP PRIMARY KEY", "CONSTRAINT_DEPENDENT_FOREIGN_KEYS", "2BP01")
    assert keys() == (["t_pk"], ["his_fk"])
    bob.execute(f"ALTER TABLE {his}.t DROP FOREIGN KEY (id)")
    alice.execute(f"ALTER TABLE {mine}.t DROP PRIMARY KEY")
    assert keys() == ([], [])
    still_serves(alice)
    alice.execute(f"DROP SCHEMA {mine} CASCADE")
    bob.execute(f"DROP SCHEMA {his} CASCADE")
