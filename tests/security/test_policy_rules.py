"""The policy's one decision, without a JVM: every statement kind has a rule, a kind without one is refused (42501)
before anything runs, and the rules ask what the statements have always needed (owners, grants, CREATE)."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sluicegate.catalog.grants import GrantStore, Securable
from sluicegate.catalog.store import CatalogStore, TableEntry
from sluicegate.dialect import statements as st
from sluicegate.executor import dispatch as executor
from sluicegate.executor.context import StatementContext
from sluicegate.policy import Policy, SecuritySettings
from sluicegate.policy.decide import RULES, decide
from sluicegate.policy.errors import PermissionDeniedError, PolicyError, StatementNotAllowedError
from sluicegate.policy.rules import Rule

KINDS = typing.get_args(st.Statement)


@dataclass(frozen=True)
class Unheard:
    """A statement kind the policy has never heard of (a new dataclass nobody wrote a rule for)."""

    table: st.TableName


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[CatalogStore]:
    catalog = CatalogStore(f"sqlite:///{tmp_path / 'catalog.db'}")
    catalog.create_database("carols", owner="carol")
    for name, kind in (("t", "TABLE"), ("mv", "MATERIALIZED_VIEW")):
        catalog.create_table(TableEntry("carols", name, kind, None, None, None, owner="carol"))
    yield catalog
    catalog.close()


def _policy(store: CatalogStore, *, unrestricted: bool = False) -> Policy:
    return Policy(SecuritySettings(allowed_paths=(), protected_paths=(), admins=frozenset({"root"}),
                                   admin_unrestricted=unrestricted), store)


def _decide(store: CatalogStore, user: str, statement: Any, *, unrestricted: bool = False) -> None:
    policy = _policy(store, unrestricted=unrestricted)
    decide(policy, policy.principal(user), store, statement, "default")


def test_every_statement_kind_has_a_rule() -> None:
    missing = sorted(kind.__name__ for kind in KINDS if kind not in RULES)
    assert not missing, f"statement kinds without a rule in policy/decide.py (nobody may run them): {missing}"
    assert set(RULES) == set(KINDS), "a rule for a kind the Statement union no longer has"


def test_a_rule_that_asks_nothing_says_why() -> None:
    for kind, rule in RULES.items():
        assert isinstance(rule, Rule)
        if rule.why:
            assert rule.access is None, f"{kind.__name__}: a rule that asks nothing has no table to read or change"
    quiet = [kind.__name__ for kind, rule in RULES.items() if rule.check.__name__ == "_nothing" and not rule.why]
    assert not quiet, f"rules that ask nothing and do not say why: {quiet}"


def test_a_kind_without_a_rule_is_refused_by_the_decision(store: CatalogStore) -> None:
    for user in ("mallory", "root"):  # an admin too: nobody has said what it needs
        with pytest.raises(StatementNotAllowedError) as refused:
            _decide(store, user, Unheard(st.TableName("carols", "t")), unrestricted=True)
        assert refused.value.sqlstate == "42501" and refused.value.error_class == "STATEMENT_NOT_ALLOWED"
        assert "Unheard" in refused.value.message and refused.value.hint


class _UntouchableSpark:
    """A Spark session stand-in that records what is asked of it: only the current database may be read."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    @property
    def catalog(self) -> Any:
        self.asked.append("catalog")
        return type("Catalog", (), {"currentDatabase": staticmethod(lambda: "default")})()

    def __getattr__(self, name: str) -> Any:
        self.asked.append(name)
        raise AssertionError(f"Spark was asked for {name} before the policy decided")


