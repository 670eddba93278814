"""CREATE TABLE ... CLONE copies a table's rows into a table its creator owns: it needs SELECT on the source and
CREATE in the target schema (OR REPLACE: the target's ownership), as Databricks. A refused clone leaves no folder,
no catalog row and the source as it was. A clone never reaches outside the warehouse: a source whose log names a
file outside its folder (by `..` or through a symbolic link) is refused before any file is linked or copied."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyhive_helpers import sorted_rows
from security_helpers import refused, secret_schema, still_serves, untouched

from sluicegate.storage.delta.log_commits import add_action, put_commit
from sluicegate.storage.delta.tables import open_table


def test_a_clone_needs_select_on_the_source_and_create_on_the_target(as_user: Callable[[str], Any], streams: Any,
                                                                       warehouse: Path) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "clonesrc")
    mine = f"clonedst_{schema.rsplit('_', 1)[1]}"
    bob.execute(f"CREATE SCHEMA {mine}")
    source = streams.store.get_table(schema, "t").location
    version = open_table(source).version()

    for sql in (f"CREATE TABLE {mine}.c SHALLOW CLONE {schema}.t",
                f"CREATE OR REPLACE TABLE {mine}.c DEEP CLONE main.{schema}.t VERSION AS OF 1"):
        assert "SELECT" in refused(bob, sql, "INSUFFICIENT_PERMISSIONS")
    assert streams.store.get_table(mine, "c") is None and not (warehouse / f"{mine}.db" / "c").exists()

    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")
    refused(bob, f"CREATE TABLE {schema}.c SHALLOW CLONE {schema}.t", "INSUFFICIENT_PERMISSIONS")  # alice's schema
    refused(bob, f"CREATE OR REPLACE TABLE {schema}.t SHALLOW CLONE {schema}.t", "INSUFFICIENT_PERMISSIONS")
    assert streams.store.get_table(schema, "c") is None and open_table(source).version() == version
    still_serves(bob)

    bob.execute(f"CREATE TABLE {mine}.c SHALLOW CLONE {schema}.t")  # now bob's own copy
    assert streams.store.get_table(mine, "c").owner == "bob"
    assert sorted_rows(bob, f"SELECT * FROM {mine}.c") == [(1, "a"), (2, "b")]
    alice.execute(f"REVOKE SELECT ON TABLE {schema}.t FROM bob")
    refused(bob, f"SELECT * FROM {schema}.t", "INSUFFICIENT_PERMISSIONS")
    assert open_table(source).version() == version  # the source was only read
    bob.execute(f"DROP SCHEMA {mine} CASCADE")
    alice.execute(f"DROP SCHEMA {schema} CASCADE")


def _commit_file_named(location: str, path: str) -> None:
    """Commit an add action naming `path` (relative to the table) into the table's log, as a tampered log would."""
    version = open_table(location).version() + 1
    assert put_commit(location, version, [add_action(path, 8, {}, int(time.time() * 1000), None)])


def test_a_clone_cannot_reach_outside_the_warehouse(as_user: Callable[[str], Any], streams: Any, warehouse: Path,
                                                     victim: Path) -> None:
    alice = as_user("alice")
    for attack in ("dotdot", "link"):
        schema = secret_schema(alice, f"clone{attack}")
        location = streams.store.get_table(schema, "t").location
        if attack == "dotdot":
            _commit_file_named(location, os.path.relpath(victim / "important.txt", location))
        else:
            os.symlink(victim / "important.txt", os.path.join(location, "evil.parquet"))
            _commit_file_named(location, "evil.parquet")

        refused(alice, f"CREATE TABLE {schema}.c SHALLOW CLONE {schema}.t", "LOCATION_OUTSIDE_WAREHOUSE",
                sqlstate=_outside_sqlstate())

        untouched(victim)
        assert os.stat(victim / "important.txt").st_nlink == 1  # never linked from anywhere
        assert streams.store.get_table(schema, "c") is None and not (warehouse / f"{schema}.db" / "c").exists()
        alice.execute(f"DROP SCHEMA {schema} CASCADE")
    untouched(victim)
    still_serves(alice)


def _outside_sqlstate() -> str:
    from sluicegate.catalog.errors import PathOutsideWarehouseError

    return PathOutsideWarehouseError.sqlstate
