-- The Yahoo streaming benchmark query: ad views per campaign per 10-second window.
--
-- Ad events (JSON) stream in from files; the query keeps the views, looks up each ad's campaign in a static Delta
-- table (a stream-static join: the static side is read from one Delta snapshot, renewed when the table changes),
-- and counts views per campaign per 10-second window of event time. Events whose ad has no campaign fall out of
-- the inner join.
-- The watermark (event_time - 10 seconds) bounds the state: a window's count is final once the watermark passes its
-- end, and later events for it are dropped. The default output mode, update, keeps every window in the table with
-- its current count.
--
-- The static table is filled before the streaming table is created, so the first batch joins with it. A later
-- change reaches the batches after it: the gateway restarts the stream on its checkpoint when the table gets a new
-- version (streams.static_check_interval).
-- To run it by hand (in `default`, or any database: no other example uses its table names), from the
-- repository's folder, with the gateway of `./run serve` running:
--   mkdir -p warehouse/landing/yahoo_streaming_benchmark/ad_events
--   ./run shell --var input=$PWD/warehouse/landing/yahoo_streaming_benchmark -f sql_examples/yahoo_streaming_benchmark.sql
-- On a terminal the shell stops where the script lands an input file (`-- input: PATH`): land it as
-- ${input}/PATH (its lines are the `-- ` lines under the directive; write it as .NAME, then rename it:
-- Spark skips hidden files, so it never reads half a file) and press Enter.

CREATE TABLE campaigns (ad_id STRING, campaign_id STRING) USING DELTA;

INSERT INTO campaigns VALUES
  ('a1', 'c1'), ('a2', 'c1'),
  ('a3', 'c2'), ('a4', 'c2'),
  ('a5', 'c3');

CREATE STREAMING TABLE campaign_views AS
SELECT c.campaign_id, window(e.event_time, '10 seconds') AS time_window, count(*) AS views
FROM STREAM read_files(
    '${input}/ad_events', format => 'json',
    schema => 'user_id STRING, page_id STRING, ad_id STRING, ad_type STRING, event_type STRING, event_time TIMESTAMP, ip_address STRING')
  WATERMARK event_time DELAY OF INTERVAL 10 SECONDS AS e
JOIN campaigns c ON e.ad_id = c.ad_id
WHERE e.event_type = 'view'
GROUP BY c.campaign_id, window(e.event_time, '10 seconds');

-- Round 1: three views of known ads (a1 and a2 are c1, a3 is c2) in [00:00:00, 00:00:10), one in [00:00:10,
-- 00:00:20); a click and a purchase are not views; a9 has no campaign. Latest event 00:00:11: watermark 00:00:01.

-- input: ad_events/part-1.json
-- {"user_id": "u1", "page_id": "p1", "ad_id": "a1", "ad_type": "banner", "event_type": "view", "event_time": "2026-01-01 00:00:01", "ip_address": "10.0.0.1"}
-- {"user_id": "u2", "page_id": "p1", "ad_id": "a2", "ad_type": "banner", "event_type": "click", "event_time": "2026-01-01 00:00:02", "ip_address": "10.0.0.2"}
-- {"user_id": "u3", "page_id": "p2", "ad_id": "a3", "ad_type": "modal", "event_type": "view", "event_time": "2026-01-01 00:00:03", "ip_address": "10.0.0.3"}
-- {"user_id": "u1", "page_id": "p2", "ad_id": "a2", "ad_type": "banner", "event_type": "view", "event_time": "2026-01-01 00:00:05", "ip_address": "10.0.0.1"}
-- {"user_id": "u4", "page_id": "p3", "ad_id": "a9", "ad_type": "sponsored-search", "event_type": "view", "event_time": "2026-01-01 00:00:06", "ip_address": "10.0.0.4"}
-- {"user_id": "u2", "page_id": "p3", "ad_id": "a4", "ad_type": "mail", "event_type": "purchase", "event_time": "2026-01-01 00:00:08", "ip_address": "10.0.0.2"}
-- {"user_id": "u5", "page_id": "p1", "ad_id": "a1", "ad_type": "banner", "event_type": "view", "event_time": "2026-01-01 00:00:11", "ip_address": "10.0.0.5"}

-- expect: SELECT campaign_id, cast(time_window.start AS STRING) AS window_start, views FROM campaign_views ORDER BY campaign_id, window_start
-- c1,2026-01-01 00:00:00,2
-- c1,2026-01-01 00:00:10,1
-- c2,2026-01-01 00:00:00,1

-- Round 2: a3 at 00:00:09 is on time (its window ends after the watermark 00:00:01). Latest event 00:00:32:
-- the watermark becomes 00:00:22, which closes the windows starting at 00:00:00 and 00:00:10.

-- input: ad_events/part-2.json
-- {"user_id": "u3", "page_id": "p2", "ad_id": "a3", "ad_type": "modal", "event_type": "view", "event_time": "2026-01-01 00:00:09", "ip_address": "10.0.0.3"}
-- {"user_id": "u6", "page_id": "p4", "ad_id": "a4", "ad_type": "mail", "event_type": "view", "event_time": "2026-01-01 00:00:14", "ip_address": "10.0.0.6"}
-- {"user_id": "u1", "page_id": "p1", "ad_id": "a1", "ad_type": "banner", "event_type": "view", "event_time": "2026-01-01 00:00:17", "ip_address": "10.0.0.1"}
-- {"user_id": "u7", "page_id": "p4", "ad_id": "a2", "ad_type": "banner", "event_type": "click", "event_time": "2026-01-01 00:00:19", "ip_address": "10.0.0.7"}
-- {"user_id": "u8", "page_id": "p5", "ad_id": "a5", "ad_type": "mobile", "event_type": "view", "event_time": "2026-01-01 00:00:25", "ip_address": "10.0.0.8"}
-- {"user_id": "u2", "page_id": "p5", "ad_id": "a3", "ad_type": "modal", "event_type": "view", "event_time": "2026-01-01 00:00:32", "ip_address": "10.0.0.2"}

-- expect: SELECT campaign_id, cast(time_window.start AS STRING) AS window_start, views FROM campaign_views ORDER BY campaign_id, window_start
-- c1,2026-01-01 00:00:00,2
-- c1,2026-01-01 00:00:10,2
-- c2,2026-01-01 00:00:00,2
-- c2,2026-01-01 00:00:10,1
-- c2,2026-01-01 00:00:30,1
-- c3,2026-01-01 00:00:20,1

-- Round 3: the a1 view at 00:00:07 is late (its window closed at watermark 00:00:22) and is dropped; the a4 view at
-- 00:00:21 is on time (its window ends at 00:00:30).

-- input: ad_events/part-3.json
-- {"user_id": "u9", "page_id": "p1", "ad_id": "a1", "ad_type": "banner", "event_type": "view", "event_time": "2026-01-01 00:00:07", "ip_address": "10.0.0.9"}
-- {"user_id": "u9", "page_id": "p2", "ad_id": "a4", "ad_type": "mail", "event_type": "view", "event_time": "2026-01-01 00:00:21", "ip_address": "10.0.0.9"}

-- expect: SELECT campaign_id, cast(time_window.start AS STRING) AS window_start, views FROM campaign_views ORDER BY campaign_id, window_start
-- c1,2026-01-01 00:00:00,2
-- c1,2026-01-01 00:00:10,2
-- c2,2026-01-01 00:00:00,2
-- c2,2026-01-01 00:00:10,1
-- c2,2026-01-01 00:00:20,1
-- c2,2026-01-01 00:00:30,1
-- c3,2026-01-01 00:00:20,1
