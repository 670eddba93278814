"""The gateway on local[2] against the gateway on a two-worker Spark standalone cluster, same machine, same queries.

    .venv/bin/python bench/cluster_bench.py               # 1,000,000-row load, 10,000,000-row scan+aggregate
    .venv/bin/python bench/cluster_bench.py --scale 0.1   # a tenth of both, to try it out

The queries are warehouse_bench's: load = INSERT INTO t SELECT ... FROM range(N) (executors write Parquet, delta-rs
commits on the driver), scan+aggregate = SELECT g, count(*), sum(v) FROM t GROUP BY g over 10 x the load. Each side
is a `sluicegate serve` process driven by PyHive: `local[2]` (executors are threads of the driver), then a master and
two one-core workers started from pyspark's jars on loopback (`spark.master = "spark://..."`, the only change). The
sides run one after the other (two Spark drivers at once would share the two cores), each warmed up first; each
figure is the median of --runs runs. What the ratio shows is the cost of separate executor JVMs and Python workers,
task shipping and the shuffle over the network stack, on one machine: the cluster's gain is more machines, which one
machine cannot show. Do not run it while others use the machine's cores.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from gateway_process import GatewayProcess
from spark_cluster import standalone_cluster
from warehouse_bench import LOAD, SCAN, print_figures, rows_and_runs, seconds


def gateway_figures(master: str, folder: Path, load_rows: int, runs: int) -> tuple[float, float]:
    """Median seconds of the load and of the scan+aggregate through a gateway on `master`."""
    from pyhive import hive

    conf = folder / "sluicegate.toml"
    conf.write_text(f'[spark]\nmaster = "{master}"\nshuffle_partitions = 2\n\n[spark.conf]\n'
                    '"spark.executor.memory" = "1g"\n\n[result_cache]\nenabled = false\n', encoding="utf-8")
    gateway = GatewayProcess(folder / "warehouse", conf, folder / "gateway.log")
    gateway.start()
    try:
        cursor = hive.connect("127.0.0.1", gateway.port, username="bench").cursor()

        def run(sql: str) -> Callable[[], Any]:
            def action() -> Any:
                cursor.execute(sql)
                return cursor.fetchall() if cursor.description else None
            return action

        run("CREATE TABLE t (k BIGINT, g BIGINT, v DOUBLE) USING DELTA")()
        run("CREATE TABLE s (k BIGINT, g BIGINT, v DOUBLE) USING DELTA")()
        run(f"INSERT INTO t {LOAD.format(rows=load_rows // 10)}")()      # warm-up of both paths
        run(f"INSERT OVERWRITE s {LOAD.format(rows=10 * load_rows)}")()
        run(SCAN.format(table="s"))()
        loads, scans = [], []
        for _ in range(runs):
            loads.append(seconds(run(f"INSERT INTO t {LOAD.format(rows=load_rows)}")))
            scans.append(seconds(run(SCAN.format(table="s"))))
        return statistics.median(loads), statistics.median(scans)
    finally:
        gateway.stop()


def main() -> None:
    load_rows, scan_rows, runs = rows_and_runs(__doc__.splitlines()[0], default_runs=5)
    root = Path(tempfile.mkdtemp(prefix="sg_cluster_bench_"))
    (root / "local").mkdir()
    figures = {"local[2]": gateway_figures("local[2]", root / "local", load_rows, runs)}
    with standalone_cluster(root / "cluster", workers=2, memory="2g") as cluster:
        (root / "on-cluster").mkdir()
        figures["standalone, 2 workers x 1 core"] = gateway_figures(cluster.master, root / "on-cluster", load_rows,
                                                                    runs)
    print_figures(figures, load_rows, scan_rows)
    (local_load, local_scan), (cluster_load, cluster_scan) = figures.values()
    print(f"cluster / local[2] time: load {cluster_load / local_load:.2f}x, scan+agg {cluster_scan / local_scan:.2f}x")


if __name__ == "__main__":
    main()
