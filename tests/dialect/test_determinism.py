"""What the result cache may keep: a query whose every function and clause computes the same rows from the same data.
An allow-list: what is unknown (a UDF, a function of a newer Spark) is not cacheable."""

from __future__ import annotations

import pytest

from sluicegate.dialect.determinism import nondeterminism
from sluicegate.dialect.parse import parse

# the TPC-H / TPC-DS shapes a BI dashboard sends
DETERMINISTIC = [
    "SELECT l_returnflag, sum(l_quantity), avg(l_extendedprice * (1 - l_discount)), count(*) FROM lineitem "
    "WHERE l_shipdate <= date '1998-12-01' - interval 90 days GROUP BY l_returnflag ORDER BY l_returnflag",
    "SELECT o.id, c.name FROM orders o JOIN customer c ON o.ck = c.ck LEFT JOIN nation n USING (nk) "
    "WHERE o.d BETWEEN DATE'2024-01-01' AND date_add(DATE'2024-01-01', 30) AND c.name LIKE 'A%' "
    "AND o.id IN (SELECT id FROM refunds) AND NOT EXISTS (SELECT 1 FROM x WHERE x.id = o.id) LIMIT 10",
    "WITH c AS (SELECT a, rank() OVER (PARTITION BY b ORDER BY c DESC) AS r FROM t) SELECT * FROM c WHERE r <= 3",
    "SELECT CASE WHEN a > 0 THEN 'p' ELSE 'n' END, coalesce(b, 0), cast(c AS DECIMAL(10, 2)), substr(d, 1, 2), "
    "round(e, 2), year(f), extract(month FROM f), upper(g), concat_ws('-', g, h), nvl(h, 'x') FROM t",
    "SELECT a, sum(b) FROM t GROUP BY ROLLUP (a) HAVING grouping(a) = 0 UNION ALL SELECT 1, 2 FROM u",
    "SELECT unix_timestamp(d), to_date(s), stddev_samp(x), bround(y, 2), pmod(z, 7) FROM t",
    "SELECT current_database(), current_catalog(), count(*) FROM t",
    "SELECT a FROM t LATERAL VIEW explode(arr) x AS y",
]

NOT_DETERMINISTIC = {
    "SELECT a, rand() FROM t": "rand()",
    "SELECT a FROM t WHERE b > randn(7)": "randn()",
    "SELECT uuid(), a FROM t": "uuid()",
    "SELECT now(), a FROM t": "current_timestamp()",
    "SELECT current_timestamp(), a FROM t": "current_timestamp()",
    "SELECT current_timestamp, a FROM t": "current_timestamp()",
    "SELECT a FROM t WHERE d = current_date()": "current_date()",
    "SELECT unix_timestamp(), a FROM t": "current_timestamp()",
    "SELECT current_user(), a FROM t": "current_user()",
    "SELECT a FROM t WHERE owner = session_user()": "session_user()",
    "SELECT input_file_name(), a FROM t": "input_file_name()",
    "SELECT monotonically_increasing_id(), a FROM t": "monotonically_increasing_id()",
    "SELECT spark_partition_id() FROM t": "spark_partition_id()",
    "SELECT first(a) FROM t": "first()",
    "SELECT collect_list(a) FROM t": "array_agg()",
    "SELECT shuffle(arr) FROM t": "shuffle()",
    "SELECT my_udf(a) FROM t": "my_udf()",
    "SELECT a FROM t TABLESAMPLE (10 PERCENT)": "TABLESAMPLE",
    "SELECT * FROM range(10)": "the table function range()",
    "SELECT * FROM read_files('/x', format => 'csv')": "the table function read_files()",
}


@pytest.mark.parametrize("sql", DETERMINISTIC)
def test_deterministic_queries_may_be_cached(sql: str) -> None:
    assert nondeterminism(parse(sql)) is None


@pytest.mark.parametrize(("sql", "reason"), NOT_DETERMINISTIC.items())
def test_what_reads_the_clock_the_session_or_chance_is_never_cached(sql: str, reason: str) -> None:
    assert nondeterminism(parse(sql)) == reason


def test_a_nondeterministic_call_deep_inside_a_subquery_is_found() -> None:
    sql = "SELECT a FROM t WHERE b IN (SELECT b FROM (SELECT b, rand() AS r FROM u) WHERE r > 0.5)"
    assert nondeterminism(parse(sql)) == "rand()"
