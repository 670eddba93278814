-- A bad record does not stop a stream, and a window is a key by its start.
--
-- read_files keeps a record it cannot parse or read as the schema's types in a `_rescued_data` column, as its raw
-- text: the record's other fields keep their values and the stream goes on with the next files. raw_views lands
-- everything; `WHERE _rescued_data IS NOT NULL` finds what needs a look.
-- views_per_window counts page views per 10-second window, selecting the window by its start, as one naturally
-- writes it: a window has a fixed size, so its start identifies it, and update mode MERGEs each batch's counts on
-- (page, window_start). The bad record has no time, so it falls in no window.
-- To run it by hand (in `default`, or any database: no other example uses its table names), from the
-- repository's folder, with the gateway of `./run serve` running:
--   mkdir -p warehouse/landing/bad_input_and_window_keys/views
--   ./run shell --var input=$PWD/warehouse/landing/bad_input_and_window_keys -f sql_examples/bad_input_and_window_keys.sql
-- On a terminal the shell stops where the script lands an input file (`-- input: PATH`): land it as
-- ${input}/PATH (its lines are the `-- ` lines under the directive; write it as .NAME, then rename it:
-- Spark skips hidden files, so it never reads half a file) and press Enter.

CREATE STREAMING TABLE raw_views AS
SELECT * FROM STREAM read_files('${input}/views', format => 'json', schema => 'page STRING, ts TIMESTAMP');

CREATE STREAMING TABLE views_per_window AS
SELECT page, window(ts, '10 seconds').start AS window_start, count(*) AS views
FROM STREAM read_files('${input}/views', format => 'json', schema => 'page STRING, ts TIMESTAMP')
GROUP BY page, window(ts, '10 seconds');

-- input: views/part-1.json
-- {"page": "home", "ts": "2026-01-01 00:00:01"}
-- {"page": "home", "ts": "yesterday"}
-- {"page": "cart", "ts": "2026-01-01 00:00:12"}

-- expect: SELECT page, cast(ts AS STRING), get_json_object(_rescued_data, '$.ts') FROM raw_views ORDER BY page, ts
-- cart,2026-01-01 00:00:12,NULL
-- home,NULL,yesterday
-- home,2026-01-01 00:00:01,NULL

-- expect: SELECT page, cast(window_start AS STRING), views FROM views_per_window ORDER BY page, window_start
-- cart,2026-01-01 00:00:10,1
-- home,2026-01-01 00:00:00,1

-- The next file: home's window at 00:00:00 counts 2, in place; later files are read as before.

-- input: views/part-2.json
-- {"page": "home", "ts": "2026-01-01 00:00:05"}

-- expect: SELECT page, cast(window_start AS STRING), views FROM views_per_window ORDER BY page, window_start
-- cart,2026-01-01 00:00:10,1
-- home,2026-01-01 00:00:00,2

-- expect: SELECT count(*) FROM raw_views WHERE _rescued_data IS NOT NULL
-- 1
