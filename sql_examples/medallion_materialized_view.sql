-- A medallion chain ending in a materialized view: bronze and silver are streaming tables (append-only, each batch
-- processed once), gold is a materialized view over silver joined with a customers dimension that gets updates.
--
-- * bronze lands the raw order files as they are; silver streams from bronze and keeps the paid orders, cleaned.
-- * customers is an ordinary Delta table: a dimension whose rows change in place (UPDATE), which a stream could not
--   follow but a materialized view can: each REFRESH recomputes gold over one pinned version of silver and of
--   customers and replaces its rows in one Delta commit, so gold always equals its query at those versions.
-- * gold has no schedule here, so it changes on REFRESH only (TRIGGER ON UPDATE would refresh it when silver or
--   customers gets a new version); DESCRIBE EXTENDED gold shows the input versions it reflects.
-- To run it by hand: ./run shell --var input=DIR -f sql_examples/medallion_materialized_view.sql.

CREATE STREAMING TABLE bronze AS
SELECT *
FROM STREAM read_files('${input}/orders', format => 'json',
                       schema => 'order_id STRING, customer STRING, amount STRING, status STRING');

CREATE STREAMING TABLE silver AS
SELECT order_id, lower(trim(customer)) AS customer, try_cast(amount AS DECIMAL(10, 2)) AS amount
FROM STREAM(bronze)
WHERE status = 'paid' AND customer IS NOT NULL AND try_cast(amount AS DECIMAL(10, 2)) > 0;

CREATE TABLE customers (name STRING, country STRING);
INSERT INTO customers VALUES ('alice', 'FR'), ('bob', 'DE'), ('carol', 'FR');

CREATE MATERIALIZED VIEW gold COMMENT 'paid revenue per country' AS
SELECT c.country, count(*) AS orders, sum(s.amount) AS revenue
FROM silver s JOIN customers c ON s.customer = c.name
GROUP BY c.country;

-- Round 1: o3 is cancelled and o4's amount is not a number: neither reaches silver.

-- input: orders/part-1.json
-- {"order_id": "o1", "customer": " Alice ", "amount": "10.50", "status": "paid"}
-- {"order_id": "o2", "customer": "bob", "amount": "20", "status": "paid"}
-- {"order_id": "o3", "customer": "ALICE", "amount": "5.25", "status": "cancelled"}
-- {"order_id": "o4", "customer": "carol", "amount": "abc", "status": "paid"}

-- wait

-- gold was computed at CREATE, before any order arrived: it is empty until refreshed.

-- expect: SELECT count(*) AS rows_before_refresh FROM gold
-- 0

REFRESH MATERIALIZED VIEW gold;

-- expect: SELECT country, orders, revenue FROM gold ORDER BY country
-- DE,1,20.00
-- FR,1,10.50

-- Round 2: more orders, and bob moves to France (an update of the dimension).

-- input: orders/part-2.json
-- {"order_id": "o5", "customer": "Bob ", "amount": "7.5", "status": "paid"}
-- {"order_id": "o8", "customer": "carol", "amount": "12.00", "status": "paid"}

-- wait

UPDATE customers SET country = 'FR' WHERE name = 'bob';
REFRESH MATERIALIZED VIEW gold;

-- expect: SELECT country, orders, revenue FROM gold ORDER BY country
-- FR,4,50.00

-- Its event log: CREATE, the computation at CREATE and the two refreshes, each with the input versions it read.

-- expect: SELECT count(*) AS updates FROM event_log(TABLE(gold)) WHERE event_type = 'create_update'
-- 4
