"""Table constraints in the dialect, without a JVM: ALTER TABLE ADD / DROP CONSTRAINT and CREATE TABLE's column-list
constraints classify to what Delta keeps (a CHECK's expression as typed), informational keys are kept apart, and a
CHECK expression that is not one row's deterministic predicate is refused with Delta's error before anything runs."""

from __future__ import annotations

import pytest

from sluicegate.dialect.classify import classify
from sluicegate.dialect.constraints import (
    CheckConstraint,
    CheckConstraintError,
    ConstraintPropertyError,
    KeyConstraint,
    checked_expression,
    checks_of,
    referenced_columns,
)
from sluicegate.dialect.errors import DialectError
from sluicegate.dialect.statements import AddConstraint, CreateTable, DropConstraint, Passthrough, TableName


def test_add_constraint_check_keeps_the_expression_as_typed() -> None:
    stmt = classify("ALTER TABLE s.t ADD CONSTRAINT Pos CHECK (v > 0 AND (w < 10))")
    assert stmt == AddConstraint(TableName("s", "t"), CheckConstraint("Pos", "v > 0 AND (w < 10)"))
    assert isinstance(stmt, AddConstraint) and isinstance(stmt.constraint, CheckConstraint)
    assert stmt.constraint.key == "delta.constraints.pos"  # Delta lower-cases the name in the property
    assert stmt.constraint.shown == "(v > 0 AND (w < 10))"
    dbt = classify("alter table `main`.`s`.`m` add constraint c1 check ((id > 0));")  # as dbt-spark sends it
    assert isinstance(dbt, AddConstraint) and dbt.constraint == CheckConstraint("c1", "(id > 0)")
    assert dbt.constraint.shown == "(id > 0)"  # what Delta's message prints, and dbt's tests look for


def test_informational_keys_and_drop_constraint() -> None:
    pk = classify("ALTER TABLE t ADD CONSTRAINT pk PRIMARY KEY (id)")
    assert pk == AddConstraint(TableName(None, "t"), KeyConstraint("pk", "PRIMARY KEY (id)", "PRIMARY KEY", ("id",)))
    fk = classify("ALTER TABLE main.s.t ADD CONSTRAINT fk FOREIGN KEY (a, b) REFERENCES main.s.u(id, n)")
    assert isinstance(fk, AddConstraint) and isinstance(fk.constraint, KeyConstraint)
    assert fk.constraint.text.startswith("FOREIGN KEY (a, b) REFERENCES")
    key = fk.constraint   # what information_schema lists of it
    assert (key.kind, key.columns, key.references[-2:], key.referenced_columns) == (
        "FOREIGN KEY", ("a", "b"), ("s", "u"), ("id", "n"))
    assert KeyConstraint.from_json(key.as_json()) == key
    assert KeyConstraint(None, "PRIMARY KEY (id)").named("t", 1).name == "t_pk"
    assert classify("ALTER TABLE t DROP CONSTRAINT IF EXISTS pos") == DropConstraint(TableName(None, "t"), "pos", True)
    assert classify("ALTER TABLE s.t DROP CONSTRAINT pos") == DropConstraint(TableName("s", "t"), "pos", False)
    assert classify("ALTER TABLE s.t DROP CONSTRAINT pk CASCADE") == DropConstraint(TableName("s", "t"), "pk", False,
                                                                                   cascade=True)
    assert classify("ALTER TABLE s.t DROP CONSTRAINT pk RESTRICT") == DropConstraint(TableName("s", "t"), "pk", False)
    assert isinstance(classify("ALTER TABLE t ADD CONSTRAINT u UNIQUE (a)"), Passthrough)  # not Delta's: Spark's


def test_drop_primary_key_and_foreign_key_by_columns() -> None:
    """Databricks' DROP forms that name a key by its kind (and a foreign key by its columns, in order)."""
    t = TableName("s", "t")
    assert classify("ALTER TABLE main.s.t DROP PRIMARY KEY") == DropConstraint(t, "", False, key_kind="PRIMARY KEY")
    assert classify("alter table s.t drop primary key if exists cascade") == DropConstraint(
        t, "", True, cascade=True, key_kind="PRIMARY KEY")
    assert classify("ALTER TABLE s.t DROP PRIMARY KEY RESTRICT") == DropConstraint(t, "", False,
                                                                                  key_kind="PRIMARY KEY")
    assert classify("ALTER TABLE s.t DROP FOREIGN KEY IF EXISTS (b, `A`)") == DropConstraint(
        t, "", True, key_kind="FOREIGN KEY", key_columns=("b", "A"))
    assert classify("ALTER TABLE s.t DROP FOREIGN KEY fk") == Passthrough("ALTER TABLE s.t DROP FOREIGN KEY fk",
                                                                         parsed=False)  # not a form: no key drop


