"""The policy's plan walker (policy/PlanWalker.java) replaced `TreeNode.toJSON` for reading Spark's plans: it must see
every node toJSON sees (the policy's checks were written against what toJSON shows), parsed and analysed, on queries,
commands and the attacks of tests/security, and report the names it reads exactly, whatever characters they hold."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from sluicegate.policy import spark_plans
from sluicegate.policy.errors import StatementNotAllowedError

QUERIES = [
    "SELECT 1",
    "SELECT id, count(*) FROM range(10) GROUP BY id HAVING count(*) > 0 ORDER BY id LIMIT 3",
    "WITH s AS (SELECT id FROM range(5)) SELECT * FROM s a JOIN s b ON a.id = b.id WHERE a.id IN (SELECT id FROM s)",
    "SELECT explode(array(1, 2)), transform(array(1), x -> x + 1), named_struct('a', 1)",
    "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS v(x, y) WHERE EXISTS (SELECT 1 FROM range(2) WHERE id = x)",
    "SELECT sum(id) OVER (PARTITION BY id % 2 ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM range(9)",
    "SELECT * FROM range(3) LATERAL VIEW explode(array(1, 2)) t AS e",
    "SELECT * FROM (SELECT id, id % 2 AS k FROM range(4)) PIVOT (sum(id) FOR k IN (0, 1))",
    "SELECT id FROM range(3) UNION ALL SELECT id FROM range(2) EXCEPT SELECT 1",
    "SELECT /*+ BROADCAST(a) */ * FROM range(2) a, range(2) b",
    "SELECT reflect('java.lang.System', 'exit', 0)",
    "SELECT TRANSFORM(id) USING 'cat' AS (l STRING) FROM range(1)",
]
COMMANDS = [
    "SET spark.sql.shuffle.partitions=3",
    "CREATE TEMPORARY VIEW tv AS SELECT 1 AS x",
    "CREATE TABLE t_walk (id INT) USING parquet",
    "CREATE TABLE t_walk2 USING parquet AS SELECT * FROM range(3)",
    "INSERT INTO t_walk SELECT 1",
    "EXPLAIN SELECT 1",
    "ADD JAR /tmp/x.jar",
    "CACHE TABLE c AS SELECT 1",
    "DESCRIBE FUNCTION abs",
]


def _json_classes(jplan: Any) -> set[str]:
    def walk(value: Any) -> Iterator[str]:
        if isinstance(value, dict):
            if isinstance(value.get("class"), str):
                yield value["class"]
            for item in value.values():
                yield from walk(item)
        elif isinstance(value, list):
            for item in value:
                yield from walk(item)
    return set(walk(json.loads(jplan.toJSON())))


@pytest.mark.parametrize("sql", QUERIES + COMMANDS)
def test_the_walker_sees_every_node_toJSON_sees_in_a_parsed_plan(spark: Any, sql: str) -> None:
    jplan = spark_plans.parse(spark, sql)
    nodes = spark_plans.plan_nodes(spark, jplan)
    assert nodes[0].qualified == jplan.getClass().getName()
    missing = _json_classes(jplan) - {node.qualified for node in nodes}
    assert not missing, f"toJSON shows what the walker does not: {missing}"


@pytest.mark.parametrize("sql", QUERIES[:10])
def test_the_walker_sees_every_node_toJSON_sees_in_an_analysed_plan(spark: Any, sql: str) -> None:
    jplan = spark.sql(sql)._jdf.queryExecution().analyzed()
    missing = _json_classes(jplan) - {node.qualified for node in spark_plans.plan_nodes(spark, jplan)}
    assert not missing, f"toJSON shows what the walker does not: {missing}"


def test_every_catalog_table_read_is_reported_by_database_and_name(spark: Any) -> None:
    """The tables whose owners the policy checks, in subqueries too (a table read twice may be reported once)."""
    spark.sql("CREATE DATABASE IF NOT EXISTS walk_db")
    for name in ("walk_a", "walk_b"):
        spark.sql(f"CREATE TABLE IF NOT EXISTS walk_db.{name} (id INT) USING parquet")
    df = spark.sql("SELECT * FROM walk_db.walk_a a JOIN walk_db.walk_a b USING (id) "
                   "WHERE id IN (SELECT id FROM walk_db.walk_b)")
    assert sorted(set(spark_plans.check_analyzed(df))) == [("walk_db", "walk_a"), ("walk_db", "walk_b")]


@pytest.mark.parametrize("name", ["reflect", "REFLECT", "java_method", "system.builtin.try_reflect"])
def test_reflection_is_refused_by_name_in_any_spelling(spark: Any, name: str) -> None:
    jplan = spark_plans.parse(spark, f"SELECT 1 + (SELECT length({name}('java.lang.System', 'exit', 0)))")
    with pytest.raises(StatementNotAllowedError, match="reflection"):
        spark_plans.check_parsed(spark_plans.plan_nodes(spark, jplan))


@pytest.mark.parametrize("name", ["`re\nflect`", "`reflect\t`", "`x\\nreflect`", "`a\\`"])
def test_a_function_name_with_control_characters_is_read_exactly(spark: Any, name: str) -> None:
    """A name that holds the walker's separators is not taken for another function, and breaks no line apart."""
    nodes = spark_plans.plan_nodes(spark, spark_plans.parse(spark, f"SELECT {name}(1)"))
    functions = [node for node in nodes if node.name == "UnresolvedFunction"]
    assert [node.details for node in functions] == [(name.strip("`"),)]
    assert all(node.qualified.startswith("org.apache.spark.") for node in nodes)
    spark_plans.check_parsed(nodes)  # not a reflection function: judged again, by Spark, when it resolves


def test_a_table_function_off_the_list_is_refused(spark: Any) -> None:
    nodes = spark_plans.plan_nodes(spark, spark_plans.parse(spark, "SELECT * FROM range(2), read_files('/etc')"))
    with pytest.raises(StatementNotAllowedError, match=r"read_files\(\) is not available"):
        spark_plans.check_parsed(nodes)


def test_a_command_below_the_root_is_refused(spark: Any) -> None:
    nodes = spark_plans.plan_nodes(spark, spark_plans.parse(spark, "EXPLAIN ADD JAR /tmp/x.jar"))
    assert nodes[0].name == "ExplainCommand"
    with pytest.raises(StatementNotAllowedError, match="ADD JAR"):
        spark_plans.check_parsed(nodes)
