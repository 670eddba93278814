-- A medallion chain: bronze (raw) -> silver (cleaned) -> gold (aggregated), each a streaming table.
--
-- * bronze lands the raw order files as they are, every column a string: nothing is lost, even a bad row.
-- * silver streams from bronze (`STREAM(bronze)` reads each new Delta version of bronze) and cleans it: trims and
--   lower-cases the customer, casts the amount to DECIMAL(10,2) (try_cast: an amount that is not a number becomes
--   null instead of failing the stream), and keeps only paid orders with a customer and a positive amount.
-- * gold streams from silver and aggregates revenue per customer (update mode: a MERGE on customer).
--
-- bronze and silver only append, so they can be streamed from. gold rewrites its rows in place, so a further
-- STREAM(gold) would be refused: in a chain only the last step may aggregate.
-- To run it by hand (in `default`, or any database: no other example uses its table names), from the
-- repository's folder, with the gateway of `./run serve` running:
--   mkdir -p warehouse/landing/medallion_chain/orders
--   ./run shell --var input=$PWD/warehouse/landing/medallion_chain -f sql_examples/medallion_chain.sql
-- On a terminal the shell stops where the script lands an input file (`-- input: PATH`): land it as
-- ${input}/PATH (its lines are the `-- ` lines under the directive; write it as .NAME, then rename it:
-- Spark skips hidden files, so it never reads half a file) and press Enter.

CREATE STREAMING TABLE bronze AS
SELECT *
FROM STREAM read_files('${input}/orders', format => 'json',
                       schema => 'order_id STRING, customer STRING, amount STRING, status STRING');

CREATE STREAMING TABLE silver AS
SELECT order_id, lower(trim(customer)) AS customer, try_cast(amount AS DECIMAL(10, 2)) AS amount
FROM STREAM(bronze)
WHERE status = 'paid' AND customer IS NOT NULL AND try_cast(amount AS DECIMAL(10, 2)) > 0;

CREATE STREAMING TABLE gold AS
SELECT customer, count(*) AS orders, sum(amount) AS revenue
FROM STREAM(silver)
GROUP BY customer;

-- Round 1: o3 is cancelled and o4's amount is not a number: both stay in bronze only.

-- input: orders/part-1.json
-- {"order_id": "o1", "customer": " Alice ", "amount": "10.50", "status": "paid"}
-- {"order_id": "o2", "customer": "bob", "amount": "20", "status": "paid"}
-- {"order_id": "o3", "customer": "ALICE", "amount": "5.25", "status": "cancelled"}
-- {"order_id": "o4", "customer": "carol", "amount": "abc", "status": "paid"}

-- expect: SELECT customer, orders, revenue FROM gold ORDER BY customer
-- alice,1,10.50
-- bob,1,20.00

-- Round 2: o6 has a negative amount and o7 no customer: filtered out. "Bob " and "ALICE" join bob and alice.

-- input: orders/part-2.json
-- {"order_id": "o5", "customer": "Bob ", "amount": "7.5", "status": "paid"}
-- {"order_id": "o6", "customer": "alice", "amount": "-3", "status": "paid"}
-- {"order_id": "o7", "customer": null, "amount": "9", "status": "paid"}
-- {"order_id": "o8", "customer": "carol", "amount": "12.00", "status": "paid"}
-- {"order_id": "o9", "customer": "ALICE", "amount": "1.25", "status": "paid"}

-- expect: SELECT count(*) AS raw_orders FROM bronze
-- 9

-- expect: SELECT order_id, customer, amount FROM silver ORDER BY order_id
-- o1,alice,10.50
-- o2,bob,20.00
-- o5,bob,7.50
-- o8,carol,12.00
-- o9,alice,1.25

-- expect: SELECT customer, orders, revenue FROM gold ORDER BY customer
-- alice,2,11.75
-- bob,2,27.50
-- carol,1,12.00
