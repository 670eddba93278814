"""GRANT, REVOKE and SHOW GRANTS over the catalog, in Databricks' shape (dbt reads SHOW GRANTS).

Only the owner of an object (or of its schema), or an admin, may grant or revoke on it (the policy's rule decides
that before the handler runs, policy/decide.py). SHOW GRANTS answers
`Principal, ActionType, ObjectType, ObjectKey`, the owner as an `OWN` row, as Databricks' legacy table ACLs do.
`ON MATERIALIZED VIEW mv` names a materialized view (its grants are its table row's, so `ON TABLE mv` is the same
securable; ObjectType stays TABLE, which dbt reads); REFRESH is granted on a materialized view or a schema only.
"""

from __future__ import annotations

from sluicegate.catalog.errors import RoutineNotFoundError, SchemaNotFoundError
from sluicegate.catalog.functions import FunctionStore
from sluicegate.catalog.grants import PRIVILEGES, GrantEntry, GrantStore, Securable
from sluicegate.dialect import statements as st
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.context import StatementContext
from sluicegate.executor.errors import NotATableError, UnsupportedStatementError
from sluicegate.executor.lookups import require
from sluicegate.executor.output import no_result, rows_result

_COLUMNS = [("Principal", "string"), ("ActionType", "string"), ("ObjectType", "string"), ("ObjectKey", "string")]


def _normalised(privileges: tuple[str, ...]) -> tuple[str, ...]:
    found = tuple("ALL PRIVILEGES" if p.upper() in ("ALL", "ALL PRIVILEGES") else p.upper() for p in privileges)
    for privilege in found:
        if privilege not in PRIVILEGES:
            raise UnsupportedStatementError(f"the privilege {privilege} is not known here",
                                            hint="grant one of: " + ", ".join(PRIVILEGES))
    return found


def _securable(ctx: StatementContext, securable: st.SecurableObject) -> tuple[Securable, str]:
    """The catalog securable, which must exist and be of the kind named; and its kind as SHOW GRANTS names it."""
    if securable.kind == "SCHEMA":
        database = securable.name.name.lower()
        if ctx.store.get_database(database) is None:
            raise SchemaNotFoundError(f"The schema `{database}` cannot be found.",
                                      hint="SHOW DATABASES lists the schemas")
        return Securable.schema(database), "DATABASE"
    if securable.kind == "FUNCTION":
        database, name = securable.name.qualified(ctx.current_database)
        if FunctionStore(ctx.store).get(database, name) is None:
            line, column = ctx.position_of(securable.name)
            raise RoutineNotFoundError(f"The function `{database}`.`{name}` cannot be found.", line=line,
                                       column=column, hint="SHOW USER FUNCTIONS lists the schema's functions")
        return Securable.function(database, name), "FUNCTION"
    entry = require(ctx, securable.name)
    if securable.kind == "MATERIALIZED VIEW" and entry.kind != "MATERIALIZED_VIEW":
        line, column = ctx.position_of(securable.name)
        raise NotATableError(f"`{entry.database}`.`{entry.name}` is a {entry.kind.lower().replace('_', ' ')}, not a "
                             "materialized view.", error_class="EXPECT_MATERIALIZED_VIEW", line=line, column=column,
                             hint="write ON VIEW" if entry.kind == "VIEW" else "write ON TABLE")
    return Securable.table(entry.database, entry.name), "TABLE"  # a view too, as Databricks' table ACLs say


def _refuse_misplaced(ctx: StatementContext, securable: Securable, privileges: tuple[str, ...]) -> None:
    """CREATE belongs to schemas; REFRESH to materialized views (or a schema, for the views in it). EXECUTE is a
    function's (or a schema's) only, which the dialect already holds to."""
    if securable.kind != "TABLE":
        return
    if "CREATE" in privileges:
        raise UnsupportedStatementError("CREATE is granted on a schema, not on a table",
                                        hint="GRANT CREATE ON SCHEMA s TO user")
    entry = ctx.store.require_table(securable.database, securable.name)
    if "REFRESH" in privileges and entry.kind != "MATERIALIZED_VIEW":
        raise UnsupportedStatementError(
            f"REFRESH is granted on a materialized view; `{entry.database}`.`{entry.name}` is a "
            f"{entry.kind.lower().replace('_', ' ')}", hint="grant REFRESH ON MATERIALIZED VIEW mv (only its owner "
                                                            "refreshes a streaming table)")


def grant(ctx: StatementContext, statement: st.Grant) -> StatementResult:
    privileges = _normalised(statement.privileges)
    securable, _ = _securable(ctx, statement.securable)
    _refuse_misplaced(ctx, securable, privileges)
    GrantStore(ctx.store).grant(securable, statement.principals, privileges, ctx.user)
    return no_result()


def revoke(ctx: StatementContext, statement: st.Revoke) -> StatementResult:
    privileges = _normalised(statement.privileges)
    securable, _ = _securable(ctx, statement.securable)
    GrantStore(ctx.store).revoke(securable, statement.principals, privileges)
    return no_result()


_KINDS = {"SCHEMA": "DATABASE", "FUNCTION": "FUNCTION"}  # a grant's kind as SHOW GRANTS names it


def _owner(ctx: StatementContext, securable: Securable) -> str | None:
    found = (ctx.store.get_database(securable.database) if securable.kind == "SCHEMA"
             else FunctionStore(ctx.store).get(securable.database, securable.name) if securable.kind == "FUNCTION"
             else ctx.store.get_table(securable.database, securable.name))
    return found.owner if found is not None else None


def _key(entry: GrantEntry) -> str:
    return f"`{entry.database}`" if entry.kind == "SCHEMA" else f"`{entry.database}`.`{entry.name}`"


def show_grants(ctx: StatementContext, statement: st.ShowGrants) -> StatementResult:
    rows: list[tuple[str, str, str, str]] = []
    if statement.securable is not None:
        securable, kind = _securable(ctx, statement.securable)
        owner = _owner(ctx, securable)
        key = f"`{securable.database}`" + (f".`{securable.name}`" if securable.name else "")
        if owner and statement.principal in (None, owner):
            rows.append((owner, "OWN", kind, key))
        entries = GrantStore(ctx.store).on(securable, statement.principal)
        rows += [(e.principal, e.privilege, kind, key) for e in entries]
    elif statement.principal is not None:
        entries = GrantStore(ctx.store).on(principal=statement.principal)
        rows += [(e.principal, e.privilege, _KINDS.get(e.kind, "TABLE"), _key(e)) for e in entries]
    else:
        raise UnsupportedStatementError("SHOW GRANTS needs an object or a principal",
                                        hint="SHOW GRANTS ON TABLE t, SHOW GRANTS ON SCHEMA s or SHOW GRANTS user")
    return rows_result(_COLUMNS, rows)
