-- Orders from a Kafka topic: every record once, a running total per customer.
--
-- `STREAM read_kafka(...)` reads the topic (Databricks' function and columns: key and value are BINARY, so cast or
-- parse them). Each micro-batch reads a fixed range of offsets per partition, committed records only
-- (read_committed), and is written to Delta exactly once. The producer here writes each round in one transaction,
-- which ends with a commit marker: an offset without a record, so the offsets go 0, 1, 2, then 4, 5.
--
-- To run it by hand (in `default`, or any database: no other example uses its table names), with a broker the
-- gateway may reach (`security.kafka_servers`, loopback by default) at 127.0.0.1:9092, from the repository's folder:
--   ./run shell --var kafka=127.0.0.1:9092 -f sql_examples/kafka_orders.sql
-- then produce JSON records to the topic `orders`. Without a broker, the tests' one serves: in `.venv/bin/python`
-- from tests/, `from kafka_broker import MockKafka; k = MockKafka(); print(k.bootstrap)` starts librdkafka's mock
-- cluster for as long as that Python runs (`k.produce("orders", [(None, b'{"id": 1, ...}')])` writes to it).
-- The `-- produce:` / `-- expect:` comments are the golden test (see README.md); the shell ignores them.

CREATE STREAMING TABLE kafka_orders AS
SELECT o.id, o.customer, o.amount, offset
FROM (SELECT from_json(CAST(value AS STRING), 'id INT, customer STRING, amount INT') AS o, offset
      FROM STREAM read_kafka(bootstrapServers => '${kafka}', subscribe => 'orders', startingOffsets => 'earliest'));

CREATE STREAMING TABLE revenue_per_customer AS
SELECT o.customer, count(*) AS orders, sum(o.amount) AS revenue
FROM (SELECT from_json(CAST(value AS STRING), 'id INT, customer STRING, amount INT') AS o
      FROM STREAM read_kafka(bootstrapServers => '${kafka}', subscribe => 'orders', startingOffsets => 'earliest'))
GROUP BY o.customer;

-- produce: orders
-- {"id": 1, "customer": "ann", "amount": 10}
-- {"id": 2, "customer": "bob", "amount": 5}
-- {"id": 3, "customer": "ann", "amount": 7}

-- expect: SELECT id, customer, amount, offset FROM kafka_orders ORDER BY id
-- 1,ann,10,0
-- 2,bob,5,1
-- 3,ann,7,2

-- expect: SELECT customer, orders, revenue FROM revenue_per_customer ORDER BY customer
-- ann,2,17
-- bob,1,5

-- A second transaction: its records come after the first one's commit marker (offset 3).

-- produce: orders
-- {"id": 4, "customer": "bob", "amount": 1}
-- {"id": 5, "customer": "cid", "amount": 2}

-- expect: SELECT id, offset FROM kafka_orders WHERE id > 3 ORDER BY id
-- 4,4
-- 5,5

-- expect: SELECT customer, orders, revenue FROM revenue_per_customer ORDER BY customer
-- ann,2,17
-- bob,2,6
-- cid,1,2
