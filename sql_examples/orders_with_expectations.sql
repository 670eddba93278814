-- Orders guarded by expectations: a bad row never stops the stream, and is never lost.
--
-- `valid_amount` drops an order whose amount is not positive (NULL included) from the table and keeps it, with the
-- names of the expectations it failed, its batch id and the time, in the Delta table orders__quarantine, created
-- with this table and dropped with it: SELECT from it, fix, replay. `has_country` only counts: the row is written.
-- A `ON VIOLATION FAIL UPDATE` expectation would instead make the micro-batch commit nothing and fail the stream
-- with [EXPECTATION_VIOLATION.FAIL_UPDATE], naming the rule and showing one offending row.
-- The counts per batch (passed, failed, dropped) are in DESCRIBE STREAMING TABLE orders and the event log.
--
-- To run it by hand (in `default`, or any database: no other example uses its table names), from the
-- repository's folder, with the gateway of `./run serve` running:
--   mkdir -p warehouse/landing/orders_with_expectations/orders
--   ./run shell --var input=$PWD/warehouse/landing/orders_with_expectations -f sql_examples/orders_with_expectations.sql
-- On a terminal the shell stops where the script lands an input file (`-- input: PATH`): land it as
-- ${input}/PATH (its lines are the `-- ` lines under the directive; write it as .NAME, then rename it:
-- Spark skips hidden files, so it never reads half a file) and press Enter.

CREATE STREAMING TABLE orders (
  CONSTRAINT valid_amount EXPECT (amount > 0) ON VIOLATION DROP ROW,
  CONSTRAINT has_country EXPECT (country IS NOT NULL)
) AS SELECT order_id, amount, country
FROM STREAM read_files('${input}/orders', format => 'json', schema => 'order_id INT, amount DOUBLE, country STRING');

-- input: orders/part-1.json
-- {"order_id": 1, "amount": 12.5, "country": "fr"}
-- {"order_id": 2, "amount": -3.0, "country": "de"}
-- {"order_id": 3, "amount": 8.0, "country": null}
-- {"order_id": 4, "amount": null, "country": "it"}

-- expect: SELECT order_id, amount, country FROM orders ORDER BY order_id
-- 1,12.5,fr
-- 3,8.0,NULL

-- expect: SELECT order_id, amount, _failed_expectations FROM orders__quarantine ORDER BY order_id
-- 2,-3.0,"[""valid_amount""]"
-- 4,NULL,"[""valid_amount""]"
