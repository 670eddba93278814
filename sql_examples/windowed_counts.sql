-- Page views per 10-second window of event time, with a watermark, written two ways.
--
-- `WATERMARK ts DELAY OF INTERVAL 5 SECONDS` says events may arrive up to 5 seconds late: after each micro-batch the
-- watermark becomes max(ts seen) - 5 seconds. A window whose end is at or before the watermark is final: its state is
-- dropped, and later rows for it are dropped too (and counted), never silently merged.
--
-- * page_views_live uses the default for an aggregation, update mode: the table always holds every window, open ones
--   included, and a window's count grows in place until the watermark closes it.
-- * page_views_closed asks for append mode: a window is written once, when the watermark closes it, and never
--   changes afterwards; open windows are not in the table yet.
--
-- A window column is a struct (start, end); select cast(w.start AS STRING) to read it. Times are UTC.
-- Each round below is one file, so it is processed as one micro-batch: the watermark only moves between rounds.
-- To run it by hand (in `default`, or any database: no other example uses its table names), from the
-- repository's folder, with the gateway of `./run serve` running:
--   mkdir -p warehouse/landing/windowed_counts/views
--   ./run shell --var input=$PWD/warehouse/landing/windowed_counts -f sql_examples/windowed_counts.sql
-- On a terminal the shell stops where the script lands an input file (`-- input: PATH`): land it as
-- ${input}/PATH (its lines are the `-- ` lines under the directive; write it as .NAME, then rename it:
-- Spark skips hidden files, so it never reads half a file) and press Enter.

CREATE STREAMING TABLE page_views_live AS
SELECT window(ts, '10 seconds') AS w, page, count(*) AS views
FROM STREAM read_files('${input}/views', format => 'json', schema => 'page STRING, ts TIMESTAMP')
WATERMARK ts DELAY OF INTERVAL 5 SECONDS
GROUP BY window(ts, '10 seconds'), page;

CREATE STREAMING TABLE page_views_closed TBLPROPERTIES ('sluicegate.output_mode' = 'append') AS
SELECT window(ts, '10 seconds') AS w, page, count(*) AS views
FROM STREAM read_files('${input}/views', format => 'json', schema => 'page STRING, ts TIMESTAMP')
WATERMARK ts DELAY OF INTERVAL 5 SECONDS
GROUP BY window(ts, '10 seconds'), page;

-- Round 1: the latest event is 00:00:12, so the watermark becomes 00:00:07; no window ends by then.

-- input: views/part-1.json
-- {"page": "home", "ts": "2026-01-01 00:00:01"}
-- {"page": "home", "ts": "2026-01-01 00:00:04"}
-- {"page": "cart", "ts": "2026-01-01 00:00:07"}
-- {"page": "home", "ts": "2026-01-01 00:00:12"}

-- expect: SELECT cast(w.start AS STRING) AS window_start, page, views FROM page_views_live ORDER BY window_start, page
-- 2026-01-01 00:00:00,cart,1
-- 2026-01-01 00:00:00,home,2
-- 2026-01-01 00:00:10,home,1

-- expect: SELECT cast(w.start AS STRING) AS window_start, page, views FROM page_views_closed ORDER BY window_start, page

-- Round 2: cart at 00:00:09 is still on time (its window ends at 00:00:10, after the watermark 00:00:07). The
-- latest event is now 00:00:23: the watermark becomes 00:00:18 and closes the window [00:00:00, 00:00:10).

-- input: views/part-2.json
-- {"page": "cart", "ts": "2026-01-01 00:00:09"}
-- {"page": "home", "ts": "2026-01-01 00:00:15"}
-- {"page": "cart", "ts": "2026-01-01 00:00:23"}

-- expect: SELECT cast(w.start AS STRING) AS window_start, page, views FROM page_views_live ORDER BY window_start, page
-- 2026-01-01 00:00:00,cart,2
-- 2026-01-01 00:00:00,home,2
-- 2026-01-01 00:00:10,home,2
-- 2026-01-01 00:00:20,cart,1

-- expect: SELECT cast(w.start AS STRING) AS window_start, page, views FROM page_views_closed ORDER BY window_start, page
-- 2026-01-01 00:00:00,cart,2
-- 2026-01-01 00:00:00,home,2

-- Round 3: home at 00:00:05 is too late (its window closed at watermark 00:00:18) and is dropped from both tables.
-- home at 00:00:31 moves the watermark to 00:00:26, which closes [00:00:10, 00:00:20).

-- input: views/part-3.json
-- {"page": "home", "ts": "2026-01-01 00:00:05"}
-- {"page": "home", "ts": "2026-01-01 00:00:31"}

-- expect: SELECT cast(w.start AS STRING) AS window_start, page, views FROM page_views_live ORDER BY window_start, page
-- 2026-01-01 00:00:00,cart,2
-- 2026-01-01 00:00:00,home,2
-- 2026-01-01 00:00:10,home,2
-- 2026-01-01 00:00:20,cart,1
-- 2026-01-01 00:00:30,home,1

-- expect: SELECT cast(w.start AS STRING) AS window_start, page, views FROM page_views_closed ORDER BY window_start, page
-- 2026-01-01 00:00:00,cart,2
-- 2026-01-01 00:00:00,home,2
-- 2026-01-01 00:00:10,home,2
