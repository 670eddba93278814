"""dbt-databricks, unchanged and pinned, against a real gateway over HTTP: the project in coverage/ covers what a
dbt user builds besides test_dbt_databricks.py's materializations. One `dbt build` makes a seed with date, timestamp
and decimal columns, a SQL function, a table with a contract (not null, check, primary key), persisted docs and grants,
one incremental model per strategy a SQL warehouse offers (append, merge excluding a column, insert_overwrite of
partitions, replace_where, delete+insert, microbatch) and a check snapshot, each with its docs and grants; a second
build with new rows and a changed row checks each strategy's semantics and the snapshot's history; then `dbt docs
generate` and `dbt clone`.
Four dbt invocations in all (each costs tens of seconds); every result is read back through databricks-sql-connector."""

from __future__ import annotations

import datetime
import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import Gateway, copy_project, dbt, described, properties, rows

PROJECT = Path(__file__).resolve().parent / "coverage"
SCHEMA = "dbt_cov"
CLONES = "dbt_cov_clone"
READER = "dbt_reader"
D1, D2, D3 = datetime.date(2024, 1, 1), datetime.date(2024, 1, 2), datetime.date(2024, 1, 3)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, gateway: Gateway) -> Path:
    return copy_project(PROJECT, tmp_path_factory.mktemp("dbx_coverage"), gateway,
                        {"dev": SCHEMA, "clones": CLONES})


def table(name: str, columns: str = "id, name") -> str:
    return f"SELECT {columns} FROM main.{SCHEMA}.{name}"


def test_seed_snapshot_strategies_contract_docs_grants_clone(project: Path, gateway: Gateway) -> None:
    # Microbatch: the first build fills the days 1 to 3 (not every day from `begin` until today).
    dbt(project, gateway, "build", "--event-time-start", "2024-01-01", "--event-time-end", "2024-01-04",
        variables={"round": 1})
    assert rows(gateway, table("s_orders", "*")) == [
        (1, D1, datetime.datetime(2024, 1, 1, 10, tzinfo=datetime.UTC), Decimal("12.50"), "open"),
        (2, D2, datetime.datetime(2024, 1, 2, 11, 30, tzinfo=datetime.UTC), Decimal("7.25"), "shipped")]
    types = {row[0]: row[1].lower() for row in rows(gateway, f"DESCRIBE TABLE main.{SCHEMA}.s_orders")}
    assert types == {"id": "int", "ordered_on": "date", "ordered_at": "timestamp", "amount": "decimal(10,2)",
                     "status": "string"}
    assert rows(gateway, table("i_append")) == [(1, "a"), (2, "b"), (3, "c"), (5, "e")]
    assert rows(gateway, table("snap_orders", "id, status, dbt_valid_to IS NULL")) == [
        (1, "open", True), (2, "shipped", True)]
    state = project.parent / "state"
    shutil.copytree(project / "target", state)  # the manifest `dbt clone` clones from

    # Second round: batch 2 updates id 2 (day 1) and adds id 4 (day 2); the snapshot's order 1 is shipped.
    dbt(project, gateway, "build", "--event-time-start", "2024-01-02", "--event-time-end", "2024-01-03",
        variables={"round": 2})
    assert rows(gateway, table("i_append")) == [(1, "a"), (2, "B"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]
    # merge: id 2 updated but its excluded column kept from the first insert; id 4 inserted
    assert rows(gateway, table("i_merge", "id, name, first_batch")) == [
        (1, "a", 1), (2, "B", 1), (3, "c", 1), (4, "d", 2), (5, "e", 1)]
    assert rows(gateway, table("i_delete_insert")) == [(1, "a"), (2, "B"), (3, "c"), (4, "d"), (5, "e")]
    # insert_overwrite: the partitions of the new rows (days 1 and 2) replaced, day 3 kept
    assert rows(gateway, table("i_insert_overwrite", "id, name, day")) == [(2, "B", D1), (4, "d", D2), (5, "e", D3)]
    # replace_where day 2: its rows replaced by the new ones, the other days kept
    assert rows(gateway, table("i_replace_where", "id, name, day")) == [
        (1, "a", D1), (2, "b", D1), (4, "d", D2), (5, "e", D3)]
    # microbatch over day 2 only: day 2 rebuilt from the source (id 4 in), day 1's update not picked up
    assert rows(gateway, table("i_microbatch")) == [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]
    snapshot = rows(gateway, table("snap_orders", "id, status, dbt_valid_to IS NULL, dbt_valid_to = "
                                                  "(SELECT max(dbt_valid_from) FROM main.dbt_cov.snap_orders)"))
    assert snapshot == [(1, "open", False, True), (1, "shipped", True, None), (2, "shipped", True, None)]

    # The contract, docs and grants of m_contract, and the function it calls.
    assert rows(gateway, table("m_contract", "id, name, doubled")) == [
        (1, "a", 2), (2, "b", 4), (3, "c", 6), (5, "e", 10)]
    assert rows(gateway, f"SELECT main.{SCHEMA}.f_double(21)") == [(42,)]
    details = described(gateway, f"{SCHEMA}.m_contract")
    assert details["Comment"] == "Orders with a contract"
    columns = {row[0]: row for row in rows(gateway, f"DESCRIBE TABLE main.{SCHEMA}.m_contract")}
    assert columns["id"][2] == "The order id" and columns["name"][2] == "Who ordered"
    # Every relation (dbt_project.yml) persisted its docs and granted SELECT, after its second build too.
    for name in ["s_orders", "snap_orders", "src", "i_append", "i_merge", "i_insert_overwrite", "i_replace_where",
                 "i_delete_insert", "i_microbatch", "m_contract"]:
        grants = rows(gateway, f"SHOW GRANTS ON TABLE main.{SCHEMA}.{name}")
        assert any(READER in row and "SELECT" in row for row in grants), (name, grants)
        if name != "m_contract":
            assert described(gateway, f"{SCHEMA}.{name}")["Comment"].startswith(f"{name}: the "), name
            comments = {row[0]: row[2] for row in rows(gateway, f"DESCRIBE TABLE main.{SCHEMA}.{name}")}
            assert comments["id"] == f"{name}'s id", (name, comments)
    create = rows(gateway, f"SHOW CREATE TABLE main.{SCHEMA}.m_contract")[0][0].lower()
    assert "id int not null" in create and "constraint m_contract_pk primary key (`id`)" in create, create
    assert properties(gateway, f"{SCHEMA}.m_contract")["delta.constraints.id_positive"] == "id > 0"

    dbt(project, gateway, "docs", "generate")
    catalog = json.loads((project / "target" / "catalog.json").read_text())
    listed = {node["metadata"]["name"]: set(node["columns"]) for node in catalog["nodes"].values()}
    assert listed["m_contract"] == {"id", "name", "doubled"} and listed["i_merge"] == {"id", "name", "first_batch"}
    assert listed["s_orders"] == {"id", "ordered_on", "ordered_at", "amount", "status"}

    dbt(project, gateway, "clone", "--state", str(state), "--target", "clones", "--select", "m_contract")
    assert rows(gateway, f"SELECT id, doubled FROM main.{CLONES}.m_contract") == [(1, 2), (2, 4), (3, 6), (5, 10)]
    assert described(gateway, f"{CLONES}.m_contract")["Type"].upper() == "MANAGED"
