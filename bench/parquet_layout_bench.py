"""How a compacted file's Parquet layout costs Spark's reads (issue 25): the same 1,000,000 rows (`id BIGINT, v
DOUBLE, batch INT`, ids in order, as a stream writes them) in one file, written four ways, read by Spark.

    .venv/bin/python bench/parquet_layout_bench.py             # 1,000,000 rows, median of 7 runs after 2 warm-ups
    .venv/bin/python bench/parquet_layout_bench.py --rows 100000 --runs 3

  compactor-before  pyarrow as storage/delta/compaction.py wrote merged files until 2026-12-06 (no page index,
                    pyarrow's 1 MiB pages)
  compactor         pyarrow with compaction.PAGE_LAYOUT (what the compactor writes now)
  no-dictionary     PAGE_LAYOUT without dictionary encoding (measured, not used: low-cardinality columns need it)
  spark             Spark's own Parquet writer (what a CTAS writes: the compacted copy of bench/compaction_bench.py)

Queries, the files taking turns each run: `count(*)`, `GROUP BY id % 10` with sum and count, and a point query on
one id. The table printed gives medians in ms and each against Spark's file. Run it alone: figures are latencies.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sluicegate.storage.delta.compaction import PAGE_LAYOUT

SCHEMA = "id BIGINT, v DOUBLE, batch INT"
QUERIES = {"count": "SELECT count(*) FROM t",
           "grouped": "SELECT id % 10 AS k, sum(v), count(*) FROM t GROUP BY 1",
           "point": "SELECT id, v, batch FROM t WHERE id = {point}"}


def rows_of(n: int) -> pa.Table:
    ids = pa.array(range(n), pa.int64())
    return pa.table({"id": ids, "v": pa.array([i * 0.5 for i in range(n)], pa.float64()),
                     "batch": pa.array([i // 100 for i in range(n)], pa.int32())})


def arrow_file(folder: Path, name: str, rows: pa.Table, **layout: object) -> str:
    path = folder / f"{name}.parquet"
    with open(path, "wb") as sink:
        writer = pq.ParquetWriter(sink, rows.schema, compression="snappy", **layout)  # type: ignore[arg-type]
        writer.write_table(rows, row_group_size=1024 * 1024)
        writer.close()
    return str(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    rows = rows_of(args.rows)
    with tempfile.TemporaryDirectory(prefix="parquet-layout-") as work:
        folder = Path(work)
        files = {"compactor-before": arrow_file(folder, "before", rows),
                 "compactor": arrow_file(folder, "now", rows, **PAGE_LAYOUT),
                 "no-dictionary": arrow_file(folder, "nodict", rows, **PAGE_LAYOUT, use_dictionary=False)}
        spark.createDataFrame(rows.to_pandas(), SCHEMA).coalesce(1).write.parquet(str(folder / "spark"))
        files["spark"] = next(str(p) for p in (folder / "spark").glob("*.parquet"))
        samples: dict[tuple[str, str], list[float]] = {}
        point = args.rows // 2 + 7
        for run in range(args.runs + 2):
            for name, path in files.items():
                spark.read.schema(SCHEMA).parquet(path).createOrReplaceTempView("t")
                for query, sql in QUERIES.items():
                    started = time.perf_counter()
                    spark.sql(sql.format(point=point)).collect()
                    if run >= 2:
                        samples.setdefault((query, name), []).append(time.perf_counter() - started)
        sizes = {name: os.path.getsize(path) for name, path in files.items()}
    print(f"{args.rows:,} rows in one file, Spark local[2], median of {args.runs} runs (ms; x = against spark's file)")
    print("| file | bytes | " + " | ".join(QUERIES) + " |")
    print("|---|---|" + "---|" * len(QUERIES))
    for name in files:
        cells = []
        for query in QUERIES:
            ms = statistics.median(samples[(query, name)]) * 1000
            ratio = ms / (statistics.median(samples[(query, "spark")]) * 1000)
            cells.append(f"{ms:.0f} ({ratio:.2f}x)")
        print(f"| {name} | {sizes[name]:,} | " + " | ".join(cells) + " |")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
