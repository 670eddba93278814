"""The windowed count as users write it (issue 13, item 7), over a real stream through PyHive: the window is a key
by its start, and each batch updates the (campaign, window start) rows in place with a MERGE on those columns."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from pyhive_helpers import sorted_rows

T0 = datetime(2026, 11, 25, 12, 0, 0)
ADS = {"a1": 1, "a2": 1, "a3": 2}


def _event(ad: str, second: int) -> dict[str, str]:
    return {"ad_id": ad, "event_time": (T0 + timedelta(seconds=second)).isoformat(sep=" ")}


def _expected(events: list[dict[str, str]], key: str) -> list[tuple]:
    counts = Counter()
    for event in events:
        at = datetime.fromisoformat(event["event_time"])
        start = at - timedelta(seconds=at.second % 10, microseconds=at.microsecond)
        counts[(ADS[event["ad_id"]] if key == "campaign" else event["ad_id"], start)] += 1
    return sorted(((k, start, n) for (k, start), n in counts.items()), key=repr)


def test_the_natural_windowed_count_is_updated_in_place(stream_cursor, streams, tmp_path, land):
    cur = stream_cursor
    cur.execute("CREATE TABLE campaigns (ad_id STRING, campaign_id INT) USING DELTA")
    cur.execute("INSERT INTO campaigns VALUES " + ", ".join(f"('{ad}', {c})" for ad, c in ADS.items()))
    source = tmp_path / "events"
    source.mkdir()
    read = (f"FROM STREAM read_files('{source}', format => 'json', schema => 'ad_id STRING, event_time TIMESTAMP') "
            "AS e ")
    cur.execute("CREATE STREAMING TABLE per_campaign AS SELECT c.campaign_id, "
                "window(e.event_time, '10 seconds').start AS w, count(*) AS n " + read
                + "JOIN campaigns AS c ON e.ad_id = c.ad_id GROUP BY c.campaign_id, window(e.event_time, '10 seconds')")
    cur.execute("CREATE STREAMING TABLE per_ad AS SELECT CAST(e.ad_id AS STRING) AS ad, "
                "window(e.event_time, '10 seconds').start, count(*) AS n " + read
                + "GROUP BY e.ad_id, window(e.event_time, '10 seconds')")
    cur.execute("EXPLAIN CREATE STREAMING TABLE x AS SELECT c.campaign_id, window(e.event_time, '10 seconds').start "
                "AS w, count(*) AS n " + read + "JOIN campaigns AS c ON e.ad_id = c.ad_id "
                "GROUP BY c.campaign_id, window(e.event_time, '10 seconds')")
    explained = "\n".join(str(row[0]) for row in cur.fetchall())
    assert "campaign_id, w" in explained
    seen: list[dict[str, str]] = []
    for batch in ([_event("a1", 1), _event("a2", 3), _event("a3", 4), _event("a1", 12)],
                  [_event("a2", 5), _event("a3", 15), _event("a1", 25)],        # the same windows again, and new
                  [_event("a1", 9), _event("a2", 19)]):
        land(source, batch)
        seen.extend(batch)
        streams.wait_for(cur.database, "per_campaign")
        streams.wait_for(cur.database, "per_ad")
        assert sorted_rows(cur, "SELECT campaign_id, w, n FROM per_campaign") == _expected(seen, "campaign")
        assert sorted_rows(cur, "SELECT * FROM per_ad") == _expected(seen, "ad")
    cur.execute("SHOW STREAMING TABLES")
    shown = {row[1]: row for row in cur.fetchall()}
    assert shown["per_campaign"][2:4] == ("RUNNING", "update") and shown["per_ad"][2:4] == ("RUNNING", "update")
