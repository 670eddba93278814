-- Change data capture: a customers table kept equal to its source database from Debezium-shaped change events.
--
-- Each event is a Debezium envelope landed as a JSON line: `op` ('c' create, 'u' update, 'd' delete), the row `after`
-- the change (`before` for a delete) and `source.lsn`, the log position that orders a key's changes. AUTO CDC applies
-- them by key: per customer the change with the highest lsn wins, whatever order the events arrive in; a delete
-- leaves a tombstone, so an older update arriving after it does not bring the customer back.
--
-- To run it by hand (in `default`, or any database: no other example uses its table names), from the
-- repository's folder, with the gateway of `./run serve` running:
--   mkdir -p warehouse/landing/cdc_customers/changes warehouse/landing/cdc_customers/changes_eu
--   ./run shell --var input=$PWD/warehouse/landing/cdc_customers -f sql_examples/cdc_customers.sql
-- On a terminal the shell stops where the script lands an input file (`-- input: PATH`): land it as
-- ${input}/PATH (its lines are the `-- ` lines under the directive; write it as .NAME, then rename it:
-- Spark skips hidden files, so it never reads half a file) and press Enter.

CREATE STREAMING TABLE customer_changes AS
SELECT coalesce(after.id, before.id) AS id, op, source.lsn AS lsn, after.name AS name, after.city AS city
FROM STREAM read_files('${input}/changes', format => 'json',
  schema => 'op STRING, before STRUCT<id: INT>, after STRUCT<id: INT, name: STRING, city: STRING>, source STRUCT<lsn: BIGINT>');

CREATE OR REFRESH STREAMING TABLE customers_mirror
FLOW AUTO CDC FROM STREAM(customer_changes)
KEYS (id)
APPLY AS DELETE WHEN op = 'd'
SEQUENCE BY lsn
COLUMNS * EXCEPT (op, lsn)
STORED AS SCD TYPE 1;

-- input: changes/part-1.json
-- {"op": "c", "after": {"id": 1, "name": "Ada", "city": "London"}, "source": {"lsn": 10}}
-- {"op": "c", "after": {"id": 2, "name": "Grace", "city": "Arlington"}, "source": {"lsn": 11}}
-- {"op": "u", "after": {"id": 1, "name": "Ada", "city": "Paris"}, "source": {"lsn": 14}}
-- {"op": "c", "after": {"id": 3, "name": "Edsger", "city": "Nuenen"}, "source": {"lsn": 12}}

-- expect: SELECT id, name, city FROM customers_mirror ORDER BY id
-- 1,Ada,Paris
-- 2,Grace,Arlington
-- 3,Edsger,Nuenen

-- Late and out of order: Ada's update at lsn 13 is older than the one at 14 the table already shows, and Edsger's
-- delete (lsn 20) arrives before his update at lsn 15: neither changes what the table holds.

-- input: changes/part-2.json
-- {"op": "u", "after": {"id": 1, "name": "Ada", "city": "Berlin"}, "source": {"lsn": 13}}
-- {"op": "d", "before": {"id": 3}, "source": {"lsn": 20}}

-- input: changes/part-3.json
-- {"op": "u", "after": {"id": 3, "name": "Edsger", "city": "Austin"}, "source": {"lsn": 15}}
-- {"op": "u", "after": {"id": 2, "name": "Grace", "city": "New York"}, "source": {"lsn": 21}}

-- expect: SELECT id, name, city FROM customers_mirror ORDER BY id
-- 1,Ada,Paris
-- 2,Grace,New York

-- A second source of the same customers (say a replica in another region, replicated to a folder of its own) joins
-- with CREATE FLOW ... AS AUTO CDC INTO: its events are ranked with the first source's by the same keys and lsn, so
-- per customer the highest lsn of either source wins. Grace's change at lsn 18 is older than the 21 applied above.
-- (By hand: the REFRESHes wait until the first source's events above are applied.)

REFRESH STREAMING TABLE customer_changes;
REFRESH STREAMING TABLE customers_mirror;

CREATE STREAMING TABLE customer_changes_eu AS
SELECT coalesce(after.id, before.id) AS id, op, source.lsn AS lsn, after.name AS name, after.city AS city
FROM STREAM read_files('${input}/changes_eu', format => 'json',
  schema => 'op STRING, before STRUCT<id: INT>, after STRUCT<id: INT, name: STRING, city: STRING>, source STRUCT<lsn: BIGINT>');

CREATE FLOW customers_from_eu AS AUTO CDC INTO customers_mirror
FROM STREAM(customer_changes_eu)
KEYS (id)
APPLY AS DELETE WHEN op = 'd'
SEQUENCE BY lsn
COLUMNS * EXCEPT (op, lsn);

-- input: changes_eu/part-1.json
-- {"op": "u", "after": {"id": 2, "name": "Grace", "city": "Boston"}, "source": {"lsn": 18}}
-- {"op": "c", "after": {"id": 4, "name": "Barbara", "city": "Boston"}, "source": {"lsn": 30}}
-- {"op": "u", "after": {"id": 1, "name": "Ada", "city": "Rome"}, "source": {"lsn": 31}}

-- expect: SELECT id, name, city FROM customers_mirror ORDER BY id
-- 1,Ada,Rome
-- 2,Grace,New York
-- 4,Barbara,Boston

-- `SHOW FLOWS` lists customers_from_eu; `DESCRIBE STREAMING TABLE customers_mirror` shows `Auto CDC: keys (id), sequence by lsn, SCD type 1; delete when op = 'd';
-- columns * except (op, lsn)`.