def test_a_kind_without_a_rule_is_refused_before_the_executor_runs_anything(store: CatalogStore,
                                                                            tmp_path: Path) -> None:
    spark = _UntouchableSpark()
    ctx = StatementContext(spark=spark, store=store, warehouse=tmp_path, user="root", sql="UNHEARD OF carols.t",
                           job_group="g", policy=_policy(store, unrestricted=True))  # type: ignore[arg-type]
    before = (store.list_tables("carols", None), GrantStore(store).on(Securable.table("carols", "t")))
    with pytest.raises(StatementNotAllowedError, match="Unheard"):
        executor.execute(ctx, Unheard(st.TableName("carols", "t")))  # type: ignore[arg-type]
    assert spark.asked == ["catalog"]  # the current database, to qualify names; nothing else
    assert (store.list_tables("carols", None), GrantStore(store).on(Securable.table("carols", "t"))) == before


def test_spark_runs_statements_on_its_own_tables_only_with_a_read_or_change_rule() -> None:
    """The owner of a Spark table is asked for what the kind's rule says it does: said once, in the table."""
    access = {kind: RULES[kind].access for kind in executor.ON_ONE_TABLE}
    assert None not in access.values()
    assert {kind for kind, does in access.items() if does == "read"} == {
        st.DescribeTable, st.DescribeHistory, st.ShowCreateTable, st.Refresh, st.ShowTblProperties, st.ShowColumns}


def test_a_kind_that_reads_or_changes_one_table_names_it_in_its_table_field() -> None:
    """check_spark_run asks the owner of `statement.table` for the access a rule sets: every such kind has one."""
    with_access = [kind for kind, rule in RULES.items() if rule.access is not None]
    assert with_access
    for kind in with_access:
        assert {f.name: f.type for f in dataclasses.fields(kind)}.get("table") in ("TableName", st.TableName), kind


def test_owners_decide_what_changes_their_objects(store: CatalogStore) -> None:
    t, missing = st.TableName("carols", "t"), st.TableName("carols", "nothing")
    for statement in (st.DropTable(t, False, False), st.Vacuum(t, None), st.RenameTable(t, st.TableName("carols", "x")),
                      st.AlterSchedule(t, "STREAMING TABLE", "DROP", None), st.DropDatabase("carols", False, True),
                      st.Grant(("SELECT",), st.SecurableObject("TABLE", t), ("bob",)),
                      st.Revoke(("SELECT",), st.SecurableObject("SCHEMA", st.TableName(None, "carols")), ("bob",))):
        with pytest.raises(PermissionDeniedError, match="only its owner"):
            _decide(store, "mallory", statement)
        _decide(store, "carol", statement)
        _decide(store, "root", statement)
    _decide(store, "mallory", st.DropTable(missing, True, False))  # nothing to own: the handler says "not found"


def test_grants_decide_reads_and_row_changes(store: CatalogStore) -> None:
    t = st.TableName("carols", "t")
    read, change = st.DescribeHistory(t), st.Insert(t, (), st.Query("SELECT 1"), False)
    optimize = st.Optimize(t)
    for statement, privilege in ((read, "SELECT"), (change, "MODIFY"), (optimize, "MODIFY")):
        with pytest.raises(PermissionDeniedError, match=f"does not have {privilege}"):
            _decide(store, "bob", statement)
    _decide(store, "carol", optimize)  # the owner needs no grant
    GrantStore(store).grant(Securable.table("carols", "t"), ("bob",), ("SELECT", "MODIFY"), "carol")
    _decide(store, "bob", read)
    _decide(store, "bob", change)
    _decide(store, "bob", optimize)


def test_a_materialized_view_may_be_refreshed_by_a_grant(store: CatalogStore) -> None:
    refresh = st.Refresh(st.TableName("carols", "mv"), "MATERIALIZED VIEW")
    with pytest.raises(PermissionDeniedError, match="does not have REFRESH"):
        _decide(store, "bob", refresh)
    GrantStore(store).grant(Securable.table("carols", "mv"), ("bob",), ("REFRESH",), "carol")
    _decide(store, "bob", refresh)
    _decide(store, "bob", st.Refresh(st.TableName("carols", "t"), "TABLE"))  # a plain table's: nothing to ask


