"""The TPC-H and TPC-DS shaped data and queries the benchmarks share (bench/result_cache_bench.py,
bench/tpc_bench.py): each table made on a server by one CTAS over `range(rows)` with deterministic values, so both
servers get the same rows (Delta on sluicegate, Parquet on Spark's Thrift server) and the answers are exact (money as
DECIMAL), comparable row for row. No generator is installed here (dbgen / dsdgen), so the columns are the ones the
queries read, their values spread so that every filter keeps some rows; the query texts are the benchmarks' own, with
ORDER BY made total where a LIMIT would otherwise cut through ties.
"""

from __future__ import annotations

import time
from typing import Any

MONEY = "CAST({} AS DECIMAL(15,2))"


def tpch_tables(scale: float) -> dict[str, tuple[int, str]]:
    """Each table's rows and the projection over `range(rows)` (column `id`) that makes them."""
    lineitems = max(int(6_000_000 * scale), 1000)
    orders = max(lineitems // 4, 250)
    customers = max(orders // 10, 25)
    parts = max(customers // 8, 10)
    suppliers = max(parts // 20, 5)
    money = MONEY
    return {
        "region": (5, "id AS r_regionkey, element_at(array('AFRICA','AMERICA','ASIA','EUROPE','MIDDLE EAST'), "
                      "CAST(id AS INT) + 1) AS r_name"),
        "nation": (25, "id AS n_nationkey, concat('NATION', id) AS n_name, id % 5 AS n_regionkey"),
        "supplier": (suppliers, f"id AS s_suppkey, concat('Supplier#', id) AS s_name, id % 25 AS s_nationkey, "
                                f"{money.format('(id * 37) % 10000 - 999')} AS s_acctbal"),
        "customer": (customers, f"id AS c_custkey, concat('Customer#', id) AS c_name, id % 25 AS c_nationkey, "
                                f"{money.format('(id * 53) % 10000 - 999')} AS c_acctbal, "
                                "element_at(array('AUTOMOBILE','BUILDING','FURNITURE','HOUSEHOLD','MACHINERY'), "
                                "CAST(id % 5 AS INT) + 1) AS c_mktsegment"),
        "part": (parts, "id AS p_partkey, concat('Part#', id) AS p_name, "
                        "element_at(array('PROMO BRUSHED', 'STANDARD POLISHED', 'ECONOMY ANODIZED', 'PROMO PLATED'), "
                        "CAST(id % 4 AS INT) + 1) AS p_type, concat('Brand#', id % 5) AS p_brand, "
                        "CAST(id % 50 + 1 AS INT) AS p_size"),
        "orders": (orders, f"id AS o_orderkey, id % {customers} AS o_custkey, "
                           "element_at(array('F','O','P'), CAST(id % 3 AS INT) + 1) AS o_orderstatus, "
                           f"{money.format('(id * 97) % 500000 / 1.0')} AS o_totalprice, "
                           "date_add(DATE'1992-01-01', CAST((id * 7) % 2400 AS INT)) AS o_orderdate, "
                           "concat(CAST(id % 5 + 1 AS STRING), '-PRIORITY') AS o_orderpriority"),
        "lineitem": (lineitems, f"id DIV 4 AS l_orderkey, (id * 13) % {parts} AS l_partkey, "
                                f"(id * 7) % {suppliers} AS l_suppkey, CAST(id % 4 + 1 AS INT) AS l_linenumber, "
                                f"{money.format('(id % 50) + 1')} AS l_quantity, "
                                f"{money.format('((id * 31) % 100000) / 1.0 + 900')} AS l_extendedprice, "
                                f"{money.format('(id % 11) / 100.0')} AS l_discount, "
                                f"{money.format('(id % 9) / 100.0')} AS l_tax, "
                                "element_at(array('A','N','R'), CAST(id % 3 AS INT) + 1) AS l_returnflag, "
                                "element_at(array('F','O'), CAST(id % 2 AS INT) + 1) AS l_linestatus, "
                                "date_add(DATE'1992-01-02', CAST((id * 11) % 2500 AS INT)) AS l_shipdate, "
                                "date_add(DATE'1992-01-30', CAST((id * 11) % 2500 AS INT)) AS l_commitdate, "
                                "date_add(DATE'1992-02-10', CAST((id * 17) % 2500 AS INT)) AS l_receiptdate, "
                                "element_at(array('MAIL','SHIP','AIR','TRUCK','RAIL'), CAST(id % 5 AS INT) + 1) "
                                "AS l_shipmode"),
    }


TPCH_QUERIES = {
    "q1": """SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
  sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
  sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, avg(l_quantity) AS avg_qty,
  avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, count(*) AS count_order
FROM tpch.lineitem WHERE l_shipdate <= date_sub(DATE'1998-12-01', 90)
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus""",
    "q3": """SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate
FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.lineitem ON l_orderkey = o_orderkey
WHERE c_mktsegment = 'BUILDING' AND o_orderdate < DATE'1995-03-15' AND l_shipdate > DATE'1995-03-15'
GROUP BY l_orderkey, o_orderdate ORDER BY revenue DESC, o_orderdate, l_orderkey LIMIT 10""",
    "q5": """SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.lineitem ON l_orderkey = o_orderkey
  JOIN tpch.supplier ON l_suppkey = s_suppkey AND c_nationkey = s_nationkey
  JOIN tpch.nation ON s_nationkey = n_nationkey JOIN tpch.region ON n_regionkey = r_regionkey
WHERE r_name = 'ASIA' AND o_orderdate >= DATE'1994-01-01' AND o_orderdate < DATE'1995-01-01'
GROUP BY n_name ORDER BY revenue DESC, n_name""",
    "q6": """SELECT sum(l_extendedprice * l_discount) AS revenue FROM tpch.lineitem
WHERE l_shipdate >= DATE'1994-01-01' AND l_shipdate < DATE'1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07
  AND l_quantity < 24""",
    "q10": """SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal, n_name
FROM tpch.customer JOIN tpch.orders ON c_custkey = o_custkey JOIN tpch.lineitem ON l_orderkey = o_orderkey
  JOIN tpch.nation ON c_nationkey = n_nationkey
WHERE o_orderdate >= DATE'1993-10-01' AND o_orderdate < DATE'1994-01-01' AND l_returnflag = 'R'
GROUP BY c_custkey, c_name, c_acctbal, n_name ORDER BY revenue DESC, c_custkey LIMIT 20""",
    "q12": """SELECT l_shipmode,
  sum(CASE WHEN o_orderpriority = '1-PRIORITY' OR o_orderpriority = '2-PRIORITY' THEN 1 ELSE 0 END) AS high,
  sum(CASE WHEN o_orderpriority <> '1-PRIORITY' AND o_orderpriority <> '2-PRIORITY' THEN 1 ELSE 0 END) AS low
FROM tpch.orders JOIN tpch.lineitem ON o_orderkey = l_orderkey
WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_receiptdate >= DATE'1994-01-01' AND l_receiptdate < DATE'1995-01-01'
GROUP BY l_shipmode ORDER BY l_shipmode""",
    "q14": """SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END)
  / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM tpch.lineitem JOIN tpch.part ON l_partkey = p_partkey
WHERE l_shipdate >= DATE'1995-09-01' AND l_shipdate < DATE'1995-10-01'""",
    "q19": """SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM tpch.lineitem JOIN tpch.part ON p_partkey = l_partkey
WHERE (p_brand = 'Brand#1' AND l_quantity BETWEEN 1 AND 11 AND p_size BETWEEN 1 AND 5
       AND l_shipmode IN ('AIR', 'MAIL'))
   OR (p_brand = 'Brand#2' AND l_quantity BETWEEN 10 AND 20 AND p_size BETWEEN 1 AND 10
       AND l_shipmode IN ('AIR', 'TRUCK'))""",
}


def tpcds_tables(scale: float) -> dict[str, tuple[int, str]]:
    """TPC-DS's store-sales star (the tables its q3, q7, q42, q43, q52, q55 and q96 read): store_sales 2,880,000 x
    scale rows (at least 10,000), the dimensions at fixed sizes; dates 1998-01-01 onwards, 2,200 days."""
    sales = max(int(2_880_000 * scale), 10_000)
    money = MONEY
    return {
        "date_dim": (2200, "id AS d_date_sk, date_add(DATE'1998-01-01', CAST(id AS INT)) AS d_date, "
                           "year(date_add(DATE'1998-01-01', CAST(id AS INT))) AS d_year, "
                           "month(date_add(DATE'1998-01-01', CAST(id AS INT))) AS d_moy, "
                           "date_format(date_add(DATE'1998-01-01', CAST(id AS INT)), 'EEEE') AS d_day_name"),
        "item": (2000, "id AS i_item_sk, concat('ITEM', lpad(CAST(id DIV 2 AS STRING), 8, '0')) AS i_item_id, "
                       "CAST(1000 + id % 50 AS INT) AS i_brand_id, concat('brand#', id % 50) AS i_brand, "
                       "CAST(id % 10 AS INT) AS i_category_id, "
                       "element_at(array('Books','Children','Electronics','Home','Jewelry','Men','Music','Shoes',"
                       "'Sports','Women'), CAST(id % 10 AS INT) + 1) AS i_category, "
                       "CAST(id DIV 10 % 200 AS INT) AS i_manufact_id, CAST(id DIV 20 % 100 AS INT) AS i_manager_id"),
        "store": (12, "id AS s_store_sk, concat('STORE', id) AS s_store_id, "
                      "element_at(array('ought','able','ese','anti','cally','bar'), CAST(id % 6 AS INT) + 1) "
                      "AS s_store_name, CAST(-5 - id % 2 AS DECIMAL(5,2)) AS s_gmt_offset"),
        "customer_demographics": (1000, "id AS cd_demo_sk, element_at(array('M','F'), CAST(id % 2 AS INT) + 1) "
                                        "AS cd_gender, element_at(array('S','M','D','W','U'), "
                                        "CAST(id DIV 2 % 5 AS INT) + 1) AS cd_marital_status, "
                                        "element_at(array('Primary','Secondary','College','2 yr Degree',"
                                        "'4 yr Degree','Advanced Degree','Unknown'), CAST(id DIV 10 % 7 AS INT) + 1) "
                                        "AS cd_education_status"),
        "promotion": (300, "id AS p_promo_sk, element_at(array('Y','N'), CAST(id % 2 AS INT) + 1) AS p_channel_email, "
                           "element_at(array('Y','N'), CAST(id DIV 2 % 2 AS INT) + 1) AS p_channel_event"),
        "household_demographics": (7200, "id AS hd_demo_sk, CAST(id % 10 AS INT) AS hd_dep_count, "
                                         "CAST(id DIV 10 % 5 AS INT) AS hd_vehicle_count"),
        "time_dim": (86400, "id AS t_time_sk, CAST(id DIV 3600 AS INT) AS t_hour, "
                            "CAST(id DIV 60 % 60 AS INT) AS t_minute"),
        "store_sales": (sales, "(id * 7) % 2200 AS ss_sold_date_sk, (id * 7919) % 86400 AS ss_sold_time_sk, "
                               "(id * 13) % 2000 AS ss_item_sk, (id * 17) % 1000 AS ss_cdemo_sk, "
                               "(id * 19) % 7200 AS ss_hdemo_sk, id % 12 AS ss_store_sk, "
                               "(id * 23) % 300 AS ss_promo_sk, CAST(id % 100 + 1 AS INT) AS ss_quantity, "
                               f"{money.format('((id * 31) % 20000) / 100.0 + 1')} AS ss_list_price, "
                               f"{money.format('((id * 29) % 20000) / 100.0')} AS ss_sales_price, "
                               f"{money.format('(id % 7) * 1.5')} AS ss_coupon_amt, "
                               f"{money.format('((id * 37) % 500000) / 100.0')} AS ss_ext_sales_price"),
    }


TPCDS_QUERIES = {
    "ds3": """SELECT dt.d_year, item.i_brand_id AS brand_id, item.i_brand AS brand, sum(ss_ext_sales_price) AS sum_agg
FROM tpcds.date_dim dt, tpcds.store_sales, tpcds.item
WHERE dt.d_date_sk = store_sales.ss_sold_date_sk AND store_sales.ss_item_sk = item.i_item_sk
  AND item.i_manufact_id = 128 AND dt.d_moy = 11
GROUP BY dt.d_year, item.i_brand, item.i_brand_id ORDER BY dt.d_year, sum_agg DESC, brand_id LIMIT 100""",
    "ds7": """SELECT i_item_id, avg(ss_quantity) AS agg1, avg(ss_list_price) AS agg2, avg(ss_coupon_amt) AS agg3,
  avg(ss_sales_price) AS agg4
FROM tpcds.store_sales, tpcds.customer_demographics, tpcds.date_dim, tpcds.item, tpcds.promotion
WHERE ss_sold_date_sk = d_date_sk AND ss_item_sk = i_item_sk AND ss_cdemo_sk = cd_demo_sk AND ss_promo_sk = p_promo_sk
  AND cd_gender = 'M' AND cd_marital_status = 'S' AND cd_education_status = 'College'
  AND (p_channel_email = 'N' OR p_channel_event = 'N') AND d_year = 2000
GROUP BY i_item_id ORDER BY i_item_id LIMIT 100""",
    "ds42": """SELECT dt.d_year, item.i_category_id, item.i_category, sum(ss_ext_sales_price) AS total
FROM tpcds.date_dim dt, tpcds.store_sales, tpcds.item
WHERE dt.d_date_sk = store_sales.ss_sold_date_sk AND store_sales.ss_item_sk = item.i_item_sk
  AND item.i_manager_id = 1 AND dt.d_moy = 11 AND dt.d_year = 2000
GROUP BY dt.d_year, item.i_category_id, item.i_category
ORDER BY total DESC, dt.d_year, item.i_category_id, item.i_category LIMIT 100""",
    "ds43": """SELECT s_store_name, s_store_id,
  sum(CASE WHEN d_day_name = 'Sunday' THEN ss_sales_price END) AS sun_sales,
  sum(CASE WHEN d_day_name = 'Monday' THEN ss_sales_price END) AS mon_sales,
  sum(CASE WHEN d_day_name = 'Tuesday' THEN ss_sales_price END) AS tue_sales,
  sum(CASE WHEN d_day_name = 'Wednesday' THEN ss_sales_price END) AS wed_sales,
  sum(CASE WHEN d_day_name = 'Thursday' THEN ss_sales_price END) AS thu_sales,
  sum(CASE WHEN d_day_name = 'Friday' THEN ss_sales_price END) AS fri_sales,
  sum(CASE WHEN d_day_name = 'Saturday' THEN ss_sales_price END) AS sat_sales
FROM tpcds.date_dim, tpcds.store_sales, tpcds.store
WHERE d_date_sk = ss_sold_date_sk AND s_store_sk = ss_store_sk AND s_gmt_offset = -5 AND d_year = 2000
GROUP BY s_store_name, s_store_id
ORDER BY s_store_name, s_store_id, sun_sales, mon_sales, tue_sales, wed_sales, thu_sales, fri_sales, sat_sales
LIMIT 100""",
    "ds52": """SELECT dt.d_year, item.i_brand_id AS brand_id, item.i_brand AS brand,
  sum(ss_ext_sales_price) AS ext_price
FROM tpcds.date_dim dt, tpcds.store_sales, tpcds.item
WHERE dt.d_date_sk = store_sales.ss_sold_date_sk AND store_sales.ss_item_sk = item.i_item_sk
  AND item.i_manager_id = 1 AND dt.d_moy = 11 AND dt.d_year = 2000
GROUP BY dt.d_year, item.i_brand, item.i_brand_id ORDER BY dt.d_year, ext_price DESC, brand_id LIMIT 100""",
    "ds55": """SELECT i_brand_id AS brand_id, i_brand AS brand, sum(ss_ext_sales_price) AS ext_price
FROM tpcds.date_dim, tpcds.store_sales, tpcds.item
WHERE d_date_sk = ss_sold_date_sk AND ss_item_sk = i_item_sk AND i_manager_id = 28 AND d_moy = 11 AND d_year = 1999
GROUP BY i_brand, i_brand_id ORDER BY ext_price DESC, brand_id LIMIT 100""",
    "ds96": """SELECT count(*) AS cnt
FROM tpcds.store_sales, tpcds.household_demographics, tpcds.time_dim, tpcds.store
WHERE ss_sold_time_sk = time_dim.t_time_sk AND ss_hdemo_sk = household_demographics.hd_demo_sk
  AND ss_store_sk = s_store_sk AND time_dim.t_hour = 20 AND time_dim.t_minute >= 30
  AND household_demographics.hd_dep_count = 7 AND store.s_store_name = 'ese'
ORDER BY cnt LIMIT 100""",
}


def timed(cursor: Any, sql: str) -> tuple[float, list[tuple[Any, ...]], str]:
    """Seconds from execute to the last row fetched, the rows, and the operation's id."""
    started = time.perf_counter()
    cursor.execute(sql)
    rows = cursor.fetchall()
    return time.perf_counter() - started, rows, cursor._operationHandle.operationId.guid.hex()


def make_tables(cursor: Any, schema: str, tables: dict[str, tuple[int, str]], using: str) -> float:
    """`schema` and its tables made by CTAS (`USING delta` or `parquet`); the seconds it took."""
    started = time.perf_counter()
    cursor.execute(f"CREATE DATABASE IF NOT EXISTS {schema}")
    for name, (rows, projection) in tables.items():
        cursor.execute(f"CREATE TABLE {schema}.{name} USING {using} AS SELECT {projection} FROM range({rows})")
    return time.perf_counter() - started
