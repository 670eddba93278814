-- Two folders, one table: append flows (Spark 4.1's pipeline SQL).
--
-- A streaming table declared with its columns and no query is filled by flows: each `CREATE FLOW ... AS INSERT INTO
-- t BY NAME <streaming query>` is a stream of its own (its own checkpoint, its own Delta txn app id), so every flow is
-- exactly once whatever the others do. Columns match by name; a column no flow produces (`note`) is NULL. DROP FLOW
-- stops one flow and keeps the rows it wrote.
--
-- To run it by hand (in `default`, or any database: no other example uses its table names), from the
-- repository's folder, with the gateway of `./run serve` running:
--   mkdir -p warehouse/landing/flows/eu warehouse/landing/flows/us
--   ./run shell --var input=$PWD/warehouse/landing/flows -f sql_examples/flows.sql
-- On a terminal the shell stops where the script lands an input file (`-- input: PATH`): land it as
-- ${input}/PATH (its lines are the `-- ` lines under the directive; write it as .NAME, then rename it:
-- Spark skips hidden files, so it never reads half a file) and press Enter.

CREATE STREAMING TABLE regional_orders (id INT NOT NULL, region STRING, amount DOUBLE, note STRING)
COMMENT 'orders of every region, one flow per region';

CREATE FLOW orders_eu COMMENT 'EU shop exports' AS INSERT INTO regional_orders BY NAME
SELECT id, 'eu' AS region, amount
FROM STREAM read_files('${input}/eu', format => 'json', schema => 'id INT, amount DOUBLE');

CREATE FLOW orders_us AS INSERT INTO regional_orders BY NAME
SELECT amount_usd AS amount, id, 'us' AS region
FROM STREAM read_files('${input}/us', format => 'json', schema => 'id INT, amount_usd DOUBLE');

-- input: eu/part-1.json
-- {"id": 1, "amount": 10.5}
-- {"id": 2, "amount": 3.0}

-- input: us/part-1.json
-- {"id": 100, "amount_usd": 7.25}

-- expect: SELECT id, region, amount, note FROM regional_orders ORDER BY id
-- 1,eu,10.5,NULL
-- 2,eu,3.0,NULL
-- 100,us,7.25,NULL

-- `SHOW FLOWS` lists both (RUNNING), `DESCRIBE STREAMING TABLE regional_orders` has a `Flow` row for each, and
-- every batch of a flow writes a `flow_progress` event naming it in event_log(TABLE(regional_orders)).

-- The US flow is dropped once both flows have read the files above (REFRESH waits for that): its rows stay, and
-- files landing in its folder are no longer read.

REFRESH STREAMING TABLE regional_orders;
DROP FLOW orders_us;

-- input: us/part-2.json
-- {"id": 101, "amount_usd": 1.0}

-- input: eu/part-2.json
-- {"id": 3, "amount": 99.0}

-- expect: SELECT region, count(*), sum(amount) FROM regional_orders GROUP BY region ORDER BY region
-- eu,3,112.5
-- us,1,7.25
