"""Materialized views through PyHive: CREATE computes the result as one Delta commit, REFRESH recomputes it over one
pinned version of every input (and does nothing when no input changed), a failed refresh leaves the previous result,
DESCRIBE and event_log show what the view reflects, and the statements around them (SHOW, DROP, ALTER ... SCHEDULE)
behave as in Databricks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyhive_helpers import cursor_in, error_status, sorted_rows


@pytest.fixture()
def cursor(connect: Any, request: pytest.FixtureRequest) -> Any:
    cur = cursor_in(connect, "mv_" + request.node.name.removeprefix("test_")[:40].lower())
    cur.database = "mv_" + request.node.name.removeprefix("test_")[:40].lower()
    cur.execute("CREATE TABLE orders (id INT, customer STRING, amount DOUBLE)")
    cur.execute("INSERT INTO orders VALUES (1, 'ann', 10.0), (2, 'bob', 5.0), (3, 'ann', 2.5)")
    cur.execute("CREATE TABLE customers (name STRING, country STRING)")
    cur.execute("INSERT INTO customers VALUES ('ann', 'FR'), ('bob', 'DE')")
    return cur


def _describe(cursor: Any, name: str) -> dict[str, str]:
    cursor.execute(f"DESCRIBE EXTENDED {name}")
    return {row[0]: row[1] for row in cursor.fetchall()}


def _history(cursor: Any, name: str) -> list[tuple[Any, ...]]:
    cursor.execute(f"DESCRIBE HISTORY {name}")
    return cursor.fetchall()


GOLD = ("CREATE MATERIALIZED VIEW gold COMMENT 'revenue per country' AS "
        "SELECT c.country, count(*) AS orders, sum(o.amount) AS revenue "
        "FROM orders o JOIN customers c ON o.customer = c.name GROUP BY c.country")


def test_create_computes_the_result_in_one_commit(cursor: Any) -> None:
    cursor.execute(GOLD)
    assert sorted_rows(cursor, "SELECT * FROM gold") == [("DE", 1, 5.0), ("FR", 2, 12.5)]
    assert len(_history(cursor, "gold")) == 1
    info = _describe(cursor, "gold")
    assert info["Type"] == "MATERIALIZED_VIEW" and info["Catalog"] == "main"   # the gateway's catalog.name
    assert info["View Text"].startswith("SELECT c.country, count(*)")
    assert info["Refresh Schedule"] == "MANUAL"
    assert info["Latest Refresh Status"] == "COMPLETED"
    assert info["Last Refresh Type"] == "FULL"
    versions = dict(part.split("@v") for part in info["Input Versions"].split(", "))
    assert set(versions) == {f"{cursor.database}.orders", f"{cursor.database}.customers"}
    assert info["Comment"] == "revenue per country"


@pytest.fixture()
def database(cursor: Any) -> str:
    return str(cursor.database)


def test_refresh_recomputes_and_does_nothing_when_no_input_changed(cursor: Any, database: str) -> None:
    cursor.execute(GOLD)
    cursor.execute("REFRESH MATERIALIZED VIEW gold")
    assert len(_history(cursor, "gold")) == 1           # no input changed: no commit
    assert _describe(cursor, "gold")["Last Refresh Type"] == "UNCHANGED"
    cursor.execute("INSERT INTO orders VALUES (4, 'bob', 1.0)")
    cursor.execute("DELETE FROM customers WHERE name = 'ann'")
    assert sorted_rows(cursor, "SELECT * FROM gold") == [("DE", 1, 5.0), ("FR", 2, 12.5)]  # until refreshed
    cursor.execute("REFRESH MATERIALIZED VIEW gold")
    assert sorted_rows(cursor, "SELECT * FROM gold") == [("DE", 2, 6.0)]
    assert len(_history(cursor, "gold")) == 2
    info = _describe(cursor, "gold")
    # both inputs changed by about their size (and a sum of DOUBLEs): recomputed, with the reason
    assert info["Last Refresh Type"] == "FULL" and "a recompute is cheaper" in info["Last Refresh Reason"]
    cursor.execute("REFRESH MATERIALIZED VIEW gold FULL")
    assert len(_history(cursor, "gold")) == 3           # FULL recomputes even when nothing changed
    cursor.execute("REFRESH MATERIALIZED VIEW gold ASYNC")
    cursor.execute("REFRESH TABLE gold")                # Spark's cache refresh: nothing to recompute
    assert len(_history(cursor, "gold")) == 3
    assert "EXPECT_STREAMING_TABLE" in error_status(cursor, "REFRESH STREAMING TABLE gold").errorMessage
    # DROP of the wrong kind names the kind in words and the DROP that fits (executor/lookups.py to_drop_as)
    status = error_status(cursor, "DROP STREAMING TABLE gold")
    assert "EXPECT_STREAMING_TABLE" in status.errorMessage and "is a materialized view, not a streaming table" \
        in status.errorMessage and "use DROP MATERIALIZED VIEW" in status.errorMessage, status.errorMessage


def test_failed_refresh_keeps_the_previous_result(cursor: Any, database: str) -> None:
    cursor.execute("CREATE TABLE raw (v STRING)")
    cursor.execute("INSERT INTO raw VALUES ('1'), ('2')")
    cursor.execute("CREATE MATERIALIZED VIEW parsed AS SELECT CAST(v AS INT) AS n FROM raw")
    cursor.execute("INSERT INTO raw VALUES ('oops')")
    status = error_status(cursor, "REFRESH MATERIALIZED VIEW parsed")
    assert "CAST_INVALID_INPUT" in status.errorMessage
    assert sorted_rows(cursor, "SELECT * FROM parsed") == [(1,), (2,)]
    info = _describe(cursor, "parsed")
    assert info["Latest Refresh Status"] == "FAILED"
    assert "CAST_INVALID_INPUT" in info["Last Refresh Error"]
    cursor.execute("SELECT event_type, level, error FROM event_log(TABLE(parsed)) ORDER BY timestamp")
    events = cursor.fetchall()
    assert events[-1][1] == "ERROR" and "CAST_INVALID_INPUT" in events[-1][2]
    assert any(row[0] == "create_update" for row in events)
    cursor.execute("DELETE FROM raw WHERE v = 'oops'")
    cursor.execute("REFRESH MATERIALIZED VIEW parsed")
    assert _describe(cursor, "parsed")["Latest Refresh Status"] == "COMPLETED"


def test_create_or_refresh_and_or_replace(cursor: Any, database: str) -> None:
    cursor.execute("CREATE MATERIALIZED VIEW big (id, amount COMMENT 'in euros') "
                   "AS SELECT id, amount FROM orders WHERE amount > 3")
    assert sorted_rows(cursor, "SELECT * FROM big") == [(1, 10.0), (2, 5.0)]
    cursor.execute("CREATE OR REFRESH MATERIALIZED VIEW big (id, amount COMMENT 'in euros') "
                   "AS SELECT id, amount FROM orders WHERE amount > 3")
    assert len(_history(cursor, "big")) == 1            # the same definition, no input changed
    cursor.execute("DESCRIBE big")
    assert ("amount", "double", "in euros") in cursor.fetchall()
    cursor.execute("CREATE OR REPLACE MATERIALIZED VIEW big AS SELECT id, amount * 2 AS doubled FROM orders "
                   "WHERE amount > 3")
    assert sorted_rows(cursor, "SELECT * FROM big") == [(1, 20.0), (2, 10.0)]
    assert len(_history(cursor, "big")) == 2
    status = error_status(cursor, "CREATE MATERIALIZED VIEW big AS SELECT 1")
    assert status.sqlState == "42P07"
    cursor.execute("CREATE MATERIALIZED VIEW IF NOT EXISTS big AS SELECT 1")


def test_show_drop_and_wrong_drops(cursor: Any, database: str) -> None:
    cursor.execute("CREATE MATERIALIZED VIEW m1 AS SELECT * FROM orders")
    cursor.execute("CREATE VIEW plain AS SELECT * FROM orders")
    cursor.execute("SHOW MATERIALIZED VIEWS")
    assert [row[:3] for row in cursor.fetchall()] == [(database, "m1", "COMPLETED")]
    cursor.execute("SHOW MATERIALIZED VIEWS LIKE 'x*'")
    assert cursor.fetchall() == []
    tables = sorted_rows(cursor, "SHOW TABLES")
    assert (database, "m1", False) in tables
    cursor.execute("SHOW TABLE EXTENDED LIKE 'm1'")
    assert "Type: MATERIALIZED_VIEW" in cursor.fetchall()[0][3]
    for statement in ("DROP TABLE m1", "DROP VIEW m1"):
        assert "DROP MATERIALIZED VIEW" in error_status(cursor, statement).errorMessage
    assert "EXPECT_MATERIALIZED_VIEW" in error_status(cursor, "DROP MATERIALIZED VIEW plain").errorMessage
    replaced = error_status(cursor, "CREATE OR REPLACE TABLE m1 AS SELECT 1 AS x").errorMessage
    assert "a materialized view of that name" in replaced and "DROP MATERIALIZED VIEW" in replaced
    cursor.execute("DROP MATERIALIZED VIEW m1")
    cursor.execute("DROP MATERIALIZED VIEW IF EXISTS m1")
    assert "TABLE_OR_VIEW_NOT_FOUND" in error_status(cursor, "SELECT * FROM m1").errorMessage


def test_alter_schedule(cursor: Any, database: str) -> None:
    cursor.execute("CREATE MATERIALIZED VIEW sched SCHEDULE EVERY 2 HOURS AS SELECT * FROM orders")
    assert _describe(cursor, "sched")["Refresh Schedule"] == "EVERY 2 HOURS"
    assert "SCHEDULE_ALREADY_EXISTS" in error_status(
        cursor, "ALTER MATERIALIZED VIEW sched ADD SCHEDULE EVERY 1 HOUR").errorMessage
    cursor.execute("ALTER MATERIALIZED VIEW sched ALTER TRIGGER ON UPDATE")
    assert _describe(cursor, "sched")["Refresh Schedule"] == "TRIGGER ON UPDATE"
    cursor.execute("ALTER MATERIALIZED VIEW sched DROP SCHEDULE")
    assert _describe(cursor, "sched")["Refresh Schedule"] == "MANUAL"
    assert "SCHEDULE_DOES_NOT_EXIST" in error_status(cursor, "ALTER MATERIALIZED VIEW sched DROP SCHEDULE").errorMessage


def test_refused_queries(cursor: Any, database: str) -> None:
    status = error_status(cursor, "CREATE MATERIALIZED VIEW s AS SELECT * FROM STREAM(orders)")
    assert "INVALID_FLOW_QUERY_TYPE.STREAMING_RELATION_FOR_MATERIALIZED_VIEW" in status.errorMessage
    status = error_status(cursor, "CREATE MATERIALIZED VIEW r AS SELECT id FROM range(3)")
    assert "MATERIALIZED_VIEW_INPUT_NOT_VERSIONED" in status.errorMessage and "REFRESH POLICY FULL" in \
        status.errorMessage
    cursor.execute("CREATE MATERIALIZED VIEW r REFRESH POLICY FULL AS SELECT id FROM range(3)")
    assert sorted_rows(cursor, "SELECT * FROM r") == [(0,), (1,), (2,)]
    cursor.execute("REFRESH MATERIALIZED VIEW r")
    assert len(_history(cursor, "r")) == 2          # no versions to compare: always recomputed
    status = error_status(cursor, "CREATE MATERIALIZED VIEW e (id, CONSTRAINT pos EXPECT (id > 0)) "
                                  "AS SELECT id FROM orders")
    assert "MATERIALIZED_VIEW_EXPECTATIONS" in status.errorMessage
    status = error_status(cursor, "CREATE MATERIALIZED VIEW i REFRESH POLICY INCREMENTAL AS "
                                  "SELECT o.id FROM orders o LEFT JOIN customers c ON o.customer = c.name")
    assert "MATERIALIZED_VIEW_NOT_INCREMENTALIZABLE.OPERATOR_NOT_INCREMENTALIZABLE" in status.errorMessage
    assert "LEFT join" in status.errorMessage
    status = error_status(cursor, "CREATE MATERIALIZED VIEW i REFRESH POLICY INCREMENTAL STRICT AS "
                                  "SELECT id, rand() AS r FROM orders")
    assert "MATERIALIZED_VIEW_NOT_INCREMENTALIZABLE.EXPRESSION_NOT_DETERMINISTIC" in status.errorMessage
    assert "materialized view" in error_status(cursor, "INSERT INTO r VALUES (5)").errorMessage


def test_chains_and_event_log(cursor: Any, database: str) -> None:
    cursor.execute("CREATE MATERIALIZED VIEW silver AS SELECT customer, amount FROM orders WHERE amount > 1")
    cursor.execute("CREATE MATERIALIZED VIEW gold2 AS SELECT customer, sum(amount) AS total FROM silver "
                   "GROUP BY customer")
    assert sorted_rows(cursor, "SELECT * FROM gold2") == [("ann", 12.5), ("bob", 5.0)]
    cursor.execute("INSERT INTO orders VALUES (9, 'bob', 4.0)")
    cursor.execute("REFRESH MATERIALIZED VIEW gold2")
    assert _describe(cursor, "gold2")["Last Refresh Type"] == "UNCHANGED"   # silver is not refreshed yet
    cursor.execute("REFRESH MATERIALIZED VIEW silver")
    cursor.execute("REFRESH MATERIALIZED VIEW gold2")
    assert sorted_rows(cursor, "SELECT * FROM gold2") == [("ann", 12.5), ("bob", 9.0)]
    cursor.execute("SELECT origin, details FROM event_log(TABLE(gold2)) WHERE event_type = 'create_update'")
    rows = cursor.fetchall()
    assert json.loads(rows[0][0])["pipeline_type"] == "MATERIALIZED_VIEW"
    assert json.loads(rows[-1][1])["create_update"]["input_versions"][f"{database}.silver"] >= 1


def test_incremental_refresh_of_a_filter(cursor: Any, database: str) -> None:
    query = "SELECT id, amount * 2 AS doubled FROM orders WHERE amount > 3"
    cursor.execute(f"EXPLAIN CREATE MATERIALIZED VIEW big_orders AS {query}")
    assert any(row[0].startswith("Incremental: yes") for row in cursor.fetchall())
    cursor.execute("EXPLAIN CREATE MATERIALIZED VIEW g AS SELECT customer, count(DISTINCT id) FROM orders GROUP BY 1")
    assert any("NOT_INCREMENTALIZABLE.OPERATOR_NOT_INCREMENTALIZABLE" in row[0] for row in cursor.fetchall())
    cursor.execute(f"CREATE MATERIALIZED VIEW big_orders REFRESH POLICY INCREMENTAL AS {query}")
    cursor.execute("INSERT INTO orders VALUES (4, 'bob', 7.0), (5, 'bob', 1.0)")
    cursor.execute("REFRESH MATERIALIZED VIEW big_orders")
    info = _describe(cursor, "big_orders")
    assert info["Last Refresh Type"] == "INCREMENTAL" and "-0 files" in info["Last Refresh Reason"]
    assert sorted_rows(cursor, "SELECT * FROM big_orders") == [(1, 20.0), (2, 10.0), (4, 14.0)]
    assert "incremental" in _history(cursor, "big_orders")[0][5]   # the newest commit: an append
    cursor.execute("DELETE FROM orders WHERE id = 1")               # a remove: taken out of the view's files
    cursor.execute("REFRESH MATERIALIZED VIEW big_orders")
    assert _describe(cursor, "big_orders")["Last Refresh Type"] == "INCREMENTAL"
    assert sorted_rows(cursor, "SELECT * FROM big_orders") == [(2, 10.0), (4, 14.0)]


def test_incremental_strict_fails_a_refresh_that_cannot_be(cursor: Any, database: str) -> None:
    cursor.execute("CREATE MATERIALIZED VIEW strict_v REFRESH POLICY INCREMENTAL STRICT AS "
                   "SELECT customer, sum(amount) AS total FROM orders GROUP BY customer")
    cursor.execute("UPDATE orders SET amount = 1.0 WHERE id = 2")      # a sum of DOUBLEs: only a recompute is exact
    status = error_status(cursor, "REFRESH MATERIALIZED VIEW strict_v")
    assert "MATERIALIZED_VIEW_NOT_INCREMENTALIZABLE" in status.errorMessage and "double" in status.errorMessage
    assert sorted_rows(cursor, "SELECT * FROM strict_v") == [("ann", 12.5), ("bob", 5.0)]   # the previous result
    cursor.execute("REFRESH MATERIALIZED VIEW strict_v FULL")
    assert sorted_rows(cursor, "SELECT * FROM strict_v") == [("ann", 12.5), ("bob", 1.0)]


def test_incremental_aggregation_merges_the_groups_a_change_touches(cursor: Any, database: str) -> None:
    _merge_changes_into_groups(cursor)


@pytest.mark.parametrize("path", ["shuffled", "files"])
def test_incremental_aggregation_merge_paths(connect: Any, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """The other two ways a change is merged give what the query gives too: a change too large for one task
    (an aggregation after a shuffle), and a view too large to rewrite whole (only the files holding a touched group
    are rewritten)."""
    from sluicegate.executor.materialized_views import incremental as mv_incremental

    monkeypatch.setattr(mv_incremental, "ONE_TASK_BYTES" if path == "shuffled" else "SMALL_VIEW_ROWS", -1)
    cursor = cursor_in(connect, f"mv_merge_{path}")
    cursor.execute("DROP MATERIALIZED VIEW IF EXISTS by_shop")
    cursor.execute("DROP TABLE IF EXISTS sales")
    _merge_changes_into_groups(cursor)


def _merge_changes_into_groups(cursor: Any) -> None:
    cursor.execute("CREATE TABLE sales (id INT, shop STRING, qty INT, price DECIMAL(10,2))")
    cursor.execute("INSERT INTO sales VALUES " + ", ".join(
        f"({i}, 's{i % 4}', {i % 7}, {i % 5}.25)" for i in range(40)))
    cursor.execute("INSERT INTO sales VALUES (40, 'big', 1, 1.00)")      # a file of its own: its group moves alone
    query = ("SELECT shop, count(*) AS n, count(qty) AS with_qty, sum(qty) AS units, avg(qty) AS mean_qty, "
             "avg(price) AS mean_price, max(id) AS last_id, sum(qty) * 2 + count(*) AS mixed "
             "FROM sales WHERE qty <> 3 GROUP BY shop")
    cursor.execute(f"CREATE MATERIALIZED VIEW by_shop REFRESH POLICY INCREMENTAL AS {query}")
    cursor.execute("SELECT * FROM by_shop LIMIT 1")
    assert len(cursor.description) == 8                                   # the state columns stay hidden
    changes = [
        "INSERT INTO sales VALUES (41, 's1', 2, 9.99), (42, 'new', NULL, 1.00), (43, 's2', 3, 1.00)",
        "UPDATE sales SET qty = qty + 1 WHERE shop = 's0'",                  # max(id) of s0 is removed and added
        "DELETE FROM sales WHERE id = 42",                                  # the group 'new' goes
        "DELETE FROM sales WHERE id = 40",                                  # so does 'big'
        "INSERT INTO sales VALUES (44, 's3', 5, NULL)",
    ]
    for change in changes:
        cursor.execute(change)
        cursor.execute("REFRESH MATERIALIZED VIEW by_shop")
        info = _describe(cursor, "by_shop")
        assert info["Last Refresh Type"] == "INCREMENTAL", (change, info["Last Refresh Reason"])
        assert sorted_rows(cursor, "SELECT * FROM by_shop") == sorted_rows(cursor, query), change
    assert "big" not in {row[0] for row in sorted_rows(cursor, "SELECT shop FROM by_shop")}
    # a removed row that was its group's max: recomputed (exactly), and said so
    cursor.execute("DELETE FROM sales WHERE id = 44")
    cursor.execute("REFRESH MATERIALIZED VIEW by_shop")
    info = _describe(cursor, "by_shop")
    assert info["Last Refresh Type"] == "FULL" and "min or max" in info["Last Refresh Reason"]
    assert sorted_rows(cursor, "SELECT * FROM by_shop") == sorted_rows(cursor, query)


def test_incremental_join_and_global_aggregate(cursor: Any, database: str) -> None:
    cursor.execute("CREATE TABLE facts (id INT, customer STRING, units INT)")
    cursor.execute("INSERT INTO facts VALUES " + ", ".join(f"({i}, '{'ann' if i % 2 else 'bob'}', {i})"
                                                           for i in range(30)))
    joined = ("SELECT f.id, c.country, f.units FROM facts f JOIN customers c ON f.customer = c.name "
              "WHERE f.units > 2")
    total = "SELECT count(*) AS n, sum(f.units) AS units FROM facts f JOIN customers c ON f.customer = c.name"
    cursor.execute(f"CREATE MATERIALIZED VIEW joined AS {joined}")
    cursor.execute(f"CREATE MATERIALIZED VIEW total AS {total}")
    for change in ["INSERT INTO facts VALUES (30, 'ann', 7), (31, 'zed', 9)",
                   "UPDATE facts SET units = units + 1 WHERE id = 5",
                   "DELETE FROM facts WHERE id < 10",
                   "INSERT INTO customers VALUES ('zed', 'IT')"]:         # the small side changes: its rows join
        cursor.execute(change)
        for view, query in (("joined", joined), ("total", total)):
            cursor.execute(f"REFRESH MATERIALIZED VIEW {view}")
            info = _describe(cursor, view)
            assert info["Last Refresh Type"] == "INCREMENTAL", (view, change, info["Last Refresh Reason"])
            assert sorted_rows(cursor, f"SELECT * FROM {view}") == sorted_rows(cursor, query), (view, change)
    cursor.execute("DELETE FROM facts")                                     # a global aggregate keeps its one row
    cursor.execute("REFRESH MATERIALIZED VIEW total")
    assert sorted_rows(cursor, "SELECT * FROM total") == [(0, None)]


def test_a_view_commit_the_catalog_did_not_record_is_recomputed(cursor: Any, database: str,
                                                                 warehouse: Any) -> None:
    """A refresh killed between its commit and its catalog row leaves the view ahead of what the row says it
    reflects; applying the change again would count it twice, so the next refresh recomputes."""
    from dataclasses import replace

    from sluicegate.catalog.store import CatalogStore
    from sluicegate.executor.materialized_views.refresh import MaterializedViewState

    cursor.execute("CREATE MATERIALIZED VIEW per_customer AS SELECT customer, count(*) AS n FROM orders "
                   "GROUP BY customer")
    cursor.execute("INSERT INTO orders VALUES (4, 'bob', 7.0)")
    cursor.execute("REFRESH MATERIALIZED VIEW per_customer")
    assert _describe(cursor, "per_customer")["Last Refresh Type"] == "INCREMENTAL"
    store = CatalogStore.for_warehouse(warehouse)          # the row as a kill after the commit leaves it
    row = store.get_stream(database, "per_customer")
    state = MaterializedViewState.from_json(row.plan_json)
    before = {name: version - 1 if name.endswith(".orders") else version
              for name, version in state.input_versions.items()}
    store.update_stream(database, "per_customer", plan_json=replace(
        state, input_versions=before, last_version=(state.last_version or 1) - 1).to_json())
    cursor.execute("REFRESH MATERIALIZED VIEW per_customer")
    info = _describe(cursor, "per_customer")
    assert info["Last Refresh Type"] == "FULL" \
        and "catalog row recorded" in info["Last Refresh Reason"]
    assert sorted_rows(cursor, "SELECT * FROM per_customer") == [("ann", 2), ("bob", 2)]
