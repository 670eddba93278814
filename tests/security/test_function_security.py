"""SQL functions are their owner's SQL run with the caller's rights. CREATE FUNCTION needs CREATE in the schema (OR
REPLACE: the function's owner) and a body its creator may read: a body reading a table the creator may not read, a
temporary view, or anything the policy refuses (reflection) is refused before anything is kept. A call needs EXECUTE
on the function (its owner has it; GRANT EXECUTE ON FUNCTION gives it) and reads the body's tables with the caller's
own rights: EXECUTE on a function never reads through it what the caller's grants deny. DROP is the owner's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyhive_helpers import sorted_rows
from security_helpers import refused, secret_schema, still_serves

from sluicegate.catalog.functions import FunctionStore


def test_a_function_body_is_checked_with_its_creators_rights(as_user: Callable[[str], Any], streams: Any) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "fnsrc")
    mine = f"fnbob_{schema.rsplit('_', 1)[1]}"
    bob.execute(f"CREATE SCHEMA {mine}")
    functions = FunctionStore(streams.store)

    peek = f"RETURNS STRING RETURN (SELECT max(secret) FROM {schema}.t WHERE id = x)"
    assert "SELECT" in refused(bob, f"CREATE FUNCTION {mine}.peek (x INT) {peek}", "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"CREATE FUNCTION {schema}.f (x INT) RETURNS INT RETURN x", "INSUFFICIENT_PERMISSIONS")  # not his
    refused(bob, f"CREATE FUNCTION {mine}.j (x STRING) RETURNS STRING RETURN reflect('java.lang.System', 'getenv', x)",
            "STATEMENT_NOT_ALLOWED")
    bob.execute("CREATE OR REPLACE TEMPORARY VIEW tv AS SELECT 1 AS id")
    refused(bob, f"CREATE FUNCTION {mine}.tmp (x INT) RETURNS BIGINT RETURN (SELECT count(*) FROM tv WHERE id = x)",
            "INVALID_TEMP_OBJ_REFERENCE", sqlstate="42K0F")
    assert functions.list(mine) == [] and functions.get(schema, "f") is None

    alice.execute(f"CREATE FUNCTION {schema}.twice (x INT) RETURNS INT RETURN x * 2")
    assert "EXECUTE" in refused(bob, f"SELECT {schema}.twice(21)", "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"CREATE OR REPLACE FUNCTION {schema}.twice (x INT) RETURNS INT RETURN x", "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"DROP FUNCTION {schema}.twice", "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"DESCRIBE FUNCTION EXTENDED {schema}.twice", "INSUFFICIENT_PERMISSIONS")
    refused(bob, f"GRANT EXECUTE ON FUNCTION {schema}.twice TO bob", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"GRANT EXECUTE ON FUNCTION {schema}.twice TO bob")
    key = f"`{schema}`.`twice`"
    assert sorted_rows(alice, f"SHOW GRANTS ON FUNCTION {schema}.twice") == [
        ("alice", "OWN", "FUNCTION", key), ("bob", "EXECUTE", "FUNCTION", key)]
    assert ("bob", "EXECUTE", "FUNCTION", key) in sorted_rows(alice, "SHOW GRANTS bob")
    bob.execute(f"SELECT main.{schema}.twice(21)")
    assert bob.fetchall() == [(42,)]
    assert functions.get(schema, "twice").body == "x * 2"  # the refused replace changed nothing
    still_serves(bob)
    bob.execute(f"DROP SCHEMA {mine} CASCADE")
    alice.execute(f"DROP SCHEMA {schema} CASCADE")


def test_execute_never_reads_through_the_function_what_the_caller_may_not(as_user: Callable[[str], Any],
                                                                          streams: Any) -> None:
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "fnpeek")
    alice.execute(f"CREATE FUNCTION {schema}.peek (x INT) RETURNS STRING "
                  f"RETURN (SELECT max(secret) FROM {schema}.t WHERE id = x)")
    alice.execute(f"SELECT {schema}.peek(2)")
    assert alice.fetchall() == [("b",)]
    alice.execute(f"GRANT EXECUTE ON FUNCTION {schema}.peek TO bob")
    # EXECUTE, but no SELECT on the table the body reads: refused, naming the table, not its rows
    message = refused(bob, f"SELECT {schema}.peek(2)", "INSUFFICIENT_PERMISSIONS")
    assert "SELECT" in message and f"`{schema}`.`t`" in message
    alice.execute(f"GRANT SELECT ON TABLE {schema}.t TO bob")
    bob.execute(f"SELECT {schema}.peek(1) AS s")
    assert bob.fetchall() == [("a",)]
    alice.execute(f"REVOKE EXECUTE ON FUNCTION {schema}.peek FROM bob")
    refused(bob, f"SELECT {schema}.peek(1)", "INSUFFICIENT_PERMISSIONS")
    alice.execute(f"DROP FUNCTION {schema}.peek")
    assert FunctionStore(streams.store).get(schema, "peek") is None
    alice.execute(f"DROP SCHEMA {schema} CASCADE")


def test_a_views_bound_functions_cannot_be_called_by_name(as_user: Callable[[str], Any], streams: Any) -> None:
    """A view's functions are bound, for the statement, to temporary functions read with the view owner's rights;
    bob, who may read only `v` (peek(1)), could once call the one bound in his own statement by its name
    (`__sg_function_<n>`, n from a counter) with any argument, and read id 2's secret. The names are now random and
    a call of one in a user's text is refused."""
    alice, bob = as_user("alice"), as_user("bob")
    schema = secret_schema(alice, "fnview")
    alice.execute(f"CREATE FUNCTION {schema}.peek (x INT) RETURNS STRING "
                  f"RETURN (SELECT max(secret) FROM {schema}.t WHERE id = x)")
    alice.execute(f"CREATE VIEW {schema}.v AS SELECT {schema}.peek(1) AS s")
    alice.execute(f"GRANT SELECT ON VIEW {schema}.v TO bob")
    assert sorted_rows(bob, f"SELECT * FROM {schema}.v") == [("a",)]
    for name in ("__sg_function_0", "`__sg_function_0`", "__SG_FUNCTION_0"):
        message = refused(bob, f"SELECT s, {name}(2) FROM {schema}.v", "UNRESOLVED_ROUTINE", "42883")
        assert "at line 1" in message
    refused(bob, f"SELECT {schema}.peek(2)", "INSUFFICIENT_PERMISSIONS")  # no EXECUTE of his own
    still_serves(bob)
    alice.execute(f"DROP SCHEMA {schema} CASCADE")
