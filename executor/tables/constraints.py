"""ALTER TABLE ADD / DROP CONSTRAINT, and the CHECK constraints of a CREATE TABLE, as Delta has them.

A CHECK constraint is the table property `delta.constraints.<name>` = its expression as typed, in the Delta log's
configuration (where Spark with Delta and other engines read it) and in the catalog (where every write of the
gateway reads it: storage/constraints.py enforces it in the projection that writes the rows). Adding one first
judges the expression on the table's schema (its columns exist, it is a boolean, deterministic, with nothing the
policy refuses) and then counts the rows it rejects (false or NULL) in a pinned snapshot: any, and nothing changes
(DELTA_NEW_CHECK_CONSTRAINT_VIOLATION). The property is committed under the table's lock only if no row was written
since that snapshot; otherwise the statement fails with DELTA_CONCURRENT_WRITE and is run again.

A NOT NULL constraint on an existing column (`ALTER TABLE t {ALTER | CHANGE} COLUMN c SET NOT NULL`, what dbt-spark
sends for a column's `not_null`) is checked against the column's rows the same way (DELTA_NEW_NOT_NULL_VIOLATION)
and kept in the catalog's schema, which every write enforces; delta-rs cannot change a column's nullability in the
Delta log without rewriting the table, so the log's schema keeps the column nullable (a limit of this gateway).

PRIMARY KEY and FOREIGN KEY are informational in Databricks (never enforced): kept in the catalog only (the table
row's `keys`), named when written without a name (`<table>_pk`, `<table>_fk_<n>`), and listed by information_schema's
table_constraints, key_column_usage, referential_constraints and constraint_column_usage, as Unity Catalog lists them;
DROP CONSTRAINT removes one by name; a primary key that foreign keys reference only with CASCADE, which drops them
too (Databricks' default is RESTRICT: the statement fails and nothing changes).

delta-rs has `alter.add_constraint`, but it re-checks the rows with DataFusion's SQL (which lacks many of Spark's
functions) and stores DataFusion's rewrite of the expression, not the text: the property is written as Spark with
Delta writes it instead (raising the writer protocol to 3, as Delta does for a table of an older one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sluicegate.catalog.keys import dropped_name, dropped_primary_key, referencing_foreign_keys
from sluicegate.catalog.names import quote_identifier, quote_qualified
from sluicegate.dialect.constraints import (
    PRIMARY_KEY,
    PROPERTY_PREFIX,
    CheckConstraint,
    KeyConstraint,
    checks_of,
    named_keys,
)
from sluicegate.dialect.statements import AddConstraint, DropConstraint, Query, SetColumnNullability
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.binding.binder import bind
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import WarehouseError
from sluicegate.executor.lookups import require_column, require_table
from sluicegate.executor.output import no_result
from sluicegate.executor.tables.dml import table_schema
from sluicegate.policy import spark_plans
from sluicegate.storage.delta import commit
from sluicegate.storage.delta.changes import table_change
from sluicegate.storage.delta.errors import DeltaCommitConflictError
from sluicegate.storage.delta.locks import table_lock
from sluicegate.storage.delta.tables import open_table
from sluicegate.storage.spark_errors import from_spark

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sluicegate.catalog.store import TableEntry

_ASSUME_IF_EXISTS = "spark.databricks.delta.constraints.assumesDropIfExists.enabled"
_DELTA_WRITER_VERSION = "delta.minWriterVersion"


class ConstraintError(WarehouseError):
    """A constraint Delta refuses: `error_class` and SQLSTATE say why (set per instance)."""

    error_class = "DELTA_UNSUPPORTED_EXPRESSION_CHECK_CONSTRAINT"
    sqlstate = "42621"


def constraint_properties(checks: Sequence[CheckConstraint]) -> dict[str, str]:
    """The table properties that keep `checks`."""
    return {check.key: check.expression for check in checks}


def judge(df: DataFrame, check: CheckConstraint) -> None:
    """Raise unless `check` is a constraint Delta accepts on `df`'s columns: its columns exist, it is a boolean,
    deterministic expression of one row (no aggregate, window or generator), with nothing the policy refuses in its
    analysed plan (for admins too: it runs on everyone's writes)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    try:
        probe = df.select(F.expr(check.expression).alias(check.name))
        plan = probe._jdf.queryExecution().analyzed()
    except Exception as exc:  # Spark's analysis error, typed below
        error = from_spark(exc)
        if error.error_class.startswith("UNRESOLVED_COLUMN"):
            raise ConstraintError(
                f"A check constraint cannot use a non-existent column: {error.message}",
                error_class="DELTA_INVALID_CHECK_CONSTRAINT_REFERENCES",
                hint=f"the table's columns are {', '.join(df.columns)}") from exc
        raise error from exc
    if plan.nodeName() != "Project":
        raise ConstraintError(f"Found {check.expression} in a CHECK constraint. {check.expression} cannot be used "
                              "in a CHECK constraint.", hint="a CHECK judges one row's values")
    if not plan.expressions().apply(0).deterministic():
        raise ConstraintError(f"Found {check.expression} in a CHECK constraint. A CHECK constraint cannot use a "
                              "nondeterministic expression.",
                              error_class="DELTA_NON_DETERMINISTIC_EXPRESSION_IN_CHECK_CONSTRAINT",
                              hint="a constraint must give the same answer for the same row every time")
    if not isinstance(probe.schema.fields[0].dataType, BooleanType):
        raise ConstraintError(f"CHECK constraint '{check.name}' ({check.expression}) should be a boolean "
                              "expression.", error_class="DELTA_NON_BOOLEAN_CHECK_CONSTRAINT",
                              hint="compare the value, e.g. CHECK (amount > 0)")
    spark_plans.check_analyzed(probe)


def judge_all(df: DataFrame, checks: Sequence[CheckConstraint]) -> None:
    for check in checks:
        judge(df, check)


def _violations(df: DataFrame, check: CheckConstraint) -> int:
    """The rows of `df` that `check` rejects: false or NULL, as Delta counts them."""
    from pyspark.sql import functions as F

    return int(df.where(~F.coalesce(F.expr(check.expression).cast("boolean"), F.lit(False))).count())


def add_constraint(ctx: StatementContext, stmt: AddConstraint) -> StatementResult:
    entry = require_table(ctx, stmt.table, "ALTER TABLE ADD CONSTRAINT")
    check = stmt.constraint
    if isinstance(check, KeyConstraint):
        return _add_key(ctx, stmt, entry, check)
    old = next((c for c in checks_of(entry.properties) if c.name.lower() == check.name.lower()), None)
    if old is not None or any(k.name and k.name.lower() == check.name.lower() for k in entry.keys):
        old = old or CheckConstraint(check.name, next(k.text for k in entry.keys
                                                      if (k.name or "").lower() == check.name.lower()))
        line, column = ctx.position_of(stmt.table)
        raise ConstraintError(
            f"Constraint '{check.name}' already exists. Please delete the old constraint first.\nOld constraint:\n"
            f"{old.expression}", error_class="DELTA_CONSTRAINT_ALREADY_EXISTS", sqlstate="42710",
            line=line, column=column, hint=f"ALTER TABLE ... DROP CONSTRAINT {check.name} first")
    qualified = quote_qualified(entry.database, entry.name)
    df, binder = bind(ctx, Query(f"SELECT * FROM {qualified}"))
    try:
        judge(df, check)
        rejected = _violations(df, check)
        if rejected:
            raise ConstraintError(
                f"{rejected} rows in {qualified} violate the new CHECK constraint ({check.expression})",
                error_class="DELTA_NEW_CHECK_CONSTRAINT_VIOLATION", sqlstate="23512",
                hint="change or delete those rows first (SELECT * FROM the table WHERE NOT coalesce(<expression>, "
                     "false) finds them)")
        snapshot = binder.snapshots.get((entry.database, entry.name))
        _commit_property(entry, snapshot.version if snapshot is not None else None, check)
    finally:
        binder.close()
    ctx.store.update_table(entry.database, entry.name,
                           properties={**(entry.properties or {}), check.key: check.expression})
    return no_result()


def _add_key(ctx: StatementContext, stmt: AddConstraint, entry: TableEntry, key: KeyConstraint) -> StatementResult:
    """An informational PRIMARY KEY / FOREIGN KEY: kept in the catalog (as Unity Catalog keeps it, never enforced,
    nothing in the Delta log), listed by information_schema; a name already taken is refused as Delta refuses it."""
    named = named_keys([*entry.keys, key], entry.name)[-1]
    taken = [c.name for c in checks_of(entry.properties)] + [k.name or "" for k in entry.keys]
    if any(name.lower() == (named.name or "").lower() for name in taken):
        line, column = ctx.position_of(stmt.table)
        raise ConstraintError(
            f"Constraint '{named.name}' already exists. Please delete the old constraint first.",
            error_class="DELTA_CONSTRAINT_ALREADY_EXISTS", sqlstate="42710", line=line, column=column,
            hint=f"ALTER TABLE ... DROP CONSTRAINT {named.name} first")
    ctx.store.update_table(entry.database, entry.name, keys=(*entry.keys, named))
    return no_result()


def _commit_property(entry: TableEntry, read_version: int | None, check: CheckConstraint) -> None:
    """`delta.constraints.<name>` into the Delta log, unless rows landed since `read_version` (their check was not
    this one's): under the table's lock, which every commit of the gateway takes."""
    location = entry.location or ""
    with table_lock(location):
        table = open_table(location)
        if read_version is not None and table.version() != read_version:
            change = table_change(location, read_version, table.version())
            if change is None or not change.empty:
                raise DeltaCommitConflictError(
                    f"rows were written to `{entry.database}`.`{entry.name}` while the new CHECK constraint "
                    f"{check.name} was checked against the table", hint="run the statement again")
        table.alter.set_table_properties(
            {check.key: check.expression, _DELTA_WRITER_VERSION: "3"}, raise_if_not_exists=False,
            commit_properties=commit.commit_properties("ADD CONSTRAINT",
                                                       {"name": check.name, "expr": check.expression}))


def drop_constraint(ctx: StatementContext, stmt: DropConstraint) -> StatementResult:
    entry = require_table(ctx, stmt.table, "ALTER TABLE DROP CONSTRAINT")
    name = dropped_name(entry, stmt)
    if name is None:   # DROP PRIMARY KEY / FOREIGN KEY (cols): the table has no such key
        if stmt.if_exists:
            return no_result()
        line, column = ctx.position_of(stmt.table)
        which = "primary key" if stmt.key_kind == PRIMARY_KEY else (
            f"foreign key on ({', '.join(quote_identifier(c) for c in stmt.key_columns)})")
        raise ConstraintError(
            f"Cannot drop nonexistent constraint: the table `{entry.database}`.`{entry.name}` has no {which}.",
            error_class="DELTA_CONSTRAINT_DOES_NOT_EXIST", sqlstate="42704", line=line, column=column,
            hint=f"write DROP {stmt.key_kind} IF EXISTS; information_schema.table_constraints lists the table's keys"
                 + ("" if stmt.key_kind == PRIMARY_KEY else " (a foreign key is named by its columns in order)"))
    key = PROPERTY_PREFIX + name.lower()
    properties = dict(entry.properties or {})
    old = properties.pop(key, None)
    kept = tuple(k for k in entry.keys if (k.name or "").lower() != name.lower())
    if old is None and len(kept) < len(entry.keys):   # an informational key: only the catalog holds it
        dependents = (referencing_foreign_keys(ctx.store.list_tables(), entry)
                      if dropped_primary_key(entry, name) is not None else [])
        if dependents and not stmt.cascade:
            line, column = ctx.position_of(stmt.table)
            names = ", ".join(f"`{foreign.name}`" for _table, foreign in dependents)
            raise ConstraintError(
                f"Cannot drop the primary key {name} of `{entry.database}`.`{entry.name}`: the foreign key(s) "
                f"{names} depend on it (RESTRICT, the default).", error_class="CONSTRAINT_DEPENDENT_FOREIGN_KEYS",
                sqlstate="2BP01", line=line, column=column,
                hint=f"drop those foreign keys first, or write DROP CONSTRAINT {name} CASCADE to drop them too")
        ctx.store.update_table(entry.database, entry.name, keys=kept)
        for table, foreign in dependents:   # CASCADE: the policy required the ownership of each of their tables
            current = ctx.store.get_table(table.database, table.name)
            if current is not None:
                ctx.store.update_table(table.database, table.name,
                                       keys=tuple(k for k in current.keys if k.name != foreign.name))
        return no_result()
    if old is None:
        if stmt.if_exists:
            return no_result()
        line, column = ctx.position_of(stmt.table)
        raise ConstraintError(
            f"Cannot drop nonexistent constraint {name} from table `{entry.database}`.`{entry.name}`. To avoid "
            f"throwing an error, provide the parameter IF EXISTS or set the SQL session configuration "
            f"{_ASSUME_IF_EXISTS} to true.", error_class="DELTA_CONSTRAINT_DOES_NOT_EXIST", sqlstate="42704",
            line=line, column=column, hint="write DROP CONSTRAINT IF EXISTS; SHOW TBLPROPERTIES lists the table's "
                                           "constraints (delta.constraints.*)")
    location = entry.location or ""
    with table_lock(location):
        open_table(location).alter.drop_constraint(
            name.lower(), raise_if_not_exists=False,
            commit_properties=commit.commit_properties("DROP CONSTRAINT", {"name": name, "expr": old}))
    ctx.store.update_table(entry.database, entry.name, properties=properties)
    return no_result()



def set_column_nullability(ctx: StatementContext, stmt: SetColumnNullability) -> StatementResult:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructField, StructType

    entry = require_table(ctx, stmt.table, "ALTER TABLE ... NOT NULL")
    schema = table_schema(entry)
    found = require_column(ctx, entry, schema, stmt.column, stmt.column_offset)
    if found.nullable == stmt.nullable:
        return no_result()
    if not stmt.nullable:
        qualified = quote_qualified(entry.database, entry.name)
        df, binder = bind(ctx, Query(f"SELECT {quote_identifier(found.name)} FROM {qualified}"))
        try:
            nulls = int(df.where(F.col(quote_identifier(found.name)).isNull()).count())
        finally:
            binder.close()
        if nulls:
            raise ConstraintError(
                f"{nulls} rows in {qualified} violate the new NOT NULL constraint on {found.name}",
                error_class="DELTA_NEW_NOT_NULL_VIOLATION", sqlstate="23512",
                hint=f"fill or delete the rows where {found.name} IS NULL first")
    fields = [StructField(f.name, f.dataType, stmt.nullable, f.metadata) if f is found else f for f in schema.fields]
    ctx.store.update_table(entry.database, entry.name, schema_json=StructType(fields).json())
    return no_result()