def test_creating_needs_create_on_the_schema(store: CatalogStore) -> None:
    new = st.TableName("carols", "new")
    delta = st.CreateTable(new, (), (), None, {}, "delta", False, False, None)
    spark_table = st.CreateTable(new, (), (), None, {}, "parquet", False, False, None)
    for statement in (delta, spark_table, st.CreateView(new, st.Query("SELECT 1"), False, False, None)):
        with pytest.raises(PermissionDeniedError, match="cannot create objects in the schema `carols`"):
            _decide(store, "mallory", statement)
    GrantStore(store).grant(Securable.schema("carols"), ("mallory",), ("CREATE",), "carol")
    replace = st.TableName("carols", "t")
    with pytest.raises(PermissionDeniedError, match="cannot replace"):
        _decide(store, "mallory", st.CreateTable(replace, (), (), None, {}, "delta", False, True, None))
    # a Spark table replaces no catalog object: CREATE in the schema is all it needs, as before
    _decide(store, "mallory", st.CreateTable(replace, (), (), None, {}, "parquet", False, True, None))


def test_grant_on_the_wrong_kind_of_object_is_the_handlers_to_refuse(store: CatalogStore) -> None:
    """ON MATERIALIZED VIEW naming a table: EXPECT_MATERIALIZED_VIEW for everyone, owner or not (the handler's)."""
    wrong = st.Grant(("SELECT",), st.SecurableObject("MATERIALIZED VIEW", st.TableName("carols", "t")), ("bob",))
    _decide(store, "mallory", wrong)
    right = st.Grant(("SELECT",), st.SecurableObject("MATERIALIZED VIEW", st.TableName("carols", "mv")), ("bob",))
    with pytest.raises(PermissionDeniedError):
        _decide(store, "mallory", right)


def test_global_temporary_views_are_refused_unless_unrestricted(store: CatalogStore) -> None:
    view = st.CreateTemporaryView("v", st.Query("SELECT 1"), False, True, "CREATE GLOBAL TEMP VIEW v AS SELECT 1")
    for user in ("mallory", "root"):
        with pytest.raises(StatementNotAllowedError, match="global temporary views"):
            _decide(store, user, view)
    _decide(store, "root", view, unrestricted=True)
    _decide(store, "mallory", st.CreateTemporaryView("v", st.Query("SELECT 1"), False, False, "CREATE TEMP VIEW v"))


def test_what_asks_nothing_is_allowed_to_anyone(store: CatalogStore) -> None:
    for statement in (st.SelectQuery(st.Query("SELECT 1")), st.Passthrough("SET"), st.ShowTables("carols", None),
                      st.ShowGrants(None, st.SecurableObject("TABLE", st.TableName("carols", "t"))),
                      st.UseCatalog("spark_catalog"), st.CreateDatabase("mine", False, None)):
        _decide(store, "mallory", statement)


def test_every_refusal_is_a_policy_error_with_42501(store: CatalogStore) -> None:
    with pytest.raises(PolicyError) as refused:
        _decide(store, "mallory", st.DropTable(st.TableName("carols", "t"), False, False))
    assert refused.value.sqlstate == "42501"


def test_a_views_properties_are_its_owners_to_change(store: CatalogStore) -> None:
    """`ALTER VIEW v [UN]SET TBLPROPERTIES` and a CREATE VIEW's TBLPROPERTIES: the view's owner's (or CREATE on the
    schema), as for a table's."""
    store.create_table(TableEntry("carols", "v", "VIEW", None, None, "SELECT 1", owner="carol"))
    v = st.TableName("carols", "v")
    for statement in (st.SetTableProperties(v, (("k", "x"),), view=True),
                      st.UnsetTableProperties(v, ("k",), True, view=True),
                      st.CreateView(v, st.Query("SELECT 2"), True, False, None, properties=(("k", "y"),))):
        with pytest.raises(PermissionDeniedError):
            _decide(store, "mallory", statement)
        _decide(store, "carol", statement)
