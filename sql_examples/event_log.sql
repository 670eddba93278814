-- A streaming table's event log: what happened to it, as rows in the columns of Databricks' event_log function
-- (id, sequence, origin, timestamp, message, level, maturity_level, error, details, event_type).
--
-- CREATE writes a `create_update` event, the stream's start an `update_progress` (state RUNNING), a failure one at
-- level ERROR with the exception in `error`, and every micro-batch one `flow_progress` event (level METRICS) whose
-- `details` JSON holds the batch id, input and output rows, duration, watermark, backlog and, when the table has
-- expectations, data_quality. Read the JSON with get_json_object (or parse_json(details):path).
--
-- To run it by hand (in `default`, or any database: no other example uses its table names), from the
-- repository's folder, with the gateway of `./run serve` running:
--   mkdir -p warehouse/landing/event_log/orders
--   ./run shell --var input=$PWD/warehouse/landing/event_log -f sql_examples/event_log.sql
-- On a terminal the shell stops where the script lands an input file (`-- input: PATH`): land it as
-- ${input}/PATH (its lines are the `-- ` lines under the directive; write it as .NAME, then rename it:
-- Spark skips hidden files, so it never reads half a file) and press Enter.
-- The `-- input:` / `-- expect:` comments are also the golden test (see README.md).

CREATE STREAMING TABLE logged_orders AS
SELECT id, amount
FROM STREAM read_files('${input}/orders', format => 'json', schema => 'id INT, amount DOUBLE')
WHERE amount > 0;

-- input: orders/part-1.json
-- {"id": 1, "amount": 9.5}
-- {"id": 2, "amount": -1.0}
-- {"id": 3, "amount": 20.0}

-- expect: SELECT event_type, level, get_json_object(details, '$.update_progress.state') FROM event_log(TABLE(logged_orders)) WHERE level <> 'METRICS' ORDER BY cast(get_json_object(sequence, '$.control_plane_seq_no') AS INT)
-- create_update,INFO,NULL
-- update_progress,INFO,RUNNING

-- One row per micro-batch: rows written (as committed to Delta), rows read, how long it took. Spark reports a batch
-- a moment after its commit, so the newest batch's row can follow its data by a few milliseconds. (By hand, the
-- REFRESH waits until the stream has read what has landed.)

REFRESH STREAMING TABLE logged_orders;
SELECT get_json_object(details, '$.flow_progress.batch_id') AS batch,
       get_json_object(details, '$.flow_progress.metrics.num_output_rows') AS rows_written,
       get_json_object(details, '$.flow_progress.metrics.num_input_rows') AS rows_read,
       get_json_object(details, '$.flow_progress.duration_ms') AS ms
FROM event_log(TABLE(logged_orders))
WHERE event_type = 'flow_progress'
ORDER BY timestamp;
