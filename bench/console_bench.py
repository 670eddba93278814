"""Page load time of the web console, served by a real gateway in this process over its HTTP port.

    ./run bench bench/console_bench.py                  # 10,000 events in one streaming table's log
    ./run bench bench/console_bench.py --events 1000 --history 1000

One page measured at scale is a streaming table's page over a full event log: `events.max_rows_per_table` (10,000
by default) `flow_progress` events, recorded through the
catalog's own `record_event` as the runtime records one per micro-batch. Each page is fetched `--repeat` times with
a logged-in cookie over one keep-alive connection; printed: bytes, the first load, and p50 and p95 of the loads
after it (request sent to last byte read): a stream's page reads its whole event log once, then only what is new.
The query history holds `--history` statements (10,000 by default; 1 in 10 FAILED, seven users), written through
the catalog's own `history.append` as the history's writer writes them; its page is then loaded through HTTP as an
admin (everyone's newest 200), as one of the seven users (their own), and with a status and text filter.
Before the gateway starts, the history page's rendering of 10,000 rows (what a `HistorySource` returns for an
unfiltered query, were its limit that high) and of its default 200: the console's own share of the history page,
whatever the store behind it costs.
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode


def flow_progress(batch: int) -> dict:
    return {"flow_progress": {"status": "RUNNING", "batch_id": batch, "duration_ms": 180,
                              "processed_rows_per_second": 500.0 + batch % 50,
                              "metrics": {"num_output_rows": 90, "num_input_rows": 90, "backlog_files": batch % 3}}}


def history_records(count: int) -> list:
    """`count` statements of seven users, one in ten FAILED, a second apart, ending now."""
    import datetime as dt

    from sluicegate.catalog.history import CLIENT, HistoryRecord

    end = dt.datetime.now(dt.timezone.utc)
    records = []
    for i in range(count):
        start = end - dt.timedelta(seconds=count - i)
        failed = i % 10 == 0
        records.append(HistoryRecord(
            statement_id=f"{i:032x}", session_id=f"{i % 40:032x}", executed_by=f"user{i % 7}", source=CLIENT,
            client_application="PyHive", client_address="127.0.0.1", statement_type="SELECT",
            execution_status="FAILED" if failed else "FINISHED",
            error_class="TABLE_OR_VIEW_NOT_FOUND" if failed else None, sqlstate="42P01" if failed else None,
            error_message="[TABLE_OR_VIEW_NOT_FOUND] sales.order" if failed else None, start_time=start,
            end_time=start + dt.timedelta(milliseconds=35), total_duration_ms=35, execution_duration_ms=30,
            produced_rows=1, modified_rows=None, read_tables=("sales.orders",), written_tables=(),
            statement_text=f"SELECT * FROM sales.{'order' if failed else 'orders'} WHERE id = ?"))
    return records


def login(connection: http.client.HTTPConnection, user: str) -> str:
    connection.request("POST", "/console/login", body=urlencode({"user": user, "password": "x"}),
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    response = connection.getresponse()
    response.read()
    cookie = response.getheader("Set-Cookie", "").split(";", 1)[0]
    assert response.status == 303 and cookie, (response.status, cookie)
    return cookie


def history_rendering(repeat: int) -> None:
    import datetime as dt

    from sluicegate.gateway.console import pages
    from sluicegate.gateway.console.sources import HistoryFilter, HistoryRow

    start = dt.datetime(2026, 11, 27, tzinfo=dt.timezone.utc)
    rows = [HistoryRow(f"{i:032x}", f"{i % 40:032x}", f"user{i % 7}", "PyHive", "SELECT", "FINISHED", None,
                       start + dt.timedelta(seconds=i), start + dt.timedelta(seconds=i, milliseconds=35), 35, 1,
                       f"SELECT * FROM sales.orders WHERE id = {i} AND note <> '<b>'") for i in range(10_000)]
    print(f"{'history page rendering':40} {'bytes':>9} {'p50 ms':>8} {'p95 ms':>8}   ({repeat} renderings each)")
    for count in (200, 10_000):
        samples, size = [], 0
        for _ in range(repeat):
            t0 = time.perf_counter()
            size = len(pages.history(rows[:count], HistoryFilter(), True, True).encode())
            samples.append((time.perf_counter() - t0) * 1000)
        samples.sort()
        print(f"{f'{count:,} rows':40} {size:>9,} {statistics.median(samples):>8.1f} "
              f"{samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]:>8.1f}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--history", type=int, default=10_000, help="statements in the query history")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    history_rendering(args.repeat)

    from pyhive import hive

    from sluicegate.gateway import app
    from sluicegate.gateway.config import load_config

    warehouse = Path(tempfile.mkdtemp(prefix="console-bench-"))
    config = load_config(port=0, http_port=0, warehouse=warehouse,
                         overrides={"events": {"max_rows_per_table": max(args.events, 10_000)},
                                    "security": {"admins": ["bench"]}})
    spark = app.start_spark(config)
    running = app.start(config, spark, host="127.0.0.1", port=0)
    try:
        landing = config.local_state / "landing" / "bench"
        landing.mkdir(parents=True, exist_ok=True)
        cursor = hive.connect("127.0.0.1", running.port, username="bench").cursor()
        cursor.execute("CREATE DATABASE IF NOT EXISTS bench")
        cursor.execute(f"CREATE STREAMING TABLE bench.events AS SELECT id FROM STREAM read_files('{landing}', "
                       "format => 'json', schema => 'id INT')")
        store = running.service.catalog
        started = time.perf_counter()
        for batch in range(args.events):
            store.record_event("bench", "events", "FLOW_PROGRESS", f"batch {batch}", event_type="flow_progress",
                               level="METRICS", details=flow_progress(batch))
        print(f"recorded {args.events} flow_progress events in {time.perf_counter() - started:.1f} s")
        from sluicegate.catalog import history
        from sluicegate.catalog.history import HistorySettings

        started = time.perf_counter()
        records = history_records(args.history)
        for first in range(0, len(records), 500):
            history.append(store, records[first:first + 500], HistorySettings(), trim=False)
        print(f"recorded {args.history} statements in the query history in {time.perf_counter() - started:.1f} s "
              f"({history.count(store)} rows there)")

        connection = http.client.HTTPConnection("127.0.0.1", running.server.http_port, timeout=120)
        admin, user = login(connection, "bench"), login(connection, "user3")
        pages = [(admin, page) for page in ("/console/", "/console/streams", "/console/stream?name=bench.events",
                                            "/console/views", "/console/lineage", "/console/history",
                                            "/console/history?status=FAILED&text=order")]
        pages.append((user, "/console/history"))
        print(f"\n{'page':40} {'bytes':>9} {'first ms':>9} {'p50 ms':>8} {'p95 ms':>8}   ({args.repeat} loads each; "
              "p50/p95 over the loads after the first)")
        for cookie, page in pages:
            samples, size = [], 0
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                connection.request("GET", page, headers={"Cookie": cookie})
                response = connection.getresponse()
                body = response.read()
                samples.append((time.perf_counter() - t0) * 1000)
                assert response.status == 200, (page, response.status)
                size = len(body)
            first, rest = samples[0], sorted(samples[1:])
            p95 = rest[min(len(rest) - 1, round(0.95 * (len(rest) - 1)))]
            label = page + (" (user3)" if cookie == user else "")
            print(f"{label:40} {size:>9,} {first:>9.1f} {statistics.median(rest):>8.1f} {p95:>8.1f}")
        connection.close()
    finally:
        running.stop(grace=0)
        spark.stop()


if __name__ == "__main__":
    main()