def test_create_table_column_list_constraints() -> None:
    stmt = classify("CREATE TABLE t (id INT NOT NULL CHECK (id > 0), v INT PRIMARY KEY, CONSTRAINT pos CHECK (v > 0), "
                    "PRIMARY KEY (id), FOREIGN KEY (v) REFERENCES u(id)) USING delta")
    assert isinstance(stmt, CreateTable)
    assert [c.name for c in stmt.columns] == ["id", "v"]  # the constraints are not columns
    assert stmt.checks == (CheckConstraint("chk_1", "id > 0"), CheckConstraint("pos", "v > 0"))
    keys = [c for c in stmt.constraints if isinstance(c, KeyConstraint)]
    assert [k.text for k in keys] == ["PRIMARY KEY (v)", "PRIMARY KEY (id)", "FOREIGN KEY (v) REFERENCES u (id)"]
    with pytest.raises(DialectError) as twice:
        classify("CREATE TABLE t (id INT, CONSTRAINT c CHECK (id > 0), CONSTRAINT C CHECK (id < 5))")
    assert (twice.value.error_class, twice.value.sqlstate) == ("DELTA_CONSTRAINT_ALREADY_EXISTS", "42710")


@pytest.mark.parametrize(("expression", "error_class"), [
    ("java_method('java.lang.System', 'getProperty', 'user.home') IS NOT NULL",
     "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"),
    ("reflect('java.lang.Thread', 'sleep', 0) IS NULL", "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"),
    ("TRY_REFLECT('java.lang.Thread', 'sleep', 0) IS NULL", "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"),
    ("id IN (SELECT id FROM other.secrets)", "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"),
    ("(SELECT count(*) FROM read_files('/etc')) > 0", "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"),
    ("EXISTS (SELECT 1)", "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"),
    ("sum(id) OVER () > 0", "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"),
    ("count(*) > 0", "DELTA_AGGREGATE_IN_CHECK_CONSTRAINT"),
    ("rand() < 0.5", "DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT"),
    ("uuid() IS NOT NULL", "DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT"),
    ("id > :limit", "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"),
])
def test_a_check_that_is_not_one_rows_predicate_is_refused(expression: str, error_class: str) -> None:
    for sql in (f"ALTER TABLE t ADD CONSTRAINT c CHECK ({expression})",
                f"CREATE TABLE t (id INT, CONSTRAINT c CHECK ({expression}))"):
        with pytest.raises(CheckConstraintError) as refused:
            classify(sql)
        assert (refused.value.error_class, refused.value.sqlstate) == (error_class, "42621")
        assert refused.value.hint


def test_stored_text_is_judged_again_as_one_expression() -> None:
    """What a write reads back from the catalog must still be one expression the dialect accepts."""
    for stored in ("id > 0; DROP TABLE t", "id > 0) OR (true", "", "java_method('a', 'b') = 'c'"):
        with pytest.raises(CheckConstraintError):
            checked_expression("c", stored)
    assert checked_expression("c", "len(name) > 2 AND name RLIKE '^a' AND now() > ts") is not None
    assert referenced_columns("b >= a AND `from` = 'blue'") == ("a", "b", "from")


def test_constraints_are_not_table_properties_to_set() -> None:
    """SET / UNSET TBLPROPERTIES cannot write them (Delta: use ADD CONSTRAINT); a CREATE TABLE's TBLPROPERTIES (what
    SHOW CREATE TABLE prints) declare CHECK constraints, judged as any."""
    for sql in ("ALTER TABLE t SET TBLPROPERTIES ('delta.constraints.x' = 'true')",
                "ALTER TABLE t UNSET TBLPROPERTIES ('Delta.Constraints.x')"):
        with pytest.raises(ConstraintPropertyError) as refused:
            classify(sql)
        assert (refused.value.error_class, refused.value.sqlstate) == ("DELTA_ADD_CONSTRAINTS", "0A000")
    created = classify("CREATE TABLE t (a INT) TBLPROPERTIES ('delta.constraints.x' = 'a > 0', 'delta.appendOnly' = "
                       "'false')")
    assert isinstance(created, CreateTable)
    assert created.checks == (CheckConstraint("x", "a > 0"),) and created.properties == {"delta.appendOnly": "false"}
    with pytest.raises(CheckConstraintError):
        classify("CREATE TABLE t (a INT) TBLPROPERTIES ('delta.constraints.x' = 'reflect(\"a\", \"b\") IS NULL')")
    assert checks_of({"delta.constraints.b": "x > 1", "delta.appendOnly": "false", "delta.constraints.a": "y"}) == (
        CheckConstraint("a", "y"), CheckConstraint("b", "x > 1"))


def test_reserved_constraint_name() -> None:
    with pytest.raises(DialectError) as reserved:
        classify("ALTER TABLE t ADD CONSTRAINT __char_varchar_string_length_check CHECK (a > 0)")
    assert reserved.value.error_class == "DELTA_INVALID_CONSTRAINT_NAME"
