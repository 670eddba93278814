-- Clicks per country, from JSON files landing in a folder.
--
-- The simplest streaming table: a running count per key. An aggregation without an event-time window runs in
-- update mode by default: each micro-batch MERGEs the changed counts into the Delta table on the group key
-- (country), so the table always equals `SELECT country, count(*) ... GROUP BY country` over every file seen so far.
-- A row whose country is null counts in its own group, as in a batch GROUP BY.
--
-- To run it by hand (in `default`, or any database: no other example uses its table names), from the
-- repository's folder, with the gateway of `./run serve` running:
--   mkdir -p warehouse/landing/clicks_per_country/clicks
--   ./run shell --var input=$PWD/warehouse/landing/clicks_per_country -f sql_examples/clicks_per_country.sql
-- On a terminal the shell stops where the script lands an input file (`-- input: PATH`): land it as
-- ${input}/PATH (its lines are the `-- ` lines under the directive; write it as .NAME, then rename it:
-- Spark skips hidden files, so it never reads half a file) and press Enter.
-- The `-- input:` / `-- expect:` comments are also the golden test (see README.md).

CREATE STREAMING TABLE clicks_per_country AS
SELECT country, count(*) AS clicks
FROM STREAM read_files('${input}/clicks', format => 'json', schema => 'country STRING, ts TIMESTAMP')
GROUP BY country;

-- input: clicks/part-1.json
-- {"country": "fr", "ts": "2026-01-01 00:00:01"}
-- {"country": "de", "ts": "2026-01-01 00:00:02"}
-- {"country": "fr", "ts": "2026-01-01 00:00:03"}

-- expect: SELECT country, clicks FROM clicks_per_country ORDER BY country
-- de,1
-- fr,2

-- A second file: fr's count grows in place (no second fr row), it and the null country are new groups.

-- input: clicks/part-2.json
-- {"country": "fr", "ts": "2026-01-01 00:00:04"}
-- {"country": "it", "ts": "2026-01-01 00:00:05"}
-- {"country": null, "ts": "2026-01-01 00:00:06"}

-- expect: SELECT country, clicks FROM clicks_per_country ORDER BY country NULLS FIRST
-- NULL,1
-- de,1
-- fr,3
-- it,1
