-- A medallion chain ending in a materialized view: mv_bronze and mv_silver are streaming tables (append-only, each batch
-- processed once), mv_gold is a materialized view over mv_silver joined with a customers dimension that gets updates.
--
-- * mv_bronze lands the raw order files as they are; mv_silver streams from mv_bronze and keeps the paid orders, cleaned.
-- * customers is an ordinary Delta table: a dimension whose rows change in place (UPDATE), which a stream could not
--   follow but a materialized view can: each REFRESH recomputes mv_gold over one pinned version of mv_silver and of
--   customers and replaces its rows in one Delta commit, so mv_gold always equals its query at those versions.
-- * mv_gold has no schedule here, so it changes on REFRESH only (TRIGGER ON UPDATE would refresh it when mv_silver or
--   customers gets a new version); DESCRIBE EXTENDED mv_gold shows the input versions it reflects.
-- To run it by hand (in `default`, or any database: no other example uses its table names), from the
-- repository's folder, with the gateway of `./run serve` running:
--   mkdir -p warehouse/landing/medallion_materialized_view/orders
--   ./run shell --var input=$PWD/warehouse/landing/medallion_materialized_view -f sql_examples/medallion_materialized_view.sql
-- On a terminal the shell stops where the script lands an input file (`-- input: PATH`): land it as
-- ${input}/PATH (its lines are the `-- ` lines under the directive; write it as .NAME, then rename it:
-- Spark skips hidden files, so it never reads half a file) and press Enter.

CREATE STREAMING TABLE mv_bronze AS
SELECT *
FROM STREAM read_files('${input}/orders', format => 'json',
                       schema => 'order_id STRING, customer STRING, amount STRING, status STRING');

CREATE STREAMING TABLE mv_silver AS
SELECT order_id, lower(trim(customer)) AS customer, try_cast(amount AS DECIMAL(10, 2)) AS amount
FROM STREAM(mv_bronze)
WHERE status = 'paid' AND customer IS NOT NULL AND try_cast(amount AS DECIMAL(10, 2)) > 0;

CREATE TABLE customers (name STRING, country STRING);
INSERT INTO customers VALUES ('alice', 'FR'), ('bob', 'DE'), ('carol', 'FR');

CREATE MATERIALIZED VIEW mv_gold COMMENT 'paid revenue per country' AS
SELECT c.country, count(*) AS orders, sum(s.amount) AS revenue
FROM mv_silver s JOIN customers c ON s.customer = c.name
GROUP BY c.country;

-- Round 1: o3 is cancelled and o4's amount is not a number: neither reaches mv_silver.

-- input: orders/part-1.json
-- {"order_id": "o1", "customer": " Alice ", "amount": "10.50", "status": "paid"}
-- {"order_id": "o2", "customer": "bob", "amount": "20", "status": "paid"}
-- {"order_id": "o3", "customer": "ALICE", "amount": "5.25", "status": "cancelled"}
-- {"order_id": "o4", "customer": "carol", "amount": "abc", "status": "paid"}

-- wait

-- mv_gold was computed at CREATE, before any order arrived: it is empty until refreshed.

-- expect: SELECT count(*) AS rows_before_refresh FROM mv_gold
-- 0

-- The streams read the orders above before mv_gold is refreshed over them (by hand, REFRESH STREAMING TABLE waits
-- until each has processed what has landed).

REFRESH STREAMING TABLE mv_bronze;
REFRESH STREAMING TABLE mv_silver;
REFRESH MATERIALIZED VIEW mv_gold;

-- expect: SELECT country, orders, revenue FROM mv_gold ORDER BY country
-- DE,1,20.00
-- FR,1,10.50

-- Round 2: more orders, and bob moves to France (an update of the dimension).

-- input: orders/part-2.json
-- {"order_id": "o5", "customer": "Bob ", "amount": "7.5", "status": "paid"}
-- {"order_id": "o8", "customer": "carol", "amount": "12.00", "status": "paid"}

-- wait

REFRESH STREAMING TABLE mv_bronze;
REFRESH STREAMING TABLE mv_silver;
UPDATE customers SET country = 'FR' WHERE name = 'bob';
REFRESH MATERIALIZED VIEW mv_gold;

-- expect: SELECT country, orders, revenue FROM mv_gold ORDER BY country
-- FR,4,50.00

-- Its event log: CREATE, the computation at CREATE and the two refreshes, each with the input versions it read.

-- expect: SELECT count(*) AS updates FROM event_log(TABLE(mv_gold)) WHERE event_type = 'create_update'
-- 4
