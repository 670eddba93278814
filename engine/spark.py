"""The Spark session factory: the only place that decides how the embedded Spark is configured."""

from __future__ import annotations

import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sluicegate.engine import session_catalog
from sluicegate.engine.cluster.code_archive import build_code_archive
from sluicegate.engine.java import find_java_home
from sluicegate.engine.jvm_logging import java_options, relayed_stderr, spark_log_file
from sluicegate.storage.masters import is_local

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SparkSettings:
    master: str
    driver_memory: str
    shuffle_partitions: int
    bind_loopback: bool
    warehouse: Path
    extra_conf: dict[str, Any] = field(default_factory=dict)
    include_stack_trace: bool = False
    driver_host: str = ""              # the address executors reach the driver at ("" = Spark's choice)
    verify_shared_storage: bool = True  # probe that executors see the warehouse (non-local masters only)

    @property
    def local(self) -> bool:
        return is_local(self.master)

    @property
    def code_folder(self) -> Path:
        """Where the archive of the project's packages for executors is built (cluster masters only)."""
        return self.warehouse / "_code"


def python_for_workers(settings: SparkSettings) -> str:
    """The interpreter of the Python workers: the operator's spark.pyspark.python or PYSPARK_PYTHON (a cluster's
    workers may keep it elsewhere), else the gateway's own, which has the project's dependencies."""
    configured = settings.extra_conf.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON")
    return str(configured) if configured else sys.executable


def spark_conf(settings: SparkSettings) -> dict[str, str]:
    conf: dict[str, str] = {
        "spark.master": settings.master,
        "spark.app.name": "sluicegate",
        "spark.driver.memory": settings.driver_memory,
        "spark.sql.shuffle.partitions": str(settings.shuffle_partitions),
        "spark.default.parallelism": str(settings.shuffle_partitions),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.warehouse.dir": str(settings.warehouse / "spark-warehouse"),
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.execution.arrow.maxRecordsPerBatch": "10000",
        # Delta readers (delta-rs, Trino, DuckDB) expect INT64 microsecond timestamps, not Spark's legacy INT96.
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.pyspark.jvmStacktrace.enabled": str(settings.include_stack_trace).lower(),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={settings.warehouse / 'derby'}",
        # Statement cancel interrupts the executor threads (as Spark's Thrift server does since 3.5).
        "spark.sql.thriftServer.interruptOnCancel": "true",
        # `SELECT * FROM text.`/etc/passwd``: file paths as table names. Off in the context's configuration, so that
        # RESET in a session brings back "off" (SET of it is refused by the policy).
        "spark.sql.runSQLOnFiles": "false",
        # `${env:HOME}`, `${system:user.name}`, `${spark.x}` in a statement: the server's environment, JVM
        # properties and settings would be read into any user's query.
        "spark.sql.variable.substitute": "false",
    }
    if settings.bind_loopback:
        conf.update(
            {
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.driver.host": "127.0.0.1",
                "spark.blockManager.host": "127.0.0.1",
            }
        )
    elif settings.driver_host:
        conf.update({"spark.driver.host": settings.driver_host, "spark.driver.bindAddress": settings.driver_host})
    conf.update({key: str(value) for key, value in settings.extra_conf.items()})
    return conf


def with_code_archive(conf: dict[str, str], archive: Path) -> dict[str, str]:
    """`conf` shipping `archive` to every executor's Python path (before the operator's own py-files)."""
    own = [path for path in conf.get("spark.submit.pyFiles", "").split(",") if path]
    return {**conf, "spark.submit.pyFiles": ",".join([str(archive), *own])}


def create_spark_session(settings: SparkSettings) -> SparkSession:
    """Start (or join) the process's Spark driver. Environment first: Spark reads it when the JVM starts."""
    os.environ.setdefault("JAVA_HOME", str(find_java_home()))
    os.environ["PYSPARK_PYTHON"] = python_for_workers(settings)
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    if settings.bind_loopback:
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    settings.warehouse.mkdir(parents=True, exist_ok=True)
    conf = spark_conf(settings)
    if not settings.local:  # executors elsewhere: they import the project from this archive, not an install
        conf = with_code_archive(conf, build_code_archive(settings.code_folder))
    # Spark's own log: WARN and ERROR to <warehouse>/_logs/spark.log, only ERROR on the console (engine/jvm_logging)
    own_options = conf.get("spark.driver.extraJavaOptions", "")
    conf["spark.driver.extraJavaOptions"] = f"{java_options(settings.warehouse)} {own_options}".strip()

    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    with relayed_stderr():  # the JVM's start-up notices stay off the console
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    # PySpark logs every failed statement with its JVM stack; the gateway reports errors to the client itself.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    log.info("Spark %s started (master %s; its warnings go to %s)", spark.version, settings.master,
             spark_log_file(settings.warehouse))
    return spark


def warm_up(spark: SparkSession) -> None:
    """A fresh JVM runs its first query 2-3x slower; pay that at start-up rather than on a user's first query. The
    built-in functions GetFunctions lists are read once per process (engine/session_catalog.py), in the background:
    about 1,500 py4j calls, better made while the JVM is idle than by a BI tool's first GetFunctions under load."""
    spark.sql("SELECT sum(id) FROM range(100000)").collect()
    threading.Thread(target=_read_functions, args=(spark,), name="sluicegate-functions", daemon=True).start()


def _read_functions(spark: SparkSession) -> None:
    try:
        session_catalog.functions(spark)
    except Exception:  # read again by the first GetFunctions, which reports what fails
        log.debug("reading Spark's functions in the background failed", exc_info=True)
