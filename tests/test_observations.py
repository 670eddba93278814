"""Observations in throwaway sessions (storage/observations.py) on real Spark: the counts are exact, taken during the
action itself, the clone carries its session's settings and hardening, and leaving the block takes the clone's
listener off Spark's listener bus, and nothing else: another session's Observations still complete. The cluster write
check (storage/delta/verify.py) counts through it, and still refuses files short of the rows Spark wrote."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from sluicegate.engine.sessions import REFLECTION_FUNCTIONS, new_user_session
from sluicegate.storage.delta.errors import DeltaFilesNotVisibleError
from sluicegate.storage.delta.verify import committed_rows, written_and_counted
from sluicegate.storage.delta.write import _write_local_files
from sluicegate.storage.observations import observable


def _listeners(spark: Any) -> int:
    return spark.sparkContext._jsc.sc().listenerBus().listeners().size()


def _metrics(observation: Any) -> dict[str, Any]:
    """`observation.get`, or {} if it never completes (Spark would wait for ever if its listener were gone)."""
    got: list[dict[str, Any]] = []
    reader = threading.Thread(target=lambda: got.append(observation.get), daemon=True)
    reader.start()
    reader.join(60)
    return got[0] if got else {}


def _rows(spark: Any) -> Any:
    from pyspark.sql import functions as F

    return spark.range(100).withColumn("odd", F.col("id") % 2 == 1)


def test_observed_writes_count_exactly_and_leave_no_listener(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    session = new_user_session(spark)
    session.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")
    before = _listeners(spark)
    for attempt in range(3):
        with observable(_rows(session)) as rows:
            assert rows.sparkSession.conf.get("spark.sql.session.timeZone") == "Asia/Tokyo"
            # a user's session is hardened (engine/sessions.py): so is its clone
            assert not any(rows.sparkSession.catalog.functionExists(name) for name in REFLECTION_FUNCTIONS)
            assert rows.sparkSession._jsparkSession.sessionUUID() != session._jsparkSession.sessionUUID()
            observation = Observation(f"odd_{attempt}")
            rows.observe(observation, F.count(F.lit(1)).alias("rows"),
                         F.sum(F.when(F.col("odd"), 1).otherwise(0)).alias("odd")).write.parquet(
                str(tmp_path / str(attempt)))
            assert _metrics(observation) == {"rows": 100, "odd": 50}
        assert _listeners(spark) == before
    assert session.read.parquet(str(tmp_path / "2")).count() == 100


def test_blocks_nest_in_one_clone(spark: Any) -> None:
    """An observed write inside an observed batch (the cluster write check under expectations) reuses the clone,
    and leaving the inner block releases nothing the outer one still needs."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    with observable(_rows(spark)) as outer:
        with observable(outer.filter("odd")) as inner:
            assert inner.sparkSession._jsparkSession.sessionUUID() == outer.sparkSession._jsparkSession.sessionUUID()
            assert inner.count() == 50
        observation = Observation("after_the_inner_block")
        outer.observe(observation, F.count(F.lit(1)).alias("rows")).collect()
        assert _metrics(observation) == {"rows": 100}


def test_another_sessions_observations_keep_completing(spark: Any) -> None:
    """The clone's bus is the only one taken off: a session that observes on its own keeps its listener."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    other = spark.newSession()

    def observed_count(name: str) -> dict[str, Any]:
        observation = Observation(name)
        other.range(7).observe(observation, F.count(F.lit(1)).alias("rows")).collect()
        return _metrics(observation)

    assert observed_count("first") == {"rows": 7}
    with_other = _listeners(spark)
    with observable(other.range(3)) as rows:
        observation = Observation("in_clone")
        rows.observe(observation, F.count(F.lit(1)).alias("rows")).collect()
        assert _metrics(observation) == {"rows": 3}
    assert _listeners(spark) == with_other
    assert observed_count("second") == {"rows": 7}


def test_the_cluster_write_check_counts_in_a_clone_and_refuses_missing_rows(spark: Any, tmp_path: Path) -> None:
    table = tmp_path / "t"
    table.mkdir()
    before = _listeners(spark)
    files = written_and_counted(_rows(spark), str(table),
                                lambda counted: _write_local_files(counted, str(table), ()))
    assert files and committed_rows(files) == 100
    # executors that wrote where the driver cannot see: its listing finds none of the files Spark wrote
    with pytest.raises(DeltaFilesNotVisibleError, match="produced 100 rows but the driver sees 0 rows"):
        written_and_counted(_rows(spark), str(table), lambda counted: _write_local_files(counted, str(table), ())[:0])
    assert _listeners(spark) == before
