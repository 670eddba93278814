"""dbt-spark (method thrift, default poll_interval) against sluicegate and Spark's own Thrift server, same pyspark
jars, one server at a time: the wall time of `dbt run` over a small project (a view, a table, an incremental model)
and the time dbt records for the models themselves (run_results.json), median of --runs after one warm-up run.

Needs .venv-dbt (`./run test-dbt` creates it). Run: `./run bench bench/dbt_bench.py [--runs 5]`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from gateway_bench import running

REPO = Path(__file__).resolve().parent.parent
DBT = REPO / ".venv-dbt" / "bin" / "dbt"
MODELS = {
    "clicks_view.sql": "{{ config(materialized='view') }}\nselect id, id % 7 as country from range(1000)",
    "clicks_table.sql": "{{ config(materialized='table') }}\n"
                        "select country, count(*) as clicks from {{ ref('clicks_view') }} group by country",
    "clicks_incremental.sql": "{{ config(materialized='incremental') }}\nselect * from {{ ref('clicks_table') }}",
}


def write_project(folder: Path, port: int) -> Path:
    project = folder / "project"
    (project / "models").mkdir(parents=True, exist_ok=True)
    (project / "dbt_project.yml").write_text(
        "name: bench\nversion: '1.0.0'\nconfig-version: 2\nprofile: bench\n")
    for name, sql in MODELS.items():
        (project / "models" / name).write_text(sql + "\n")
    (project / "profiles.yml").write_text(
        "bench:\n  target: dev\n  outputs:\n    dev:\n      type: spark\n      method: thrift\n"
        f"      host: 127.0.0.1\n      port: {port}\n      user: bench\n      schema: dbt_bench\n"
        "      connect_retries: 0\n")
    return project


def dbt_run(project: Path) -> tuple[float, float]:
    """(wall seconds of `dbt run`, seconds dbt spent in the models)."""
    started = time.perf_counter()
    done = subprocess.run([str(DBT), "run", "--project-dir", str(project), "--profiles-dir", str(project)],
                          capture_output=True, text=True, cwd=project)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"dbt run failed:\n{done.stdout[-3000:]}")
    results = json.loads((project / "target" / "run_results.json").read_text())
    return wall, sum(result["execution_time"] for result in results["results"])


def bench(key: str, runs: int, env: dict[str, str]) -> dict[str, float]:
    with (tempfile.TemporaryDirectory(prefix=f"dbt_bench_{key}_") as folder,
          running(key, Path(folder), env, start_timeout=300) as server):
        project = write_project(Path(folder), server.port)
        dbt_run(project)  # warm-up: the first run creates the schema and warms Spark
        samples = [dbt_run(project) for _ in range(runs)]
    return {"wall_s": statistics.median(s[0] for s in samples), "models_s": statistics.median(s[1] for s in samples)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed `dbt run`s per server (median reported)")
    args = parser.parse_args()
    if not DBT.exists():
        raise SystemExit(f"{DBT} is missing: run ./run test-dbt once to create .venv-dbt")
    env = dict(os.environ)
    figures = {key: bench(key, args.runs, env) for key in ("sluicegate", "sts")}
    print(f"dbt run of {len(MODELS)} models (view, table, incremental), median of {args.runs}:")
    for figure, label in (("wall_s", "wall time of `dbt run`"), ("models_s", "time in the models (run_results)")):
        ours, theirs = figures["sluicegate"][figure], figures["sts"][figure]
        print(f"  {label:36s} sluicegate {ours:6.2f} s   Spark Thrift server {theirs:6.2f} s   "
              f"ratio {theirs / ours:4.2f}x")


if __name__ == "__main__":
    main()
